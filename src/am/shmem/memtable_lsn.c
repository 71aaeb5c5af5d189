/*-------------------------------------------------------------------------
 *
 * memtable_lsn.c
 *	  Memtables and the WAL (see shmem/shmem.h): the oldest WAL position
 *	  whose entries are not in SST files yet (what forst's replication slot
 *	  must keep), freeing a standby's memtables that a MANIFEST record
 *	  covers, and freezing active memtables so that the slot can move on.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "postmaster/startup.h"

#include "am/forst.h"
#include "am/shmem/shmem.h"

/*
 * The WAL insert position, or an earlier one where a writer is logging
 * now.  The insert position is read before the writers' marks (write/dml.c
 * sets its mark to the insert position before logging), so a writer that
 * sets its mark later logs after the position read.
 */
static XLogRecPtr
oldest_inflight(void)
{
	XLogRecPtr	oldest = GetXLogInsertRecPtr();
	int			i;

	pg_memory_barrier();
	for (i = 0; i <= MaxBackends; i++)
	{
		XLogRecPtr	p = (XLogRecPtr) pg_atomic_read_u64(FORST_INFLIGHT(i));

		if (p != InvalidXLogRecPtr && p < oldest)
			oldest = p;
	}

	/*
	 * A writer sets its slab's first_lsn before it clears its mark (with a
	 * barrier between): a cleared mark read above means that the caller's
	 * later reads of first_lsn see the store.
	 */
	pg_read_barrier();
	return oldest;
}

XLogRecPtr
forst_oldest_inflight_lsn(void)
{
	return oldest_inflight();
}

XLogRecPtr
forst_oldest_unflushed_lsn(void)
{
	XLogRecPtr	oldest = oldest_inflight();
	int			i;

	LWLockAcquire(forst_shared->lock, LW_SHARED);
	for (i = 0; i < forst_shared->nslabs; i++)
	{
		ForstSlab  *s = &forst_shared->slabs[i];

		/* an unlogged table's entries have no WAL to keep */
		if ((s->state == FORST_SLAB_ACTIVE || s->state == FORST_SLAB_IMMUTABLE) &&
			!s->unlogged &&
			!XLogRecPtrIsInvalid(s->first_lsn) && s->first_lsn < oldest)
			oldest = s->first_lsn;
	}
	LWLockRelease(forst_shared->lock);
	return oldest;
}

/*
 * The WAL position before which every entry of ts that was logged is in
 * its manifest: no entry of its memtables, and none being written now, was
 * logged before it.  Caller holds ts->lock.
 */
XLogRecPtr
forst_table_unflushed_lsn(ForstTableShared *ts)
{
	XLogRecPtr	oldest = oldest_inflight();
	int			i;

	if (ts->unlogged)
		return oldest;			/* no WAL of its entries */
	if (ts->active >= 0)
	{
		XLogRecPtr	p = forst_shared->slabs[ts->active].first_lsn;

		if (!XLogRecPtrIsInvalid(p) && p < oldest)
			oldest = p;
	}
	for (i = 0; i < ts->nimmutable; i++)
	{
		XLogRecPtr	p = forst_shared->slabs[ts->immutable[i]].first_lsn;

		if (!XLogRecPtrIsInvalid(p) && p < oldest)
			oldest = p;
	}
	return oldest;
}

/*
 * Redo of a MANIFEST record (see wal/wal.h): frees the memtables of ts
 * whose entries were all logged before covered_lsn, which are in the
 * manifest now.  The active memtable is frozen when it holds some entries
 * from before covered_lsn, so that a later MANIFEST can free it: the
 * memtables of a standby are then bounded like the primary's, plus at most
 * one per table.  On a hot standby, where queries may be reading them, the
 * slabs are retired: the flush worker returns them to the pool when no
 * such query is left.  Elsewhere (crash recovery, forst's catch-up replay
 * before anyone reads) they are free at once: nothing else would free
 * them while the replay waits for memory.  Caller holds ts->write_lock and
 * ts->lock exclusively.  Returns how many memtables it let go.
 */
int
forst_retire_covered(ForstTableShared *ts, XLogRecPtr covered_lsn)
{
	bool		readers = AmStartupProcess() && StandbyMode && EnableHotStandby;
	int			retired = 0;
	int			i;

	if (ts->active >= 0)
	{
		ForstSlab  *s = &forst_shared->slabs[ts->active];

		if (!XLogRecPtrIsInvalid(s->first_lsn) && s->first_lsn < covered_lsn &&
			ts->nimmutable < FORST_MAX_IMMUTABLE)
			forst_freeze_active_locked(ts);
	}
	/* oldest last; a memtable only holds entries newer than older ones' */
	for (i = ts->nimmutable - 1; i >= 0; i--)
	{
		ForstSlab  *s = &forst_shared->slabs[ts->immutable[i]];

		if (XLogRecPtrIsInvalid(s->last_lsn) || s->last_lsn >= covered_lsn)
			break;
		ts->nimmutable--;
		retired++;
		if (readers)
			s->state = FORST_SLAB_RETIRING;
		else
			forst_slab_free(ts->immutable[i]);
	}
	if (retired > 0 && readers)
		forst_wake_flusher();
	return retired;
}

static bool
has_active(ForstTableShared *ts, void *arg)
{
	return ts->active >= 0;
}

bool
forst_table_freeze_before(const RelFileNode *rnode, XLogRecPtr lsn)
{
	ForstTableShared *ts = forst_flush_begin(rnode);
	bool		pending = false;
	int			i;

	if (ts == NULL)
		return false;
	LWLockAcquire(&ts->write_lock, LW_EXCLUSIVE);
	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	if (ts->active >= 0)
	{
		XLogRecPtr	first = forst_shared->slabs[ts->active].first_lsn;

		if (!XLogRecPtrIsInvalid(first) && first < lsn)
		{
			if (ts->nimmutable < FORST_MAX_IMMUTABLE)
				forst_freeze_active_locked(ts);
			pending = true;
		}
	}
	for (i = 0; i < ts->nimmutable; i++)
	{
		XLogRecPtr	first = forst_shared->slabs[ts->immutable[i]].first_lsn;

		if (!XLogRecPtrIsInvalid(first) && first < lsn)
			pending = true;
	}
	LWLockRelease(&ts->lock);
	LWLockRelease(&ts->write_lock);
	forst_flush_end(ts);
	return pending;
}

int
forst_freeze_actives(bool unlogged_only)
{
	RelFileNode rnodes[FORST_TABLES_BATCH];
	ForstTableScan scan;
	ForstTableShared *ts;
	int			n;
	int			frozen = 0;
	int			i;

	/* every table, a batch at a time */
	forst_tables_scan_begin(&scan, 0);
	while ((n = forst_tables_next(&scan, has_active, NULL, rnodes,
								  lengthof(rnodes))) > 0)
		for (i = 0; i < n; i++)
		{
			ts = forst_flush_begin(&rnodes[i]);
			if (ts == NULL)
				continue;
			LWLockAcquire(&ts->write_lock, LW_EXCLUSIVE);
			LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
			if (ts->active >= 0 && ts->nimmutable < FORST_MAX_IMMUTABLE &&
				(ts->unlogged || !unlogged_only) &&
				fst_memtable_num_entries(forst_slab_memtable(ts->active)) > 0)
			{
				forst_freeze_active_locked(ts);
				frozen++;
			}
			LWLockRelease(&ts->lock);
			LWLockRelease(&ts->write_lock);
			forst_flush_end(ts);
		}
	return frozen;
}

bool
forst_memtables_in_use(bool unlogged_only)
{
	bool		used = false;
	int			i;

	LWLockAcquire(forst_shared->lock, LW_SHARED);
	for (i = 0; i < forst_shared->nslabs && !used; i++)
	{
		ForstSlab  *s = &forst_shared->slabs[i];

		used = (s->state == FORST_SLAB_ACTIVE || s->state == FORST_SLAB_IMMUTABLE) &&
			(s->unlogged || !unlogged_only) && !XLogRecPtrIsInvalid(s->first_lsn);
	}
	LWLockRelease(forst_shared->lock);
	return used;
}
