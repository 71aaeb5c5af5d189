/*-------------------------------------------------------------------------
 *
 * sst_iter.c
 *	  The iterator over all entries of an SST file (sst.h): a two-level
 *	  iterator over the reader's index block, holding one data block at a
 *	  time, read through the reader (its caches, checks and rewrite hook).
 *
 *-------------------------------------------------------------------------
 */
#include "sst_internal.h"

/* ---------------------------------------------------------------------- */
/* Two-level iterator: the index block, then one data block at a time.    */

typedef struct SstIter
{
	FstIter		base;
	FstSstReader *reader;
	FstIter    *index_it;
	FstIter    *data_it;		/* NULL when none is loaded */
	uint64		data_off;		/* offset of the loaded block */
	FstCode		status;
	FstError	err;
} SstIter;

static void
siter_set_error(SstIter *it, FstCode rc)
{
	it->status = rc;
	fst_iter_destroy(it->data_it);
	it->data_it = NULL;
}

/* Loads the data block the index iterator points at (if not loaded). */
static bool
siter_load_block(SstIter *it)
{
	FstBlockHandle h;
	FstBlock   *b;
	FstCode		rc;

	if (!fst_iter_valid(it->index_it))
	{
		fst_iter_destroy(it->data_it);
		it->data_it = NULL;
		rc = fst_iter_status(it->index_it, &it->err);
		if (rc != FST_OK)
			siter_set_error(it, rc);
		return false;
	}
	if (!fst_block_handle_decode(fst_iter_value(it->index_it), &h))
	{
		siter_set_error(it, fst_error(&it->err, FST_CORRUPT, "malformed SST index entry"));
		return false;
	}
	if (it->data_it && it->data_off == h.offset)
		return true;
	fst_iter_destroy(it->data_it);
	it->data_it = NULL;
	rc = fst_sst_load_data_block(it->reader, h, &b, &it->err);
	if (rc != FST_OK)
	{
		siter_set_error(it, rc);
		return false;
	}
	it->data_it = fst_block_ikey_iter_create(b);
	fst_block_release(b);
	if (it->data_it == NULL)
	{
		siter_set_error(it, fst_error(&it->err, FST_NO_MEMORY, "out of memory"));
		return false;
	}
	it->data_off = h.offset;
	return true;
}

/* Moves forward past exhausted data blocks. */
static void
siter_skip_empty(SstIter *it)
{
	while (it->status == FST_OK && it->data_it && !fst_iter_valid(it->data_it))
	{
		FstCode		rc = fst_iter_status(it->data_it, &it->err);

		if (rc != FST_OK)
		{
			siter_set_error(it, rc);
			return;
		}
		fst_iter_next(it->index_it);
		if (!siter_load_block(it))
			return;
		fst_iter_seek_first(it->data_it);
	}
}

/* Moves backward past exhausted data blocks. */
static void
siter_skip_empty_back(SstIter *it)
{
	while (it->status == FST_OK && it->data_it && !fst_iter_valid(it->data_it))
	{
		FstCode		rc = fst_iter_status(it->data_it, &it->err);

		if (rc != FST_OK)
		{
			siter_set_error(it, rc);
			return;
		}
		fst_iter_prev(it->index_it);
		if (!siter_load_block(it))
			return;
		fst_iter_seek_last(it->data_it);
	}
}

static void
siter_seek_first(FstIter *iter)
{
	SstIter    *it = (SstIter *) iter;

	it->status = FST_OK;
	fst_iter_seek_first(it->index_it);
	if (!siter_load_block(it))
		return;
	fst_iter_seek_first(it->data_it);
	siter_skip_empty(it);
}

static void
siter_seek(FstIter *iter, FstSlice target)
{
	SstIter    *it = (SstIter *) iter;

	it->status = FST_OK;
	fst_iter_seek(it->index_it, target);
	if (!siter_load_block(it))
		return;
	fst_iter_seek(it->data_it, target);
	siter_skip_empty(it);
}

static void
siter_next(FstIter *iter)
{
	SstIter    *it = (SstIter *) iter;

	if (it->status != FST_OK || it->data_it == NULL)
		return;
	fst_iter_next(it->data_it);
	siter_skip_empty(it);
}

static void
siter_seek_last(FstIter *iter)
{
	SstIter    *it = (SstIter *) iter;

	it->status = FST_OK;
	fst_iter_seek_last(it->index_it);
	if (!siter_load_block(it))
		return;
	fst_iter_seek_last(it->data_it);
	siter_skip_empty_back(it);
}

/*
 * The first block whose index key is >= target holds the last entry
 * < target, or the block before it does.
 */
static void
siter_seek_before(FstIter *iter, FstSlice target)
{
	SstIter    *it = (SstIter *) iter;

	it->status = FST_OK;
	fst_iter_seek(it->index_it, target);
	if (!fst_iter_valid(it->index_it) &&
		fst_iter_status(it->index_it, NULL) == FST_OK)
	{
		siter_seek_last(iter);	/* every entry is < target */
		return;
	}
	if (!siter_load_block(it))
		return;
	fst_iter_seek_before(it->data_it, target);
	siter_skip_empty_back(it);
}

static void
siter_prev(FstIter *iter)
{
	SstIter    *it = (SstIter *) iter;

	if (it->status != FST_OK || it->data_it == NULL)
		return;
	fst_iter_prev(it->data_it);
	siter_skip_empty_back(it);
}

static bool
siter_valid(FstIter *iter)
{
	SstIter    *it = (SstIter *) iter;

	return it->status == FST_OK && it->data_it != NULL && fst_iter_valid(it->data_it);
}

static FstSlice
siter_key(FstIter *iter)
{
	return fst_iter_key(((SstIter *) iter)->data_it);
}

static FstSlice
siter_value(FstIter *iter)
{
	return fst_iter_value(((SstIter *) iter)->data_it);
}

static FstCode
siter_status(FstIter *iter, FstError *err)
{
	SstIter    *it = (SstIter *) iter;

	if (it->status != FST_OK)
		return fst_error(err, it->status, "%s", it->err.msg);
	return FST_OK;
}

static void
siter_destroy(FstIter *iter)
{
	SstIter    *it = (SstIter *) iter;

	fst_iter_destroy(it->data_it);
	fst_iter_destroy(it->index_it);
	fst_free(it);
}

static const FstIterOps sst_iter_ops = {
	siter_seek_first, siter_seek, siter_next, siter_valid,
	siter_key, siter_value, siter_status, siter_destroy,
	siter_seek_last, siter_seek_before, siter_prev
};

FstIter *
fst_sst_iter_create(FstSstReader *r)
{
	SstIter    *it = fst_calloc(1, sizeof(SstIter));

	if (it == NULL)
		return NULL;
	it->base.ops = &sst_iter_ops;
	it->reader = r;
	it->index_it = fst_block_ikey_iter_create(r->index);
	if (it->index_it == NULL)
	{
		fst_free(it);
		return NULL;
	}
	it->status = FST_OK;
	return &it->base;
}

void
fst_sst_iter_position(FstIter *iter, uint32 *block_no, uint32 *entry_no)
{
	SstIter    *it = (SstIter *) iter;

	*block_no = fst_block_iter_index(it->index_it);
	*entry_no = fst_block_iter_index(it->data_it);
}
