/*-------------------------------------------------------------------------
 *
 * forst_worker.c
 *	  The flush worker: writes immutable memtables to SST files and returns
 *	  their slabs to the pool once no transaction can still use them.
 *
 * Writers wake it when they freeze a memtable (and when they wait for
 * memtable memory); it also looks every second.  It also freezes active
 * memtables when forst's slot holds back more than a quarter of
 * max_wal_size: a table written a little and then left alone would
 * otherwise keep every WAL segment written after it (by anything) for ever.  A flush that fails (the
 * object store is down, say) is logged and retried on the next round; the
 * memtable stays readable meanwhile, and writers wait once the pool is
 * used up, so nothing is lost and memory stays bounded.
 *
 * Retiring a slab: a transaction that was running when a memtable left the
 * table's view may hold TIDs into it (an UPDATE's target rows, AFTER
 * trigger events, ...).  The worker records the virtual transaction ids
 * running at that moment and frees the slab when all have ended.
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
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "forst.h"
#include "forst_flush.h"
#include "forst_shmem.h"
#include "forst_wal.h"

PGDLLEXPORT void forst_worker_main(Datum arg);

bool		forst_in_flush_worker = false;

typedef struct Retiring
{
	int			slab;
	int			nvxids;
	VirtualTransactionId *vxids;
} Retiring;

static List *retiring = NIL;

static void
retire(int slab)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	Retiring   *r = palloc(sizeof(Retiring));
	VirtualTransactionId *v;

	v = GetCurrentVirtualXIDs(InvalidTransactionId, false, true, 0, &r->nvxids);
	r->vxids = palloc(sizeof(VirtualTransactionId) * Max(r->nvxids, 1));
	memcpy(r->vxids, v, sizeof(VirtualTransactionId) * r->nvxids);
	r->slab = slab;
	retiring = lappend(retiring, r);
	MemoryContextSwitchTo(old);
}

/* Frees the slabs whose readers have all gone; true if any still wait. */
static bool
free_retired(void)
{
	ListCell   *lc;

	foreach(lc, retiring)
	{
		Retiring   *r = lfirst(lc);

		while (r->nvxids > 0)
		{
			VirtualTransactionId v = r->vxids[r->nvxids - 1];

			/* a transaction waiting for memtable memory does not count */
			if (!(v.backendId > 0 && v.backendId <= MaxBackends &&
				  forst_shared->waiting[v.backendId]) &&
				!VirtualXactLock(v, false))
				break;
			r->nvxids--;
		}
		if (r->nvxids == 0)
		{
			forst_slab_free(r->slab);
			pfree(r->vxids);
			pfree(r);
			retiring = foreach_delete_current(retiring, lc);
		}
	}
	return retiring != NIL;
}

static void
flush_round(void)
{
	RelFileNode rnodes[64];
	int			n = forst_tables_to_flush(rnodes, lengthof(rnodes));
	int			i;
	bool		flushed = false;

	for (i = 0; i < n; i++)
	{
		ForstTableShared *ts = forst_flush_begin(&rnodes[i]);
		MemoryContext oldcxt = CurrentMemoryContext;

		if (ts == NULL)
			continue;
		StartTransactionCommand();
		PG_TRY();
		{
			int			slab;

			PushActiveSnapshot(GetTransactionSnapshot());
			while (forst_flush_one(ts, &slab))
			{
				retire(slab);
				flushed = true;
				CHECK_FOR_INTERRUPTS();
			}
			while (forst_compact_one(ts))
				CHECK_FOR_INTERRUPTS();
			PopActiveSnapshot();
			CommitTransactionCommand();
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(oldcxt);
			EmitErrorReport();
			FlushErrorState();
			AbortCurrentTransaction();
		}
		PG_END_TRY();
		forst_flush_end(ts);
	}

	/* WAL older than every unflushed entry is no longer needed by forst */
	if (flushed)
		forst_wal_advance_slot(forst_oldest_unflushed_lsn());
}

/*
 * Whether the oldest WAL record forst still needs is more than a quarter
 * of max_wal_size behind the insert position (checkpoints are requested
 * at max_wal_size; heap's WAL would be recycled long before).
 */
static bool
wal_held_back(void)
{
	XLogRecPtr	oldest;
	XLogRecPtr	insert;

	if (RecoveryInProgress())
		return false;
	insert = GetXLogInsertRecPtr();
	oldest = forst_oldest_unflushed_lsn();
	return insert > oldest &&
		insert - oldest > (uint64) max_wal_size_mb * 1024 * 1024 / 4;
}

void
forst_worker_main(Datum arg)
{
	int			i;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	forst_in_flush_worker = true;
	pgstat_report_appname("forst flush");

	/* slabs a previous incarnation was retiring: retire them again */
	for (i = 0; i < forst_shared->nslabs; i++)
	{
		if (forst_shared->slabs[i].state == FORST_SLAB_RETIRING)
			retire(i);
	}
	forst_shared->flush_latch = MyLatch;

	for (;;)
	{
		bool		waiting;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		/*
		 * Memory is short, or old WAL is kept only for rows in active
		 * memtables: flush what tables keep in them.
		 */
		if ((forst_memory_wanted() || wal_held_back()) && retiring == NIL)
			(void) forst_freeze_actives();
		flush_round();
		waiting = free_retired();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 waiting ? 50 : 1000, PG_WAIT_EXTENSION);
	}
}

void
forst_worker_register(void)
{
	BackgroundWorker bgw;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 1;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "forst");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "forst_worker_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "forst flush");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "forst flush");
	RegisterBackgroundWorker(&bgw);
}
