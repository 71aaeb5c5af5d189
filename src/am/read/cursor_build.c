/*-------------------------------------------------------------------------
 *
 * cursor_build.c
 *	  Opening and closing a cursor (read/cursor.h): the merge it reads,
 *	  built over a view of the table's memtables and SST files, and built
 *	  again over a new view when read/cursor.c finds the old one stale.
 *
 * The merge's children are the view's memtables (newest first), the level
 * 0 files that may hold rows in the cursor's range (their readers opened
 * here, before anything is malloc'ed), and a level iterator for each
 * deeper level with files in the range, which opens the level's files one
 * at a time, each pinned while the iterator is in it.  A point cursor has
 * no merge: read/cursor.c looks its row up when it is read.  The engine's
 * iterators are malloc'ed; a reset callback of the cursor's memory context
 * frees them, when the cursor is closed or when an error resets the
 * context it was opened in.  Positioning the merge and reading rows from
 * it are read/cursor.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/keys/index_entry.h"
#include "am/read/cursor.h"
#include "am/read/sst_readers.h"
#include "am/shmem/shmem.h"
#include "lsm/level_iter.h"
#include "lsm/merge_iter.h"

/* StringInfos of a cursor start small: most hold one key */
static void
init_small_string(StringInfo s)
{
	s->maxlen = 64;
	s->data = palloc(s->maxlen);
	s->len = 0;
	s->data[0] = '\0';
	s->cursor = 0;
}

static void
cursor_reset_callback(void *arg)
{
	ForstCursor *c = arg;

	if (c->merge)
	{
		fst_iter_destroy(c->merge);
		c->merge = NULL;
	}
}

/* Whether file may hold rows with user parts in [lo, hi), by its range. */
static bool
file_in_range(const FstFileMeta *file, FstSlice lo, FstSlice hi)
{
	if (lo.len > 0 &&
		fst_slice_cmp(fst_ikey_user_part(fst_filemeta_largest(file)), lo) < 0)
		return false;
	if (hi.len > 0 &&
		fst_slice_cmp(fst_ikey_user_part(fst_filemeta_smallest(file)), hi) >= 0)
		return false;
	return true;
}

/*
 * Whether a file may hold rows with user parts in [lo, hi): by its range,
 * and by its bloom filter for a point range (lo itself) or a prefix range
 * (lo's prefix).  With open, or to consult a filter, opens the file's
 * reader, which may fail: call before anything is malloc'ed.
 */
static bool
file_may_hold(Relation rel, const FstFileMeta *file, FstSlice lo, FstSlice hi,
			  bool point, bool prefix, bool open)
{
	if (point)
		return forst_sst_reader_for_key(&rel->rd_node, file, lo, NULL) != NULL;
	if (!file_in_range(file, lo, hi))
		return false;
	if (prefix)
		return forst_sst_may_hold_prefix(&rel->rd_node, file,
										 FORST_PREFIX_RULE_INDEX_COLUMNS, lo);
	if (open)
		(void) forst_sst_reader(&rel->rd_node, file);
	return true;
}

/*
 * A level iterator's file i: pinned while the level iterator is in it, so
 * that a scan over many files holds one reader per level, and the others
 * may be closed within the bound (read/sst_readers.c).  An error opening the
 * reader leaves by ereport; the level iterator is then safe to destroy.
 */
static FstIter *
level_open(void *arg, int i, FstError *err)
{
	ForstCursorLevel *lv = arg;
	FstSstReader *r = forst_sst_reader_pin(&lv->rel->rd_node, lv->files[i]);
	FstIter    *it = fst_sst_iter_create(r);

	if (it == NULL)
	{
		forst_sst_reader_release(&lv->rel->rd_node, lv->files[i]->file_id);
		fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	return it;
}

static void
level_release(void *arg, int i)
{
	ForstCursorLevel *lv = arg;

	forst_sst_reader_release(&lv->rel->rd_node, lv->files[i]->file_id);
}

/*
 * (Re)builds the cursor's merge over a new view of the table: its current
 * memtables, its level 0 files that may hold rows in the cursor's range,
 * and a level iterator for each deeper level with files in the range.
 * Runs in the cursor's memory context; the merge is unpositioned.
 */
static void
cursor_build(ForstCursor *c)
{
	FstIter   **children;
	FstSlice	lo = fst_slice(c->range_lo.data, c->range_lo.len);
	FstSlice	hi = fst_slice(c->range_hi.data, c->range_hi.len);
	int			nlevels = 0;
	int			i;

	c->waits_seen = forst_memory_waits;	/* before the view is taken */
	forst_table_view(c->ts, &c->rel->rd_node, &c->view);
	c->nchildren = c->view.nslabs;
	c->nl0 = 0;
	if (c->files)
		pfree(c->files);
	c->files = NULL;
	if (c->levels)
	{
		for (i = 0; i < FST_NUM_LEVELS; i++)
			if (c->levels[i].files)
				pfree(c->levels[i].files);
		pfree(c->levels);
	}
	c->levels = palloc0(sizeof(ForstCursorLevel) * FST_NUM_LEVELS);
	if (c->view.manifest)
	{
		const FstManifestLevel *l0 = &c->view.manifest->levels[0];
		int			level,
					j;

		/*
		 * Open the level 0 readers first: that may fail, before anything
		 * is malloc'ed.  Files outside the range are left out: a point
		 * read would otherwise seek (and load a block of) every file.
		 */
		c->files = palloc0(sizeof(FstFileMeta *) * (c->view.nslabs + l0->nfiles + 1));
		for (j = 0; j < l0->nfiles; j++)
		{
			const FstFileMeta *f = &l0->files[j].meta;

			if (file_may_hold(c->rel, f, lo, hi, c->point, c->prefix, true))
				c->files[c->view.nslabs + c->nl0++] = f;
		}
		/* deeper levels: their files in range, opened as the merge goes */
		for (level = 1; level < FST_NUM_LEVELS; level++)
		{
			const FstManifestLevel *ml = &c->view.manifest->levels[level];
			ForstCursorLevel *lv = &c->levels[nlevels];

			lv->rel = c->rel;
			for (j = 0; j < ml->nfiles; j++)
			{
				const FstFileMeta *f = &ml->files[j].meta;

				if (!file_may_hold(c->rel, f, lo, hi, false, c->prefix, false))
					continue;
				if (lv->files == NULL)
					lv->files = palloc(sizeof(FstFileMeta *) * ml->nfiles);
				lv->files[lv->nfiles++] = f;
			}
			if (lv->nfiles > 0)
				nlevels++;
		}
	}
	c->nchildren = c->view.nslabs + c->nl0 + nlevels;
	children = palloc0(sizeof(FstIter *) * Max(c->nchildren, 1));
	for (i = 0; i < c->nchildren; i++)
	{
		if (i < c->view.nslabs)
			children[i] = fst_memtable_iter_create(forst_slab_memtable(c->view.slabs[i]));
		else if (i < c->view.nslabs + c->nl0)
			children[i] = fst_sst_iter_create(forst_sst_reader(&c->rel->rd_node, c->files[i]));
		else
		{
			ForstCursorLevel *lv = &c->levels[i - c->view.nslabs - c->nl0];

			children[i] = fst_level_iter_create(lv->files, lv->nfiles,
												level_open, level_release, lv);
		}
	}
	for (i = 0; i < c->nchildren; i++)
	{
		if (children[i] == NULL)
		{
			for (i = 0; i < c->nchildren; i++)
				fst_iter_destroy(children[i]);
			pfree(children);
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
							errmsg("out of memory")));
		}
	}
	c->merge = fst_merge_iter_create(children, c->nchildren);
	pfree(children);
	if (c->merge == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
}

static ForstCursor *
cursor_open(Relation rel, Snapshot snapshot, ForstTableShared *ts,
			FstSlice lo, FstSlice hi, bool point, bool prefix)
{
	/*
	 * Default sizes: the cursor and its strings fit the first block, and
	 * contexts of these sizes are recycled without a malloc (an upsert
	 * opens a point cursor per row).
	 */
	MemoryContext mcxt = AllocSetContextCreate(CurrentMemoryContext,
											   "forst cursor",
											   ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(mcxt);
	ForstCursor *c = palloc0(sizeof(ForstCursor));

	c->mcxt = mcxt;
	c->rel = rel;
	c->snapshot = snapshot;
	c->ts = ts;
	c->point = point;
	c->prefix = prefix;
	forst_expiry_get(rel, &c->expiry);
	init_small_string(&c->decided);
	init_small_string(&c->hi);
	init_small_string(&c->range_lo);
	init_small_string(&c->range_hi);
	init_small_string(&c->seek_lo);
	init_small_string(&c->back_key);
	init_small_string(&c->back_val);
	appendBinaryStringInfo(&c->range_lo, lo.data, lo.len);
	appendBinaryStringInfo(&c->range_hi, hi.data, hi.len);
	if (point)
	{
		/* looked up by forst_cursor_next (read/point.h): no merge */
		MemoryContextSwitchTo(old);
		return c;
	}
	/* the engine's iterators are freed with the context, even on error */
	c->cb.func = cursor_reset_callback;
	c->cb.arg = c;
	MemoryContextRegisterResetCallback(mcxt, &c->cb);
	PG_TRY();
	{
		cursor_build(c);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(mcxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	return c;
}

ForstCursor *
forst_cursor_open(Relation rel, Snapshot snapshot, ForstTableShared *ts,
				  FstSlice lo, FstSlice hi, bool point)
{
	return cursor_open(rel, snapshot, ts, lo, hi, point, false);
}

ForstCursor *
forst_cursor_open_prefix(Relation rel, Snapshot snapshot, ForstTableShared *ts,
						 FstSlice prefix, FstSlice hi)
{
	return cursor_open(rel, snapshot, ts, prefix, hi, false, true);
}

/* Replaces the cursor's merge by an unpositioned one over a new view. */
void
forst_cursor_rebuild(ForstCursor *c)
{
	MemoryContext old;

	fst_iter_destroy(c->merge);
	c->merge = NULL;
	old = MemoryContextSwitchTo(c->mcxt);
	cursor_build(c);
	MemoryContextSwitchTo(old);
}

void
forst_cursor_close(ForstCursor *c)
{
	/* the reset callback frees the engine's iterators */
	MemoryContextDelete(c->mcxt);
}
