/*-------------------------------------------------------------------------
 *
 * sst_peek.c
 *	  Point reads of one user part's versions from a data block that is
 *	  already decoded -- in the reader's block cache or in the shared block
 *	  cache -- searched where it lies instead of copied first (sst.h,
 *	  fst_sst_peek).
 *
 * A block in the shared cache can be overwritten while it is read (the
 * cache is a ring, see FstSstReadOptions.shared_peek).  So the search here
 * only reads: it parses the bytes with the block reader, which checks
 * every offset and length against the block's size and so never reads out
 * of bounds whatever the bytes are, and copies the matching versions into
 * the caller's FstSstPeek.  Nothing is interpreted before shared_peek has
 * checked, after the search, that the block was not overwritten meanwhile;
 * if it was, the caller reads the block the ordinary way.
 *
 *-------------------------------------------------------------------------
 */
#include "sst_internal.h"

#include "blockcache.h"
#include "ikey.h"

typedef struct PeekCtx
{
	FstSstReader *r;
	FstSlice	target;
	FstSlice	user_part;
	FstSstPeek *out;
} PeekCtx;

/*
 * Copies the versions of user_part from block b; false when this block
 * cannot answer alone (the versions may go on into the next block, more
 * than fit, a malformed block: the caller then takes the ordinary path,
 * which reports what is wrong).
 */
static bool
peek_in(PeekCtx *pc, FstBlock *b)
{
	FstSstPeek *out = pc->out;
	FstIter    *it;
	bool		ok = true;

	out->nversions = 0;
	out->used = 0;
	if (pc->r->peek_data_it == NULL &&
		(pc->r->peek_data_it = fst_block_ikey_iter_create(NULL)) == NULL)
		return false;
	it = pc->r->peek_data_it;
	fst_block_iter_reset(it, b);
	for (fst_iter_seek(it, pc->target);; fst_iter_next(it))
	{
		FstSlice	k,
					v;
		FstSstPeekVersion *pv;

		if (!fst_iter_valid(it))
		{
			/* the end of the block, or an error: the next block may go on */
			ok = false;
			break;
		}
		k = fst_iter_key(it);
		v = fst_iter_value(it);
		if (k.len < FST_SEQ_BYTES ||
			fst_slice_cmp(fst_ikey_user_part(k), pc->user_part) != 0)
			break;				/* past the key's versions */
		if (out->nversions == FST_SST_PEEK_VERSIONS ||
			out->used + k.len + v.len > sizeof(out->buf))
		{
			ok = false;
			break;
		}
		pv = &out->v[out->nversions++];
		pv->entry_no = fst_block_iter_index(it);
		memcpy(out->buf + out->used, k.data, k.len);
		pv->key = fst_slice(out->buf + out->used, k.len);
		out->used += k.len;
		memcpy(out->buf + out->used, v.data, v.len);
		pv->value = fst_slice(out->buf + out->used, v.len);
		out->used += v.len;
	}
	fst_block_iter_reset(it, NULL);
	return ok;
}

/* shared_peek's fn: the block's contents where they lie in the cache */
static bool
peek_shared(void *arg, const char *data, size_t len)
{
	PeekCtx    *pc = arg;
	FstBlock	b;

	if (!fst_block_view(&b, data, len))
		return false;
	b.restart_interval = pc->r->props.restart_interval;
	return peek_in(pc, &b);
}

/*
 * Index fences.  A point lookup's binary search over the index block
 * decoded an entry and compared whole internal keys at each of its ~log2(n)
 * probes.  The fences hold the first 16 bytes of each index key's user
 * part, zero-padded, as two big-endian integers: a mapping that keeps the
 * keys' order (a shorter user part pads to at most what extends it), so
 * the search narrows to the entries whose prefix equals the target's by
 * integer compares, and compares whole keys only among those (usually none
 * or one: 16 bytes hold the key group and a bigint or a uuid key).
 */
static inline void
fence_of(FstSlice user_part, uint64 *hi, uint64 *lo)
{
	char		pad[16];
	size_t		n = Min(user_part.len, sizeof(pad));

	memset(pad, 0, sizeof(pad));
	if (n > 0)
		memcpy(pad, user_part.data, n);
	*hi = fst_get_be64(pad);
	*lo = fst_get_be64(pad + 8);
}

static inline int
fence_cmp(const uint64 *f, uint64 hi, uint64 lo)
{
	if (f[0] != hi)
		return f[0] < hi ? -1 : 1;
	if (f[1] != lo)
		return f[1] < lo ? -1 : 1;
	return 0;
}

/*
 * Takes the fences another process built and put in the shared store, for
 * an index of num_data_blocks entries (check_index made sure it has).
 */
static bool
fences_shared(FstSstReader *r)
{
	const char *shared;
	uint64		handle;
	size_t		len = (size_t) r->props.num_data_blocks * 2 * sizeof(uint64);

	if (r->opt.meta_get == NULL || len == 0 ||
		(shared = r->opt.meta_get(r->opt.shared_arg, r->opt.cache_id, FST_META_FENCES,
								  r->index_offset, len, &handle)) == NULL)
		return false;
	r->fences = (uint64 *) shared;	/* never written */
	r->nfences = (uint32) r->props.num_data_blocks;
	r->fences_shared = true;
	r->fences_handle = handle;
	return true;
}

/* Offers fences built over the whole index to the shared store. */
static void
fences_share(FstSstReader *r)
{
	const char *shared;
	uint64		handle;

	if (r->opt.meta_put == NULL || r->nfences != r->props.num_data_blocks ||
		(shared = r->opt.meta_put(r->opt.shared_arg, r->opt.cache_id, FST_META_FENCES,
								  r->index_offset, (const char *) r->fences,
								  (size_t) r->nfences * 2 * sizeof(uint64),
								  &handle)) == NULL)
		return;
	fst_free(r->fences);
	r->fences = (uint64 *) shared;
	r->fences_shared = true;
	r->fences_handle = handle;
}

/* Builds r's fences (false: no memory, or an entry too short). */
static bool
fences_build(FstSstReader *r, FstIter *index_it)
{
	uint32		n = 0,
				cap = 64;
	uint64	   *f = fst_malloc(sizeof(uint64) * 2 * cap);
	FstError	err;

	if (f == NULL)
		return false;
	for (fst_iter_seek_first(index_it); fst_iter_valid(index_it); fst_iter_next(index_it))
	{
		FstSlice	k = fst_iter_key(index_it);

		if (k.len < FST_SEQ_BYTES || fst_block_iter_index(index_it) != n)
			break;
		if (n == cap)
		{
			uint64	   *g = fst_realloc(f, sizeof(uint64) * 4 * cap);

			if (g == NULL)
				break;
			f = g;
			cap *= 2;
		}
		fence_of(fst_ikey_user_part(k), &f[2 * n], &f[2 * n + 1]);
		n++;
	}
	if (fst_iter_valid(index_it) || fst_iter_status(index_it, &err) != FST_OK)
	{
		fst_free(f);
		return false;
	}
	r->fences = f;
	r->nfences = n;
	fences_share(r);
	return true;
}

/*
 * Positions index_it at the first index entry >= target (invalid past the
 * last): the fences narrow the search, whole keys decide it.
 */
static void
index_seek(FstSstReader *r, FstIter *index_it, FstSlice target, FstSlice user_part)
{
	uint64		hi,
				lo;
	uint32		a = 0,
				b = r->nfences,
				end;

	fence_of(user_part, &hi, &lo);
	/* a: the first fence >= the target's */
	while (a < b)
	{
		uint32		m = a + (b - a) / 2;

		if (fence_cmp(&r->fences[2 * m], hi, lo) < 0)
			a = m + 1;
		else
			b = m;
	}
	/* end: the first fence > the target's; every key from there is > target */
	b = r->nfences;
	end = a;
	while (end < b)
	{
		uint32		m = end + (b - end) / 2;

		if (fence_cmp(&r->fences[2 * m], hi, lo) <= 0)
			end = m + 1;
		else
			b = m;
	}
	/* among [a, end), with equal fences: the first key >= target */
	b = end;
	while (a < b)
	{
		uint32		m = a + (b - a) / 2;

		fst_block_iter_seek_to_index(index_it, m);
		if (!fst_iter_valid(index_it))
			return;				/* malformed: the caller's checks fail */
		if (fst_ikey_cmp(fst_iter_key(index_it), target) < 0)
			a = m + 1;
		else
			b = m;
	}
	fst_block_iter_seek_to_index(index_it, a);
}

bool
fst_sst_peek(FstSstReader *r, FstSlice target, FstSlice user_part,
			 FstSstPeek *out)
{
	FstIter    *index_it;
	FstBlockHandle h;
	FstBlock   *b;
	PeekCtx		pc;
	bool		ok;

	out->nversions = 0;
	out->used = 0;
	if (r->props.restart_interval == 0)
		return false;
	if (r->peek_index_it == NULL &&
		(r->peek_index_it = fst_block_ikey_iter_create(r->index)) == NULL)
		return false;
	index_it = r->peek_index_it;
	if (!r->fences_tried)
	{
		r->fences_tried = true;
		if (!fences_shared(r))
			(void) fences_build(r, index_it);
	}
	if (r->fences != NULL)
		index_seek(r, index_it, target, user_part);
	else
		fst_iter_seek(index_it, target);
	if (!fst_iter_valid(index_it) ||
		!fst_block_handle_decode(fst_iter_value(index_it), &h))
		return false;
	out->block_no = fst_block_iter_index(index_it);

	pc.r = r;
	pc.target = target;
	pc.user_part = user_part;
	pc.out = out;

	/* the reader's own cache: the block is ours while we hold it */
	if (r->opt.cache &&
		(b = fst_block_cache_lookup(r->opt.cache, r->opt.cache_id, h.offset)) != NULL)
	{
		ok = peek_in(&pc, b);
		fst_block_release(b);
		if (ok)
			r->stats.cache_hits++;
		return ok;
	}
	if (r->opt.shared_peek &&
		r->opt.shared_peek(r->opt.shared_arg, r->opt.cache_id, h.offset,
						   peek_shared, &pc))
	{
		r->stats.shared_hits++;
		return true;
	}
	return false;
}
