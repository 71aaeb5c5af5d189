/*-------------------------------------------------------------------------
 *
 * compaction_worker.c
 *	  The compaction workers: forst.compaction_workers background workers
 *	  that run leveled compactions (compact/compact.c) of forst tables' SST
 *	  files, apart from the flush worker, so that a long compaction never
 *	  holds flushes up (and, through them, writers waiting for memtable
 *	  memory).
 *
 * Each worker goes round all the tables that have shared state, in batches
 * (forst_tables_next), each round from where its last one ended, and
 * claims a table before compacting it (one worker per table at a time;
 * flushes of the table go on meanwhile, see compact/compact.c).  The flush
 * worker wakes them after it flushed; they also look every second.  A
 * failed compaction is logged and tried again on a later round.  Workers
 * do nothing while the server is in recovery (they start once it is a
 * primary).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "am/forst.h"
#include "am/shmem/shmem.h"
#include "am/base/stats.h"
#include "am/wal/wal.h"
#include "am/base/bgw_xact.h"
#include "am/compact/compact.h"

PGDLLEXPORT void forst_compaction_worker_main(Datum arg);

/* Every compaction due in one table. */
static void
compact_table(void *arg)
{
	ForstTableShared *ts = arg;
	bool		compacted = false;

	while (forst_compact_one(ts, InvalidTransactionId))
	{
		forst_stats_add(FS_COMPACTIONS, 1);
		compacted = true;
		CHECK_FOR_INTERRUPTS();
	}
	if (compacted)
		forst_bgw_release_memory();
}

/* Compacts what is due in n tables; false if any compaction failed. */
static bool
compact_tables(const RelFileNode *rnodes, int n)
{
	int			k;
	bool		ok = true;

	for (k = 0; k < n; k++)
	{
		ForstTableShared *ts = forst_compact_begin(&rnodes[k]);

		if (ts == NULL)
			continue;
		if (!forst_run_in_xact(NULL, compact_table, ts))
			ok = false;
		forst_compact_end(ts);
		CHECK_FOR_INTERRUPTS();
	}
	return ok;
}

/*
 * Compacts what is due in every table, FORST_TABLES_BATCH at a time; false
 * if any compaction failed.  Each round begins where the last one ended,
 * the first one of worker i at i/n of the way round, so that workers
 * seldom reach the same table together and none waits behind the rest.
 */
static bool
compact_round(int worker)
{
	static int	start = -1;
	ForstTableScan scan;
	RelFileNode rnodes[FORST_TABLES_BATCH];
	int			n;
	bool		ok = true;

	if (start < 0)
	{
		forst_tables_scan_begin(&scan, 0);
		if (scan.wrap > 0)
			start = (int) ((int64) scan.wrap * worker /
						   Max(forst_compaction_workers, 1));
	}
	forst_tables_scan_begin(&scan, Max(start, 0));
	while ((n = forst_all_tables(&scan, rnodes, lengthof(rnodes))) > 0)
	{
		if (!compact_tables(rnodes, n))
			ok = false;
	}
	if (start >= 0)
		start = scan.pos;
	return ok;
}

void
forst_compaction_worker_main(Datum arg)
{
	int			worker = DatumGetInt32(arg);

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("forst compaction");
	forst_in_flush_worker = true;	/* never waits for memtable memory */
	forst_shared->compact_latch[worker] = MyLatch;

	for (;;)
	{
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		/* not while the catch-up replay rebuilds memtables (wal/wal.c) */
		if (!RecoveryInProgress() && forst_wal_ready() && !compact_round(worker))
		{
			/* a failure (the store is down, say): back off, do not spin */
			(void) WaitLatch(MyLatch, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 10000, PG_WAIT_EXTENSION);
			continue;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000, PG_WAIT_EXTENSION);
	}
}

void
forst_wake_compaction_workers(void)
{
	int			i;

	for (i = 0; i < FORST_MAX_COMPACTION_WORKERS; i++)
	{
		Latch	   *latch = forst_shared->compact_latch[i];

		if (latch)
			SetLatch(latch);
	}
}

void
forst_compaction_workers_register(void)
{
	int			i;

	for (i = 0; i < forst_compaction_workers; i++)
	{
		BackgroundWorker bgw;

		memset(&bgw, 0, sizeof(bgw));
		bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
		bgw.bgw_restart_time = 1;
		bgw.bgw_main_arg = Int32GetDatum(i);
		snprintf(bgw.bgw_library_name, BGW_MAXLEN, "forst");
		snprintf(bgw.bgw_function_name, BGW_MAXLEN, "forst_compaction_worker_main");
		snprintf(bgw.bgw_name, BGW_MAXLEN, "forst compaction %d", i + 1);
		snprintf(bgw.bgw_type, BGW_MAXLEN, "forst compaction");
		RegisterBackgroundWorker(&bgw);
	}
}
