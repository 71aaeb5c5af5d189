/*-------------------------------------------------------------------------
 *
 * table_scan.c
 *	  Passes over the table registry (see shmem/shmem.h): every table with
 *	  shared state, visited in batches from any position, so that the
 *	  background workers reach every table however many there are.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"
#include "utils/hsearch.h"

#include "am/shmem/shmem.h"
#include "am/shmem/shmem_internal.h"

/* Tables with shared state; caller holds forst_shared->lock. */
int
forst_tables_count(void)
{
	return (int) hash_get_num_entries(forst_tables);
}

/*
 * Up to max tables with shared state for which pred is true (called under
 * forst_shared->lock), their RelFileNodes in out.
 */
static int
forst_collect_tables(bool (*pred) (ForstTableShared *ts, void *arg), void *arg,
					 RelFileNode *out, int max)
{
	HASH_SEQ_STATUS status;
	ForstTableShared *ts;
	int			n = 0;

	LWLockAcquire(forst_shared->lock, LW_SHARED);
	hash_seq_init(&status, forst_tables);
	while ((ts = hash_seq_search(&status)) != NULL)
	{
		if (n < max && pred(ts, arg))
			out[n++] = ts->rnode;
	}
	LWLockRelease(forst_shared->lock);
	return n;
}

/* Slots a call of forst_tables_next looks at under one hold of the lock. */
#define SLOTS_PER_HOLD 4096

void
forst_tables_scan_begin(ForstTableScan *scan, int start)
{
	LWLockAcquire(forst_shared->lock, LW_SHARED);
	scan->wrap = table_slots->used;
	LWLockRelease(forst_shared->lock);
	scan->left = scan->wrap;
	scan->pos = (scan->wrap > 0 && start > 0) ? start % scan->wrap : 0;
}

int
forst_tables_next(ForstTableScan *scan,
				  bool (*pred) (ForstTableShared *ts, void *arg), void *arg,
				  RelFileNode *out, int max)
{
	int			n = 0;

	while (scan->left > 0 && n < max)
	{
		int			looked = 0;

		LWLockAcquire(forst_shared->lock, LW_SHARED);
		while (scan->left > 0 && n < max && looked < SLOTS_PER_HOLD)
		{
			ForstTableShared *ts;

			/*
			 * Round at the slots in use when the pass began: one taken later
			 * holds a table registered meanwhile, and going round at a later
			 * count would leave slots out.
			 */
			if (scan->pos >= scan->wrap)
				scan->pos = 0;
			ts = table_slots->ts[scan->pos];
			scan->pos++;
			scan->left--;
			looked++;
			if (ts != NULL && pred(ts, arg))
				out[n++] = ts->rnode;
		}
		LWLockRelease(forst_shared->lock);
	}
	return n;
}

static bool
in_database(ForstTableShared *ts, void *arg)
{
	return ts->rnode.dbNode == *(Oid *) arg && !ts->drop_pending;
}

int
forst_tables_of_database(ForstTableScan *scan, Oid dbid, RelFileNode *out,
						 int max)
{
	return forst_tables_next(scan, in_database, &dbid, out, max);
}

static bool
same_db_rel(ForstTableShared *ts, void *arg)
{
	const RelFileNode *want = arg;

	return ts->rnode.dbNode == want->dbNode && ts->rnode.relNode == want->relNode;
}

ForstTableShared *
forst_table_shared_any_spc(const RelFileNode *rnode)
{
	RelFileNode found;

	if (forst_collect_tables(same_db_rel, (void *) rnode, &found, 1) == 0)
		return NULL;
	return forst_table_shared(&found, false);
}

static bool
same_db_rel_dropping(ForstTableShared *ts, void *arg)
{
	return same_db_rel(ts, arg) && ts->drop_pending;
}

bool
forst_table_wait_dropped(const RelFileNode *rnode, long timeout_ms)
{
	TimestampTz end = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	RelFileNode found;
	bool		gone = false;

	/* forst_flush_end broadcasts once it has dropped the table */
	ConditionVariablePrepareToSleep(&forst_shared->slab_cv);
	for (;;)
	{
		long		left;

		if (forst_collect_tables(same_db_rel_dropping, (void *) rnode, &found, 1) == 0)
		{
			gone = true;
			break;
		}
		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), end);
		if (left <= 0)
			break;
		(void) ConditionVariableTimedSleep(&forst_shared->slab_cv, Min(left, 100),
										   PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	return gone;
}

/* A pass over the tables with shared state (forst_tables_next). */
static bool
not_dropped(ForstTableShared *ts, void *arg)
{
	return !ts->drop_pending;
}

int
forst_all_tables(ForstTableScan *scan, RelFileNode *out, int max)
{
	return forst_tables_next(scan, not_dropped, NULL, out, max);
}

static bool
has_immutable(ForstTableShared *ts, void *arg)
{
	return ts->nimmutable > 0;
}

int
forst_tables_to_flush(ForstTableScan *scan, RelFileNode *out, int max)
{
	return forst_tables_next(scan, has_immutable, NULL, out, max);
}
