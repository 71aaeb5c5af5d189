/*-------------------------------------------------------------------------
 *
 * iter.h
 *	  The iterator contract shared by every sorted source of the engine:
 *	  sorted arrays (memtable-like), SST files, and merges of them.
 *
 * An iterator yields (internal key, value) pairs in fst_ikey_cmp order,
 * forward with seek_first/seek/next and backward with seek_last/
 * seek_before/prev; the directions may be mixed at any point (prev after
 * next returns the entry before the current one, and so on).
 * Keys and values are borrowed: valid until the next positioning call or
 * destroy.  After a positioning call, valid() is false at the end *or* on
 * an error; status() tells which (FST_OK at a clean end).  An iterator that
 * met an error stays invalid until it is positioned again.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_ITER_H
#define FST_ITER_H

#include "ikey.h"

typedef struct FstIter FstIter;

typedef struct FstIterOps
{
	void		(*seek_first) (FstIter *it);
	/* position at the first entry >= target (an internal key; it must not
	 * point into this iterator's own key or value) */
	void		(*seek) (FstIter *it, FstSlice target);
	void		(*next) (FstIter *it);
	bool		(*valid) (FstIter *it);
	FstSlice	(*key) (FstIter *it);
	FstSlice	(*value) (FstIter *it);
	FstCode		(*status) (FstIter *it, FstError *err);
	void		(*destroy) (FstIter *it);
	/* position at the last entry */
	void		(*seek_last) (FstIter *it);
	/* position at the last entry < target (an internal key, as for seek) */
	void		(*seek_before) (FstIter *it, FstSlice target);
	/* move to the entry before the current one (not valid: stays so) */
	void		(*prev) (FstIter *it);
} FstIterOps;

struct FstIter
{
	const FstIterOps *ops;
};

static inline void
fst_iter_seek_first(FstIter *it)
{
	it->ops->seek_first(it);
}

static inline void
fst_iter_seek(FstIter *it, FstSlice target)
{
	it->ops->seek(it, target);
}

static inline void
fst_iter_next(FstIter *it)
{
	it->ops->next(it);
}

static inline void
fst_iter_seek_last(FstIter *it)
{
	it->ops->seek_last(it);
}

static inline void
fst_iter_seek_before(FstIter *it, FstSlice target)
{
	it->ops->seek_before(it, target);
}

static inline void
fst_iter_prev(FstIter *it)
{
	it->ops->prev(it);
}

static inline bool
fst_iter_valid(FstIter *it)
{
	return it->ops->valid(it);
}

static inline FstSlice
fst_iter_key(FstIter *it)
{
	return it->ops->key(it);
}

static inline FstSlice
fst_iter_value(FstIter *it)
{
	return it->ops->value(it);
}

static inline FstCode
fst_iter_status(FstIter *it, FstError *err)
{
	return it->ops->status(it, err);
}

static inline void
fst_iter_destroy(FstIter *it)
{
	if (it)
		it->ops->destroy(it);
}

/*
 * An iterator over a caller-owned array of entries already in fst_ikey_cmp
 * order (the shape of a frozen memtable).  The arrays must outlive it.
 */
typedef struct FstKV
{
	FstSlice	key;			/* internal key */
	FstSlice	value;			/* entry header + payload */
} FstKV;

extern FstIter *fst_array_iter_create(const FstKV *kvs, size_t n);

/* An iterator that yields nothing and reports the given error. */
extern FstIter *fst_error_iter_create(FstCode code, const char *msg);

#endif							/* FST_ITER_H */
