/*-------------------------------------------------------------------------
 *
 * memtable_iter.c
 *	  The memtable iterator (iter.h contract): level 0 of the skiplist in
 *	  key order, safe while the writer inserts (see memtable.c).
 *
 *-------------------------------------------------------------------------
 */
#include "memtable_internal.h"

typedef struct MtIter
{
	FstIter		base;
	FstMemtable *mt;
	uint32		cur;			/* current node, 0 = not valid */
	FstCode		status;
} MtIter;

static void
mtiter_seek_first(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;

	it->status = FST_OK;
	it->cur = mt_load_acq(&mt_node(it->mt, it->mt->head)->next[0]);
}

static void
mtiter_seek(FstIter *iter, FstSlice target)
{
	MtIter	   *it = (MtIter *) iter;
	int			c;

	if (!fst_ikey_valid(target))
	{
		it->status = FST_INVALID_ARGUMENT;
		it->cur = 0;
		return;
	}
	it->status = FST_OK;
	it->cur = fst_mt_find_ge(it->mt, target.data, target.len - FST_SEQ_BYTES,
					  fst_ikey_seq(target), NULL, NULL, &c);
}

/* The last node < (up, seq), 0 when that is the head. */
static uint32
mtiter_find_lt(MtIter *it, const char *up, size_t uplen, uint64 seq)
{
	uint32		prev[FST_MT_MAX_HEIGHT];
	int			c;

	(void) fst_mt_find_ge(it->mt, up, uplen, seq, prev, NULL, &c);
	return prev[0] == it->mt->head ? 0 : prev[0];
}

static void
mtiter_seek_last(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;
	uint32		x = it->mt->head;
	int			level = (int) mt_load_rlx(&it->mt->height) - 1;

	it->status = FST_OK;
	for (; level >= 0; level--)
	{
		uint32		next;

		while ((next = mt_load_acq(&mt_node(it->mt, x)->next[level])) != 0)
			x = next;
	}
	it->cur = x == it->mt->head ? 0 : x;
}

static void
mtiter_seek_before(FstIter *iter, FstSlice target)
{
	MtIter	   *it = (MtIter *) iter;

	if (!fst_ikey_valid(target))
	{
		it->status = FST_INVALID_ARGUMENT;
		it->cur = 0;
		return;
	}
	it->status = FST_OK;
	it->cur = mtiter_find_lt(it, target.data, target.len - FST_SEQ_BYTES,
							 fst_ikey_seq(target));
}

/*
 * A skiplist links forward only: the entry before the current one is found
 * by a search from the head (O(log n)), as LevelDB's memtable does.
 */
static void
mtiter_prev(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;
	const MtNode *n;

	if (it->cur == 0)
		return;
	n = mt_node(it->mt, it->cur);
	it->cur = mtiter_find_lt(it, node_key(n), n->key_len - FST_SEQ_BYTES,
							 fst_ikey_seq(fst_slice(node_key(n), n->key_len)));
}

static void
mtiter_next(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;

	if (it->cur != 0)
		it->cur = mt_load_acq(&mt_node(it->mt, it->cur)->next[0]);
}

static bool
mtiter_valid(FstIter *iter)
{
	return ((MtIter *) iter)->cur != 0;
}

static FstSlice
mtiter_key(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;
	const MtNode *n;

	if (it->cur == 0)
		return fst_slice(NULL, 0);
	n = mt_node(it->mt, it->cur);
	return fst_slice(node_key(n), n->key_len);
}

static FstSlice
mtiter_value(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;
	const MtNode *n;

	if (it->cur == 0)
		return fst_slice(NULL, 0);
	n = mt_node(it->mt, it->cur);
	return fst_slice(node_value(n), n->value_len);
}

static FstCode
mtiter_status(FstIter *iter, FstError *err)
{
	MtIter	   *it = (MtIter *) iter;

	if (it->status != FST_OK)
		return fst_error(err, it->status,
						 "memtable seek target is not an internal key");
	return FST_OK;
}

static void
mtiter_destroy(FstIter *iter)
{
	fst_free(iter);
}

static const FstIterOps memtable_iter_ops = {
	mtiter_seek_first, mtiter_seek, mtiter_next, mtiter_valid,
	mtiter_key, mtiter_value, mtiter_status, mtiter_destroy,
	mtiter_seek_last, mtiter_seek_before, mtiter_prev
};

FstIter *
fst_memtable_iter_create(FstMemtable *mt)
{
	MtIter	   *it = fst_calloc(1, sizeof(MtIter));

	if (it == NULL)
		return NULL;
	it->base.ops = &memtable_iter_ops;
	it->mt = mt;
	it->cur = 0;
	it->status = FST_OK;
	return &it->base;
}

uint32
fst_memtable_iter_ref(FstIter *iter)
{
	Assert(iter->ops == &memtable_iter_ops);
	return ((MtIter *) iter)->cur;
}

uint8
fst_memtable_iter_hint(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;

	Assert(iter->ops == &memtable_iter_ops);
	if (it->cur == 0)
		return 0;
	return mt_load_rlx(&mt_node(it->mt, it->cur)->hint);
}

