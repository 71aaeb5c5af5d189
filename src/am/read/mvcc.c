/*-------------------------------------------------------------------------
 *
 * mvcc.c
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
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "am/keys/rel.h"
#include "am/keys/slot.h"
#include "am/keys/tid.h"
#include "am/read/mvcc.h"
#include "am/read/point.h"
#include "am/base/stats.h"
#include "am/objects/store.h"
#include "am/read/sst_readers.h"

/* The fate of a finished transaction, cached in the hint bits. */
static bool
xid_committed(TransactionId xid, FstMemtable *mt, uint32 ref, uint8 hint)
{
	if (hint & FST_MT_HINT_COMMITTED)
		return true;
	if (hint & FST_MT_HINT_ABORTED)
		return false;
	if (forst_xid_committed(xid))
	{
		if (mt)
			(void) fst_memtable_set_hint(mt, ref, FST_MT_HINT_COMMITTED, NULL);
		return true;
	}

	/*
	 * Not committed when clog was read; aborted only if it has also ended
	 * since and clog still says no (a transaction writes clog before it
	 * leaves the proc array, so checking the other way round could take a
	 * commit in between for an abort, as heap's visibility rules know).
	 */
	if (mt && !TransactionIdIsInProgress(xid) && !forst_xid_committed(xid))
		(void) fst_memtable_set_hint(mt, ref, FST_MT_HINT_ABORTED, NULL);
	return false;
}

bool
forst_version_visible(Snapshot snapshot, Relation rel,
					  const FstEntryHeader *hdr, FstMemtable *mt,
					  uint32 ref, uint8 hint)
{
	TransactionId xid = hdr->xid;

	if (snapshot->snapshot_type == SNAPSHOT_DIRTY)
	{
		/* the caller waits for whatever these name: never leave them stale */
		snapshot->xmin = snapshot->xmax = InvalidTransactionId;
		snapshot->speculativeToken = 0;
	}
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

bool
forst_version_visible_cb(void *arg, FstMemtable *mt, const FstEntryHeader *hdr,
						 uint32 ref, uint8 hint)
{
	ForstVisArg *va = arg;

	return forst_version_visible(va->snapshot, va->rel, hdr, mt, ref, hint);
}

/* ---------------------------------------------------------------------- */

bool
forst_version_visible_v(Snapshot snapshot, Relation rel, const ForstVersion *v)
{
	if (v->loc.in_sst)
		return forst_version_visible(snapshot, rel, &v->entry.hdr, NULL, 0, 0);
	return forst_version_visible(snapshot, rel, &v->entry.hdr,
								 forst_slab_memtable(v->loc.slab), v->loc.ref,
								 v->hint);
}

typedef struct NewestCtx
{
	ForstNewest *out;
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
	ForstTableView view;
	ForstPointHit hit;
	NewestCtx	ctx;

	memset(out, 0, sizeof(*out));
	forst_table_view(ts, &ts->rnode, &view);
	ctx.out = out;
	forst_point_get(&view, user_part, newest_cb, &ctx, false, &hit);
	if (!hit.found)
	{
		memset(out, 0, sizeof(*out));
		return;
	}
	out->found = true;
	out->hdr = hit.hdr;
	out->loc = hit.loc;
}

/*
 * The SST version a point lookup read last (forst_note_sst_version): an
 * index scan returns a TID and the executor fetches it at once, so the
 * fetch takes the bytes from here.  An ON CONFLICT DO UPDATE fetches the
 * arbiter's version three more times (to lock it, to check the lock, to
 * update it), so a note is kept until another replaces it.  SST files are
 * immutable and their ids never reused, so (relation file, file id, block,
 * entry) names these bytes for as long as the file exists; the note is
 * also tied to one transaction.
 */
#define NOTED_MAX	4096

static struct
{
	bool		valid;
	LocalTransactionId lxid;
	RelFileNode rnode;
	uint64		file_id;
	uint32		block;
	uint32		entry;
	uint32		klen;
	uint32		vlen;
	char		data[NOTED_MAX];
}			noted;

void
forst_note_sst_version(Relation rel, const ForstLoc *loc, FstSlice ikey,
					   FstSlice value)
{
	RelFileNode rnode;

	noted.valid = false;
	if (!loc->in_sst || ikey.len + value.len > NOTED_MAX ||
		!forst_tid_file_slot_get(loc->file_slot, &rnode, &noted.file_id, NULL) ||
		!RelFileNodeEquals(rnode, rel->rd_node))
		return;
	noted.lxid = MyProc->lxid;
	noted.rnode = rnode;
	noted.block = loc->block;
	noted.entry = loc->entry;
	noted.klen = ikey.len;
	noted.vlen = value.len;
	memcpy(noted.data, ikey.data, ikey.len);
	memcpy(noted.data + ikey.len, value.data, value.len);
	noted.valid = true;
}

/* A copy of the noted bytes of this version, if they are the ones noted. */
static char *
take_noted(const RelFileNode *rnode, uint64 file_id, const ForstLoc *loc,
		   size_t *klen, size_t *vlen)
{
	char	   *copy;

	if (!noted.valid || noted.lxid != MyProc->lxid ||
		noted.file_id != file_id || noted.block != loc->block ||
		noted.entry != loc->entry || !RelFileNodeEquals(noted.rnode, *rnode))
		return NULL;
	*klen = noted.klen;
	*vlen = noted.vlen;
	copy = palloc(noted.klen + noted.vlen);
	memcpy(copy, noted.data, noted.klen + noted.vlen);
	return copy;
}

bool
forst_fetch_version(Relation rel, ItemPointer tid, ForstVersion *v)
{
	memset(v, 0, sizeof(*v));
	if (!forst_tid_get(tid, &v->loc))
		return false;
	forst_slab_pin();				/* v may point into a memtable slab */
	if (v->loc.in_sst)
	{
		RelFileNode rnode;
		uint64		file_id;
		uint64		manifest_version;
		const FstManifest *m;
		const FstManifestFile *mf;
		FstSstReader *reader;
		FstBuf		k,
					val;
		FstError	err;
		FstCode		rc;
		char	   *kc;
		size_t		klen,
					vlen;

		if (!forst_tid_file_slot_get(v->loc.file_slot, &rnode, &file_id, &manifest_version) ||
			!RelFileNodeEquals(rnode, rel->rd_node))
			return false;
		kc = take_noted(&rnode, file_id, &v->loc, &klen, &vlen);
		if (kc != NULL)
		{
			v->owned = kc;
			if (!fst_entry_decode(fst_slice(kc, klen), fst_slice(kc + klen, vlen), &v->entry))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("forst: malformed entry in an SST file")));
			return true;
		}
		/* pinned for the one read: this does not keep it open */
		reader = forst_sst_reader_pin_open(&rel->rd_node, file_id);
		if (reader == NULL)
		{
			/*
			 * Closed since the TID was made (forst.sst_reader_memory): the
			 * manifest it was found in describes it, even if it has been
			 * compacted away since (its object stays in the store for
			 * forst.gc_grace after a manifest without it replaced that one).
			 */
			m = forst_manifest_at(&rel->rd_node, manifest_version);
			if ((mf = forst_manifest_file_by_id(m, file_id)) == NULL)
				return false;
			reader = forst_sst_reader_pin(&rel->rd_node, &mf->meta);
		}
		fst_buf_init(&k);
		fst_buf_init(&val);
		rc = fst_sst_read_at(reader, v->loc.block, v->loc.entry, &k, &val, &err);
		forst_sst_reader_release(&rel->rd_node, file_id);
		if (rc == FST_NOT_FOUND)
		{
			fst_buf_free(&k);
			fst_buf_free(&val);
			return false;
		}
		if (rc != FST_OK)
		{
			fst_buf_free(&k);
			fst_buf_free(&val);
			forst_report(rc, &err, "reading a row version");
		}
		klen = k.len;
		vlen = val.len;
		kc = palloc(klen + vlen);
		memcpy(kc, k.data, klen);
		memcpy(kc + klen, val.data, vlen);
		v->owned = kc;
		fst_buf_free(&k);
		fst_buf_free(&val);
		if (!fst_entry_decode(fst_slice(kc, klen), fst_slice(kc + klen, vlen), &v->entry))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry in an SST file")));
		return true;
	}
	else
	{
		FstSlice	ikey,
					value;
		FstMemtable *mt;

		if (forst_shared->slabs[v->loc.slab].state == FORST_SLAB_FREE ||
			!RelFileNodeEquals(forst_shared->slabs[v->loc.slab].owner, rel->rd_node))
			return false;
		mt = forst_slab_memtable(v->loc.slab);
		if (fst_memtable_entry(mt, v->loc.ref, &ikey, &value, &v->hint, NULL) != FST_OK)
			return false;
		if (!fst_entry_decode(ikey, value, &v->entry))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry in a memtable")));
		return true;
	}
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
	forst_slot_store(slot, mtup,
					 (v->entry.hdr.flags & FST_ENTRY_FROZEN) ?
					 FrozenTransactionId : (TransactionId) v->entry.hdr.xid,
					 (CommandId) v->entry.hdr.cid);
	forst_tid_set(&slot->tts_tid, &v->loc);
	slot->tts_tableOid = relid;
}

static int
cmp_seq_desc(const void *a, const void *b)
{
	uint64		x = ((const ForstKeyVersion *) a)->hdr.seq;
	uint64		y = ((const ForstKeyVersion *) b)->hdr.seq;

	return (x > y) ? -1 : (x < y) ? 1 : 0;
}

/* Appends the versions of user_part in it with seq > above_seq. */
static void
collect_versions(FstIter *it, FstSlice user_part, uint64 above_seq, bool memtable,
				 ForstKeyVersion **out, int *n, int *cap)
{
	StringInfoData target;
	char		seq[FST_SEQ_BYTES];

	initStringInfo(&target);
	appendBinaryStringInfo(&target, user_part.data, user_part.len);
	fst_put_be64(seq, FST_MAX_SEQ);
	appendBinaryStringInfo(&target, seq, FST_SEQ_BYTES);
	for (fst_iter_seek(it, fst_slice(target.data, target.len)); fst_iter_valid(it);
		 fst_iter_next(it))
	{
		FstEntry	e;

		if (!fst_entry_decode(fst_iter_key(it), fst_iter_value(it), &e))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry")));
		if (fst_slice_cmp(e.user_part, user_part) != 0 || e.hdr.seq <= above_seq)
			break;
		if (*n == *cap)
		{
			*cap *= 2;
			*out = repalloc(*out, sizeof(ForstKeyVersion) * *cap);
		}
		(*out)[*n].hdr = e.hdr;
		(*out)[*n].hint = memtable ? fst_memtable_iter_hint(it) : 0;
		(*out)[*n].moved_to = NULL;
		(*out)[*n].moved_len = 0;
		if ((e.hdr.flags & FST_ENTRY_MOVED) && e.payload.len > 0)
		{
			(*out)[*n].moved_to = palloc(e.payload.len);
			memcpy((*out)[*n].moved_to, e.payload.data, e.payload.len);
			(*out)[*n].moved_len = (int) e.payload.len;
		}
		(*n)++;
	}
	pfree(target.data);
}

/* collect_versions, destroying the iterator also on error */
static void
collect_and_destroy(FstIter *it, FstSlice user_part, uint64 above_seq,
					bool memtable, ForstKeyVersion **out, int *n, int *cap)
{
	if (it == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	PG_TRY();
	{
		collect_versions(it, user_part, above_seq, memtable, out, n, cap);
	}
	PG_FINALLY();
	{
		fst_iter_destroy(it);
	}
	PG_END_TRY();
}

int
forst_newer_versions(ForstTableShared *ts, FstSlice user_part, uint64 above_seq,
					 ForstKeyVersion **out)
{
	ForstTableView view;
	int			n = 0;
	int			cap = 8;
	int			i;

	*out = palloc(sizeof(ForstKeyVersion) * cap);
	forst_table_view(ts, &ts->rnode, &view);
	for (i = 0; i < view.nslabs; i++)
	{
		collect_and_destroy(fst_memtable_iter_create(forst_slab_memtable(view.slabs[i])),
							user_part, above_seq, true, out, &n, &cap);
	}
	if (view.manifest)
	{
		int			level;

		for (level = 0; level < FST_NUM_LEVELS; level++)
		{
			for (i = 0; i < view.manifest->levels[level].nfiles; i++)
			{
				const FstFileMeta *f = &view.manifest->levels[level].files[i].meta;
				FstSstReader *r;

				if (f->seq_max <= above_seq ||
					(r = forst_sst_reader_for_key(&view.rnode, f, user_part, NULL)) == NULL)
					continue;
				collect_and_destroy(fst_sst_iter_create(r), user_part, above_seq,
									false, out, &n, &cap);
			}
		}
	}
	qsort(*out, n, sizeof(ForstKeyVersion), cmp_seq_desc);
	return n;
}
