/*-------------------------------------------------------------------------
 *
 * secondary.c
 *	  Secondary indexes of forst tables: build and scans
 *	  (tableam/secondary.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/itup.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "commands/defrem.h"
#include "optimizer/plancat.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/predicate.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "am/keys/index_entry.h"
#include "am/keys/tid.h"
#include "am/read/cursor.h"
#include "am/read/point.h"
#include "am/expiry/expiry.h"
#include "am/tableam/secondary.h"
#include "am/tableam/vacuum.h"
#include "am/tableam/tableam.h"
#include "am/write/dml.h"
#include "am/write/index_entries.h"
#include "lsm/ikey.h"

/*
 * A UNIQUE index just built: its entries in index order, where equal
 * values are next to each other.  Two live rows with equal values (not
 * counting NULLs, unless NULLS NOT DISTINCT) fail the build, as btree's
 * does.  Entries that are not of a live row with their values (of an
 * expired row, say) do not count; rows are looked up only for runs of
 * equal values.
 */
static void
check_unique_build(Relation heap, Relation index, ForstSecondary *s,
				   ForstTableShared *ts)
{
	SnapshotData dirty;
	StringInfoData lo;
	StringInfoData hi;
	StringInfoData run_cols;	/* the values of the current run */
	StringInfoData run_row;		/* its first row, or the live one */
	int			run_state = 0;	/* of run_row: 0 not known, 1 live, -1 not */
	bool		have_run = false;
	ForstExpiry x;
	ForstCursor *c;

	forst_expiry_get(heap, &x);
	InitDirtySnapshot(dirty);
	initStringInfo(&lo);
	initStringInfo(&hi);
	initStringInfo(&run_cols);
	initStringInfo(&run_row);
	forst_index_entry_head(&lo, s->entry_id);
	appendBinaryStringInfo(&hi, lo.data, lo.len);
	if (!forst_key_successor_prefix(&hi))
		elog(ERROR, "forst: no range for the entries of index %u", s->indexoid);
	c = forst_cursor_open(heap, &dirty, ts, fst_slice(lo.data, lo.len),
						  fst_slice(hi.data, hi.len), false);
	forst_cursor_seek(c, fst_slice(lo.data, lo.len), fst_slice(hi.data, hi.len));
	while (forst_cursor_next(c))
	{
		FstSlice	cols,
					row;
		ForstLoc	loc;
		ForstIndexRow r = {0};

		CHECK_FOR_INTERRUPTS();
		if (!forst_index_entry_split(c->cur.entry.user_key, &cols, &row))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry of index \"%s\"",
							RelationGetRelationName(index))));
		if (!have_run || cols.len != (size_t) run_cols.len ||
			memcmp(cols.data, run_cols.data, cols.len) != 0)
		{
			have_run = true;
			resetStringInfo(&run_cols);
			appendBinaryStringInfo(&run_cols, cols.data, cols.len);
			resetStringInfo(&run_row);
			appendBinaryStringInfo(&run_row, row.data, row.len);
			run_state = 0;
			continue;
		}
		/* one column, NULL: never equal (the common case of many NULLs) */
		if (s->natts == 1 && cols.data[0] == FORST_INDEX_NULL &&
			!s->nulls_not_distinct)
			continue;
		if (run_state == 0)
			run_state = forst_index_row_has(heap, ts, s, &x,
											fst_slice(run_row.data, run_row.len),
											cols, &loc, NULL) ? 1 : -1;
		if (!forst_index_row_has(heap, ts, s, &x, row, cols, &loc, &r))
			continue;
		if (run_state < 0)
		{
			/* the first live row of the run */
			resetStringInfo(&run_row);
			appendBinaryStringInfo(&run_row, row.data, row.len);
			run_state = 1;
			forst_index_row_free(&r);
			continue;
		}
		{
			Datum		values[INDEX_MAX_KEYS];
			bool		isnull[INDEX_MAX_KEYS];
			bool		anynull = false;
			char	   *desc;

			forst_secondary_values(s, r.values, r.isnull, values, isnull);
			for (int i = 0; i < s->natts; i++)
				anynull |= isnull[i];
			if (anynull && !s->nulls_not_distinct)
			{
				forst_index_row_free(&r);
				continue;
			}
			desc = BuildIndexValueDescription(index, values, isnull);
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("could not create unique index \"%s\"",
							RelationGetRelationName(index)),
					 desc ? errdetail("Key %s is duplicated.", desc) :
					 errdetail("Duplicate keys exist."),
					 errtableconstraint(heap, RelationGetRelationName(index))));
		}
	}
	forst_cursor_close(c);
	pfree(lo.data);
	pfree(hi.data);
	pfree(run_cols.data);
	pfree(run_row.data);
}

IndexBuildResult *
forst_secondary_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result = palloc0(sizeof(IndexBuildResult));
	ForstSecondary s;
	ForstTableShared *ts;
	Snapshot	snap;
	TableScanDesc scan;
	TupleTableSlot *slot;
	StringInfoData e;
	StringInfoData up;
	CommandId	cid = GetCurrentCommandId(true);
	double		n = 0;
	double		nheap = 0;
	ForstExpiry x;

	forst_check_index_columns(heap, index);
	forst_check_entry_id(heap, index);

	/*
	 * The rebuild after VACUUM FULL: the rewrite copied the index's entries
	 * with their xids, so that snapshots older than it still find their
	 * rows through the index (a REINDEX does not set indcheckxmin).  Every
	 * entry of a valid index is already there; an invalid one (a failed
	 * CREATE INDEX CONCURRENTLY) may miss some, and is built anew.
	 */
	if (index->rd_index->indisvalid &&
		forst_rewrite_copied_entries(heap, &nheap))
	{
		result->heap_tuples = nheap;
		/* a partial index holds some of them: unknown, left to ANALYZE */
		result->index_tuples = indexInfo->ii_Predicate != NIL ? -1 : nheap;
		return result;
	}
	forst_expiry_get(heap, &x);
	forst_secondary_describe(heap, index, &s);
	forst_secondary_prepare(heap, index, CurrentMemoryContext, &s);

	/*
	 * After a crash an unlogged (checkpoint-durable) table returns to its
	 * last forst checkpoint, which would not hold the entries built here
	 * for its rows, while the index stays.
	 */
	if (heap->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
		forst_relation_has_rows(heap))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot create index \"%s\" on unlogged forst table \"%s\" because it has rows",
						RelationGetRelationName(index), RelationGetRelationName(heap)),
				 errdetail("After a crash the table returns to its last forst checkpoint, which would not hold the index's entries for these rows."),
				 errhint("Create the indexes of an unlogged forst table while it is empty.")));
	ts = forst_table_for_write(heap);
	initStringInfo(&e);
	initStringInfo(&up);

	/*
	 * The table is locked against writers (ShareLock, or more): the rows
	 * the latest snapshot sees are all there are, apart from those deleted
	 * for snapshots older than this transaction, which indcheckxmin keeps
	 * from using the index (below).  The entries sort after every row, so
	 * the scan never meets them.
	 *
	 * Concurrently (CREATE INDEX CONCURRENTLY, ShareUpdateExclusiveLock),
	 * every writer has had the index in its list since PostgreSQL's first
	 * wait, and writes its entries: the rows this snapshot does not see are
	 * theirs.  An entry put here after a writer's tombstone over it names a
	 * row version that is gone, which scans check (fetch_row);
	 * PostgreSQL waits for older snapshots before the index becomes valid.
	 */
	snap = RegisterSnapshot(GetLatestSnapshot());
	scan = table_beginscan(heap, snap, 0, NULL);
	slot = table_slot_create(heap, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		ForstVersion v;
		ForstLoc	loc;
		MinimalTuple payload;

		CHECK_FOR_INTERRUPTS();
		nheap += 1;
		slot_getallattrs(slot);
		/* a partial index holds the rows its predicate is true for */
		if (!forst_secondary_holds(&s, slot->tts_values, slot->tts_isnull))
			continue;
		forst_fetch_or_error(heap, &slot->tts_tid, &v);
		resetStringInfo(&up);
		forst_version_user_part(&v, &up);
		forst_version_free(&v);
		resetStringInfo(&e);
		forst_index_entry_build(&s, slot->tts_values, slot->tts_isnull,
								fst_slice(up.data, up.len), &e);
		payload = forst_index_entry_payload(heap, &x, slot->tts_values,
											slot->tts_isnull);
		forst_put_entry(ts, &e, 0, cid, (const char *) payload,
						payload ? payload->t_len : 0, &loc);
		if (payload)
			pfree(payload);
		n += 1;
		if (((uint64) n) % 1024 == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) n);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	UnregisterSnapshot(snap);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) n);
	pfree(e.data);
	pfree(up.data);
	if (s.unique)
		check_unique_build(heap, index, &s, ts);
	forst_secondary_release(&s);

	/* index_build sets pg_index.indcheckxmin (not for a REINDEX) */
	indexInfo->ii_BrokenHotChain = true;
	result->heap_tuples = nheap;
	result->index_tuples = n;
	return result;
}

/* ---------------------------------------------------------------------- */

typedef struct SecScan
{
	ForstSecondary s;
	ForstTableShared *ts;
	bool		started;
	bool		reversed;
	bool		empty;			/* the quals match nothing */
	bool		exact;			/* the range is exactly the quals: no recheck */
	bool		prefix;			/* the range is every entry of one value of
								 * every column: SST filters can tell */
	StringInfoData lo;			/* the entries to read: [lo, hi) */
	StringInfoData hi;
	ForstCursor *entries;
	MemoryContext rowcxt;		/* the row looked up last (reset for each) */
	ForstExpiry expiry;			/* expired rows are not returned */
	StringInfoData cols;
} SecScan;

/*
 * The scan key's argument as a value of index column col's type, or false
 * if the key cannot bound the range (the executor rechecks it anyway).
 * *never: an equality no value of the column's type can meet.
 */
static bool
key_value(SecScan *st, ScanKey key, int col, Datum *out, bool *never)
{
	Oid			sub = key->sk_subtype;
	Oid			coltype = st->s.typids[col];
	int64		v;

	*never = false;
	if (key->sk_flags & (SK_SEARCHARRAY | SK_ROW_HEADER | SK_ROW_MEMBER |
						 SK_SEARCHNULL | SK_SEARCHNOTNULL))
		return false;
	if (!OidIsValid(sub) || forst_key_encoder(sub) == st->s.encode[col])
	{
		*out = key->sk_argument;
		return true;
	}
	/* integers of another width: the usual cross-type comparisons */
	if (sub == INT2OID)
		v = DatumGetInt16(key->sk_argument);
	else if (sub == INT4OID)
		v = DatumGetInt32(key->sk_argument);
	else if (sub == INT8OID)
		v = DatumGetInt64(key->sk_argument);
	else
		return false;
	if ((coltype == INT2OID && (v < PG_INT16_MIN || v > PG_INT16_MAX)) ||
		(coltype == INT4OID && (v < PG_INT32_MIN || v > PG_INT32_MAX)))
	{
		*never = (key->sk_strategy == BTEqualStrategyNumber);
		return false;
	}
	if (coltype == INT2OID)
		*out = Int16GetDatum((int16) v);
	else if (coltype == INT4OID)
		*out = Int32GetDatum((int32) v);
	else if (coltype == INT8OID)
		*out = Int64GetDatum(v);
	else
		return false;
	return true;
}

static void
append_value(SecScan *st, int col, Datum value, StringInfo out)
{
	appendStringInfoChar(out, FORST_INDEX_NOTNULL);
	st->s.encode[col] (out, value);
}

/* The prefix's range: every entry that has it as a prefix. */
static void
set_hi_after(StringInfo hi, StringInfo prefix)
{
	resetStringInfo(hi);
	appendBinaryStringInfo(hi, prefix->data, prefix->len);
	if (!forst_key_successor_prefix(hi))
		resetStringInfo(hi);	/* no bound: the scan stops at the head */
}

/*
 * From the scan keys to [lo, hi): equality on the leading columns makes a
 * prefix; the next column's first usable lower and upper bounds narrow it
 * (a strict bound is read as the inclusive one: the recheck drops the
 * rest).  Any comparison excludes NULLs, which sort after every value.
 */
static void
plan_range(IndexScanDesc scan, SecScan *st)
{
	int			col;
	StringInfoData prefix;
	bool		have_lo = false,
				have_hi = false,
				hi_incl = false;
	Datum		lov = 0,
				hiv = 0;

	int			used = 0;

	st->empty = false;
	st->exact = false;
	st->prefix = false;
	resetStringInfo(&st->lo);
	resetStringInfo(&st->hi);
	initStringInfo(&prefix);
	forst_index_entry_head(&prefix, st->s.entry_id);
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		int			f = scan->keyData[i].sk_flags;

		if ((f & SK_ISNULL) && !(f & (SK_SEARCHNULL | SK_SEARCHNOTNULL)))
		{
			st->empty = true;	/* a strict operator and a NULL */
			pfree(prefix.data);
			return;
		}
	}
	for (col = 0; col < st->s.natts; col++)
	{
		bool		found = false;

		for (int i = 0; i < scan->numberOfKeys && !found; i++)
		{
			ScanKey		key = &scan->keyData[i];
			Datum		v;
			bool		never;

			/*
			 * IS NULL: the unique check of a NULLS NOT DISTINCT index
			 * (execIndexing.c) searches NULLs so; they sort as one value.
			 */
			if (key->sk_attno == col + 1 && (key->sk_flags & SK_SEARCHNULL))
			{
				appendStringInfoChar(&prefix, FORST_INDEX_NULL);
				found = true;
				used++;
				continue;
			}
			if (key->sk_attno != col + 1 || key->sk_strategy != BTEqualStrategyNumber ||
				(key->sk_flags & SK_ISNULL))
				continue;
			if (!key_value(st, key, col, &v, &never))
			{
				if (never)
				{
					st->empty = true;
					pfree(prefix.data);
					return;
				}
				continue;
			}
			append_value(st, col, v, &prefix);
			found = true;
			used++;
		}
		if (!found)
			break;
	}
	appendBinaryStringInfo(&st->lo, prefix.data, prefix.len);
	if (col == st->s.natts)
	{
		/*
		 * Equality on every column and nothing else: the entries read are
		 * exactly the matches (equal values encode to equal bytes, also
		 * for deterministic collations), so the executor need not recheck.
		 * That matters for the unique checks of ON CONFLICT and of NULLS
		 * NOT DISTINCT, whose recheck takes NULLs for no match.
		 */
		st->exact = (used == scan->numberOfKeys);
		set_hi_after(&st->hi, &prefix);
		st->prefix = st->hi.len > 0;
		pfree(prefix.data);
		return;
	}
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		Datum		v;
		bool		never;

		/* bounds in the collation's order are not bounds in the index's */
		if (key->sk_attno != col + 1 || !st->s.bytewise[col] ||
			(key->sk_flags & SK_ISNULL) ||
			!key_value(st, key, col, &v, &never))
			continue;
		switch (key->sk_strategy)
		{
			case BTGreaterStrategyNumber:
			case BTGreaterEqualStrategyNumber:
				if (!have_lo)
				{
					have_lo = true;
					lov = v;
				}
				break;
			case BTLessStrategyNumber:
			case BTLessEqualStrategyNumber:
				if (!have_hi)
				{
					have_hi = true;
					hiv = v;
					hi_incl = key->sk_strategy == BTLessEqualStrategyNumber;
				}
				break;
			default:
				break;
		}
	}
	if (have_lo)
		append_value(st, col, lov, &st->lo);
	if (have_hi)
	{
		resetStringInfo(&st->hi);
		appendBinaryStringInfo(&st->hi, prefix.data, prefix.len);
		append_value(st, col, hiv, &st->hi);
		if (hi_incl && !forst_key_successor_prefix(&st->hi))
			set_hi_after(&st->hi, &prefix);
	}
	else if (have_lo)
	{
		/* up to the NULLs */
		resetStringInfo(&st->hi);
		appendBinaryStringInfo(&st->hi, prefix.data, prefix.len);
		appendStringInfoChar(&st->hi, FORST_INDEX_NULL);
	}
	else
		set_hi_after(&st->hi, &prefix);
	pfree(prefix.data);
}

void
forst_secondary_beginscan(IndexScanDesc scan)
{
	SecScan    *st = palloc0(sizeof(SecScan));

	/* the index is described at the first read: heapRelation is set then */
	initStringInfo(&st->lo);
	initStringInfo(&st->hi);
	initStringInfo(&st->cols);
	st->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "forst index row",
									   ALLOCSET_SMALL_SIZES);
	scan->opaque = st;
}

static void
close_cursors(SecScan *st)
{
	if (st->entries)
		forst_cursor_close(st->entries);
	st->entries = NULL;
}

void
forst_secondary_rescan(IndexScanDesc scan)
{
	SecScan    *st = scan->opaque;

	close_cursors(st);
	st->started = false;
	st->reversed = false;
}

void
forst_secondary_endscan(IndexScanDesc scan)
{
	SecScan    *st = scan->opaque;

	close_cursors(st);
	pfree(st->lo.data);
	pfree(st->hi.data);
	pfree(st->cols.data);
	MemoryContextDelete(st->rowcxt);
	forst_secondary_release(&st->s);
	pfree(st);
	scan->opaque = NULL;
}

static void
start(IndexScanDesc scan, SecScan *st)
{
	Relation	heap = scan->heapRelation;
	FstSlice	lo,
				hi;

	st->started = true;
	if (st->s.indexoid == InvalidOid)
	{
		forst_secondary_describe(heap, scan->indexRelation, &st->s);
		/* its expressions: a row is compared with its entry */
		forst_secondary_prepare(heap, scan->indexRelation,
								GetMemoryChunkContext(st), &st->s);
	}
	plan_range(scan, st);
	if (st->empty)
		return;
	if (IsMVCCSnapshot(scan->xs_snapshot))
		PredicateLockRelation(heap, scan->xs_snapshot);
	st->ts = forst_table_shared(&heap->rd_node, true);
	forst_expiry_get(heap, &st->expiry);
	lo = fst_slice(st->lo.data, st->lo.len);
	hi = fst_slice(st->hi.data, st->hi.len);
	if (st->prefix)
		st->entries = forst_cursor_open_prefix(heap, scan->xs_snapshot, st->ts, lo, hi);
	else
		st->entries = forst_cursor_open(heap, scan->xs_snapshot, st->ts, lo, hi, false);
	if (st->reversed)
		forst_cursor_seek_back(st->entries, lo, hi);
	else
		forst_cursor_seek(st->entries, lo, hi);
}

typedef struct RowVisCtx
{
	Snapshot	snapshot;
	Relation	rel;
} RowVisCtx;

static bool
row_visible(void *arg, FstMemtable *mt, const FstEntryHeader *hdr,
			uint32 ref, uint8 hint)
{
	RowVisCtx  *ctx = arg;

	return forst_version_visible(ctx->snapshot, ctx->rel, hdr, mt, ref, hint);
}

/*
 * The row an entry names, as the scan's snapshot sees it, if its columns
 * are still the entry's: its TID in *tid (the executor fetches it next).
 * A point lookup over a view taken now, as a point cursor makes, in a
 * context reset for each row.
 */
static bool
fetch_row(IndexScanDesc scan, SecScan *st, FstSlice row, FstSlice cols,
		  ItemPointer tid)
{
	Relation	heap = scan->heapRelation;
	ForstTableView view;
	ForstPointHit hit;
	RowVisCtx	ctx;
	FstEntry	e;
	ForstIndexRow r;
	MemoryContext old;
	bool		same;

	MemoryContextReset(st->rowcxt);
	old = MemoryContextSwitchTo(st->rowcxt);
	ctx.snapshot = scan->xs_snapshot;
	ctx.rel = heap;
	forst_table_view(st->ts, &heap->rd_node, &view);
	forst_point_get_expected(&view, row, row_visible, &ctx, true, &hit);
	if (!hit.found)
	{
		MemoryContextSwitchTo(old);
		return false;
	}
	if (!fst_entry_decode(hit.ikey, hit.value, &e))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: malformed entry in table \"%s\"",
						RelationGetRelationName(heap))));
	if ((e.hdr.flags & FST_ENTRY_TOMBSTONE) ||
		(st->expiry.active && forst_row_expired(&st->expiry, e.payload)))
	{
		MemoryContextSwitchTo(old);
		return false;
	}
	forst_index_row(heap, e.payload.data, e.payload.len, &r);
	resetStringInfo(&st->cols);
	forst_index_entry_columns(&st->s, r.values, r.isnull, &st->cols);
	/*
	 * And for a partial index, the row must still be one it holds: a build
	 * that runs next to writers (CREATE INDEX CONCURRENTLY) may put an
	 * entry after the tombstone of an update that took its row out.
	 */
	same = (size_t) st->cols.len == cols.len &&
		memcmp(st->cols.data, cols.data, cols.len) == 0 &&
		forst_secondary_holds(&st->s, r.values, r.isnull);
	if (same)
	{
		forst_tid_set(tid, &hit.loc);
		/* the executor fetches this version by TID next */
		if (hit.loc.in_sst)
			forst_note_sst_version(heap, &hit.loc, hit.ikey, hit.value);
	}
	MemoryContextSwitchTo(old);
	return same;
}

bool
forst_secondary_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	SecScan    *st = scan->opaque;
	bool		backward = (dir == BackwardScanDirection);
	const size_t head = FORST_INDEX_ENTRY_HEAD - FST_KG_BYTES;	/* the OID */

	if (!st->started)
	{
		st->reversed = backward;
		start(scan, st);
	}
	else if (backward != st->reversed)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("changing the direction of a scan of a forst index is not supported"),
				 errhint("Declare the cursor with ORDER BY in the direction it is read, or without SCROLL.")));
	scan->xs_recheck = !st->exact;
	if (st->empty)
		return false;
	for (;;)
	{
		FstSlice	key;
		FstSlice	cols;
		FstSlice	row;

		if (!(st->reversed ? forst_cursor_prev(st->entries) :
			  forst_cursor_next(st->entries)))
			return false;
		key = st->entries->cur.entry.user_key;
		/* past this index's entries (a range without an upper bound) */
		if (key.len < head || memcmp(key.data, st->lo.data + FST_KG_BYTES, head) != 0)
			return false;
		if (!forst_index_entry_split(key, &cols, &row))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry of index \"%s\"",
							RelationGetRelationName(scan->indexRelation))));
		if (fetch_row(scan, st, row, cols, &scan->xs_heaptid))
		{
			forst_index_only_tuple(scan);
			return true;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/* ---------------------------------------------------------------------- */

static get_relation_info_hook_type prev_get_relation_info = NULL;

/*
 * The operator family the planner is to match column i of forst_key index
 * info with: forst's, also where pg_index names its btree twin (the index
 * backs a foreign key: ddl/foreign_keys.c).  btree's families also compare
 * across types forst's key code does not encode (date with timestamp, name
 * with text); their quals would be left to the recheck of a whole scan.
 * Every operator of forst's family is in the twin's, under the same
 * strategy, so the executor finds the quals in the index's own families.
 */
static void
show_forst_family(IndexOptInfo *info, int i, Oid forst_key_am)
{
	HeapTuple	tup;
	Oid			method;
	Oid			fclass;

	tup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(info->opfamily[i]));
	if (!HeapTupleIsValid(tup))
		return;
	method = ((Form_pg_opfamily) GETSTRUCT(tup))->opfmethod;
	ReleaseSysCache(tup);
	if (method == forst_key_am)
		return;
	fclass = GetDefaultOpClass(info->opcintype[i], forst_key_am);
	if (OidIsValid(fclass))
		info->opfamily[i] = get_opclass_family(fclass);
}

/*
 * A secondary index on a string column of a collation other than "C" has
 * its entries in byte order, not in the collation's: the planner must not
 * take its order for the collation's (no sort operator families, so no
 * path keys).  Equality still uses it.  And forst_key indexes show the
 * planner forst's operator families (show_forst_family).
 */
static void
secondary_get_relation_info(PlannerInfo *root, Oid relid, bool inhparent,
							RelOptInfo *rel)
{
	ListCell   *lc;
	Oid			forst_key_am = InvalidOid;

	if (prev_get_relation_info)
		prev_get_relation_info(root, relid, inhparent, rel);
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *info = lfirst(lc);

		if (!OidIsValid(forst_key_am))
			forst_key_am = get_index_am_oid("forst_key", true);
		if (info->relam != forst_key_am)
			continue;
		if (info->sortopfamily != NULL && info->sortopfamily == info->opfamily)
		{
			info->sortopfamily = palloc(sizeof(Oid) * info->nkeycolumns);
			memcpy(info->sortopfamily, info->opfamily, sizeof(Oid) * info->nkeycolumns);
		}
		for (int i = 0; i < info->nkeycolumns; i++)
			show_forst_family(info, i, forst_key_am);
		if (info->sortopfamily == NULL)
			continue;
		for (int i = 0; i < info->nkeycolumns; i++)
		{
			if (OidIsValid(info->indexcollations[i]) &&
				!forst_collation_is_bytewise(info->indexcollations[i]))
			{
				info->sortopfamily = NULL;
				break;
			}
		}
	}
}

void
forst_secondary_init(void)
{
	prev_get_relation_info = get_relation_info_hook;
	get_relation_info_hook = secondary_get_relation_info;
}

/*
 * An index-only scan (the executor wants xs_itup) of a forst_key index:
 * the planner picks one only when the query needs no column at all (the
 * access method returns none: no amcanreturn), as count(*) does.  The
 * executor still fetches every row (forst tables have no visibility map)
 * and then wants an index tuple, whose values nobody reads: one of NULLs.
 */
void
forst_index_only_tuple(IndexScanDesc scan)
{
	TupleDesc	desc = RelationGetDescr(scan->indexRelation);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	MemoryContext old;

	if (!scan->xs_want_itup || scan->xs_itup != NULL)
		return;
	for (int i = 0; i < desc->natts; i++)
	{
		values[i] = (Datum) 0;
		isnull[i] = true;
	}
	old = MemoryContextSwitchTo(GetMemoryChunkContext(scan));
	scan->xs_itupdesc = desc;
	scan->xs_itup = index_form_tuple(desc, values, isnull);
	MemoryContextSwitchTo(old);
}
