/*-------------------------------------------------------------------------
 *
 * index_entries.c
 *	  Secondary index entries written with the rows (write/index_entries.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/keys/index_entry.h"
#include "am/read/cursor.h"
#include "am/write/dml.h"
#include "am/write/index_entries.h"
#include "lsm/ikey.h"

void
forst_index_row(Relation rel, const char *data, Size len, ForstIndexRow *out)
{
	TupleDesc	desc = RelationGetDescr(rel);
	HeapTupleData tup;
	MinimalTuple mt;

	if (len < SizeofMinimalTupleHeader)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: row version of %zu bytes is too short", len)));
	/* a stored row may sit anywhere in a block: deform an aligned copy */
	out->copy = palloc(len);
	memcpy(out->copy, data, len);
	mt = (MinimalTuple) out->copy;
	tup.t_len = len + MINIMAL_TUPLE_OFFSET;
	tup.t_data = (HeapTupleHeader) ((char *) mt - MINIMAL_TUPLE_OFFSET);
	ItemPointerSetInvalid(&tup.t_self);
	tup.t_tableOid = InvalidOid;
	out->values = palloc(sizeof(Datum) * desc->natts);
	out->isnull = palloc(sizeof(bool) * desc->natts);
	heap_deform_tuple(&tup, desc, out->values, out->isnull);
}

void
forst_index_row_free(ForstIndexRow *r)
{
	if (r->copy)
		pfree(r->copy);
	if (r->values)
		pfree(r->values);
	if (r->isnull)
		pfree(r->isnull);
	r->copy = NULL;
	r->values = NULL;
	r->isnull = NULL;
}

void
forst_index_entries_write(Relation rel, ForstTableShared *ts,
						  ForstRelInfo *info, CommandId cid,
						  ForstIndexRow *old, StringInfo old_up,
						  ForstIndexRow *new, StringInfo new_up)
{
	StringInfoData a;
	StringInfoData b;
	ForstLoc	loc;

	initStringInfo(&a);
	initStringInfo(&b);
	for (int i = 0; i < info->nsecondary; i++)
	{
		const ForstSecondary *s = &info->secondary[i];

		resetStringInfo(&a);
		resetStringInfo(&b);
		if (old)
			forst_index_entry_build(s, old->values, old->isnull,
									fst_slice(old_up->data, old_up->len), &a);
		if (new)
			forst_index_entry_build(s, new->values, new->isnull,
									fst_slice(new_up->data, new_up->len), &b);
		/* an update that leaves this index's entry as it was */
		if (old && new && a.len == b.len && memcmp(a.data, b.data, a.len) == 0)
			continue;
		if (old)
			forst_put_entry(ts, &a, FST_ENTRY_TOMBSTONE, cid, NULL, 0, &loc);
		if (new)
			forst_put_entry(ts, &b, 0, cid, NULL, 0, &loc);
	}
	pfree(a.data);
	pfree(b.data);
}

void
forst_index_entries_drop(Relation heap, Oid indexoid)
{
	ForstTableShared *ts = forst_table_for_write(heap);
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	CommandId	cid = GetCurrentCommandId(true);
	StringInfoData lo;
	StringInfoData hi;
	StringInfoData up;
	ForstCursor *c;
	ForstLoc	loc;
	char		kg[FST_KG_BYTES];

	initStringInfo(&lo);
	initStringInfo(&hi);
	initStringInfo(&up);
	forst_index_entry_head(&lo, indexoid);
	appendBinaryStringInfo(&hi, lo.data, lo.len);
	if (!forst_key_successor_prefix(&hi))
		elog(ERROR, "forst: no range for the entries of index %u", indexoid);
	fst_put_be16(kg, FST_KG_INDEX);

	/*
	 * The tombstones have this command's id: the snapshot, taken in it,
	 * does not see them, so the cursor reads the entries as they were.
	 */
	c = forst_cursor_open(heap, snap, ts, fst_slice(lo.data, lo.len),
						  fst_slice(hi.data, hi.len), false);
	forst_cursor_seek(c, fst_slice(lo.data, lo.len), fst_slice(hi.data, hi.len));
	while (forst_cursor_next(c))
	{
		resetStringInfo(&up);
		appendBinaryStringInfo(&up, kg, FST_KG_BYTES);
		appendBinaryStringInfo(&up, c->cur.entry.user_key.data,
							   c->cur.entry.user_key.len);
		forst_put_entry(ts, &up, FST_ENTRY_TOMBSTONE, cid, NULL, 0, &loc);
		CHECK_FOR_INTERRUPTS();
	}
	forst_cursor_close(c);
	UnregisterSnapshot(snap);
	pfree(lo.data);
	pfree(hi.data);
	pfree(up.data);
}
