/*-------------------------------------------------------------------------
 *
 * lookup.c
 *	  Point lookups across memtables and SST levels (see lookup.h).
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include "lookup.h"
#include "bloom.h"
#include "coding.h"
#include "ikey.h"
#include "iter.h"

/* candidate files held on the stack; more are malloc'ed */
#define LOOKUP_STACK_FILES 32

/*
 * Takes one version of the key from a file (k, v; e decoded), the file's
 * versions being offered newest first.  Returns true when no later version
 * of this file is wanted.  Sets *err's code and returns true to fail.
 */
typedef bool (*OfferFn) (void *ctx, const FstEntry *e, FstSlice k, FstSlice v,
						 uint32 block, uint32 entry, FstCode *rc,
						 FstError *err);

/* Per-lookup state. */
typedef struct LookupState
{
	FstLookup  *lk;
	FstLookupHit *out;
	const FstFileMeta *file;	/* the file being asked */
	bool		winner_last;	/* accept()'s last call was on the winner */
	FstSstPeek	peek;			/* file_versions' versions from a cached block */
} LookupState;

void
fst_lookup_init(FstLookup *lk)
{
	memset(lk, 0, sizeof(*lk));
}

static bool
mt_accept(void *arg, FstMemtable *mt, const FstEntryHeader *hdr, uint32 ref,
		  uint8 hint)
{
	LookupState *ls = arg;

	ls->winner_last = false;
	return ls->lk->accept == NULL ||
		ls->lk->accept(ls->lk->accept_arg, mt, hdr, ref, hint);
}

/* Makes hdr the best version so far, at no location and without bytes yet. */
static void
hit_reset(FstLookupHit *out, const FstEntryHeader *hdr)
{
	memset(out, 0, sizeof(*out));
	out->found = true;
	out->hdr = *hdr;
}

/* The accepted version of user_part in one memtable, if newer. */
static FstCode
memtable_lookup(LookupState *ls, int i, FstSlice user_part, FstError *err)
{
	FstMemtable *mt = ls->lk->memtables[i];
	FstGetResult res;
	FstEntryHeader hdr;
	FstSlice	value;
	uint32		ref;
	FstCode		rc;
	FstLookupHit *out = ls->out;

	rc = fst_memtable_get(mt, user_part, FST_MAX_SEQ, mt_accept, ls, &res,
						  &hdr, &value, &ref, err);
	if (rc != FST_OK)
		return rc;
	if (res == FST_GET_NONE)
		return FST_OK;
	if (out->found && hdr.seq <= out->hdr.seq)
		return FST_OK;
	hit_reset(out, &hdr);
	out->memtable = i;
	out->ref = ref;
	/* the hint bits as accept() may just have left them */
	if (ls->lk->want_entry)
		rc = fst_memtable_entry(mt, ref, &out->ikey, &out->value, &out->hint, err);
	else
		rc = fst_memtable_get_hint(mt, ref, &out->hint, err);
	if (rc != FST_OK)
		return rc;
	ls->winner_last = true;		/* the get stopped at the version accepted */
	return FST_OK;
}

/* fst_lookup_get's OfferFn: a version newer than the best so far wins. */
static bool
offer_version(void *ctx, const FstEntry *e, FstSlice k, FstSlice v,
			  uint32 block, uint32 entry, FstCode *rc, FstError *err)
{
	LookupState *ls = ctx;
	FstLookup  *lk = ls->lk;
	FstLookupHit *out = ls->out;

	if (out->found && e->hdr.seq <= out->hdr.seq)
		return true;			/* versions run newest first: none newer here */
	ls->winner_last = false;
	if (lk->accept && !lk->accept(lk->accept_arg, NULL, &e->hdr, 0, 0))
		return false;
	hit_reset(out, &e->hdr);
	out->in_sst = true;
	out->file = ls->file;
	out->block = block;
	out->entry = entry;
	if (lk->want_entry)
	{
		char	   *kc = lk->alloc(lk->alloc_arg, k.len + v.len);

		if (kc == NULL)
		{
			*rc = fst_error(err, FST_NO_MEMORY, "out of memory");
			return true;
		}
		memcpy(kc, k.data, k.len);
		memcpy(kc + k.len, v.data, v.len);
		out->ikey = fst_slice(kc, k.len);
		out->value = fst_slice(kc + k.len, v.len);
	}
	ls->winner_last = true;
	return true;
}

/*
 * Offers the versions of user_part in file r from target (user_part + the
 * highest sequence wanted) on, newest first, until offer says stop.  From
 * a block decoded in a cache (fst_sst_peek: no iterator and no copy of the
 * block) when it can answer alone, else through an iterator.  *any tells
 * whether the file held a version at all (else the filter was wrong).
 */
static FstCode
file_versions(FstSstReader *r, FstSlice user_part,
			  FstSlice target, FstSstPeek *pk, OfferFn offer, void *ctx,
			  bool *any, FstError *err)
{
	FstIter    *it;
	FstCode		rc = FST_OK;

	if (fst_sst_peek(r, target, user_part, pk))
	{
		*any = pk->nversions > 0;
		for (int i = 0; i < pk->nversions; i++)
		{
			FstEntry	e;

			if (!fst_entry_decode(pk->v[i].key, pk->v[i].value, &e))
				return fst_error(err, FST_CORRUPT, "malformed entry");
			if (offer(ctx, &e, pk->v[i].key, pk->v[i].value, pk->block_no,
					  pk->v[i].entry_no, &rc, err))
				break;
		}
		return rc;
	}

	*any = false;
	it = fst_sst_iter_create(r);
	if (it == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	fst_iter_seek(it, target);
	for (; fst_iter_valid(it); fst_iter_next(it))
	{
		FstSlice	k = fst_iter_key(it);
		FstSlice	v = fst_iter_value(it);
		FstEntry	e;
		uint32		block,
					entry;

		if (!fst_entry_decode(k, v, &e))
		{
			fst_iter_destroy(it);
			return fst_error(err, FST_CORRUPT, "malformed entry");
		}
		if (fst_slice_cmp(e.user_part, user_part) != 0)
			break;
		*any = true;
		fst_sst_iter_position(it, &block, &entry);
		if (offer(ctx, &e, k, v, block, entry, &rc, err))
			break;
	}
	if (rc == FST_OK)
		rc = fst_iter_status(it, err);
	fst_iter_destroy(it);
	return rc;
}

/*
 * The accepted version of user_part in one SST file, if newer than the best
 * so far.  target is user_part followed by the highest sequence.
 */
static FstCode
file_lookup(LookupState *ls, const FstFileMeta *f, FstSlice user_part,
			uint64 hash, FstSlice target, bool use_filter, FstError *err)
{
	FstLookup  *lk = ls->lk;
	FstSstReader *r = NULL;
	bool		may;
	bool		any;
	FstCode		rc;

	rc = lk->reader(lk->reader_arg, f, &r, err);
	if (rc != FST_OK || r == NULL)
		return rc;
	if (use_filter)
	{
		rc = fst_sst_may_contain_hash(r, hash, &may, err);
		if (rc != FST_OK)
		{
			fst_error_prefix(err, "reading the bloom filter of SST file " UINT64_FORMAT,
							 f->file_id);
			return rc;
		}
		lk->stats.bloom_checks++;
		if (!may)
		{
			lk->stats.bloom_negatives++;
			return FST_OK;
		}
	}
	ls->file = f;
	rc = file_versions(r, user_part, target, &ls->peek, offer_version, ls,
					   &any, err);
	if (rc != FST_OK)
		fst_error_prefix(err, "SST file " UINT64_FORMAT, f->file_id);
	else if (use_filter && !any)
		lk->stats.bloom_false_positives++;	/* the filter said maybe */
	return rc;
}

static inline bool
file_covers(const FstFileMeta *f, FstSlice user_part)
{
	return fst_slice_cmp(user_part, fst_ikey_user_part(fst_filemeta_smallest(f))) >= 0 &&
		fst_slice_cmp(user_part, fst_ikey_user_part(fst_filemeta_largest(f))) <= 0;
}

/*
 * Every file of level 0 whose key range holds user_part, and of each deeper
 * level (sorted, not overlapping) the one or two (a key's versions may
 * straddle a file boundary) found by binary search, newest first by highest
 * sequence (see lookup.h).
 */
int
fst_lookup_candidates(const FstManifest *m, FstSlice user_part,
				const FstFileMeta **files)
{
	int			n = 0;
	int			level;

	for (level = 0; level < FST_NUM_LEVELS; level++)
	{
		const FstManifestLevel *lv = &m->levels[level];
		int			i;

		if (level == 0)
		{
			for (i = 0; i < lv->nfiles; i++)
				if (file_covers(&lv->files[i].meta, user_part))
					files[n++] = &lv->files[i].meta;
		}
		else
		{
			int			lo = 0,
						hi = lv->nfiles;

			/* the first file whose largest user part is >= user_part */
			while (lo < hi)
			{
				int			mid = lo + (hi - lo) / 2;

				if (fst_slice_cmp(fst_ikey_user_part(fst_filemeta_largest(&lv->files[mid].meta)),
								  user_part) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (i = lo; i < lv->nfiles && file_covers(&lv->files[i].meta, user_part); i++)
				files[n++] = &lv->files[i].meta;
		}
	}
	/* newest first by highest sequence (few files: insertion sort) */
	for (int i = 1; i < n; i++)
	{
		const FstFileMeta *f = files[i];
		int			j = i;

		while (j > 0 && files[j - 1]->seq_max < f->seq_max)
		{
			files[j] = files[j - 1];
			j--;
		}
		files[j] = f;
	}
	return n;
}

/* The SST part of fst_lookup_get. */
static FstCode
files_lookup(LookupState *ls, FstSlice user_part, FstError *err)
{
	const FstManifest *m = ls->lk->manifest;
	const FstFileMeta *stack_files[LOOKUP_STACK_FILES];
	const FstFileMeta **files = stack_files;
	int			total = fst_manifest_total_files(m);
	int			n;
	char		stack_target[128];
	char	   *target = stack_target;
	uint64		hash = 0;
	FstCode		rc = FST_OK;
	FstLookupHit *out = ls->out;

	if (total > LOOKUP_STACK_FILES)
	{
		files = fst_malloc(sizeof(FstFileMeta *) * total);
		if (files == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	n = fst_lookup_candidates(m, user_part, files);

	if (n > 0)
	{
		if (user_part.len + FST_SEQ_BYTES > sizeof(stack_target))
		{
			target = fst_malloc(user_part.len + FST_SEQ_BYTES);
			if (target == NULL)
			{
				rc = fst_error(err, FST_NO_MEMORY, "out of memory");
				goto done;
			}
		}
		memcpy(target, user_part.data, user_part.len);
		fst_put_be64(target + user_part.len, FST_MAX_SEQ);
		if (!ls->lk->expect_found || n > 1)
			hash = fst_bloom_hash(user_part);	/* (no filter is read otherwise) */
	}
	for (int i = 0; i < n; i++)
	{
		/* no version in this file or an older one can beat the best */
		if (out->found && files[i]->seq_max <= out->hdr.seq)
			break;
		rc = file_lookup(ls, files[i], user_part, hash,
						 fst_slice(target, user_part.len + FST_SEQ_BYTES),
						 !(ls->lk->expect_found && i == n - 1), err);
		if (rc != FST_OK)
			break;
	}

done:
	if (target != stack_target)
		fst_free(target);
	if (files != stack_files)
		fst_free(files);
	return rc;
}

FstCode
fst_lookup_get(FstLookup *lk, FstSlice user_part, FstLookupHit *out,
			   FstError *err)
{
	LookupState ls;
	FstCode		rc;

	memset(out, 0, sizeof(*out));
	ls.lk = lk;
	ls.out = out;
	ls.file = NULL;
	ls.winner_last = true;

	for (int i = 0; i < lk->nmemtables; i++)
	{
		rc = memtable_lookup(&ls, i, user_part, err);
		if (rc != FST_OK)
		{
			fst_error_prefix(err, "memtable lookup");
			return rc;
		}
	}

	if (lk->manifest && fst_manifest_total_files(lk->manifest) > 0)
	{
		rc = files_lookup(&ls, user_part, err);
		if (rc != FST_OK)
			return rc;
	}

	/* let accept() describe the winner (see lookup.h) */
	if (out->found && !ls.winner_last && lk->accept)
	{
		if (out->in_sst)
			(void) lk->accept(lk->accept_arg, NULL, &out->hdr, 0, 0);
		else
			(void) lk->accept(lk->accept_arg, lk->memtables[out->memtable],
							  &out->hdr, out->ref, out->hint);
	}
	return FST_OK;
}

/* ---------------------------------------------------------------------- */
/* fst_sst_get: one file, the first visible version at or below a sequence */

typedef struct SstGetCtx
{
	FstVisibleFn visible;
	void	   *arg;
	FstGetResult *result;
	FstEntryHeader *hdr;
	FstBuf	   *value;
} SstGetCtx;

static bool
sst_get_offer(void *ctx, const FstEntry *e, FstSlice k, FstSlice v,
			  uint32 block, uint32 entry, FstCode *rc, FstError *err)
{
	SstGetCtx  *g = ctx;

	if (g->visible && !g->visible(g->arg, &e->hdr))
		return false;
	if (g->hdr)
		*g->hdr = e->hdr;
	if (e->hdr.flags & FST_ENTRY_TOMBSTONE)
		*g->result = FST_GET_DELETED;
	else
	{
		*g->result = FST_GET_FOUND;
		if (g->value)
		{
			fst_buf_reset(g->value);
			fst_buf_append(g->value, v.data, v.len);
			if (g->value->oom)
				*rc = fst_error(err, FST_NO_MEMORY, "out of memory");
		}
	}
	return true;
}

FstCode
fst_sst_get(FstSstReader *r, FstSlice user_part, uint64 max_seq,
			FstVisibleFn visible, void *arg, FstGetResult *result,
			FstEntryHeader *hdr, FstBuf *value, FstError *err)
{
	char		stackbuf[256];
	char	   *target;
	FstSstPeek	pk;
	SstGetCtx	g;
	bool		may;
	bool		any;
	FstCode		rc;

	*result = FST_GET_NONE;
	if (user_part.len < FST_KG_BYTES)
		return fst_error(err, FST_INVALID_ARGUMENT, "lookup key is shorter than a key group");
	if (fst_sst_props(r)->num_entries == 0)
		return FST_OK;
	rc = fst_sst_may_contain(r, user_part, &may, err);
	if (rc != FST_OK || !may)
		return rc;

	target = user_part.len + FST_SEQ_BYTES <= sizeof(stackbuf) ? stackbuf :
		fst_malloc(user_part.len + FST_SEQ_BYTES);
	if (target == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	memcpy(target, user_part.data, user_part.len);
	fst_put_be64(target + user_part.len, max_seq);

	g.visible = visible;
	g.arg = arg;
	g.result = result;
	g.hdr = hdr;
	g.value = value;
	rc = file_versions(r, user_part,
					   fst_slice(target, user_part.len + FST_SEQ_BYTES), &pk,
					   sst_get_offer, &g, &any, err);
	if (target != stackbuf)
		fst_free(target);
	if (rc != FST_OK)
		*result = FST_GET_NONE;
	return rc;
}
