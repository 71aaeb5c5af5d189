/*-------------------------------------------------------------------------
 *
 * secondary_scan.c
 *	  Scans of the secondary indexes of forst tables (tableam/secondary.h):
 *	  the range of entries the scan keys make, and for each entry the row
 *	  it names, under the scan's snapshot.
 *
 * Where the rows would come from the object store one request at a time
 * (s3://, forst.batch_lookups on), the scan reads entries ahead, a few at
 * first and twice as many each time up to forst.batch_lookup_rows (at
 * most 1,024), and has the blocks of their rows fetched together in
 * parallel before it looks them up (read/prefetch.h, as a batch upsert or
 * a "k = ANY(array)" does).  Reading ahead changes which reads are cached,
 * never an answer: the same snapshot reads the same entries, only earlier.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/itup.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/predicate.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/forst.h"
#include "am/keys/index_entry.h"
#include "am/keys/tid.h"
#include "am/read/cursor.h"
#include "am/read/point.h"
#include "am/read/prefetch.h"
#include "am/expiry/expiry.h"
#include "am/tableam/secondary.h"
#include "am/tableam/tableam.h"
#include "am/write/index_entries.h"
#include "lsm/ikey.h"

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

	/* entries read ahead (see above): user keys, each [length 4B][bytes] */
	bool		ahead_on;		/* reading ahead in this scan */
	bool		ahead_end;		/* the entries' range is read to its end */
	StringInfoData ahead;
	int			ahead_pos;		/* offset of the next entry in ahead */
	int			ahead_next;		/* entries to read ahead next time */
} SecScan;

#define AHEAD_FIRST 8
#define AHEAD_MAX 1024

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
	st->ahead_on = false;
}

void
forst_secondary_endscan(IndexScanDesc scan)
{
	SecScan    *st = scan->opaque;

	close_cursors(st);
	pfree(st->lo.data);
	pfree(st->hi.data);
	pfree(st->cols.data);
	if (st->ahead.data)
		pfree(st->ahead.data);
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

	/* rows from the object store: read entries ahead (see the top) */
	st->ahead_on = forst_batch_lookups && forst_batch_lookup_rows > 1 &&
		forst_prefetch_possible();
	if (st->ahead_on)
	{
		if (st->ahead.data == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(st));

			initStringInfo(&st->ahead);
			MemoryContextSwitchTo(old);
		}
		resetStringInfo(&st->ahead);
		st->ahead_pos = 0;
		st->ahead_end = false;
		st->ahead_next = AHEAD_FIRST;
	}
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
	ForstVisArg ctx;
	FstEntry	e;
	ForstIndexRow r;
	MemoryContext old;
	bool		same;

	MemoryContextReset(st->rowcxt);
	old = MemoryContextSwitchTo(st->rowcxt);
	ctx.snapshot = scan->xs_snapshot;
	ctx.rel = heap;
	forst_table_view(st->ts, &heap->rd_node, &view);
	forst_point_get_expected(&view, row, forst_version_visible_cb, &ctx, true, &hit);
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

/*
 * The cursor's next entry of this index, its user key in *key (valid until
 * the next call); false past the last.
 */
static bool
next_entry(SecScan *st, FstSlice *key)
{
	const size_t head = FORST_INDEX_ENTRY_HEAD - FST_KG_BYTES;	/* the OID */

	if (!(st->reversed ? forst_cursor_prev(st->entries) :
		  forst_cursor_next(st->entries)))
		return false;
	*key = st->entries->cur.entry.user_key;
	/* past this index's entries (a range without an upper bound) */
	return key->len >= head &&
		memcmp(key->data, st->lo.data + FST_KG_BYTES, head) == 0;
}

static void
split_entry(IndexScanDesc scan, FstSlice key, FstSlice *cols, FstSlice *row)
{
	if (!forst_index_entry_split(key, cols, row))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: malformed entry of index \"%s\"",
						RelationGetRelationName(scan->indexRelation))));
}

/*
 * Reads the next entries ahead into st->ahead, and has the blocks of their
 * rows fetched together (read/prefetch.h); false if there were none.
 */
static bool
read_ahead(IndexScanDesc scan, SecScan *st)
{
	FstSlice	key,
				cols,
				row;
	FstSlice   *rows;
	int			n = 0;
	int			off;

	resetStringInfo(&st->ahead);
	st->ahead_pos = 0;
	while (n < st->ahead_next && !st->ahead_end)
	{
		uint32		len;

		if (!next_entry(st, &key))
		{
			st->ahead_end = true;
			break;
		}
		len = (uint32) key.len;
		appendBinaryStringInfo(&st->ahead, (const char *) &len, sizeof(len));
		appendBinaryStringInfo(&st->ahead, key.data, key.len);
		n++;
		CHECK_FOR_INTERRUPTS();
	}
	if (n == 0)
		return false;
	st->ahead_next = Min(st->ahead_next * 2, Min(forst_batch_lookup_rows, AHEAD_MAX));
	if (n < 2)
		return true;
	/* the rows' user parts (key group and key), as a batch of lookups */
	rows = palloc(sizeof(FstSlice) * n);
	off = 0;
	for (int i = 0; i < n; i++)
	{
		uint32		len;

		memcpy(&len, st->ahead.data + off, sizeof(len));
		off += sizeof(len);
		split_entry(scan, fst_slice(st->ahead.data + off, len), &cols, &row);
		rows[i] = row;
		off += len;
	}
	forst_prefetch_keys(scan->heapRelation, rows, n, NULL);
	pfree(rows);
	return true;
}

/*
 * The next entry read ahead, *key pointing into st->ahead (valid until the
 * next call, which may read ahead again); false past the last.
 */
static bool
next_ahead(IndexScanDesc scan, SecScan *st, FstSlice *key)
{
	uint32		len;

	if (st->ahead_pos >= st->ahead.len && !read_ahead(scan, st))
		return false;
	memcpy(&len, st->ahead.data + st->ahead_pos, sizeof(len));
	st->ahead_pos += sizeof(len);
	*key = fst_slice(st->ahead.data + st->ahead_pos, len);
	st->ahead_pos += len;
	return true;
}

bool
forst_secondary_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	SecScan    *st = scan->opaque;
	bool		backward = (dir == BackwardScanDirection);

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

		if (!(st->ahead_on ? next_ahead(scan, st, &key) : next_entry(st, &key)))
			return false;
		split_entry(scan, key, &cols, &row);
		if (fetch_row(scan, st, row, cols, &scan->xs_heaptid))
		{
			forst_index_only_tuple(scan);
			return true;
		}
		CHECK_FOR_INTERRUPTS();
	}
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
