/*-------------------------------------------------------------------------
 *
 * point.c
 *	  Point lookups across memtables and SST files (see read/point.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/read/point.h"
#include "lsm/bloom.h"
#include "am/shmem/shmem.h"
#include "am/base/stats.h"
#include "am/read/sst_readers.h"

/* candidate files held on the stack; more are palloc'd */
#define POINT_STACK_FILES 32

/* Per-lookup state shared by the sources. */
typedef struct PointState
{
	ForstPointAcceptFn accept;
	void	   *arg;
	bool		want_entry;
	ForstPointHit *out;
	bool		winner_last;	/* accept()'s last call was on the winner */
	FstSstPeek	peek;			/* peek_lookup's versions */
	uint64		bloom_hash;		/* of the user part, for every file's filter */
} PointState;

static bool peek_lookup(PointState *ps, const ForstTableView *view,
						const FstFileMeta *f, FstSstReader *r,
						FstSlice user_part, FstSlice target);

static bool
mt_accept(void *arg, FstMemtable *mt, const FstEntryHeader *hdr, uint32 ref,
		  uint8 hint)
{
	PointState *ps = arg;

	ps->winner_last = false;
	return ps->accept(ps->arg, mt, hdr, ref, hint);
}

/* Makes hdr the best version so far, at no location and without bytes yet. */
static void
hit_reset(ForstPointHit *out, const FstEntryHeader *hdr)
{
	out->found = true;
	out->hdr = *hdr;
	memset(&out->loc, 0, sizeof(out->loc));
	out->hint = 0;
	out->ikey = fst_slice(NULL, 0);
	out->value = fst_slice(NULL, 0);
}

/* The accepted version of user_part in one memtable, if newer. */
static void
memtable_lookup(PointState *ps, int slab, FstSlice user_part)
{
	FstMemtable *mt = forst_slab_memtable(slab);
	FstGetResult res;
	FstEntryHeader hdr;
	FstSlice	value;
	uint32		ref;
	FstError	err;
	FstCode		rc;
	ForstPointHit *out = ps->out;

	rc = fst_memtable_get(mt, user_part, FST_MAX_SEQ, mt_accept, ps, &res,
						  &hdr, &value, &ref, &err);
	if (rc != FST_OK)
		forst_report(rc, &err, "memtable lookup");
	if (res == FST_GET_NONE)
		return;
	if (out->found && hdr.seq <= out->hdr.seq)
		return;
	hit_reset(out, &hdr);
	out->loc.slab = slab;
	out->loc.ref = ref;
	/* the hint bits as accept() may just have left them */
	if (ps->want_entry)
		rc = fst_memtable_entry(mt, ref, &out->ikey, &out->value, &out->hint, &err);
	else
		rc = fst_memtable_get_hint(mt, ref, &out->hint, &err);
	if (rc != FST_OK)
		forst_report(rc, &err, "memtable lookup");
	ps->winner_last = true;		/* the get stopped at the version accepted */
}

/*
 * One version of the key from an SST file (k, v; e decoded), the file's
 * versions being offered newest first.  Returns true when no later version
 * of this file can win: the best so far is at least as new, or this one
 * was accepted (and is now the best, at block and entry).
 */
static bool
offer_version(PointState *ps, const ForstTableView *view, const FstFileMeta *f,
			  const FstEntry *e, FstSlice k, FstSlice v, uint32 block,
			  uint32 entry)
{
	ForstPointHit *out = ps->out;

	if (out->found && e->hdr.seq <= out->hdr.seq)
		return true;			/* versions run newest first: none newer here */
	ps->winner_last = false;
	if (!ps->accept(ps->arg, NULL, &e->hdr, 0, 0))
		return false;
	hit_reset(out, &e->hdr);
	out->loc.in_sst = true;
	out->loc.file_slot = forst_file_slot(&view->rnode, f->file_id, view->manifest_version);
	out->loc.block = block;
	out->loc.entry = entry;
	if (ps->want_entry)
	{
		char	   *kc = palloc(k.len + v.len);

		memcpy(kc, k.data, k.len);
		memcpy(kc + k.len, v.data, v.len);
		out->ikey = fst_slice(kc, k.len);
		out->value = fst_slice(kc + k.len, v.len);
	}
	ps->winner_last = true;
	return true;
}

/*
 * The accepted version of user_part in one SST file, if newer than the best
 * so far.  target is user_part followed by the highest sequence.
 */
static void
file_lookup(PointState *ps, const ForstTableView *view, const FstFileMeta *f,
			FstSlice user_part, FstSlice target)
{
	FstSstReader *r;
	FstIter    *it;
	FstError	err;
	FstCode		rc;
	bool		any = false;

	r = forst_sst_reader_for_key(&view->rnode, f, user_part, &ps->bloom_hash);
	if (r == NULL)
		return;					/* not in its range, or ruled out by the filter */
	if (peek_lookup(ps, view, f, r, user_part, target))
		return;
	it = fst_sst_iter_create(r);
	if (it == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
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
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry in SST file %llu",
							(unsigned long long) f->file_id)));
		}
		if (fst_slice_cmp(e.user_part, user_part) != 0)
			break;
		any = true;
		fst_sst_iter_position(it, &block, &entry);
		if (offer_version(ps, view, f, &e, k, v, block, entry))
			break;
	}
	rc = fst_iter_status(it, &err);
	fst_iter_destroy(it);
	if (rc != FST_OK)
		forst_report(rc, &err, "reading an SST file");
	if (!any)
		forst_local_bloom_false_positives++;	/* the filter said maybe */
}

/*
 * file_lookup from a block already decoded (fst_sst_peek): no iterator and
 * no copy of the block.  False if the block could not answer alone; then
 * nothing was decided and the caller reads with an iterator.
 */
static bool
peek_lookup(PointState *ps, const ForstTableView *view, const FstFileMeta *f,
			FstSstReader *r, FstSlice user_part, FstSlice target)
{
	FstSstPeek *pk = &ps->peek;
	int			i;

	if (!fst_sst_peek(r, target, user_part, pk))
		return false;
	if (pk->nversions == 0)
		forst_local_bloom_false_positives++;	/* the filter said maybe */
	for (i = 0; i < pk->nversions; i++)
	{
		FstEntry	e;

		if (!fst_entry_decode(pk->v[i].key, pk->v[i].value, &e))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry in SST file %llu",
							(unsigned long long) f->file_id)));
		if (offer_version(ps, view, f, &e, pk->v[i].key, pk->v[i].value,
						  pk->block_no, pk->v[i].entry_no))
			break;
	}
	return true;
}

static inline bool
file_covers(const FstFileMeta *f, FstSlice user_part)
{
	return fst_slice_cmp(user_part, fst_ikey_user_part(fst_filemeta_smallest(f))) >= 0 &&
		fst_slice_cmp(user_part, fst_ikey_user_part(fst_filemeta_largest(f))) <= 0;
}

/*
 * Collects the files whose key range holds user_part into files (room for
 * every file of m): every such file of level 0, and of each deeper level
 * (sorted, not overlapping) the one or two (a key's versions may straddle
 * a file boundary) found by binary search.  Returns how many.
 */
static int
candidate_files(const FstManifest *m, FstSlice user_part,
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
	return n;
}

void
forst_point_get(const ForstTableView *view, FstSlice user_part,
				ForstPointAcceptFn accept, void *arg, bool want_entry,
				ForstPointHit *out)
{
	PointState	ps;
	int			i;

	memset(out, 0, sizeof(*out));
	ps.accept = accept;
	ps.arg = arg;
	ps.want_entry = want_entry;
	ps.out = out;
	ps.winner_last = true;

	for (i = 0; i < view->nslabs; i++)
		memtable_lookup(&ps, view->slabs[i], user_part);

	if (view->manifest && fst_manifest_total_files(view->manifest) > 0)
	{
		const FstFileMeta *stack_files[POINT_STACK_FILES];
		const FstFileMeta **files = stack_files;
		int			total = fst_manifest_total_files(view->manifest);
		int			n;
		char		stack_target[128];
		char	   *target = stack_target;

		if (total > POINT_STACK_FILES)
			files = palloc(sizeof(FstFileMeta *) * total);
		n = candidate_files(view->manifest, user_part, files);
		ps.bloom_hash = fst_bloom_hash(user_part);

		/* newest first by highest sequence (few files: insertion sort) */
		for (i = 1; i < n; i++)
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

		if (n > 0)
		{
			if (user_part.len + FST_SEQ_BYTES > sizeof(stack_target))
				target = palloc(user_part.len + FST_SEQ_BYTES);
			memcpy(target, user_part.data, user_part.len);
			fst_put_be64(target + user_part.len, FST_MAX_SEQ);
		}
		for (i = 0; i < n; i++)
		{
			/* no version in this file or an older one can beat the best */
			if (out->found && files[i]->seq_max <= out->hdr.seq)
				break;
			file_lookup(&ps, view, files[i], user_part,
						fst_slice(target, user_part.len + FST_SEQ_BYTES));
		}
		if (target != stack_target)
			pfree(target);
		if (files != stack_files)
			pfree(files);
	}

	/* let accept() describe the winner (see read/point.h) */
	if (out->found && !ps.winner_last)
	{
		if (out->loc.in_sst)
			(void) accept(arg, NULL, &out->hdr, 0, 0);
		else
			(void) accept(arg, forst_slab_memtable(out->loc.slab), &out->hdr,
						  out->loc.ref, out->hint);
	}
}
