/*-------------------------------------------------------------------------
 *
 * tableam.c
 *	  The forst table access method: the TableAmRoutine, scans (also
 *	  ANALYZE's), fetching by TID and the write callbacks.
 *
 * Writes live in write/dml.c, the visible-row cursor in read/cursor.c.
 * The callbacks for DDL (storage created, truncated, moved or rewritten;
 * index builds; TOAST) are tableam/tableam_ddl.c's, VACUUM's
 * tableam/vacuum.c's, sizes and estimates tableam/size.c's: the routine
 * here names them all.  What forst does not offer (TABLESAMPLE, bitmap and
 * TID-range scans, CLUSTER/VACUUM FULL, SET TABLESPACE, other index types)
 * is refused with a clear error rather than half done.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/heapam.h"
#include "access/parallel.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "commands/vacuum.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "am/forst.h"
#include "am/keys/rel.h"
#include "am/keys/slot.h"
#include "am/keys/tid.h"
#include "am/read/mvcc.h"
#include "am/tableam/tableam.h"
#include "am/write/dml.h"
#include "am/tableam/analyze.h"
#include "am/tableam/size.h"
#include "am/tableam/vacuum.h"
#include "am/read/cursor.h"
#include "am/objects/store.h"
#include "am/write/onconflict.h"

PG_FUNCTION_INFO_V1(forst_tableam_handler);

static const TableAmRoutine forst_methods;

void
forst_not_supported(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not supported on forst tables", what)));
}

static const TupleTableSlotOps *
forst_slot_callbacks(Relation rel)
{
	return &forst_slot_ops;
}

/* ---------------------------------------------------------------------- */
/* Sequential scans                                                        */

/*
 * A parallel sequential scan splits the table by key group: each
 * participant claims the next key group not yet claimed and reads its
 * range, until none is left (the last one reads on to the end of the key
 * space).  Rows come in no particular order, as a parallel scan's do.
 */
typedef struct ForstParallelScan
{
	ParallelTableScanDescData base;
	uint32		nunits;			/* the table's key groups */
	pg_atomic_uint32 next;		/* the next key group to claim */
} ForstParallelScan;

typedef struct ForstScanDescData
{
	TableScanDescData rs_base;
	ForstCursor *cursor;
	bool		empty;			/* a parallel participant with nothing left */
	bool		analyzed;		/* ANALYZE chose how to sample */
	struct ForstAnalyze *sampler;	/* its sampler; NULL: read it whole */
	/* ANALYZE's counters (see forst_scan_analyze_next_block) */
	double	   *an_liverows;	/* the caller's live-row counter */
	double		an_live;		/* live rows the scan found */
	double		an_blocks;		/* pseudo-blocks the caller asked for */
	BlockNumber an_total;		/* the relation's size in blocks */
} ForstScanDescData;

typedef ForstScanDescData *ForstScanDesc;

static void
scan_open(ForstScanDesc scan, FstSlice lo, FstSlice hi)
{
	Relation	rel = scan->rs_base.rs_rd;

	if (scan->cursor)
		forst_cursor_close(scan->cursor);
	/* ANALYZE scans without a snapshot: it samples what is committed */
	scan->cursor = forst_cursor_open(rel, scan->rs_base.rs_snapshot ?
									 scan->rs_base.rs_snapshot : SnapshotSelf,
									 forst_table_shared(&rel->rd_node, true),
									 lo, hi, false);
	forst_cursor_seek(scan->cursor, lo, hi);
}

/* A parallel participant's next key group; false when none is left. */
static bool
scan_claim(ForstScanDesc scan)
{
	ForstParallelScan *fp = (ForstParallelScan *) scan->rs_base.rs_parallel;
	uint32		kg = pg_atomic_fetch_add_u32(&fp->next, 1);
	char		lo[FST_KG_BYTES];
	char		hi[FST_KG_BYTES];

	if (kg >= fp->nunits)
	{
		if (scan->cursor)
			forst_cursor_close(scan->cursor);
		scan->cursor = NULL;
		scan->empty = true;
		return false;
	}
	fst_put_be16(lo, (uint16) kg);
	/* the last one reads to the index entries (keys/index_entry.h) */
	fst_put_be16(hi, kg + 1 < fp->nunits ? (uint16) (kg + 1) : FST_KG_INDEX);
	scan_open(scan, fst_slice(lo, FST_KG_BYTES), fst_slice(hi, FST_KG_BYTES));
	return true;
}

/*
 * A parallel participant claims its first key group when it first reads,
 * not here: a Gather's leader begins the scan even when it takes no part
 * in it (parallel_leader_participation = off), and a key group it claimed
 * would never be read.
 */
static void
scan_start(ForstScanDesc scan)
{
	scan->empty = false;
	if (scan->rs_base.rs_parallel)
	{
		if (scan->cursor)
			forst_cursor_close(scan->cursor);
		scan->cursor = NULL;
	}
	else
	{
		char		hi[FST_KG_BYTES];

		/* every row, none of the index entries after them */
		fst_put_be16(hi, FST_KG_INDEX);
		scan_open(scan, fst_slice(NULL, 0), fst_slice(hi, FST_KG_BYTES));
	}
}

static TableScanDesc
forst_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
				 struct ScanKeyData *key, ParallelTableScanDesc pscan,
				 uint32 flags)
{
	ForstScanDesc scan = palloc0(sizeof(ForstScanDescData));

	RelationIncrementReferenceCount(rel);
	scan->rs_base.rs_rd = rel;
	scan->rs_base.rs_snapshot = snapshot;
	scan->rs_base.rs_nkeys = nkeys;
	scan->rs_base.rs_key = key;
	scan->rs_base.rs_flags = flags;
	scan->rs_base.rs_parallel = pscan;
	if (snapshot && IsMVCCSnapshot(snapshot))
		PredicateLockRelation(rel, snapshot);
	scan_start(scan);
	return &scan->rs_base;
}

static void
forst_scan_end(TableScanDesc sscan)
{
	ForstScanDesc scan = (ForstScanDesc) sscan;

	if (scan->sampler)
		forst_analyze_end(scan->sampler);
	if (scan->cursor)
		forst_cursor_close(scan->cursor);
	if (scan->rs_base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(scan->rs_base.rs_snapshot);
	RelationDecrementReferenceCount(scan->rs_base.rs_rd);
	pfree(scan);
}

static void
forst_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key, bool set_params,
				  bool allow_strat, bool allow_sync, bool allow_pagemode)
{
	ForstScanDesc scan = (ForstScanDesc) sscan;

	scan_start(scan);
}

static bool
forst_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
					   TupleTableSlot *slot)
{
	ForstScanDesc scan = (ForstScanDesc) sscan;

	if (scan->rs_base.rs_parallel == NULL)
	{
		/*
		 * One cursor over the whole table, which reads either way and
		 * turns around where the scan is (a SCROLL cursor's FETCH PRIOR).
		 */
		bool		found = direction == BackwardScanDirection ?
			forst_cursor_prev(scan->cursor) : forst_cursor_next(scan->cursor);

		if (!found)
		{
			ExecClearTuple(slot);
			return false;
		}
	}
	else
	{
		if (direction == BackwardScanDirection)
			forst_not_supported("scanning a parallel scan backward");
		for (;;)
		{
			if (scan->empty)
			{
				ExecClearTuple(slot);
				return false;
			}
			if (scan->cursor && forst_cursor_next(scan->cursor))
				break;
			scan_claim(scan);
		}
	}
	pgstat_count_heap_getnext(scan->rs_base.rs_rd);
	forst_store_version(slot, &scan->cursor->cur,
						RelationGetRelid(scan->rs_base.rs_rd));
	return true;
}

static Size
forst_parallelscan_estimate(Relation rel)
{
	return sizeof(ForstParallelScan);
}

static Size
forst_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan)
{
	ForstParallelScan *fp = (ForstParallelScan *) pscan;

	fp->base.phs_relid = RelationGetRelid(rel);
	fp->base.phs_syncscan = false;
	fp->base.phs_snapshot_any = false;
	fp->nunits = Max(forst_relinfo(rel)->max_key_groups, 1);
	pg_atomic_init_u32(&fp->next, 0);
	return sizeof(ForstParallelScan);
}

static void
forst_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan)
{
	pg_atomic_write_u32(&((ForstParallelScan *) pscan)->next, 0);
}

/* ---------------------------------------------------------------------- */
/* Fetching by TID                                                         */

static IndexFetchTableData *
forst_index_fetch_begin(Relation rel)
{
	IndexFetchTableData *scan = palloc0(sizeof(IndexFetchTableData));

	scan->rel = rel;
	return scan;
}

static void
forst_index_fetch_reset(IndexFetchTableData *scan)
{
}

static void
forst_index_fetch_end(IndexFetchTableData *scan)
{
	pfree(scan);
}

static bool
fetch_visible(Relation rel, ItemPointer tid, Snapshot snapshot,
			  TupleTableSlot *slot)
{
	ForstVersion v;

	ForstExpiry x;

	if (!forst_fetch_version(rel, tid, &v))
		return false;
	if ((v.entry.hdr.flags & FST_ENTRY_TOMBSTONE) ||
		!forst_version_visible_v(snapshot, rel, &v))
	{
		forst_version_free(&v);
		return false;
	}
	forst_expiry_get(rel, &x);
	if (forst_row_expired(&x, v.entry.payload))
	{
		forst_version_free(&v);
		return false;			/* expired rows are invisible everywhere */
	}
	forst_store_version(slot, &v, RelationGetRelid(rel));
	forst_version_free(&v);
	return true;
}

static bool
forst_index_fetch_tuple(IndexFetchTableData *scan, ItemPointer tid,
						Snapshot snapshot, TupleTableSlot *slot,
						bool *call_again, bool *all_dead)
{
	*call_again = false;
	if (all_dead)
		*all_dead = false;
	return fetch_visible(scan->rel, tid, snapshot, slot);
}

static bool
forst_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
						TupleTableSlot *slot)
{
	return fetch_visible(rel, tid, snapshot, slot);
}

static bool
forst_tuple_tid_valid(TableScanDesc scan, ItemPointer tid)
{
	ForstVersion v;

	if (!forst_fetch_version(scan->rs_rd, tid, &v))
		return false;
	forst_version_free(&v);
	return true;
}

static void
forst_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
	Relation	rel = scan->rs_rd;
	ForstTableShared *ts = forst_table_shared(&rel->rd_node, true);
	ForstVersion v;
	ForstNewest newest;

	if (ts == NULL || !forst_fetch_version(rel, tid, &v))
		return;
	forst_find_newest(ts, v.entry.user_part, &newest);
	forst_version_free(&v);
	if (newest.found && !(newest.hdr.flags & FST_ENTRY_TOMBSTONE))
		forst_tid_set(tid, &newest.loc);
}

static bool
forst_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
							   Snapshot snapshot)
{
	ForstVersion v;
	bool		visible;

	if (!forst_fetch_version(rel, &slot->tts_tid, &v))
		return false;
	visible = forst_version_visible_v(snapshot, rel, &v);
	forst_version_free(&v);
	/* ON CONFLICT at REPEATABLE READ (see write/onconflict.c) */
	return forst_onconflict_satisfies_snapshot(snapshot, v.entry.hdr.xid, visible);
}

static TransactionId
forst_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	/* no index of a forst table stores TIDs */
	return InvalidTransactionId;
}

/* ---------------------------------------------------------------------- */
/* Writes                                                                  */

static void
forst_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
				   int options, BulkInsertState bistate)
{
	forst_insert_row(rel, slot, cid);
}

/*
 * ON CONFLICT (see write/onconflict.c): the row is written only if its key
 * and its unique values are free, and then for good; fkey_insert reports a
 * conflict to the executor, and there is never a row to take back.
 */
static void
forst_tuple_insert_speculative(Relation rel, TupleTableSlot *slot,
							   CommandId cid, int options,
							   BulkInsertState bistate, uint32 specToken)
{
	Oid			conflict_index = forst_insert_row_speculative(rel, slot, cid);

	forst_spec_begin(rel, &slot->tts_tid, conflict_index);
}

static void
forst_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
								 uint32 specToken, bool succeeded)
{
	forst_spec_end(rel);
}

static void
forst_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
				   CommandId cid, int options, BulkInsertState bistate)
{
	int			i;

	for (i = 0; i < nslots; i++)
		forst_insert_row(rel, slots[i], cid);
}

static TM_Result
forst_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
				   Snapshot snapshot, Snapshot crosscheck, bool wait,
				   TM_FailureData *tmfd, bool changingPart)
{
	return forst_delete_row(rel, tid, cid, crosscheck, wait, tmfd);
}

static TM_Result
forst_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
				   CommandId cid, Snapshot snapshot, Snapshot crosscheck,
				   bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
				   bool *update_indexes)
{
	*update_indexes = false;	/* the key is the storage: nothing to add */
	return forst_update_row(rel, otid, slot, cid, crosscheck, wait, tmfd,
							lockmode);
}

static TM_Result
forst_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
				 TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
				 LockWaitPolicy wait_policy, uint8 flags,
				 TM_FailureData *tmfd)
{
	/* a row this command wrote: ON CONFLICT's "second time" error */
	forst_onconflict_check_lock(rel, tid, cid);
	return forst_lock_row(rel, tid, snapshot, slot, cid, mode, wait_policy,
						  flags, tmfd);
}

static void
forst_finish_bulk_insert(Relation rel, int options)
{
}

/* ---------------------------------------------------------------------- */
/* ANALYZE                                                                 */

/*
 * ANALYZE.  A table with files below level 0 is sampled by cells of its
 * largest level (tableam/analyze.h): each pseudo-block asked for yields the
 * rows of one cell.  Others (their rows in memtables and level 0, bounded
 * by forst.memtable_memory and level 0's compaction trigger) are read
 * whole: the first pseudo-block asked for yields every row, the later ones
 * nothing, and ANALYZE's reservoir samples them uniformly.
 *
 * ANALYZE then extrapolates the row count as live rows / blocks sampled *
 * relation blocks.  So the live-row counter the caller passes is kept at
 * (estimated rows) * (blocks asked for so far) / (relation blocks), and
 * after the last block the caller's extrapolation gives the estimate:
 * the sampler's, or the rows found by a whole read.
 */
static void
analyze_set_liverows(ForstScanDesc scan)
{
	double		rows;

	if (scan->an_liverows == NULL)
		return;
	rows = scan->sampler ? forst_analyze_estimate(scan->sampler) : scan->an_live;
	*scan->an_liverows = rows * scan->an_blocks / scan->an_total;
}

static bool
forst_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
							  BufferAccessStrategy bstrategy)
{
	ForstScanDesc scan = (ForstScanDesc) sscan;
	bool		first = !scan->analyzed;

	if (scan->cursor == NULL)
		return false;
	if (scan->an_total == 0)
		scan->an_total = Max(forst_reported_blocks(sscan->rs_rd), 1);
	if (first)
	{
		scan->analyzed = true;
		scan->sampler = forst_analyze_begin(scan->cursor, scan->an_total);
	}
	scan->an_blocks += 1;
	if (scan->sampler)
	{
		bool		rows = forst_analyze_block(scan->sampler, blockno);

		analyze_set_liverows(scan);
		return rows;
	}
	analyze_set_liverows(scan);
	/* read whole: the first block asked for yields every row */
	return first;
}

static bool
forst_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
							  double *liverows, double *deadrows,
							  TupleTableSlot *slot)
{
	ForstScanDesc scan = (ForstScanDesc) sscan;

	if (!forst_cursor_next(scan->cursor))
	{
		/* see forst_scan_analyze_next_block */
		scan->an_liverows = liverows;
		analyze_set_liverows(scan);
		return false;
	}
	forst_store_version(slot, &scan->cursor->cur,
						RelationGetRelid(scan->rs_base.rs_rd));
	scan->an_live += 1;
	if (scan->sampler)
		forst_analyze_row(scan->sampler);
	return true;
}

/* ---------------------------------------------------------------------- */
/* Scans forst does not offer                                              */

static bool
forst_scan_bitmap_next_block(TableScanDesc scan, struct TBMIterateResult *tbmres)
{
	forst_not_supported("a bitmap scan");
	return false;
}

static bool
forst_scan_bitmap_next_tuple(TableScanDesc scan, struct TBMIterateResult *tbmres,
							 TupleTableSlot *slot)
{
	forst_not_supported("a bitmap scan");
	return false;
}

static bool
forst_scan_sample_next_block(TableScanDesc scan, struct SampleScanState *scanstate)
{
	forst_not_supported("TABLESAMPLE");
	return false;
}

static bool
forst_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
							 TupleTableSlot *slot)
{
	forst_not_supported("TABLESAMPLE");
	return false;
}

static const TableAmRoutine forst_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = forst_slot_callbacks,

	.scan_begin = forst_scan_begin,
	.scan_end = forst_scan_end,
	.scan_rescan = forst_scan_rescan,
	.scan_getnextslot = forst_scan_getnextslot,

	.parallelscan_estimate = forst_parallelscan_estimate,
	.parallelscan_initialize = forst_parallelscan_initialize,
	.parallelscan_reinitialize = forst_parallelscan_reinitialize,

	.index_fetch_begin = forst_index_fetch_begin,
	.index_fetch_reset = forst_index_fetch_reset,
	.index_fetch_end = forst_index_fetch_end,
	.index_fetch_tuple = forst_index_fetch_tuple,

	.tuple_fetch_row_version = forst_fetch_row_version,
	.tuple_tid_valid = forst_tuple_tid_valid,
	.tuple_get_latest_tid = forst_tuple_get_latest_tid,
	.tuple_satisfies_snapshot = forst_tuple_satisfies_snapshot,
	.index_delete_tuples = forst_index_delete_tuples,

	.tuple_insert = forst_tuple_insert,
	.tuple_insert_speculative = forst_tuple_insert_speculative,
	.tuple_complete_speculative = forst_tuple_complete_speculative,
	.multi_insert = forst_multi_insert,
	.tuple_delete = forst_tuple_delete,
	.tuple_update = forst_tuple_update,
	.tuple_lock = forst_tuple_lock,
	.finish_bulk_insert = forst_finish_bulk_insert,

	.relation_set_new_filenode = forst_relation_set_new_filenode,
	.relation_nontransactional_truncate = forst_relation_nontransactional_truncate,
	.relation_copy_data = forst_relation_copy_data,
	.relation_copy_for_cluster = forst_relation_copy_for_cluster,
	.relation_vacuum = forst_relation_vacuum,
	.scan_analyze_next_block = forst_scan_analyze_next_block,
	.scan_analyze_next_tuple = forst_scan_analyze_next_tuple,
	.index_build_range_scan = forst_index_build_range_scan,
	.index_validate_scan = forst_index_validate_scan,

	.relation_size = forst_relation_size,
	.relation_needs_toast_table = forst_relation_needs_toast_table,
	.relation_toast_am = forst_relation_toast_am,

	.relation_estimate_size = forst_relation_estimate_size,

	.scan_bitmap_next_block = forst_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = forst_scan_bitmap_next_tuple,
	.scan_sample_next_block = forst_scan_sample_next_block,
	.scan_sample_next_tuple = forst_scan_sample_next_tuple
};

const TableAmRoutine *
forst_table_am_routine(void)
{
	return &forst_methods;
}

Datum
forst_tableam_handler(PG_FUNCTION_ARGS)
{
	if (!forst_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst must be loaded via shared_preload_libraries")));
	PG_RETURN_POINTER(&forst_methods);
}
