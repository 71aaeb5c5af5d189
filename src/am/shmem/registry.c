/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The table registry: each table's shared state (ForstTableShared),
 *	  found or registered by its RelFileNode, held by the flush and
 *	  compaction workers, and forgotten when the table goes (see
 *	  shmem/shmem.h).
 *
 * A table is registered on its first use and its entry takes a slot, which
 * passes over the registry go by (shmem/table_scan.c).  The entry stays
 * where it is in shared memory until it is removed; removing it returns
 * its memtable slabs to the pool (shmem/shmem.c).  A worker that flushes
 * or compacts a table holds it from forst_flush_begin or
 * forst_compact_begin to the matching end: a drop meanwhile is deferred
 * until the last of them ends.  Each backend caches its lookups, and drops
 * the cache whenever any entry has been removed.  The hash and the slots
 * are laid out at start-up by shmem/shmem.c (shmem/shmem_internal.h);
 * forst_shared->lock protects them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/twophase.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "utils/hsearch.h"

#include "am/forst.h"
#include "am/shmem/shmem.h"
#include "am/shmem/shmem_internal.h"

/* Installed by wal/wal.c: waits for (or does) the WAL catch-up. */
void		(*forst_memtables_ready_hook) (void) = NULL;
void		(*forst_table_gate_hook) (const RelFileNode *rnode) = NULL;

/*
 * This backend's direct-mapped cache of registry lookups.  Every statement
 * on a forst table looks its entry up, and the registry's shared lock is
 * one cache line written by every backend that takes it.  An entry stays
 * where it is in shared memory until it is removed, and every removal
 * counts in forst_shared->tables_removed: the cache is valid while that
 * count is the one it was filled under.
 */
#define TABLE_FRONT_SLOTS	16

static struct
{
	RelFileNode rnode;
	ForstTableShared *ts;
}			table_front[TABLE_FRONT_SLOTS];
static uint64 table_front_removed = PG_UINT64_MAX;

static inline int
table_front_slot(const RelFileNode *rnode)
{
	return (int) ((rnode->relNode ^ rnode->dbNode * 31) % TABLE_FRONT_SLOTS);
}

/* Gives a new entry a slot; false if all are taken.  Lock held exclusively. */
static bool
table_slot_take(ForstTableShared *ts)
{
	int			slot;

	if (table_slots->nfree > 0)
		slot = table_slots->free[--table_slots->nfree];
	else if (table_slots->used < forst_max_tables)
		slot = table_slots->used++;
	else
		return false;
	ts->slot = slot;
	table_slots->ts[slot] = ts;
	return true;
}

ForstTableShared *
forst_table_shared(const RelFileNode *rnode, bool create)
{
	ForstTableShared *ts;
	bool		found;
	uint64		removed;
	int			slot = table_front_slot(rnode);

	/* memtables are whole only after the WAL catch-up (wal/wal.c) */
	if (forst_memtables_ready_hook)
		forst_memtables_ready_hook();
	/* unlogged tables back at their checkpoint after a crash */
	if (forst_table_gate_hook)
		forst_table_gate_hook(rnode);
	removed = pg_atomic_read_u64(&forst_shared->tables_removed);
	if (removed != table_front_removed)
	{
		memset(table_front, 0, sizeof(table_front));
		table_front_removed = removed;
	}
	else if (table_front[slot].ts != NULL &&
			 RelFileNodeEquals(table_front[slot].rnode, *rnode))
		return table_front[slot].ts;
	LWLockAcquire(forst_shared->lock, LW_SHARED);
	ts = hash_search(forst_tables, rnode, HASH_FIND, NULL);
	LWLockRelease(forst_shared->lock);
	if (ts)
	{
		table_front[slot].rnode = *rnode;
		table_front[slot].ts = ts;
	}
	if (ts || !create)
		return ts;

	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	ts = hash_search(forst_tables, rnode, HASH_ENTER_NULL, &found);
	if (ts != NULL && !found && !table_slot_take(ts))
	{
		/* the hash may outgrow forst.max_tables, the slots cannot */
		hash_search(forst_tables, rnode, HASH_REMOVE, NULL);
		ts = NULL;
	}
	if (ts == NULL)
	{
		LWLockRelease(forst_shared->lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many forst tables are in use"),
				 errhint("Increase forst.max_tables (currently %d) and restart the server.",
						 forst_max_tables)));
	}
	if (!found)
	{
		LWLockInitialize(&ts->lock, forst_shared->tranche_id);
		LWLockInitialize(&ts->write_lock, forst_shared->write_tranche_id);
		LWLockInitialize(&ts->manifest_lock, forst_shared->manifest_tranche_id);
		pg_atomic_init_u64(&ts->next_file_id, 0);
		ts->active = -1;
		ts->nimmutable = 0;
		ts->loaded = false;
		ts->manifest_version = 0;
		ts->unreadable_rows_version = 0;
		ts->kg_lo = 0;
		ts->kg_hi = PG_UINT16_MAX;
		ts->fenced = false;
		ts->unlogged = false;
		memset(ts->inflight_pid, 0, sizeof(ts->inflight_pid));
		ts->busy = 0;
		ts->compacting = false;
		ts->drop_pending = false;
		pg_atomic_init_u64(&ts->live_estimate, 0);

		/*
		 * A prepared transaction keeps its bucket locks across a restart,
		 * which forgets the flag: with prepared transactions possible,
		 * writers always look (write/key_locks.h).
		 */
		pg_atomic_init_u32(&ts->key_share_spread, max_prepared_xacts > 0 ? 1 : 0);
		memset(&ts->expiry, 0, sizeof(ts->expiry));
		pg_atomic_init_u64(&ts->expiry.reclaimed_bytes, 0);
		pg_atomic_init_u64(&ts->expiry.reclaimed_rows, 0);
		pg_atomic_init_u64(&ts->expiry.dropped_files, 0);
	}
	LWLockRelease(forst_shared->lock);
	return ts;
}

/* Frees a table's memtables and forgets it; forst_shared->lock held. */
static void
table_drop_locked(ForstTableShared *ts)
{
	int			i;

	if (ts->active >= 0)
	{
		forst_slab_release_pages(ts->active);
		forst_slab_free_locked(ts->active, false);
	}
	for (i = 0; i < ts->nimmutable; i++)
	{
		forst_slab_release_pages(ts->immutable[i]);
		forst_slab_free_locked(ts->immutable[i], false);
	}
	/* before the entry's memory can be reused: lookup caches drop it */
	pg_atomic_fetch_add_u64(&forst_shared->tables_removed, 1);
	table_slots->ts[ts->slot] = NULL;
	table_slots->free[table_slots->nfree++] = ts->slot;
	hash_search(forst_tables, &ts->rnode, HASH_REMOVE, NULL);
}

bool
forst_table_registered(const RelFileNode *rnode)
{
	bool		found;

	LWLockAcquire(forst_shared->lock, LW_SHARED);
	found = hash_search(forst_tables, rnode, HASH_FIND, NULL) != NULL;
	LWLockRelease(forst_shared->lock);
	return found;
}

void
forst_table_shared_drop(const RelFileNode *rnode)
{
	ForstTableShared *ts;

	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	ts = hash_search(forst_tables, rnode, HASH_FIND, NULL);
	if (ts)
	{
		/* the flush worker drops it when its flush ends */
		if (ts->busy > 0)
			ts->drop_pending = true;
		else
			table_drop_locked(ts);
	}
	LWLockRelease(forst_shared->lock);
	ConditionVariableBroadcast(&forst_shared->slab_cv);
}

ForstTableShared *
forst_flush_begin(const RelFileNode *rnode)
{
	ForstTableShared *ts;

	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	ts = hash_search(forst_tables, rnode, HASH_FIND, NULL);
	if (ts && !ts->drop_pending)
		ts->busy++;
	else
		ts = NULL;
	LWLockRelease(forst_shared->lock);
	return ts;
}

void
forst_flush_end(ForstTableShared *ts)
{
	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	Assert(ts->busy > 0);
	ts->busy--;
	if (ts->drop_pending && ts->busy == 0)
		table_drop_locked(ts);
	LWLockRelease(forst_shared->lock);
	ConditionVariableBroadcast(&forst_shared->slab_cv);
}

/*
 * A compaction worker claims a table (NULL if another one has it, or it is
 * being dropped); forst_compact_end gives it back.
 */
ForstTableShared *
forst_compact_begin(const RelFileNode *rnode)
{
	ForstTableShared *ts;

	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	ts = hash_search(forst_tables, rnode, HASH_FIND, NULL);
	if (ts && !ts->drop_pending && !ts->compacting)
	{
		ts->busy++;
		ts->compacting = true;
	}
	else
		ts = NULL;
	LWLockRelease(forst_shared->lock);
	return ts;
}

void
forst_compact_end(ForstTableShared *ts)
{
	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	ts->compacting = false;
	LWLockRelease(forst_shared->lock);
	forst_flush_end(ts);
}
