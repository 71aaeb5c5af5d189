/*-------------------------------------------------------------------------
 *
 * level_iter.c
 *	  One level's files as one sorted source, opening one file at a time
 *	  (see level_iter.h).
 *
 * State: the current file (cur, -1 for none) and its iterator (child).
 * Every change of file goes through set_file, which first drops the old
 * file's iterator and only then opens the new one, so that an open that
 * leaves by a non-local exit finds the iterator in a state that destroy
 * handles (no file, no child).
 *
 *-------------------------------------------------------------------------
 */
#include "level_iter.h"

typedef struct LevelIter
{
	FstIter		base;
	const FstFileMeta *const *files;
	int			n;
	FstLevelOpenFn open;
	FstLevelReleaseFn release;
	void	   *arg;
	int			cur;			/* file of child, -1: none */
	FstIter    *child;
	bool		valid;			/* child's, cached after each positioning */
	FstSlice	key;			/* child's key when valid, cached too: a
								 * merge asks for both at every step */
	FstError	err;			/* an open's failure; FST_OK otherwise */
} LevelIter;

static const FstIterOps level_iter_ops;

/* Destroys the current file's iterator, if any. */
static void
drop_file(LevelIter *it)
{
	int			i = it->cur;

	it->valid = false;
	if (it->child == NULL)
		return;
	fst_iter_destroy(it->child);
	it->child = NULL;
	it->cur = -1;
	if (it->release)
		it->release(it->arg, i);
}

/* Makes file i (0 <= i < n) current; false when its open failed. */
static bool
set_file(LevelIter *it, int i)
{
	FstIter    *child;

	if (it->child != NULL && it->cur == i)
		return true;
	drop_file(it);
	child = it->open(it->arg, i, &it->err);
	if (child == NULL)
	{
		if (it->err.code == FST_OK)
			fst_error(&it->err, FST_NO_MEMORY, "opening a file of a level");
		return false;
	}
	it->child = child;
	it->cur = i;
	return true;
}

/*
 * After the current child was positioned: stays at its entry if it has
 * one, else moves to the first entry of the following files (with back,
 * to the last entry of the preceding ones).  Stops at a child's error,
 * which status() then reports.  Caches valid and key.
 */
static void
skip_empty_files(LevelIter *it, bool back)
{
	it->valid = false;
	while (it->child != NULL)
	{
		int			next = it->cur + (back ? -1 : 1);

		if (fst_iter_valid(it->child))
		{
			it->valid = true;
			it->key = fst_iter_key(it->child);
			return;
		}
		if (fst_iter_status(it->child, NULL) != FST_OK)
			return;
		if (next < 0 || next >= it->n)
		{
			drop_file(it);
			return;
		}
		if (!set_file(it, next))
			return;
		if (back)
			fst_iter_seek_last(it->child);
		else
			fst_iter_seek_first(it->child);
	}
}

/* The first file whose largest key is >= target (n when none is). */
static int
find_file(LevelIter *it, FstSlice target)
{
	int			lo = 0,
				hi = it->n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (fst_ikey_cmp(fst_filemeta_largest(it->files[mid]), target) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Positions at the first entry of the level, or with last at its last. */
static void
seek_end(LevelIter *it, bool last)
{
	fst_error_clear(&it->err);
	if (it->n == 0)
	{
		drop_file(it);
		return;
	}
	if (!set_file(it, last ? it->n - 1 : 0))
		return;
	if (last)
		fst_iter_seek_last(it->child);
	else
		fst_iter_seek_first(it->child);
	skip_empty_files(it, last);
}

/*
 * Positions at the first entry >= target, or with before at the last one
 * < target: both are in the first file whose largest key is >= target, or
 * next to it.
 */
static void
seek_target(LevelIter *it, FstSlice target, bool before)
{
	int			i;

	fst_error_clear(&it->err);
	i = find_file(it, target);
	if (i >= it->n)
	{
		if (before)
			seek_end(it, true);	/* every entry is < target */
		else
			drop_file(it);
		return;
	}
	if (!set_file(it, i))
		return;
	if (before)
		fst_iter_seek_before(it->child, target);
	else
		fst_iter_seek(it->child, target);
	skip_empty_files(it, before);
}

/* Moves one entry, backward with back. */
static void
step(LevelIter *it, bool back)
{
	if (it->child == NULL)
		return;
	if (back)
		fst_iter_prev(it->child);
	else
		fst_iter_next(it->child);
	skip_empty_files(it, back);
}

static void
level_seek_first(FstIter *iter)
{
	seek_end((LevelIter *) iter, false);
}

static void
level_seek_last(FstIter *iter)
{
	seek_end((LevelIter *) iter, true);
}

static void
level_seek(FstIter *iter, FstSlice target)
{
	seek_target((LevelIter *) iter, target, false);
}

static void
level_seek_before(FstIter *iter, FstSlice target)
{
	seek_target((LevelIter *) iter, target, true);
}

static void
level_next(FstIter *iter)
{
	step((LevelIter *) iter, false);
}

static void
level_prev(FstIter *iter)
{
	step((LevelIter *) iter, true);
}

static bool
level_valid(FstIter *iter)
{
	return ((LevelIter *) iter)->valid;
}

static FstSlice
level_key(FstIter *iter)
{
	LevelIter  *it = (LevelIter *) iter;

	Assert(it->valid);
	return it->key;
}

static FstSlice
level_value(FstIter *iter)
{
	LevelIter  *it = (LevelIter *) iter;

	return fst_iter_value(it->child);
}

static FstCode
level_status(FstIter *iter, FstError *err)
{
	LevelIter  *it = (LevelIter *) iter;

	if (it->err.code != FST_OK)
	{
		if (err)
			*err = it->err;
		return it->err.code;
	}
	if (it->child != NULL)
		return fst_iter_status(it->child, err);
	return FST_OK;
}

static void
level_destroy(FstIter *iter)
{
	LevelIter  *it = (LevelIter *) iter;

	drop_file(it);
	fst_free(it);
}

static const FstIterOps level_iter_ops = {
	level_seek_first, level_seek, level_next, level_valid,
	level_key, level_value, level_status, level_destroy,
	level_seek_last, level_seek_before, level_prev
};

FstIter *
fst_level_iter_create(const FstFileMeta *const *files, int n,
					  FstLevelOpenFn open, FstLevelReleaseFn release,
					  void *arg)
{
	LevelIter  *it = fst_calloc(1, sizeof(LevelIter));

	if (it == NULL)
		return NULL;
	it->base.ops = &level_iter_ops;
	it->files = files;
	it->n = n;
	it->open = open;
	it->release = release;
	it->arg = arg;
	it->cur = -1;
	it->child = NULL;
	it->valid = false;
	fst_error_clear(&it->err);
	return &it->base;
}

bool
fst_is_level_iter(FstIter *it)
{
	return it != NULL && it->ops == &level_iter_ops;
}

int
fst_level_iter_current_file(FstIter *iter)
{
	LevelIter  *it = (LevelIter *) iter;

	Assert(fst_is_level_iter(iter));
	return level_valid(iter) ? it->cur : -1;
}

FstIter *
fst_level_iter_current(FstIter *iter)
{
	LevelIter  *it = (LevelIter *) iter;

	Assert(fst_is_level_iter(iter));
	return level_valid(iter) ? it->child : NULL;
}
