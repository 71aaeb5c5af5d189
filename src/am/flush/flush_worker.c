/*-------------------------------------------------------------------------
 *
 * flush_worker.c
 *	  The flush worker: writes immutable memtables to SST files and returns
 *	  their slabs to the pool once no transaction can still use them.
 *
 * Writers wake it when they freeze a memtable (and when they wait for
 * memtable memory); it also looks every second.  It also freezes active
 * memtables when forst's slot holds back more than a quarter of
 * max_wal_size: a table written a little and then left alone would
 * otherwise keep every WAL segment written after it (by anything) for
 * ever.  A flush that fails (the object store is down, say) is logged and
 * retried after a backoff (1 s doubling to 30 s); the memtable stays
 * readable meanwhile, and writers wait once the pool is
 * used up, so nothing is lost and memory stays bounded.
 *
 * Retiring a slab: a backend that took a view of the table before the
 * memtable left it may hold TIDs into it (an UPDATE's target rows, AFTER
 * trigger events, an open cursor, ...).  The worker frees the slab once no
 * backend that pinned before the retirement still holds its pin
 * (shmem/slab_pins.c).
 *
 * On a hot standby the worker runs too (from the consistent state on),
 * but only retires: WAL replay frees the memtables that a MANIFEST record
 * says the primary flushed, and the worker returns their slabs to the pool
 * once the standby's queries are done with them.  It never writes to the
 * object store there; after promotion it flushes as on any primary.
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
#include "storage/sinvaladt.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "am/forst.h"
#include "am/objects/disk_cache.h"
#include "am/flush/flush.h"
#include "am/shmem/shmem.h"
#include "am/base/stats.h"
#include "am/wal/unlogged.h"
#include "am/wal/wal.h"
#include "am/base/bgw_xact.h"
#include "am/compact/compact.h"

PGDLLEXPORT void forst_flush_worker_main(Datum arg);

typedef struct Retiring
{
	int			slab;
	uint64		epoch;			/* its retirement's number (shmem/slab_pins.c) */
	TimestampTz since;			/* when it was retired */
} Retiring;

static List *retiring = NIL;
static bool *retire_known = NULL;	/* per slab: in "retiring" */

static void
retire(int slab)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	Retiring   *r = palloc(sizeof(Retiring));

	/* numbered after the slab left its table's view (shmem/slab_pins.c) */
	pg_memory_barrier();
	r->epoch = pg_atomic_add_fetch_u64(&forst_shared->retire_epoch, 1);
	r->slab = slab;
	r->since = GetCurrentTimestamp();
	retiring = lappend(retiring, r);
	retire_known[slab] = true;
	MemoryContextSwitchTo(old);
}

/*
 * A deadlock through memtable memory: a writer waits for memory (holding
 * its key locks and its transaction), memory waits for a retired slab, the
 * slab for transaction v, and v waits for a lock the writer holds.  The
 * lock manager cannot see the first two edges.  If v waits for a lock held
 * by a transaction that waits for memory, that one is told to give up
 * (wait_for_slab raises "deadlock detected"), as PostgreSQL's deadlock
 * detector would choose a victim.
 */
static void
break_memory_deadlock(BackendId blocker)
{
	PGPROC	   *proc = BackendIdGetProc(blocker);
	LOCK	   *lock;
	LOCKTAG		tag;
	LOCKMODE	mode;
	VirtualTransactionId *holders;
	int			n,
				i;

	if (proc == NULL || (lock = proc->waitLock) == NULL)
		return;
	/* copied without the partition lock: at worst a stale, harmless tag */
	tag = lock->tag;
	mode = proc->waitLockMode;
	if (tag.locktag_lockmethodid != DEFAULT_LOCKMETHOD || mode <= 0 ||
		mode > MaxLockMode)
		return;
	holders = GetLockConflicts(&tag, mode, &n);
	for (i = 0; i < n; i++)
	{
		BackendId	b = holders[i].backendId;

		if (b > 0 && b <= MaxBackends && forst_shared->waiting[b] &&
			!forst_shared->victim[b])
		{
			PGPROC	   *victim = BackendIdGetProc(b);

			ereport(LOG,
					(errmsg("forst: breaking a deadlock through memtable memory: backend %d waits for memory that waits for backend %d, which waits for it",
							b, blocker)));
			forst_shared->victim[b] = true;
			if (victim)
				SetLatch(&victim->procLatch);
			ConditionVariableBroadcast(&forst_shared->slab_cv);
		}
	}
}

/*
 * Frees the slabs that no backend can still be reading (shmem/slab_pins.c); true
 * if any still wait.  A backend waiting for memtable memory does not count:
 * otherwise a transaction that writes more than the pool holds would wait
 * for itself.
 */
static bool
free_retired(void)
{
	ListCell   *lc;

	foreach(lc, retiring)
	{
		Retiring   *r = lfirst(lc);

		/* checked without the pool lock first: most passes find it pinned */
		if (!forst_slab_reusable(r->epoch, forst_shared->waiting) ||
			!forst_slab_free_retired(r->slab, r->epoch))
		{
			if (forst_pool_exhausted() &&
				TimestampDifferenceExceeds(r->since, GetCurrentTimestamp(),
										   DeadlockTimeout))
			{
				BackendId	b = forst_slab_blocker(r->epoch);

				if (b != InvalidBackendId)
					break_memory_deadlock(b);
			}
			continue;
		}
		retire_known[r->slab] = false;
		pfree(r);
		retiring = foreach_delete_current(retiring, lc);
	}
	return retiring != NIL;
}

/*
 * The next batch of tables to flush: up to FORST_TABLES_BATCH, going on
 * round all the tables from where the last batch stopped.  *more is set if
 * the pass has tables left to look at.
 */
static int
tables_to_flush(RelFileNode *rnodes, bool *more)
{
	static ForstTableScan scan;
	int			n;

	if (scan.left == 0)
		forst_tables_scan_begin(&scan, scan.pos);
	n = forst_tables_to_flush(&scan, rnodes, FORST_TABLES_BATCH);
	*more = scan.left > 0;
	return n;
}

/* One table's flush (and, without compaction workers, compaction). */
typedef struct FlushWork
{
	ForstTableShared *ts;
	bool		flushed;		/* out: a memtable was written */
} FlushWork;

static void
flush_table(void *arg)
{
	FlushWork  *w = arg;
	int			slab;
	bool		compacted = false;

	while (forst_flush_one(w->ts, &slab))
	{
		retire(slab);
		w->flushed = true;
		CHECK_FOR_INTERRUPTS();
	}
	/* without compaction workers, compact here between flushes */
	if (forst_compaction_workers == 0)
		while (forst_compact_one(w->ts, InvalidTransactionId))
		{
			forst_stats_add(FS_COMPACTIONS, 1);
			compacted = true;
			CHECK_FOR_INTERRUPTS();
		}
	if (w->flushed || compacted)
		forst_bgw_release_memory();
}

/*
 * Flushes and compacts what is due in the next batch of tables; *more is
 * set if tables are left (the caller comes back at once, after freeing
 * what it could).  Returns false if any table failed.
 */
static bool
flush_round(bool *more)
{
	RelFileNode rnodes[FORST_TABLES_BATCH];
	int			n = tables_to_flush(rnodes, more);
	int			i;
	bool		flushed = false;
	bool		ok = true;

	for (i = 0; i < n; i++)
	{
		FlushWork	w;

		w.ts = forst_flush_begin(&rnodes[i]);
		w.flushed = false;
		if (w.ts == NULL)
			continue;
		if (!forst_run_in_xact(NULL, flush_table, &w))
			ok = false;
		flushed |= w.flushed;
		forst_flush_end(w.ts);
	}

	/* WAL older than every unflushed entry is no longer needed by forst */
	if (flushed)
	{
		forst_wal_advance_slot(forst_oldest_unflushed_lsn());
		forst_wake_compaction_workers();
	}
	return ok;
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

/*
 * Client backends alive (walsenders and background workers are not: the
 * postmaster keeps walsenders until after its shutdown checkpoint).
 */
static int
client_backends(void)
{
	int			n = 0;
	int			nb;
	int			i;

	pgstat_clear_backend_activity_snapshot();
	nb = pgstat_fetch_stat_numbackends();
	for (i = 1; i <= nb; i++)
	{
		LocalPgBackendStatus *l = pgstat_fetch_stat_local_beentry(i);

		if (l != NULL && l->backendStatus.st_backendType == B_BACKEND &&
			l->backendStatus.st_procpid != MyProcPid)
			n++;
	}
	return n;
}

/*
 * A clean shutdown (SIGTERM from the postmaster, which stops the client
 * backends at the same time): once no client backend is left, flush every
 * memtable of an unlogged table and, if that worked, mark them whole
 * (wal/unlogged.h), so that the next start keeps their rows.  Without the
 * mark they return to their checkpoint, which is always safe; so nothing
 * here waits for long: a bounded wait for the backends, and flush rounds
 * until the memtables are empty, a round fails, or the deadline passes.
 */
static void
shutdown_flush(void)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   forst_checkpoint_timeout_s * 1000L);
	bool		more = false;

	if (RecoveryInProgress() || !forst_wal_ready())
		return;					/* a standby; or nothing was used */
	while (client_backends() > 0)
	{
		if (GetCurrentTimestamp() >= deadline)
		{
			ereport(LOG,
					(errmsg("forst: client backends did not exit; unlogged tables will return to their last checkpoint at the next start")));
			return;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	while (forst_memtables_in_use(true))
	{
		if (!more)
			(void) forst_freeze_actives(true);
		if (!flush_round(&more) || GetCurrentTimestamp() >= deadline)
		{
			ereport(LOG,
					(errmsg("forst: could not flush the memtables of unlogged tables at shutdown; they will return to their last checkpoint at the next start")));
			return;
		}
		(void) free_retired();
	}
	(void) forst_unlogged_mark_clean();
}

void
forst_flush_worker_main(Datum arg)
{
	int			i;
	int			failures = 0;
	TimestampTz next_round = 0;
	bool		more = false;	/* flush_round's pass goes on */

	/* SIGTERM: a shutdown, which flushes unlogged tables first */
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	forst_in_flush_worker = true;
	pgstat_report_appname("forst flush");

	retire_known = MemoryContextAllocZero(TopMemoryContext,
										  sizeof(bool) * forst_shared->nslabs);
	forst_shared->flush_latch = MyLatch;

	/* the disk cache's index, from the files a previous run left */
	forst_cache_rebuild();

	for (;;)
	{
		bool		waiting;
		long		timeout;
		TimestampTz now;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ShutdownRequestPending)
		{
			shutdown_flush();
			proc_exit(0);
		}
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		/*
		 * Slabs retired by someone else: WAL replay (standby, crash
		 * recovery) or a previous incarnation of this worker.
		 */
		for (i = 0; i < forst_shared->nslabs; i++)
		{
			if (forst_shared->slabs[i].state == FORST_SLAB_RETIRING &&
				!retire_known[i])
				retire(i);
		}

		/*
		 * After a failed round (the object store is down, say), back off: 1
		 * s, 2 s, ... up to 30 s between attempts, however often writers
		 * wake us, so that an outage gives a few log lines rather than a
		 * storm of failing requests.  Writers wait for memtable memory
		 * meanwhile and carry on when a round succeeds.
		 */
		now = GetCurrentTimestamp();
		if (!RecoveryInProgress() && forst_wal_ready() && now >= next_round)
		{
			/*
			 * Memory is short, or old WAL is kept only for rows in active
			 * memtables: flush what tables keep in them.
			 */
			if ((forst_memory_wanted() || wal_held_back()) && retiring == NIL &&
				!more)
				(void) forst_freeze_actives(false);
			if (flush_round(&more))
				failures = 0;
			else
			{
				failures++;
				next_round = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														 Min(1000L << Min(failures - 1, 5), 30000L));
			}
		}
		else
			more = false;		/* no round now: no hurry either */
		/* removes forst/backup_start once no backup runs (wal/backup.c) */
		(void) forst_backup_in_progress();
		waiting = free_retired();
		timeout = waiting ? 50 : 1000;
		if (more)
			timeout = 0;		/* the rest of the tables */
		if (failures > 0)
		{
			long		until = TimestampDifferenceMilliseconds(GetCurrentTimestamp(),
																next_round);

			timeout = Max(Min(timeout, until), 10);
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
	}
}

void
forst_flush_worker_register(void)
{
	BackgroundWorker bgw;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_ConsistentState;
	bgw.bgw_restart_time = 1;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "forst");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "forst_flush_worker_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "forst flush");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "forst flush");
	RegisterBackgroundWorker(&bgw);
}
