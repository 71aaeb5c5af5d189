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
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/checkpoint/gc.h"
#include "am/shmem/shmem.h"

PGDLLEXPORT void forst_ckpt_scheduler_main(Datum arg);
PGDLLEXPORT void forst_ckpt_db_main(Datum arg);

/* Databases with forst tables in shared memory (distinct, at most max). */
static int
databases_with_tables(Oid *out, int max)
{
	RelFileNode rnodes[1024];
	int			n = forst_all_tables(rnodes, lengthof(rnodes));
	int			ndb = 0;
	int			i,
				j;

	for (i = 0; i < n; i++)
	{
		for (j = 0; j < ndb; j++)
			if (out[j] == rnodes[i].dbNode)
				break;
		if (j == ndb && ndb < max)
			out[ndb++] = rnodes[i].dbNode;
	}
	return ndb;
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
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "forst_ckpt_db_main");
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
forst_ckpt_scheduler_main(Datum arg)
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
				Oid			dbs[64];
				int			n = databases_with_tables(dbs, lengthof(dbs));
				int			i;

				for (i = 0; i < n; i++)
					run_for_database(dbs[i]);
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

void
forst_ckpt_db_main(Datum arg)
{
	Oid			db = DatumGetObjectId(arg);

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(db, InvalidOid, 0);

	/* one checkpoint (its failure is recorded by forst_checkpoint_run) */
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "forst checkpoint");
	(void) forst_checkpoint_run();
	PopActiveSnapshot();
	CommitTransactionCommand();

	/* then the garbage */
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "forst garbage collection");
	{
		ForstGcResult res;

		forst_gc_run(&res);
		if (res.objects_deleted > 0)
			ereport(LOG,
					(errmsg("forst: garbage collection deleted " INT64_FORMAT " objects (" INT64_FORMAT " bytes) of database %u",
							res.objects_deleted, res.bytes_deleted, db)));
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}

void
forst_ckpt_worker_register(void)
{
	BackgroundWorker bgw;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 10;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "forst");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "forst_ckpt_scheduler_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "forst checkpointer");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "forst checkpointer");
	RegisterBackgroundWorker(&bgw);
}
