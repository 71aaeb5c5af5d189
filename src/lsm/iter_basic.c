/*-------------------------------------------------------------------------
 *
 * iter_basic.c
 *	  The two trivial iterators declared in iter.h: one over a caller-owned
 *	  sorted array of entries, and one that only reports an error.
 *
 *-------------------------------------------------------------------------
 */
#include "iter.h"

#include <stdio.h>

/* ---------------------------------------------------------------------- */
/* Sorted array */

typedef struct ArrayIter
{
	FstIter		base;
	const FstKV *kvs;
	size_t		n;
	size_t		pos;			/* == n when not valid */
} ArrayIter;

static void
aiter_seek_first(FstIter *iter)
{
	ArrayIter  *it = (ArrayIter *) iter;

	it->pos = 0;
}

/* Binary search for the first entry >= target. */
static void
aiter_seek(FstIter *iter, FstSlice target)
{
	ArrayIter  *it = (ArrayIter *) iter;
	size_t		lo = 0;
	size_t		hi = it->n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (fst_ikey_cmp(it->kvs[mid].key, target) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	it->pos = lo;
}

static void
aiter_seek_last(FstIter *iter)
{
	ArrayIter  *it = (ArrayIter *) iter;

	it->pos = it->n > 0 ? it->n - 1 : it->n;
}

static void
aiter_seek_before(FstIter *iter, FstSlice target)
{
	ArrayIter  *it = (ArrayIter *) iter;

	aiter_seek(iter, target);
	it->pos = it->pos > 0 ? it->pos - 1 : it->n;
}

static void
aiter_prev(FstIter *iter)
{
	ArrayIter  *it = (ArrayIter *) iter;

	if (it->pos < it->n)
		it->pos = it->pos > 0 ? it->pos - 1 : it->n;
}

static void
aiter_next(FstIter *iter)
{
	ArrayIter  *it = (ArrayIter *) iter;

	if (it->pos < it->n)
		it->pos++;
}

static bool
aiter_valid(FstIter *iter)
{
	ArrayIter  *it = (ArrayIter *) iter;

	return it->pos < it->n;
}

static FstSlice
aiter_key(FstIter *iter)
{
	ArrayIter  *it = (ArrayIter *) iter;

	Assert(it->pos < it->n);
	return it->kvs[it->pos].key;
}

static FstSlice
aiter_value(FstIter *iter)
{
	ArrayIter  *it = (ArrayIter *) iter;

	Assert(it->pos < it->n);
	return it->kvs[it->pos].value;
}

static FstCode
aiter_status(FstIter *iter, FstError *err)
{
	return FST_OK;
}

static void
aiter_destroy(FstIter *iter)
{
	fst_free(iter);
}

static const FstIterOps array_iter_ops = {
	aiter_seek_first, aiter_seek, aiter_next, aiter_valid,
	aiter_key, aiter_value, aiter_status, aiter_destroy,
	aiter_seek_last, aiter_seek_before, aiter_prev
};

FstIter *
fst_array_iter_create(const FstKV *kvs, size_t n)
{
	ArrayIter  *it = fst_calloc(1, sizeof(ArrayIter));

	if (it == NULL)
		return NULL;
	it->base.ops = &array_iter_ops;
	it->kvs = kvs;
	it->n = n;
	it->pos = n;				/* not positioned yet */
	return &it->base;
}

/* ---------------------------------------------------------------------- */
/* Error */

typedef struct ErrorIter
{
	FstIter		base;
	FstCode		code;
	char		msg[FST_ERRMSG_LEN];
} ErrorIter;

static void
eiter_seek_first(FstIter *iter)
{
}

static void
eiter_seek(FstIter *iter, FstSlice target)
{
}

static void
eiter_next(FstIter *iter)
{
}

static void
eiter_seek_before(FstIter *iter, FstSlice target)
{
}

static bool
eiter_valid(FstIter *iter)
{
	return false;
}

static FstSlice
eiter_key(FstIter *iter)
{
	return fst_slice(NULL, 0);
}

static FstSlice
eiter_value(FstIter *iter)
{
	return fst_slice(NULL, 0);
}

static FstCode
eiter_status(FstIter *iter, FstError *err)
{
	ErrorIter  *it = (ErrorIter *) iter;

	if (it->code == FST_OK)
		return FST_OK;
	return fst_error(err, it->code, "%s", it->msg);
}

static void
eiter_destroy(FstIter *iter)
{
	fst_free(iter);
}

static const FstIterOps error_iter_ops = {
	eiter_seek_first, eiter_seek, eiter_next, eiter_valid,
	eiter_key, eiter_value, eiter_status, eiter_destroy,
	eiter_seek_first, eiter_seek_before, eiter_next
};

FstIter *
fst_error_iter_create(FstCode code, const char *msg)
{
	ErrorIter  *it = fst_calloc(1, sizeof(ErrorIter));

	if (it == NULL)
		return NULL;
	it->base.ops = &error_iter_ops;
	it->code = code;
	snprintf(it->msg, sizeof(it->msg), "%s", msg ? msg : "");
	return &it->base;
}
