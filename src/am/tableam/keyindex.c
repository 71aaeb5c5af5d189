/*-------------------------------------------------------------------------
 *
 * keyindex.c
 *	  forst_key: the index access method behind a forst table's primary
 *	  key.  It stores nothing: its entries are the table's own key order.
 *
 * Uniqueness is enforced by the table AM when it writes (the key is where
 * the row lives), so aminsert has nothing to do.  Scans turn the scan keys
 * into a range of user parts: equality on leading key columns gives a
 * prefix, the first column without equality may add bounds.  The key group
 * leads every user part and is a hash of the first column, so a scan that
 * fixes the first column reads one key group; any other scan reads every
 * key group and merges them in key order (the planner may rely on that
 * order).  The executor rechecks every qual (xs_recheck), so the range may
 * be wider than the quals: keys this code cannot encode are left to it.
 *
 * "col = ANY(array)" and IN-lists on key columns (amsearcharray) make a
 * list of prefixes instead of one: every combination of the arrays'
 * elements with the other equalities, encoded, sorted in key order and
 * without duplicates.  The scan reads one prefix's range after the other,
 * so rows still come in key order; when every key column is fixed, the
 * lookups' blocks are first fetched together (on s3://, as a batch
 * upsert's are: read/prefetch.h), a chunk of forst.batch_lookup_rows keys
 * at a time.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/predicate.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/index_selfuncs.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "am/forst.h"
#include "am/keys/index_entry.h"
#include "am/keys/rel.h"
#include "am/keys/tid.h"
#include "am/read/mvcc.h"
#include "am/tableam/keyscan_plan.h"
#include "am/tableam/secondary.h"
#include "am/tableam/tableam.h"
#include "am/ddl/migrate.h"
#include "am/ddl/rekey.h"
#include "am/expiry/expiry.h"
#include "am/read/cursor.h"
#include "am/read/prefetch.h"
#include "am/read/stage.h"
#include "am/shmem/shmem.h"
#include "am/write/index_entries.h"
#include "am/write/onconflict.h"

PG_FUNCTION_INFO_V1(forst_key_handler);

typedef struct KeyScanState
{
	ForstCursor **cursors;		/* one per key group read */
	int			ncursors;
	bool	   *has_row;
	int		   *heap;			/* cursors with a row, the next row first */
	int			nheap;
	uint64		waits_seen;		/* forst_memory_waits when heap was built */
	bool		started;
	ForstKeyRange r;			/* what to read (tableam/keyscan_plan.h) */
	uint64		staged;			/* the stage this scan fetched, or 0 */
	int			prefetched;		/* an array scan's prefixes before this
								 * one were prefetched */

	/*
	 * Backward scans (max(), ORDER BY ... DESC: PostgreSQL plans them for
	 * any ordered index): the cursors read backward (read/cursor.h), the
	 * largest current row across key groups comes next, an array scan's
	 * prefixes are read last to first.  The direction is fixed by the
	 * first row: a scan that turns around is refused.
	 */
	bool		reversed;
} KeyScanState;

static IndexBuildResult *
fkey_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result = palloc0(sizeof(IndexBuildResult));
	ForstTableShared *ts;

	if (!forst_is_forst_relation(heap))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("forst_key indexes are only for forst tables"),
				 errhint("Use btree for \"%s\".", RelationGetRelationName(heap))));
	if (!index->rd_index->indisprimary)
		return forst_secondary_build(heap, index, indexInfo);
	if (forst_index_entry_id(index) != RelationGetRelid(index))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("entry_id applies to secondary indexes of forst tables, not to primary key \"%s\"",
						RelationGetRelationName(index))));
	forst_check_key_columns(RelationGetDescr(heap), index->rd_index->indnkeyatts,
							index->rd_index->indkey.values);
	ts = forst_table_shared(&heap->rd_node, false);

	/*
	 * The rows must be stored under this key.  A table migrating to forst,
	 * a rewritten table and a reindexed one have them so; a key that ALTER
	 * TABLE adds to a table with rows makes ddl/rekey.c rewrite the
	 * table under it when the statement ends.  Anything else would leave
	 * rows where the key cannot find them.
	 */
	if (ts && !forst_migrate_building(heap) && forst_relation_has_rows(heap) &&
		!forst_rekey_build_ok(heap, index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot build primary key \"%s\" of forst table \"%s\" because it has rows",
						RelationGetRelationName(index), RelationGetRelationName(heap)),
				 errdetail("A forst table is stored in the order of its key: rows are written again under a new key by ALTER TABLE only."),
				 errhint("Add the primary key with ALTER TABLE ... ADD PRIMARY KEY.")));
	return result;
}

static void
fkey_buildempty(Relation index)
{
}

static bool
fkey_insert(Relation index, Datum *values, bool *isnull, ItemPointer tid,
			Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
			IndexInfo *indexInfo)
{
	/*
	 * The table AM wrote the row at its key and checked uniqueness.  For a
	 * speculative insertion (ON CONFLICT) it wrote nothing if the key or a
	 * unique value was taken, and the executor learns that here: from an
	 * arbiter (UNIQUE_CHECK_PARTIAL) as a conflict, from another unique
	 * index as a unique violation.
	 */
	if ((checkUnique == UNIQUE_CHECK_PARTIAL || checkUnique == UNIQUE_CHECK_YES) &&
		forst_spec_conflicts(index, heap, tid))
	{
		if (checkUnique == UNIQUE_CHECK_PARTIAL)
			return false;
		forst_report_unique_violation(heap, index, values, isnull);
	}
	return true;
}

static IndexBulkDeleteResult *
fkey_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	return stats;
}

static IndexBulkDeleteResult *
fkey_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	return stats;
}

static void
fkey_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				  Cost *indexStartupCost, Cost *indexTotalCost,
				  Selectivity *indexSelectivity, double *indexCorrelation,
				  double *indexPages)
{
	GenericCosts costs;

	/*
	 * A secondary index is read as a btree would be: the range comes from
	 * equality on leading columns and bounds on the next one, the other
	 * quals only filter (btcostestimate counts that).  Its rows are fetched
	 * one by one, in no order of the table's.
	 */
	if (!path->indexinfo->unique)
	{
		btcostestimate(root, path, loop_count, indexStartupCost, indexTotalCost,
					   indexSelectivity, indexCorrelation, indexPages);
		*indexCorrelation = 0.0;
		return;
	}
	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);
	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 1.0;	/* the table is in key order */
	*indexPages = costs.numIndexPages;
}

static bytea *
fkey_options(Datum reloptions, bool validate)
{
	return forst_index_options(reloptions, validate);
}

static bool
fkey_validate(Oid opclassoid)
{
	return true;
}

/* ---------------------------------------------------------------------- */

static IndexScanDesc
fkey_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	KeyScanState *st;

	if (!index->rd_index->indisprimary)
	{
		forst_secondary_beginscan(scan);
		return scan;
	}
	st = palloc0(sizeof(KeyScanState));

	/* a key or two: start small (ON CONFLICT begins a scan per row) */
	forst_keyrange_init(&st->r);
	scan->opaque = st;
	return scan;
}

static void
close_cursors(KeyScanState *st)
{
	int			i;

	for (i = 0; i < st->ncursors; i++)
		forst_cursor_close(st->cursors[i]);
	st->ncursors = 0;
	st->nheap = 0;
	if (st->cursors)
		pfree(st->cursors);
	if (st->has_row)
		pfree(st->has_row);
	if (st->heap)
		pfree(st->heap);
	st->cursors = NULL;
	st->has_row = NULL;
	st->heap = NULL;
}

static void
fkey_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
			int norderbys)
{
	KeyScanState *st = scan->opaque;

	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (!scan->indexRelation->rd_index->indisprimary)
	{
		forst_secondary_rescan(scan);
		return;
	}
	close_cursors(st);
	st->started = false;
	st->reversed = false;
}

/*
 * Before the first prefix of a chunk of an array scan that fixes every key
 * column: the blocks the chunk's lookups will read, fetched together where
 * that pays (read/prefetch.h), as a batch upsert's are.
 */
static void
prefetch_prefixes(Relation heap, KeyScanState *st)
{
	int			first = st->r.curprefix;
	int			n = Min(st->r.nprefixes - first, Max(forst_batch_lookup_rows, 1));
	FstSlice   *keys;
	char	   *buf;
	char	   *p;
	Size		bytes = 0;
	int			i;

	st->prefetched = first + n;
	if (n < 2 || !forst_batch_lookups || !forst_prefetch_possible())
		return;
	for (i = 0; i < n; i++)
		bytes += FST_KG_BYTES + st->r.prefixes[first + i].len;
	keys = palloc(sizeof(FstSlice) * n);
	p = buf = palloc_extended(bytes, MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
	{
		ForstKeyPrefix *k = &st->r.prefixes[first + i];

		/* a user part: the key group, then the user key */
		fst_put_be16(p, k->kg);
		memcpy(p + FST_KG_BYTES, k->data, k->len);
		keys[i] = fst_slice(p, FST_KG_BYTES + k->len);
		p += FST_KG_BYTES + k->len;
	}
	forst_prefetch_keys(heap, keys, n, NULL);
	pfree(keys);
	pfree(buf);
}

/* Opens the cursors of the key groups of the range and positions them. */
static void
open_cursors(IndexScanDesc scan, KeyScanState *st)
{
	Relation	heap = scan->heapRelation;
	ForstRelInfo *info = forst_relinfo(heap);
	ForstTableShared *ts = forst_table_shared(&heap->rd_node, true);
	int			first,
				last,
				kg;

	if (st->r.nprefixes > 0 && st->r.point && st->r.curprefix >= st->prefetched &&
		!st->reversed)
		prefetch_prefixes(heap, st);
	if (st->r.kg >= 0)
		first = last = st->r.kg;
	else
	{
		first = 0;
		last = info->max_key_groups - 1;
	}
	/*
	 * on S3: the key groups' ranges, or where they start, in parallel (a
	 * rescan over the same range keeps what it staged before)
	 */
	if (last > first && !st->reversed)
	{
		uint64		staged = forst_prefetch_scan(heap, first, last,
												 fst_slice(st->r.lo.data, st->r.lo.len),
												 fst_slice(st->r.hi.data, st->r.hi.len));

		if (staged != st->staged)
			forst_stage_release(st->staged);
		st->staged = staged;
	}
	st->cursors = palloc(sizeof(ForstCursor *) * (last - first + 1));
	st->has_row = palloc0(sizeof(bool) * (last - first + 1));
	st->heap = palloc(sizeof(int) * (last - first + 1));
	for (kg = first; kg <= last; kg++)
	{
		StringInfoData lo,
					hi;
		ForstCursor *c;
		char		kgb[FST_KG_BYTES];

		fst_put_be16(kgb, (uint16) kg);
		initStringInfo(&lo);
		appendBinaryStringInfo(&lo, kgb, FST_KG_BYTES);
		appendBinaryStringInfo(&lo, st->r.lo.data, st->r.lo.len);
		initStringInfo(&hi);
		if (st->r.hi.len > 0)
		{
			appendBinaryStringInfo(&hi, kgb, FST_KG_BYTES);
			appendBinaryStringInfo(&hi, st->r.hi.data, st->r.hi.len);
		}
		else
		{
			/* the start of the next key group (or of the index entries) */
			fst_put_be16(kgb, kg + 1 < FST_MAX_KEY_GROUPS ? (uint16) (kg + 1) : FST_KG_INDEX);
			appendBinaryStringInfo(&hi, kgb, FST_KG_BYTES);
		}
		c = forst_cursor_open(heap, scan->xs_snapshot, ts,
							  fst_slice(lo.data, lo.len), fst_slice(hi.data, hi.len),
							  st->r.point);
		st->cursors[st->ncursors] = c;
		if (st->reversed)
		{
			forst_cursor_seek_back(c, fst_slice(lo.data, lo.len), fst_slice(hi.data, hi.len));
			st->has_row[st->ncursors] = forst_cursor_prev(c);
		}
		else
		{
			forst_cursor_seek(c, fst_slice(lo.data, lo.len), fst_slice(hi.data, hi.len));
			st->has_row[st->ncursors] = forst_cursor_next(c);
		}
		st->ncursors++;
		pfree(lo.data);
		pfree(hi.data);
	}
}


/* Plans the range (or the array scan's ranges) and opens the first. */
static void
start_scan(IndexScanDesc scan, KeyScanState *st)
{
	Relation	heap = scan->heapRelation;

	forst_keyrange_plan(scan, forst_relinfo(heap), &st->r);
	st->prefetched = 0;
	st->started = true;
	if (st->r.empty)
		return;
	if (st->reversed && st->r.nprefixes > 1)
		forst_keyrange_use_prefix(&st->r, st->r.nprefixes - 1);
	if (IsMVCCSnapshot(scan->xs_snapshot))
		PredicateLockRelation(heap, scan->xs_snapshot);
	open_cursors(scan, st);
}

/*
 * The key groups' cursors in a binary heap by their current rows' user
 * keys (without the key group), the next row to return on top: smallest
 * first, largest first when the scan is reversed.  A range over every key
 * group has 128 cursors; the heap compares about 7 per row, not 128.
 */
static inline bool
heap_before(KeyScanState *st, int a, int b)
{
	int			cmp = fst_slice_cmp(st->cursors[a]->cur.entry.user_key,
									st->cursors[b]->cur.entry.user_key);

	if (cmp == 0)
		return a < b;
	return st->reversed ? cmp > 0 : cmp < 0;
}

static void
heap_sift_down(KeyScanState *st, int pos)
{
	int			c = st->heap[pos];

	for (;;)
	{
		int			l = 2 * pos + 1;
		int			best;

		if (l >= st->nheap)
			break;
		best = l;
		if (l + 1 < st->nheap && heap_before(st, st->heap[l + 1], st->heap[l]))
			best = l + 1;
		if (!heap_before(st, st->heap[best], c))
			break;
		st->heap[pos] = st->heap[best];
		pos = best;
	}
	st->heap[pos] = c;
}

/*
 * Builds the heap from the cursors that have a row.  Each cursor has read
 * its row ahead: the executor may have written since, waited for memory
 * and let that row's memtable go, so each is revalidated first (nothing to
 * do unless this backend waited for memory).
 */
static void
heap_build(KeyScanState *st)
{
	int			i;

	st->waits_seen = forst_memory_waits;
	st->nheap = 0;
	for (i = 0; i < st->ncursors; i++)
	{
		if (st->has_row[i])
			st->has_row[i] = forst_cursor_revalidate(st->cursors[i]);
		if (st->has_row[i])
			st->heap[st->nheap++] = i;
	}
	for (i = st->nheap / 2 - 1; i >= 0; i--)
		heap_sift_down(st, i);
}

/*
 * The next row id in key order across key groups (in descending order when
 * the scan is reversed), or false at the end.
 */
static bool
next_row(IndexScanDesc scan, KeyScanState *st, ItemPointer tid)
{
	int			top;

	if (!st->started)
	{
		start_scan(scan, st);
		if (!st->r.empty)
			heap_build(st);
	}
	if (st->r.empty)
		return false;
	if (st->waits_seen != forst_memory_waits)
		heap_build(st);
	while (st->nheap == 0)
	{
		/* an array scan goes on with its next prefix's range */
		int			next = st->r.curprefix + (st->reversed ? -1 : 1);

		if (st->r.nprefixes == 0 || next < 0 || next >= st->r.nprefixes)
			return false;
		close_cursors(st);
		forst_keyrange_use_prefix(&st->r, next);
		open_cursors(scan, st);
		heap_build(st);
		CHECK_FOR_INTERRUPTS();
	}
	top = st->heap[0];
	forst_tid_set(tid, &st->cursors[top]->cur.loc);
	forst_cursor_note_current(st->cursors[top]);
	if (st->reversed)
		st->has_row[top] = forst_cursor_prev(st->cursors[top]);
	else
		st->has_row[top] = forst_cursor_next(st->cursors[top]);
	if (!st->has_row[top])
		st->heap[0] = st->heap[--st->nheap];
	if (st->nheap > 1)
		heap_sift_down(st, 0);
	return true;
}

static bool
fkey_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	KeyScanState *st = scan->opaque;
	bool		backward = (dir == BackwardScanDirection);

	if (!scan->indexRelation->rd_index->indisprimary)
		return forst_secondary_gettuple(scan, dir);
	scan->xs_recheck = true;
	if (!st->started)
		st->reversed = backward;
	else if (backward != st->reversed)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("changing the direction of a scan of a forst primary key is not supported"),
				 errhint("Declare the cursor with ORDER BY in the direction it is read, or without SCROLL.")));
	if (!next_row(scan, st, &scan->xs_heaptid))
		return false;
	forst_index_only_tuple(scan);
	return true;
}

static void
fkey_endscan(IndexScanDesc scan)
{
	KeyScanState *st = scan->opaque;

	if (!scan->indexRelation->rd_index->indisprimary)
	{
		forst_secondary_endscan(scan);
		return;
	}

	/*
	 * Everything goes: the executor begins and ends a scan per inserted row
	 * to check ON CONFLICT arbiters and unique constraints, all in the
	 * statement's memory context.
	 */
	close_cursors(st);
	/* the bytes staged for this scan are of no use after it */
	forst_stage_release(st->staged);
	forst_keyrange_free(&st->r);
	pfree(st);
	scan->opaque = NULL;
}

Datum
forst_key_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = BTMaxStrategyNumber;
	/*
	 * btree's: the key of a table that foreign keys reference has btree's
	 * operator classes (ddl/foreign_keys.c), whose support functions the
	 * relcache loads up to this number.
	 */
	amroutine->amsupport = BTNProcs;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = true;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = true;
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = true;	/* accepted; nothing is stored */
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = fkey_build;
	amroutine->ambuildempty = fkey_buildempty;
	amroutine->aminsert = fkey_insert;
	amroutine->ambulkdelete = fkey_bulkdelete;
	amroutine->amvacuumcleanup = fkey_vacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = fkey_costestimate;
	amroutine->amoptions = fkey_options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = NULL;
	amroutine->amvalidate = fkey_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = fkey_beginscan;
	amroutine->amrescan = fkey_rescan;
	amroutine->amgettuple = fkey_gettuple;
	amroutine->amgetbitmap = NULL;
	amroutine->amendscan = fkey_endscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
