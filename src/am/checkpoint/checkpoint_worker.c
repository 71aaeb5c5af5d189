/*-------------------------------------------------------------------------
 *
 * checkpoint_worker.c
 *	  Periodic checkpoints and garbage collection.
 *
 * The "forst checkpointer" worker wakes every forst.checkpoint_interval
 * and, for each database with forst tables that have shared state (the
 * ones written or read since start-up), starts a short-lived worker
 * connected to that database which runs one checkpoint and then garbage
 * collection (a worker can connect to one database only), and waits for it
 * before the next.  A failing checkpoint (the store is down, say) is
 * recorded in forst.checkpoints as failed and tried again at the next
 * interval; it never touches queries.  Nothing runs during recovery.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/checkpoint/gc.h"
#include "am/shmem/shmem.h"
#include "am/base/bgw_xact.h"

PGDLLEXPORT void forst_checkpoint_scheduler_main(Datum arg);
PGDLLEXPORT void forst_checkpoint_worker_main(Datum arg);

static void run_for_database(Oid db);

/*
 * Runs the per-database worker for every database with forst tables in
 * shared memory, each once: a pass over all the tables, FORST_TABLES_BATCH
 * at a time, and a database's worker runs when the pass meets the first
 * of its tables.  Memory: the batch, and the databases done (a hash).
 */
static void
run_for_databases(void)
{
	ForstTableScan scan;
	RelFileNode rnodes[FORST_TABLES_BATCH];
	HASHCTL		info;
	HTAB	   *done;
	int			n,
				i;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(Oid);
	info.hcxt = CurrentMemoryContext;
	done = hash_create("forst checkpoint databases", 64, &info,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	forst_tables_scan_begin(&scan, 0);
	while ((n = forst_all_tables(&scan, rnodes, lengthof(rnodes))) > 0)
		for (i = 0; i < n; i++)
		{
			bool		found;

			(void) hash_search(done, &rnodes[i].dbNode, HASH_ENTER, &found);
			if (!found)
				run_for_database(rnodes[i].dbNode);
		}
	hash_destroy(done);
}

/* Runs the per-database worker and waits for it to exit. */
static void
run_for_database(Oid db)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	pid_t		pid;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "forst");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "forst_checkpoint_worker_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "forst checkpoint of database %u", db);
	snprintf(bgw.bgw_type, BGW_MAXLEN, "forst checkpoint");
	bgw.bgw_main_arg = ObjectIdGetDatum(db);
	bgw.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
	{
		ereport(LOG,
				(errmsg("forst: could not start a checkpoint worker for database %u", db),
				 errhint("Raise max_worker_processes.")));
		return;
	}
	if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
		return;
	(void) WaitForBackgroundWorkerShutdown(handle);
}

/*
 * The postmaster tells of our workers' start and exit by SIGUSR1, which a
 * worker without a database connection ignores by default.
 */
static void
sigusr1_set_latch(SIGNAL_ARGS)
{
	int			save_errno = errno;

	SetLatch(MyLatch);
	errno = save_errno;
}

void
forst_checkpoint_scheduler_main(Datum arg)
{
	TimestampTz next = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	pqsignal(SIGUSR1, sigusr1_set_latch);
	BackgroundWorkerUnblockSignals();

	for (;;)
	{
		long		timeout = 10000;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (forst_checkpoint_interval_s > 0)
		{
			TimestampTz now = GetCurrentTimestamp();

			if (next == 0)
				next = TimestampTzPlusMilliseconds(now, forst_checkpoint_interval_s * 1000L);
			if (now >= next)
			{
				run_for_databases();
				next = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
												   forst_checkpoint_interval_s * 1000L);
			}
			timeout = Min(timeout, Max(10, TimestampDifferenceMilliseconds(GetCurrentTimestamp(), next)));
		}
		else
			next = 0;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

static void
run_checkpoint(void *arg)
{
	(void) forst_checkpoint_run();
}

static void
run_gc(void *arg)
{
	Oid			db = *(Oid *) arg;
	ForstGcResult res;

	forst_gc_run(&res);
	if (res.objects_deleted > 0)
		ereport(LOG,
				(errmsg("forst: garbage collection deleted " INT64_FORMAT " objects (" INT64_FORMAT " bytes) of database %u",
						res.objects_deleted, res.bytes_deleted, db)));
}

void
forst_checkpoint_worker_main(Datum arg)
{
	Oid			db = DatumGetObjectId(arg);

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(db, InvalidOid, 0);

	/*
	 * One checkpoint (its failure is recorded by forst_checkpoint_run), then
	 * the garbage; an error ends the worker with the error in the log.
	 */
	if (forst_run_in_xact("forst checkpoint", run_checkpoint, NULL) &&
		forst_run_in_xact("forst garbage collection", run_gc, &db))
		proc_exit(0);
	proc_exit(1);
}

void
forst_checkpoint_workers_register(void)
{
	BackgroundWorker bgw;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 10;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "forst");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "forst_checkpoint_scheduler_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "forst checkpointer");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "forst checkpointer");
	RegisterBackgroundWorker(&bgw);
}
