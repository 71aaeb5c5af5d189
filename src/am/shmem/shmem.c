/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  Shared memory of forst: its layout at start-up, and the memtable slab
 *	  pool (see shmem/shmem.h).
 *
 * Lays out forst's shared memory (the pool's slabs and their states, the
 * table registry's hash and slots, the words of each backend) and hands
 * slabs out and takes them back: a writer inserts into its table's active
 * memtable here, switching to a new slab when it fills and waiting for
 * memory when the pool is used up; the flush returns slabs to the pool.
 * The table registry itself, whose entries hold each table's memtables,
 * is shmem/registry.c: dropping an entry frees its slabs through
 * forst_slab_free_locked (shmem/shmem_internal.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "postmaster/startup.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "am/forst.h"
#include "am/shmem/shmem.h"
#include "am/shmem/shmem_internal.h"
#include "am/base/stats.h"
#include "am/wal/wal.h"

ForstShared *forst_shared = NULL;
uint64		forst_memory_waits = 0;

/* Set in the flush and compaction workers, which never wait for memtable memory. */
bool		forst_in_flush_worker = false;
bool		forst_in_catchup_replay = false;

HTAB	   *forst_tables = NULL;

/*
 * The registry's slots (forst_tables_next): ts[i] is the entry in slot i
 * or NULL; slots below used were handed out, free[0..nfree) of them are
 * free again.  forst_shared->lock protects them as the hash.
 */
ForstTableSlots *table_slots = NULL;
static char *slab_base = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static int
forst_pool_slabs(void)
{
	int64		n = (int64) forst_memtable_memory_kb / forst_memtable_size_kb;

	return (int) Max(n, 2);
}

/* The pool and WAL replay's reserve (shmem/shmem.h). */
static int
forst_nslabs(void)
{
	int			pool = forst_pool_slabs();

	return pool + Min(pool, Max(FORST_MAX_SLABS - pool, 0));
}

static Size
forst_shared_size(void)
{
	return add_size(add_size(offsetof(ForstShared, slabs),
							 mul_size(forst_nslabs(), sizeof(ForstSlab))),
					add_size(mul_size(2 * (MaxBackends + 1), sizeof(bool)),
							 add_size(mul_size(MaxBackends + 1, sizeof(ForstBackendWords)),
									  PG_CACHE_LINE_SIZE)));
}

static Size
forst_table_slots_size(void)
{
	return add_size(offsetof(ForstTableSlots, ts),
					mul_size(forst_max_tables,
							 sizeof(ForstTableShared *) + sizeof(int)));
}

static Size
forst_slabs_size(void)
{
	return mul_size(forst_nslabs(), (Size) forst_memtable_size_kb * 1024);
}

static void
forst_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(forst_shared_size());
	RequestAddinShmemSpace(forst_slabs_size());
	RequestAddinShmemSpace(hash_estimate_size(forst_max_tables,
											  sizeof(ForstTableShared)));
	RequestAddinShmemSpace(forst_table_slots_size());
	RequestNamedLWLockTranche("forst", 1);
}

static void
forst_shmem_startup(void)
{
	bool		found;
	bool		found_slabs;
	bool		found_slots;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	forst_shared = ShmemInitStruct("forst shared state", forst_shared_size(), &found);
	slab_base = ShmemInitStruct("forst memtables", forst_slabs_size(), &found_slabs);
	table_slots = ShmemInitStruct("forst table slots", forst_table_slots_size(),
								  &found_slots);
	if (!found_slots)
	{
		table_slots->used = 0;
		table_slots->nfree = 0;
	}
	table_slots->free = (int *) &table_slots->ts[forst_max_tables];
	if (!found)
	{
		int			i;

		forst_shared->lock = &(GetNamedLWLockTranche("forst"))->lock;
		forst_shared->tranche_id = LWLockNewTrancheId();
		forst_shared->write_tranche_id = LWLockNewTrancheId();
		forst_shared->manifest_tranche_id = LWLockNewTrancheId();
		/* past every number handed out before (shmem/seq.c) */
		pg_atomic_init_u64(&forst_shared->seq_lease, forst_seq_lease_read());
		pg_atomic_init_u64(&forst_shared->next_seq,
							pg_atomic_read_u64(&forst_shared->seq_lease));
		pg_atomic_init_u64(&forst_shared->writer_epoch, 0);
		forst_shared->nslabs = forst_nslabs();
		forst_shared->pool_slabs = forst_pool_slabs();
		forst_shared->slab_size = (Size) forst_memtable_size_kb * 1024;
		for (i = 0; i < forst_shared->nslabs; i++)
		{
			forst_shared->slabs[i].state = FORST_SLAB_FREE;
			forst_shared->slabs[i].generation = 0;
			forst_shared->slabs[i].first_lsn = InvalidXLogRecPtr;
			forst_shared->slabs[i].unlogged = false;
			forst_shared->slabs[i].last_lsn = InvalidXLogRecPtr;
			forst_shared->slabs[i].next_free =
				(i + 1 < forst_shared->nslabs) ? i + 1 : -1;
		}
		forst_shared->free_head = 0;
		forst_shared->nfree = forst_shared->nslabs;
		forst_shared->flush_latch = NULL;
		for (i = 0; i < FORST_MAX_COMPACTION_WORKERS; i++)
			forst_shared->compact_latch[i] = NULL;
		forst_shared->waiting = (bool *) &forst_shared->slabs[forst_shared->nslabs];
		forst_shared->victim = forst_shared->waiting + MaxBackends + 1;
		memset(forst_shared->waiting, 0, sizeof(bool) * 2 * (MaxBackends + 1));
		forst_shared->backends = (ForstBackendWords *)
			CACHELINEALIGN(forst_shared->victim + MaxBackends + 1);
		for (i = 0; i <= MaxBackends; i++)
		{
			pg_atomic_init_u64(FORST_INFLIGHT(i), 0);
			pg_atomic_init_u64(FORST_PIN(i), 0);
		}
		pg_atomic_init_u64(&forst_shared->retire_epoch, 0);
		pg_atomic_init_u64(&forst_shared->tables_removed, 0);
		ConditionVariableInit(&forst_shared->slab_cv);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(RelFileNode);
	info.entrysize = sizeof(ForstTableShared);
	forst_tables = ShmemInitHash("forst tables", forst_max_tables, forst_max_tables,
								 &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
	LWLockRegisterTranche(forst_shared->tranche_id, "forst_table");
	LWLockRegisterTranche(forst_shared->write_tranche_id, "forst_table_write");
	LWLockRegisterTranche(forst_shared->manifest_tranche_id, "forst_table_manifest");
}

void
forst_shmem_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = forst_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = forst_shmem_startup;
}

FstMemtable *
forst_slab_memtable(int slab)
{
	/* the handle of a memtable is its region's address */
	Assert(slab >= 0 && slab < forst_shared->nslabs);
	return (FstMemtable *) (slab_base + (Size) slab * forst_shared->slab_size);
}

/*
 * Gives the memory of a slab that nothing reads any more back to the
 * kernel.  Shared memory pages that a process touched count in its PSS
 * and RSS for as long as it lives, whatever they hold: without this, the
 * flush worker (which reads every memtable it flushes) kept the whole pool
 * resident once a bulk load had filled it, long after the memtables were
 * flushed.  The next owner of the slab faults the pages in again, zeroed,
 * as it fills them (fst_memtable_init writes only the header): a few
 * milliseconds of page faults per memtable, against the seconds of writes
 * that fill one.  A TID that still names the slab fails to resolve on the
 * slab's generation, as after a reuse (keys/tid.c).  Only the pages wholly
 * inside the slab go; where the kernel cannot do it (huge pages and an
 * unaligned slab, say) the memory stays, as before.
 */
void
forst_slab_release_pages(int slab)
{
	static uintptr_t page_size = 0;
	uintptr_t	start,
				end;

	if (page_size == 0)
	{
		long		ps = sysconf(_SC_PAGESIZE);

		page_size = ps > 0 ? (uintptr_t) ps : 4096;
	}
	start = (uintptr_t) forst_slab_memtable(slab);
	end = start + forst_shared->slab_size;
	start = TYPEALIGN(page_size, start);
	end = TYPEALIGN_DOWN(page_size, end);
#ifdef MADV_REMOVE
	if (end > start)
		(void) madvise((void *) start, end - start, MADV_REMOVE);
#endif
}

/*
 * Returns a slab to the pool; caller holds forst_shared->lock exclusively.
 * The generation advances once per reuse (a TID keeps it modulo 64,
 * keys/tid.c): here, unless the caller advanced it already.
 */
void
forst_slab_free_locked(int slab, bool advanced)
{
	ForstSlab  *s = &forst_shared->slabs[slab];

	s->state = FORST_SLAB_FREE;
	if (!advanced)
		s->generation++;
	s->first_lsn = InvalidXLogRecPtr;
	s->unlogged = false;
	s->last_lsn = InvalidXLogRecPtr;
	s->next_free = forst_shared->free_head;
	forst_shared->free_head = slab;
	forst_shared->nfree++;
}

void
forst_wake_flusher(void)
{
	Latch	   *latch = forst_shared->flush_latch;

	if (latch)
		SetLatch(latch);
}

/*
 * Writers never fail for lack of memtable memory: they wait, here, until
 * the flush worker has written memtables to SST files and freed slabs.
 */
static void
wait_for_slab(void)
{
	static TimestampTz waiting_since = 0;
	TimestampTz start;

	/* the flush worker itself must not wait for itself */
	if (forst_in_flush_worker)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("forst: no memtable memory to carry entries over; the flush will be retried")));

	/*
	 * The catch-up replay in a backend (wal/wal.c): the flush worker does
	 * nothing before it ends, so nothing would ever free a slab, and the
	 * catch-up holds forst_wal's lock, which keeps interrupts off.  Fail
	 * instead of waiting for ever; the next use of a forst table tries
	 * again (what was replayed so far stays, and is skipped then).
	 */
	if (forst_in_catchup_replay && !AmStartupProcess())
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("forst: the WAL catch-up after start-up needs more memtable memory than there is"),
				 errdetail("The rows logged since forst's replication slot that are in no SST file need more than %d memtables of %zu kB in all, or more than %d for one table.",
						   forst_shared->nslabs, forst_shared->slab_size / 1024,
						   FORST_MAX_IMMUTABLE + 1),
				 errhint("Raise forst.memtable_memory or forst.memtable_size (as large as before a recent change, at least) and restart the server.")));

	/*
	 * WAL replay (a standby's startup process) has no backend slot and
	 * cannot flush: memory comes back when a MANIFEST record says what the
	 * primary flushed, or when queries let go of retired memtables.  Say
	 * so when that takes long, instead of stalling silently.
	 */
	if (MyBackendId == InvalidBackendId || MyBackendId > MaxBackends)
	{
		TimestampTz now = GetCurrentTimestamp();

		if (waiting_since == 0)
			waiting_since = now;
		else if (TimestampDifferenceExceeds(waiting_since, now, 10000))
		{
			ereport(WARNING,
					(errmsg("forst: WAL replay has waited %ld s for memtable memory",
							(long) ((now - waiting_since) / USECS_PER_SEC)),
					 errdetail("All %d memtables hold entries that the primary has not flushed yet, or that queries on this server still read.",
							   forst_shared->nslabs),
					 errhint("Give this server at least the primary's forst.memtable_memory (replay may use as much again for the memtables a standby keeps longer than the primary), and a forst.remote_dir that reaches the primary's object store.")));
			waiting_since = now;
		}
		forst_wake_flusher();
		ConditionVariablePrepareToSleep(&forst_shared->slab_cv);
		(void) ConditionVariableTimedSleep(&forst_shared->slab_cv, 100,
										   PG_WAIT_EXTENSION);
		ConditionVariableCancelSleep();
		if (AmStartupProcess())
			HandleStartupProcInterrupts();
		else
			CHECK_FOR_INTERRUPTS();
		return;
	}
	waiting_since = 0;
	/*
	 * While it waits, this backend does not hold the flush worker back
	 * from reusing slabs (see keys/tid.c): otherwise a transaction that
	 * writes more than the pool holds would wait for itself.
	 */
	forst_shared->waiting[MyBackendId] = true;
	forst_memory_waits++;
	forst_wake_flusher();
	start = GetCurrentTimestamp();
	ConditionVariablePrepareToSleep(&forst_shared->slab_cv);
	(void) ConditionVariableTimedSleep(&forst_shared->slab_cv, 100,
									   PG_WAIT_EXTENSION);
	ConditionVariableCancelSleep();
	forst_memory_wait_end();

	/*
	 * The flush worker found this wait in a cycle (see flush/flush_worker.c): the
	 * memory can only come from a transaction that waits for this one.
	 */
	if (forst_shared->victim[MyBackendId])
	{
		forst_shared->victim[MyBackendId] = false;
		ereport(ERROR,
				(errcode(ERRCODE_T_R_DEADLOCK_DETECTED),
				 errmsg("deadlock detected"),
				 errdetail("This transaction waits for forst memtable memory, which only becomes free when a transaction that waits for this one ends."),
				 errhint("Retry the transaction.  Raise forst.memtable_memory if this happens often.")));
	}
	forst_stats_add(FS_WRITE_STALLS, 1);
	forst_stats_add(FS_WRITE_STALL_US,
					(uint64) Max(GetCurrentTimestamp() - start, 0));
	CHECK_FOR_INTERRUPTS();
}

/* Takes a free slab and formats it as an empty memtable owned by ts. */
static int
slab_take(ForstTableShared *ts)
{
	int			slab;
	FstMemtable *mt;
	FstError	err;

	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	slab = forst_shared->free_head;
	/* past the pool only for WAL replay (shmem/shmem.h), catch-up too */
	if (slab >= 0 && !AmStartupProcess() && !forst_in_catchup_replay &&
		forst_shared->nslabs - forst_shared->nfree >= forst_shared->pool_slabs)
		slab = -1;
	if (slab >= 0)
	{
		forst_shared->free_head = forst_shared->slabs[slab].next_free;
		forst_shared->nfree--;
		forst_shared->slabs[slab].state = FORST_SLAB_ACTIVE;
		forst_shared->slabs[slab].owner = ts->rnode;
	}
	LWLockRelease(forst_shared->lock);
	if (slab < 0)
		return -1;
	if (fst_memtable_init(forst_slab_memtable(slab), forst_shared->slab_size,
						  (uint64) slab * 7919 + 1, &mt, &err) != FST_OK)
		elog(ERROR, "forst: could not format memtable slab %d: %s", slab, err.msg);
	return slab;
}

/*
 * Makes the table's active memtable its newest immutable one (the table
 * then has no active memtable).  Caller holds ts->write_lock and ts->lock
 * exclusively and has checked that there is room among the immutable ones.
 */
void
forst_freeze_active_locked(ForstTableShared *ts)
{
	Assert(ts->active >= 0 && ts->nimmutable < FORST_MAX_IMMUTABLE);
	Assert(LWLockHeldByMeInMode(&ts->write_lock, LW_EXCLUSIVE));
	fst_memtable_freeze(forst_slab_memtable(ts->active));
	forst_shared->slabs[ts->active].state = FORST_SLAB_IMMUTABLE;
	memmove(&ts->immutable[1], &ts->immutable[0],
			sizeof(int) * ts->nimmutable);
	ts->immutable[0] = ts->active;
	ts->nimmutable++;
	ts->active = -1;
}

void
forst_memtable_put(ForstTableShared *ts, FstSlice ikey, FstSlice value,
				   XLogRecPtr lsn, int *slab_out, uint32 *ref_out)
{
	FstMemtableSplice splice;
	int			splice_slab = -1;
	uint32		splice_generation = 0;

	/*
	 * The search for where the entry goes, as a reader of the active
	 * memtable (ts->lock keeps it active, and so its slab from reuse), so
	 * that write_lock is held for the link alone: concurrent writers of the
	 * table otherwise queued on it for each other's searches.
	 */
	splice.mt = NULL;
	LWLockAcquire(&ts->lock, LW_SHARED);
	if (ts->active >= 0)
	{
		splice_slab = ts->active;
		splice_generation = forst_shared->slabs[splice_slab].generation;
		fst_memtable_find_splice(forst_slab_memtable(splice_slab), ikey, &splice);
	}
	LWLockRelease(&ts->lock);

	for (;;)
	{
		FstError	err;
		FstCode		rc;
		int			newslab;

		/*
		 * write_lock keeps ts->active and its memtable's state still (see
		 * Locking in shmem/shmem.h); readers of the table do not wait.
		 */
		LWLockAcquire(&ts->write_lock, LW_EXCLUSIVE);
		if (ts->active >= 0)
		{
			/* the splice only if its memtable is still this one */
			bool		same = ts->active == splice_slab &&
				forst_shared->slabs[splice_slab].generation == splice_generation;

			rc = fst_memtable_insert_at(forst_slab_memtable(ts->active), ikey,
										value, same ? &splice : NULL,
										ref_out, &err);
			if (rc == FST_OK)
			{
				ForstSlab  *s = &forst_shared->slabs[ts->active];

				if (XLogRecPtrIsInvalid(s->first_lsn) ||
					(!XLogRecPtrIsInvalid(lsn) && lsn < s->first_lsn))
					s->first_lsn = lsn;
				if (lsn > s->last_lsn)
					s->last_lsn = lsn;
				if (ts->unlogged)
					s->unlogged = true;
				*slab_out = ts->active;
				LWLockRelease(&ts->write_lock);
				return;
			}
			if (rc != FST_FULL)
			{
				LWLockRelease(&ts->write_lock);
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("forst: could not insert into a memtable: %s", err.msg)));
			}
		}

		/* switch to a new memtable: also under the lock readers take */
		LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
		if (ts->active >= 0 && ts->nimmutable >= FORST_MAX_IMMUTABLE)
		{
			/* too many memtables wait for the flush: wait with them */
			LWLockRelease(&ts->lock);
			LWLockRelease(&ts->write_lock);
			wait_for_slab();
			continue;
		}
		newslab = slab_take(ts);
		if (newslab < 0)
		{
			/* the pool is used up: wait until a flush frees a slab */
			LWLockRelease(&ts->lock);
			LWLockRelease(&ts->write_lock);
			wait_for_slab();
			continue;
		}
		if (ts->active >= 0)
			forst_freeze_active_locked(ts);
		ts->active = newslab;
		LWLockRelease(&ts->lock);
		LWLockRelease(&ts->write_lock);
		forst_wake_flusher();
		/* and try again in the new memtable */
	}
}

int
forst_table_slabs(ForstTableShared *ts, int *slabs)
{
	int			n = 0;
	int			i;

	LWLockAcquire(&ts->lock, LW_SHARED);
	if (ts->active >= 0)
		slabs[n++] = ts->active;
	for (i = 0; i < ts->nimmutable; i++)
		slabs[n++] = ts->immutable[i];
	LWLockRelease(&ts->lock);
	return n;
}

/*
 * Ends this backend's wait for memtable memory (set in wait_for_slab).
 * Under the pool lock: the flush worker frees a slab that this backend's
 * pin covers only while it holds that lock and sees the wait
 * (forst_slab_free_retired), so once this returns every such slab has its
 * new generation, and a view that holds it is seen to be stale
 * (forst_table_view_stale) before it is read again.  Without the lock the
 * worker could decide while this backend waited and free after it had
 * checked its views: a cursor then read the slab while its pages were
 * removed and reused ("malformed entry").  Also called when a transaction
 * aborts, for a wait that a cancel ended.
 */
void
forst_memory_wait_end(void)
{
	if (MyBackendId == InvalidBackendId || MyBackendId > MaxBackends ||
		forst_shared == NULL || !forst_shared->waiting[MyBackendId])
		return;
	LWLockAcquire(forst_shared->lock, LW_SHARED);
	forst_shared->waiting[MyBackendId] = false;
	LWLockRelease(forst_shared->lock);
}

bool
forst_slab_free_retired(int slab, uint64 retired_epoch)
{
	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	if (!forst_slab_reusable(retired_epoch, forst_shared->waiting))
	{
		LWLockRelease(forst_shared->lock);
		return false;
	}
	/* stale for every view from here on; its pages go next */
	forst_shared->slabs[slab].generation++;
	LWLockRelease(forst_shared->lock);
	forst_slab_release_pages(slab);
	if (forst_debug_slab_release_delay_ms > 0)
		pg_usleep(forst_debug_slab_release_delay_ms * 1000L);
	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	forst_slab_free_locked(slab, true);
	LWLockRelease(forst_shared->lock);
	ConditionVariableBroadcast(&forst_shared->slab_cv);
	return true;
}

void
forst_slab_free(int slab)
{
	/* before it is free: then another writer may take it at once */
	forst_slab_release_pages(slab);
	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	forst_slab_free_locked(slab, false);
	LWLockRelease(forst_shared->lock);
	ConditionVariableBroadcast(&forst_shared->slab_cv);
}


bool
forst_pool_exhausted(void)
{
	return forst_shared->nslabs - forst_shared->nfree >= forst_shared->pool_slabs;
}

bool
forst_memory_wanted(void)
{
	int			i;

	if (forst_pool_exhausted())
		return true;
	for (i = 0; i <= MaxBackends; i++)
		if (forst_shared->waiting[i])
			return true;
	return false;
}
