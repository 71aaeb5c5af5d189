/*-------------------------------------------------------------------------
 *
 * forst_mvcc.c
 *	  Visibility of row versions to snapshots, the newest version of a key
 *	  for writers, and fetching versions by TID.
 *
 * A version carries its inserting transaction (xid, command id) and flags.
 * Versions of one key are read newest first; a reader takes the first one
 * its snapshot can see, and a tombstone there means the row is absent.
 * Memtable versions learn their transaction's fate from clog and cache it
 * in the entry's hint bits; versions in SST files are committed (the flush
 * keeps only those) and only need the snapshot check.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "forst_am.h"

/* The fate of a finished transaction, cached in the hint bits. */
static bool
xid_committed(TransactionId xid, FstMemtable *mt, uint32 ref, uint8 hint)
{
	if (hint & FST_MT_HINT_COMMITTED)
		return true;
	if (hint & FST_MT_HINT_ABORTED)
		return false;
	if (TransactionIdDidCommit(xid))
	{
		if (mt)
			(void) fst_memtable_set_hint(mt, ref, FST_MT_HINT_COMMITTED, NULL);
		return true;
	}
	if (mt && !TransactionIdIsInProgress(xid))
		(void) fst_memtable_set_hint(mt, ref, FST_MT_HINT_ABORTED, NULL);
	return false;
}

bool
forst_version_visible(Snapshot snapshot, Relation rel,
					  const FstEntryHeader *hdr, FstMemtable *mt,
					  uint32 ref, uint8 hint)
{
	TransactionId xid = hdr->xid;

	if (hdr->flags & FST_ENTRY_FROZEN)
		return true;

	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			if (TransactionIdIsCurrentTransactionId(xid))
				return hdr->cid < snapshot->curcid;
			if (XidInMVCCSnapshot(xid, snapshot))
			{
				/* a concurrent writer: a read-write conflict for SSI */
				if (rel)
					CheckForSerializableConflictOut(rel, xid, snapshot);
				return false;
			}
			if (hdr->flags & FST_ENTRY_COMMITTED)
				return true;
			return xid_committed(xid, mt, ref, hint);

		case SNAPSHOT_ANY:
			return true;

		case SNAPSHOT_SELF:
		case SNAPSHOT_NON_VACUUMABLE:
			if (TransactionIdIsCurrentTransactionId(xid))
				return true;
			if (hdr->flags & FST_ENTRY_COMMITTED)
				return true;
			return xid_committed(xid, mt, ref, hint);

		case SNAPSHOT_DIRTY:
			snapshot->xmin = snapshot->xmax = InvalidTransactionId;
			snapshot->speculativeToken = 0;
			if (TransactionIdIsCurrentTransactionId(xid))
				return true;
			if (hdr->flags & FST_ENTRY_COMMITTED)
				return true;
			if (TransactionIdIsInProgress(xid))
			{
				snapshot->xmin = xid;
				return true;
			}
			return xid_committed(xid, mt, ref, hint);

		case SNAPSHOT_TOAST:
		case SNAPSHOT_HISTORIC_MVCC:
			break;
	}
	elog(ERROR, "forst: unsupported snapshot type %d", (int) snapshot->snapshot_type);
	return false;				/* keep compiler quiet */
}

/* ---------------------------------------------------------------------- */

typedef struct NewestCtx
{
	ForstNewest *out;
	int			slab;
} NewestCtx;

/* Accepts the first version that is not aborted, classifying it. */
static bool
newest_cb(void *arg, FstMemtable *mt, const FstEntryHeader *hdr, uint32 ref,
		  uint8 hint)
{
	NewestCtx  *ctx = arg;
	ForstNewest *out = ctx->out;

	out->mine = false;
	out->in_progress = false;
	if (!(hdr->flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)))
	{
		if (TransactionIdIsCurrentTransactionId(hdr->xid))
			out->mine = true;
		else if (!(hint & (FST_MT_HINT_COMMITTED | FST_MT_HINT_ABORTED)) &&
				 TransactionIdIsInProgress(hdr->xid))
			out->in_progress = true;
		else if (!xid_committed(hdr->xid, mt, ref, hint))
			return false;		/* aborted: look at the next older version */
	}
	return true;
}

void
forst_find_newest(ForstTableShared *ts, FstSlice user_part, ForstNewest *out)
{
	int			slabs[FORST_MAX_IMMUTABLE + 1];
	int			n = forst_table_slabs(ts, slabs);
	int			i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++)
	{
		FstMemtable *mt = forst_slab_memtable(slabs[i]);
		NewestCtx	ctx;
		FstGetResult res;
		FstError	err;

		ctx.out = out;
		ctx.slab = slabs[i];
		if (fst_memtable_get(mt, user_part, FST_MAX_SEQ, newest_cb, &ctx, &res,
							 &out->hdr, NULL, &out->ref, &err) != FST_OK)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: memtable lookup failed: %s", err.msg)));
		if (res != FST_GET_NONE)
		{
			out->found = true;
			out->slab = slabs[i];
			return;
		}
	}
}

bool
forst_fetch_version(Relation rel, ItemPointer tid, ForstVersion *v)
{
	FstSlice	ikey,
				value;
	FstMemtable *mt;

	if (!forst_tid_get_memtable(tid, &v->slab, &v->ref))
		return false;
	if (forst_shared->slabs[v->slab].state == FORST_SLAB_FREE ||
		!RelFileNodeEquals(forst_shared->slabs[v->slab].owner, rel->rd_node))
		return false;
	mt = forst_slab_memtable(v->slab);
	if (fst_memtable_entry(mt, v->ref, &ikey, &value, &v->hint, NULL) != FST_OK)
		return false;
	if (!fst_entry_decode(ikey, value, &v->entry))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: malformed entry in a memtable")));
	return true;
}

void
forst_store_version(TupleTableSlot *slot, const ForstVersion *v, Oid relid)
{
	MinimalTuple mtup;
	Size		len = v->entry.payload.len;

	if (len < SizeofMinimalTupleHeader)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: row version of %zu bytes is too short", len)));
	mtup = (MinimalTuple) MemoryContextAlloc(slot->tts_mcxt, len);
	memcpy(mtup, v->entry.payload.data, len);
	ExecStoreMinimalTuple(mtup, slot, true);
	forst_tid_set_memtable(&slot->tts_tid, v->slab, v->ref);
	slot->tts_tableOid = relid;
}
