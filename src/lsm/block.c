/*-------------------------------------------------------------------------
 *
 * block.c
 *	  Reading sorted blocks: opening or viewing their contents, and
 *	  iterating them (see block.h; block_write.c builds and stores them).
 *
 *-------------------------------------------------------------------------
 */
#include "block.h"
#include "ikey.h"

FstCode
fst_block_open(const char *contents, size_t len, bool owned, FstBlock **out,
			   FstError *err)
{
	FstBlock   *b;
	uint32		n;
	uint32		i;
	size_t		entries_end;

	*out = NULL;
	if (len < 4)
		goto corrupt;
	n = fst_get_fixed32(contents + len - 4);
	if (n == 0 || (uint64) n * 4 + 4 > len)
		goto corrupt;
	entries_end = len - 4 - (size_t) n * 4;
	for (i = 0; i < n; i++)
	{
		uint32		off = fst_get_fixed32(contents + entries_end + (size_t) i * 4);

		/* restarts increase strictly; an empty block has the one restart 0 */
		if (off > entries_end || (off == entries_end && entries_end != 0) ||
			(i > 0 && off <= fst_get_fixed32(contents + entries_end + (size_t) (i - 1) * 4)) ||
			(i == 0 && off != 0))
			goto corrupt;
	}
	b = fst_malloc(sizeof(FstBlock));
	if (b == NULL)
	{
		if (owned)
			fst_free((void *) contents);
		return fst_error(err, FST_NO_MEMORY, "out of memory opening a block");
	}
	b->data = contents;
	b->size = entries_end;
	b->contents_size = len;
	b->num_restarts = n;
	b->restarts = contents + entries_end;
	b->owned = owned;
	b->embedded = false;
	b->refcount = 1;
	b->restart_interval = 0;
	*out = b;
	return FST_OK;

corrupt:
	if (owned)
		fst_free((void *) contents);
	return fst_error(err, FST_CORRUPT, "malformed block restart array");
}

void
fst_block_release(FstBlock *b)
{
	if (b == NULL || --b->refcount > 0)
		return;
	if (b->owned)
		fst_free((void *) b->data);
	if (!b->embedded)
		fst_free(b);
}

/* ---------------------------------------------------------------------- */

typedef struct BlockIter
{
	FstIter		base;
	FstBlock   *block;
	FstKeyCmp	cmp;			/* NULL: internal keys (fst_ikey_cmp, inlined) */
	size_t		current;		/* offset of the current entry */
	size_t		next_off;		/* offset of the entry after it */
	uint32		restart_index;	/* restart block containing current */
	uint32		cur_index;		/* ordinal of the current entry */
	uint32		next_index;		/* ordinal of the entry at next_off */
	FstBuf		key;
	FstSlice	value;
	bool		valid;
	FstCode		status;
	const char *errmsg;
} BlockIter;

static void
biter_corrupt(BlockIter *it, const char *msg)
{
	it->valid = false;
	it->status = FST_CORRUPT;
	it->errmsg = msg;
}

static inline int
biter_cmp(const BlockIter *it, FstSlice a, FstSlice b)
{
	return it->cmp ? it->cmp(a, b) : fst_ikey_cmp(a, b);
}

static inline uint32
restart_point(const BlockIter *it, uint32 i)
{
	return fst_get_fixed32(it->block->restarts + (size_t) i * 4);
}

/*
 * Decodes the entry at next_off into key/value.  Returns false at the end
 * of the block or on corruption (status tells).
 */
static bool
biter_parse_next(BlockIter *it)
{
	const char *base = it->block->data;
	const char *p = base + it->next_off;
	const char *limit = base + it->block->size;
	uint64		shared,
				unshared,
				vlen;

	it->current = it->next_off;
	if (p >= limit)
	{
		it->valid = false;
		return false;
	}
	if (!fst_decode_varint64(&p, limit, &shared) ||
		!fst_decode_varint64(&p, limit, &unshared) ||
		!fst_decode_varint64(&p, limit, &vlen) ||
		shared > it->key.len ||
		unshared > (uint64) (limit - p) ||
		vlen > (uint64) (limit - p) - unshared)
	{
		biter_corrupt(it, "malformed block entry");
		return false;
	}
	it->key.len = (size_t) shared;
	if (likely(it->key.cap - it->key.len >= unshared && !it->key.oom))
	{
		memcpy(it->key.data + it->key.len, p, (size_t) unshared);
		it->key.len += (size_t) unshared;
	}
	else
		fst_buf_append(&it->key, p, (size_t) unshared);
	if (it->key.oom)
	{
		it->valid = false;
		it->status = FST_NO_MEMORY;
		it->errmsg = "out of memory reading a block";
		return false;
	}
	it->value = fst_slice(p + unshared, (size_t) vlen);
	it->next_off = (size_t) (p + unshared + vlen - base);
	it->cur_index = it->next_index++;
	while (it->restart_index + 1 < it->block->num_restarts &&
		   restart_point(it, it->restart_index + 1) <= it->current)
		it->restart_index++;
	it->valid = true;
	return true;
}

static void
biter_seek_to_restart(BlockIter *it, uint32 index)
{
	it->key.len = 0;
	it->restart_index = index;
	it->next_off = restart_point(it, index);
	it->next_index = index * it->block->restart_interval;
}

static void
biter_seek_first(FstIter *iter)
{
	BlockIter  *it = (BlockIter *) iter;

	it->status = FST_OK;
	biter_seek_to_restart(it, 0);
	biter_parse_next(it);
}

static void
biter_seek(FstIter *iter, FstSlice target)
{
	BlockIter  *it = (BlockIter *) iter;
	uint32		lo = 0;
	uint32		hi = it->block->num_restarts - 1;

	it->status = FST_OK;
	/* find the last restart whose key is < target */
	while (lo < hi)
	{
		uint32		mid = (lo + hi + 1) / 2;
		const char *p = it->block->data + restart_point(it, mid);
		const char *limit = it->block->data + it->block->size;
		uint64		shared,
					unshared,
					vlen;

		if (!fst_decode_varint64(&p, limit, &shared) ||
			!fst_decode_varint64(&p, limit, &unshared) ||
			!fst_decode_varint64(&p, limit, &vlen) ||
			shared != 0 || unshared > (uint64) (limit - p))
		{
			biter_corrupt(it, "malformed block restart entry");
			return;
		}
		if (biter_cmp(it, fst_slice(p, (size_t) unshared), target) < 0)
			lo = mid;
		else
			hi = mid - 1;
	}
	biter_seek_to_restart(it, lo);
	while (biter_parse_next(it))
	{
		if (biter_cmp(it, fst_slice(it->key.data, it->key.len), target) >= 0)
			return;
	}
}

static void
biter_seek_last(FstIter *iter)
{
	BlockIter  *it = (BlockIter *) iter;

	it->status = FST_OK;
	biter_seek_to_restart(it, it->block->num_restarts - 1);
	while (biter_parse_next(it) && it->next_off < it->block->size)
		;
}

/*
 * The entry before the current one: entries are prefix-compressed, so it
 * is decoded forward from the last restart point before the current entry
 * (LevelDB's way: at most a restart interval of entries per step).
 */
static void
biter_prev(FstIter *iter)
{
	BlockIter  *it = (BlockIter *) iter;
	size_t		original = it->current;
	uint32		r = it->restart_index;

	if (!it->valid)
		return;
	while (restart_point(it, r) >= original)
	{
		if (r == 0)
		{
			/* at the first entry: nothing before it */
			it->valid = false;
			return;
		}
		r--;
	}
	biter_seek_to_restart(it, r);
	while (biter_parse_next(it) && it->next_off < original)
		;
}

static void
biter_seek_before(FstIter *iter, FstSlice target)
{
	BlockIter  *it = (BlockIter *) iter;

	biter_seek(iter, target);
	if (it->valid)
		biter_prev(iter);
	else if (it->status == FST_OK)
		biter_seek_last(iter);
}

static void
biter_next(FstIter *iter)
{
	BlockIter  *it = (BlockIter *) iter;

	if (it->valid)
		biter_parse_next(it);
}

static bool
biter_valid(FstIter *iter)
{
	return ((BlockIter *) iter)->valid;
}

static FstSlice
biter_key(FstIter *iter)
{
	BlockIter  *it = (BlockIter *) iter;

	return fst_slice(it->key.data, it->key.len);
}

static FstSlice
biter_value(FstIter *iter)
{
	return ((BlockIter *) iter)->value;
}

static FstCode
biter_status(FstIter *iter, FstError *err)
{
	BlockIter  *it = (BlockIter *) iter;

	if (it->status != FST_OK)
		return fst_error(err, it->status, "%s", it->errmsg);
	return FST_OK;
}

static void
biter_destroy(FstIter *iter)
{
	BlockIter  *it = (BlockIter *) iter;

	fst_block_release(it->block);
	fst_buf_free(&it->key);
	fst_free(it);
}

static const FstIterOps block_iter_ops = {
	biter_seek_first, biter_seek, biter_next, biter_valid,
	biter_key, biter_value, biter_status, biter_destroy,
	biter_seek_last, biter_seek_before, biter_prev
};

FstIter *
fst_block_iter_create(FstBlock *b, FstKeyCmp cmp)
{
	BlockIter  *it = fst_calloc(1, sizeof(BlockIter));

	if (it == NULL)
		return NULL;
	it->base.ops = &block_iter_ops;
	it->block = b;
	if (b)
		b->refcount++;
	it->cmp = cmp;
	fst_buf_init(&it->key);
	it->valid = false;
	it->status = FST_OK;
	return &it->base;
}

FstIter *
fst_block_ikey_iter_create(FstBlock *b)
{
	return fst_block_iter_create(b, NULL);
}

void
fst_block_iter_reset(FstIter *iter, FstBlock *b)
{
	BlockIter  *it = (BlockIter *) iter;

	if (b)
		b->refcount++;
	fst_block_release(it->block);
	it->block = b;
	it->key.len = 0;
	it->valid = false;
	it->status = FST_OK;
}

bool
fst_block_view(FstBlock *b, const char *contents, size_t len)
{
	uint32		n;

	if (len < 4)
		return false;
	n = fst_get_fixed32(contents + len - 4);
	if (n == 0 || (uint64) n * 4 + 4 > len)
		return false;
	b->data = contents;
	b->size = len - 4 - (size_t) n * 4;
	b->contents_size = len;
	b->num_restarts = n;
	b->restarts = contents + b->size;
	b->owned = false;
	b->embedded = true;
	b->refcount = 1;
	b->restart_interval = 0;
	return true;
}

uint32
fst_block_iter_index(FstIter *iter)
{
	return ((BlockIter *) iter)->cur_index;
}

void
fst_block_iter_seek_to_index(FstIter *iter, uint32 index)
{
	BlockIter  *it = (BlockIter *) iter;
	uint32		interval = it->block->restart_interval;
	uint32		r;

	it->status = FST_OK;
	if (interval == 0)
	{
		biter_corrupt(it, "block has no known restart interval");
		return;
	}
	r = index / interval;
	if (r >= it->block->num_restarts)
	{
		it->valid = false;
		return;
	}
	biter_seek_to_restart(it, r);
	while (biter_parse_next(it))
	{
		if (it->cur_index == index)
			return;
	}
}
