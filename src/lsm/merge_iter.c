/*-------------------------------------------------------------------------
 *
 * merge_iter.c
 *	  The merging iterator (a binary min-heap of children) and the visible
 *	  iterator on top of it (see merge_iter.h).
 *
 * The merging iterator caches each child's current key in keys[], so a
 * heap comparison is one fst_ikey_cmp with no indirect calls; a child's key
 * is refreshed whenever that child is positioned (keys are borrowed and
 * stay valid until then, per the iterator contract).
 *
 *-------------------------------------------------------------------------
 */
#include "merge_iter.h"

#include <stdio.h>

/* ---------------------------------------------------------------------- */
/* Merging iterator */

typedef struct MergeIter
{
	FstIter		base;
	int			nchildren;
	FstIter   **children;
	FstSlice   *keys;			/* current key of each child in the heap */
	int		   *heap;			/* child indexes; heap[0] is the smallest
								 * (the largest when backward) */
	int			nheap;
	bool		backward;		/* positioned by seek_last, seek_before or
								 * prev: the heap orders largest first */
	FstCode		status;
	char		errmsg[FST_ERRMSG_LEN];
} MergeIter;

/*
 * Is child a ordered before child b in the direction of travel?  Ties go
 * to the lower index going forward, to the higher one going backward, so
 * that both directions see the same order.
 */
static inline bool
merge_less(const MergeIter *it, int a, int b)
{
	int			r = fst_ikey_cmp(it->keys[a], it->keys[b]);

	if (unlikely(it->backward))
		return r > 0 || (r == 0 && a > b);
	return r < 0 || (r == 0 && a < b);
}

static void
merge_sift_down(MergeIter *it, int pos)
{
	int		   *heap = it->heap;
	int			n = it->nheap;
	int			child_idx = heap[pos];

	for (;;)
	{
		int			l = 2 * pos + 1;
		int			best;

		if (l >= n)
			break;
		best = l;
		if (l + 1 < n && merge_less(it, heap[l + 1], heap[l]))
			best = l + 1;
		if (!merge_less(it, heap[best], child_idx))
			break;
		heap[pos] = heap[best];
		pos = best;
	}
	heap[pos] = child_idx;
}

/* Records the first child error; the merge then stops. */
static void
merge_fail(MergeIter *it, FstIter *child)
{
	FstError	err;
	FstCode		code;

	fst_error_clear(&err);
	code = fst_iter_status(child, &err);
	if (code == FST_OK)
		return;
	it->status = code;
	memcpy(it->errmsg, err.msg, sizeof(it->errmsg));
	it->nheap = 0;
}

/*
 * Builds the heap after every child was positioned: valid children enter
 * it, an invalid one is checked for an error.
 */
static void
merge_rebuild(MergeIter *it)
{
	int			i;

	it->nheap = 0;
	it->status = FST_OK;
	for (i = 0; i < it->nchildren; i++)
	{
		FstIter    *c = it->children[i];

		if (fst_iter_valid(c))
		{
			it->keys[i] = fst_iter_key(c);
			it->heap[it->nheap++] = i;
		}
		else
		{
			merge_fail(it, c);
			if (it->status != FST_OK)
				return;
		}
	}
	for (i = it->nheap / 2 - 1; i >= 0; i--)
		merge_sift_down(it, i);
}

static void
merge_seek_first(FstIter *iter)
{
	MergeIter  *it = (MergeIter *) iter;
	int			i;

	it->backward = false;
	for (i = 0; i < it->nchildren; i++)
		fst_iter_seek_first(it->children[i]);
	merge_rebuild(it);
}

static void
merge_seek(FstIter *iter, FstSlice target)
{
	MergeIter  *it = (MergeIter *) iter;
	int			i;

	it->backward = false;
	for (i = 0; i < it->nchildren; i++)
		fst_iter_seek(it->children[i], target);
	merge_rebuild(it);
}

static void
merge_seek_last(FstIter *iter)
{
	MergeIter  *it = (MergeIter *) iter;
	int			i;

	it->backward = true;
	for (i = 0; i < it->nchildren; i++)
		fst_iter_seek_last(it->children[i]);
	merge_rebuild(it);
}

static void
merge_seek_before(FstIter *iter, FstSlice target)
{
	MergeIter  *it = (MergeIter *) iter;
	int			i;

	it->backward = true;
	for (i = 0; i < it->nchildren; i++)
		fst_iter_seek_before(it->children[i], target);
	merge_rebuild(it);
}

/*
 * Turns around at the current entry (of child heap[0]): every other child
 * is positioned on the new side of its key, then the current child steps
 * past it.  The key stays valid meanwhile: it belongs to the current child,
 * which moves last.
 */
static void
merge_turn(MergeIter *it, bool backward)
{
	int			top = it->heap[0];
	FstSlice	key = it->keys[top];
	int			i;

	for (i = 0; i < it->nchildren; i++)
	{
		if (i == top)
			continue;
		if (backward)
			fst_iter_seek_before(it->children[i], key);
		else
			fst_iter_seek(it->children[i], key);
	}
	if (backward)
		fst_iter_prev(it->children[top]);
	else
		fst_iter_next(it->children[top]);
	it->backward = backward;
	merge_rebuild(it);
}

/* Moves the current child one step in the direction of travel. */
static void
merge_step(MergeIter *it)
{
	int			top = it->heap[0];
	FstIter    *c = it->children[top];

	if (it->backward)
		fst_iter_prev(c);
	else
		fst_iter_next(c);
	if (fst_iter_valid(c))
		it->keys[top] = fst_iter_key(c);
	else
	{
		merge_fail(it, c);
		if (it->status != FST_OK)
			return;
		it->heap[0] = it->heap[--it->nheap];
	}
	if (it->nheap > 1)
		merge_sift_down(it, 0);
}

static void
merge_prev(FstIter *iter)
{
	MergeIter  *it = (MergeIter *) iter;

	if (it->nheap == 0)
		return;
	if (!it->backward)
		merge_turn(it, true);
	else
		merge_step(it);
}

static void
merge_next(FstIter *iter)
{
	MergeIter  *it = (MergeIter *) iter;

	if (it->nheap == 0)
		return;
	if (unlikely(it->backward))
		merge_turn(it, false);
	else
		merge_step(it);
}

static bool
merge_valid(FstIter *iter)
{
	return ((MergeIter *) iter)->nheap > 0;
}

static FstSlice
merge_key(FstIter *iter)
{
	MergeIter  *it = (MergeIter *) iter;

	Assert(it->nheap > 0);
	return it->keys[it->heap[0]];
}

static FstSlice
merge_value(FstIter *iter)
{
	MergeIter  *it = (MergeIter *) iter;

	Assert(it->nheap > 0);
	return fst_iter_value(it->children[it->heap[0]]);
}

static FstCode
merge_status(FstIter *iter, FstError *err)
{
	MergeIter  *it = (MergeIter *) iter;

	if (it->status != FST_OK)
		return fst_error(err, it->status, "%s", it->errmsg);
	return FST_OK;
}

static void
merge_destroy(FstIter *iter)
{
	MergeIter  *it = (MergeIter *) iter;
	int			i;

	for (i = 0; i < it->nchildren; i++)
		fst_iter_destroy(it->children[i]);
	fst_free(it->children);
	fst_free(it->keys);
	fst_free(it->heap);
	fst_free(it);
}

static const FstIterOps merge_iter_ops = {
	merge_seek_first, merge_seek, merge_next, merge_valid,
	merge_key, merge_value, merge_status, merge_destroy,
	merge_seek_last, merge_seek_before, merge_prev
};

FstIter *
fst_merge_iter_create(FstIter **children, int n)
{
	MergeIter  *it;
	size_t		alloc_n = (size_t) Max(n, 1);
	int			i;
	bool		ok = (n >= 0);

	for (i = 0; i < n; i++)
		if (children[i] == NULL)
			ok = false;
	it = ok ? fst_calloc(1, sizeof(MergeIter)) : NULL;
	if (it != NULL)
	{
		it->children = fst_malloc(alloc_n * sizeof(FstIter *));
		it->keys = fst_calloc(alloc_n, sizeof(FstSlice));
		it->heap = fst_malloc(alloc_n * sizeof(int));
	}
	if (it == NULL || it->children == NULL || it->keys == NULL ||
		it->heap == NULL)
	{
		for (i = 0; i < n; i++)
			fst_iter_destroy(children[i]);
		if (it != NULL)
		{
			fst_free(it->children);
			fst_free(it->keys);
			fst_free(it->heap);
			fst_free(it);
		}
		return NULL;
	}
	it->base.ops = &merge_iter_ops;
	it->nchildren = n;
	if (n > 0)
		memcpy(it->children, children, (size_t) n * sizeof(FstIter *));
	it->nheap = 0;
	it->backward = false;
	it->status = FST_OK;
	return &it->base;
}

/* ---------------------------------------------------------------------- */
/* Visible iterator */

typedef struct VisibleIter
{
	FstIter		base;
	FstIter    *in;
	uint64		max_seq;
	FstVisibleFn visible;
	void	   *arg;
	FstBuf		row;			/* user part of the last row chosen */
	bool		valid;
	FstCode		status;
	char		errmsg[FST_ERRMSG_LEN];
} VisibleIter;

static void
vis_fail(VisibleIter *it, FstCode code, const char *msg)
{
	it->valid = false;
	it->status = code;
	snprintf(it->errmsg, sizeof(it->errmsg), "%s", msg);
}

/*
 * Moves from the input's current entry to the next row to yield.  With
 * skip_row, entries of the user part in it->row are passed over first (the
 * versions of the row just yielded or found deleted).
 */
static void
vis_settle(VisibleIter *it, bool skip_row)
{
	FstIter    *in = it->in;

	while (fst_iter_valid(in))
	{
		FstSlice	key = fst_iter_key(in);
		FstEntry	e;

		if (!fst_ikey_valid(key))
		{
			vis_fail(it, FST_CORRUPT, "internal key too short");
			return;
		}
		if (skip_row)
		{
			FstSlice	up = fst_ikey_user_part(key);

			if (up.len == it->row.len &&
				memcmp(up.data, it->row.data, up.len) == 0)
			{
				fst_iter_next(in);
				continue;
			}
			skip_row = false;
		}
		if (!fst_entry_decode(key, fst_iter_value(in), &e))
		{
			vis_fail(it, FST_CORRUPT, "entry with a malformed header");
			return;
		}
		if (e.hdr.seq > it->max_seq ||
			(it->visible != NULL && !it->visible(it->arg, &e.hdr)))
		{
			/* too new or invisible: an older version may be the row */
			fst_iter_next(in);
			continue;
		}
		/* the row's version: remember the row to skip its older versions */
		fst_buf_reset(&it->row);
		fst_buf_append(&it->row, e.user_part.data, e.user_part.len);
		if (it->row.oom)
		{
			vis_fail(it, FST_NO_MEMORY, "out of memory");
			return;
		}
		if (e.hdr.flags & FST_ENTRY_TOMBSTONE)
		{
			fst_iter_next(in);
			skip_row = true;
			continue;
		}
		it->valid = true;
		return;
	}
	it->valid = false;
}

static void
vis_seek_first(FstIter *iter)
{
	VisibleIter *it = (VisibleIter *) iter;

	it->status = FST_OK;
	fst_iter_seek_first(it->in);
	vis_settle(it, false);
}

static void
vis_seek(FstIter *iter, FstSlice target)
{
	VisibleIter *it = (VisibleIter *) iter;

	it->status = FST_OK;
	fst_iter_seek(it->in, target);
	vis_settle(it, false);
}

static void
vis_next(FstIter *iter)
{
	VisibleIter *it = (VisibleIter *) iter;

	if (!it->valid)
		return;
	fst_iter_next(it->in);
	vis_settle(it, true);
}

static bool
vis_valid(FstIter *iter)
{
	return ((VisibleIter *) iter)->valid;
}

static FstSlice
vis_key(FstIter *iter)
{
	return fst_iter_key(((VisibleIter *) iter)->in);
}

static FstSlice
vis_value(FstIter *iter)
{
	return fst_iter_value(((VisibleIter *) iter)->in);
}

static FstCode
vis_status(FstIter *iter, FstError *err)
{
	VisibleIter *it = (VisibleIter *) iter;

	if (it->status != FST_OK)
		return fst_error(err, it->status, "%s", it->errmsg);
	return fst_iter_status(it->in, err);
}

static void
vis_destroy(FstIter *iter)
{
	VisibleIter *it = (VisibleIter *) iter;

	fst_iter_destroy(it->in);
	fst_buf_free(&it->row);
	fst_free(it);
}

/* Rows backward are the server's cursor's business (read/cursor.c). */
static void
vis_backward(FstIter *iter)
{
	vis_fail((VisibleIter *) iter, FST_INVALID_ARGUMENT,
			 "the visible iterator reads forward only");
}

static void
vis_seek_before(FstIter *iter, FstSlice target)
{
	vis_backward(iter);
}

static const FstIterOps visible_iter_ops = {
	vis_seek_first, vis_seek, vis_next, vis_valid,
	vis_key, vis_value, vis_status, vis_destroy,
	vis_backward, vis_seek_before, vis_backward
};

FstIter *
fst_visible_iter_create(FstIter *merged, uint64 max_seq,
						FstVisibleFn visible, void *arg)
{
	VisibleIter *it;

	if (merged == NULL)
		return NULL;
	it = fst_calloc(1, sizeof(VisibleIter));
	if (it == NULL)
	{
		fst_iter_destroy(merged);
		return NULL;
	}
	it->base.ops = &visible_iter_ops;
	it->in = merged;
	it->max_seq = max_seq;
	it->visible = visible;
	it->arg = arg;
	fst_buf_init(&it->row);
	it->valid = false;
	it->status = FST_OK;
	return &it->base;
}

int
fst_merge_iter_current_child(FstIter *iter)
{
	MergeIter  *it = (MergeIter *) iter;

	if (it->status != FST_OK || it->nheap == 0)
		return -1;
	return it->heap[0];
}

FstIter *
fst_merge_iter_child(FstIter *iter, int i)
{
	MergeIter  *it = (MergeIter *) iter;

	return (i >= 0 && i < it->nchildren) ? it->children[i] : NULL;
}
