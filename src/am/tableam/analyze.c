/*-------------------------------------------------------------------------
 *
 * analyze.c
 *	  ANALYZE's sample of a forst table, by cells of its largest level
 *	  (see tableam/analyze.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/pg_prng.h"

#include "am/tableam/analyze.h"
#include "am/objects/store.h"
#include "am/read/sst_readers.h"
#include "lsm/ikey.h"
#include "lsm/sst.h"

struct ForstAnalyze
{
	ForstCursor *cursor;
	const FstFileMeta **files;	/* the sampling level's, in key order */
	int			nfiles;
	double	   *ends;			/* ends[j]: bytes of files[0] .. files[j] */
	BlockNumber nblocks;		/* pseudo-blocks ANALYZE picks from */
	/* the cell read last */
	int			cell_file;		/* -1: none yet */
	uint32		cell_block;
	double		cell_rows;		/* rows the cursor yielded in it */
	double		cell_weight;	/* 1 / its block's share of the level */
	/* the estimate */
	double		sum;			/* of rows * weight, per pseudo-block */
	double		npseudo;		/* pseudo-blocks asked for */
	StringInfoData lo;
	StringInfoData hi;
	FstBuf		key;
};

/* Bytes of the files of one of the cursor's levels. */
static double
level_bytes(const ForstCursorLevel *lv)
{
	double		bytes = 0;
	int			j;

	for (j = 0; j < lv->nfiles; j++)
		bytes += (double) lv->files[j]->size;
	return bytes;
}

ForstAnalyze *
forst_analyze_begin(ForstCursor *cursor, BlockNumber nblocks)
{
	int			nlevels = cursor->nchildren - cursor->view.nslabs - cursor->nl0;
	const ForstCursorLevel *best = NULL;
	double		best_bytes = 0;
	ForstAnalyze *a;
	double		total = 0;
	int			i;

	for (i = 0; i < nlevels; i++)
	{
		double		bytes = level_bytes(&cursor->levels[i]);

		if (bytes > best_bytes)
		{
			best = &cursor->levels[i];
			best_bytes = bytes;
		}
	}
	if (best == NULL || nblocks == 0)
		return NULL;

	a = palloc0(sizeof(ForstAnalyze));
	a->cursor = cursor;
	a->files = palloc(sizeof(FstFileMeta *) * best->nfiles);
	a->ends = palloc(sizeof(double) * best->nfiles);
	for (i = 0; i < best->nfiles; i++)
	{
		const FstFileMeta *f = best->files[i];

		/* a file without entries has no cell (nor keys to bound one) */
		if (f->num_entries == 0 || f->largest_len < FST_SEQ_BYTES)
			continue;
		a->files[a->nfiles++] = f;
		total += (double) f->size;
		a->ends[a->nfiles - 1] = total;
	}
	if (a->nfiles == 0 || total <= 0)
	{
		pfree(a->files);
		pfree(a->ends);
		pfree(a);
		return NULL;
	}
	a->nblocks = nblocks;
	a->cell_file = -1;
	initStringInfo(&a->lo);
	initStringInfo(&a->hi);
	fst_buf_init(&a->key);
	return a;
}

/* The first file whose bytes reach past pos. */
static int
file_at(const ForstAnalyze *a, double pos)
{
	int			lo = 0,
				hi = a->nfiles - 1;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (a->ends[mid] > pos)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* buf := the user part of an internal key, and its immediate successor. */
static void
set_bound_after(StringInfo buf, FstSlice ikey)
{
	FstSlice	user = fst_ikey_user_part(ikey);

	resetStringInfo(buf);
	appendBinaryStringInfo(buf, user.data, user.len);
	/* the smallest user part after it: the same bytes and a zero byte */
	appendStringInfoChar(buf, '\0');
}

/* a->key := the last key of data block block_no of r */
static void
block_last_key(ForstAnalyze *a, FstSstReader *r, const FstFileMeta *f,
			   uint32 block_no)
{
	if (!fst_sst_block_last_key(r, block_no, &a->key))
	{
		bool		oom = a->key.oom;

		forst_sst_reader_release(&a->cursor->rel->rd_node, f->file_id);
		if (oom)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory")));
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: SST file " UINT64_FORMAT " has no index entry for its data block %u",
						f->file_id, block_no)));
	}
	if (a->key.len < FST_SEQ_BYTES)
	{
		forst_sst_reader_release(&a->cursor->rel->rd_node, f->file_id);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: SST file " UINT64_FORMAT " has a malformed index entry",
						f->file_id)));
	}
}

bool
forst_analyze_block(ForstAnalyze *a, BlockNumber blockno)
{
	RelFileNode *rnode = &a->cursor->rel->rd_node;
	double		total = a->ends[a->nfiles - 1];
	double		pos;
	double		before;
	const FstFileMeta *f;
	FstSstReader *r;
	uint32		nb;
	uint32		d;
	int			j;

	a->npseudo += 1;

	/*
	 * A point drawn at random within the pseudo-block's share of the level:
	 * every cell is then chosen with a probability in proportion to its
	 * share, which the estimate's weights assume, also where a pseudo-block
	 * stands for many data blocks (a table past the reported size's cap).
	 */
	blockno = Min(blockno, a->nblocks - 1);
	pos = ((double) blockno + pg_prng_double(&pg_global_prng_state)) /
		(double) a->nblocks * total;
	pos = Min(pos, total - 1);
	j = file_at(a, pos);
	f = a->files[j];
	before = j > 0 ? a->ends[j - 1] : 0;

	r = forst_sst_reader_pin(rnode, f);
	nb = fst_sst_num_blocks(r);
	d = nb == 0 ? 0 : (uint32) ((pos - before) / (double) Max(f->size, 1) * nb);
	if (d >= nb)
		d = nb > 0 ? nb - 1 : 0;

	if (nb == 0 || (j == a->cell_file && d == a->cell_block))
	{
		/* the cell just read (or none): its rows count again */
		forst_sst_reader_release(rnode, f->file_id);
		if (nb > 0)
			a->sum += a->cell_rows * a->cell_weight;
		return false;
	}

	/* from after the level's previous block's last key ... */
	if (d > 0)
	{
		block_last_key(a, r, f, d - 1);
		set_bound_after(&a->lo, fst_slice(a->key.data, a->key.len));
	}
	else if (j > 0)
		set_bound_after(&a->lo, fst_slice(a->files[j - 1]->largest,
										  a->files[j - 1]->largest_len));
	else
		resetStringInfo(&a->lo);
	/* ... up to this block's last key, included */
	if (d + 1 < nb || j + 1 < a->nfiles)
	{
		block_last_key(a, r, f, d);
		set_bound_after(&a->hi, fst_slice(a->key.data, a->key.len));
	}
	else
		resetStringInfo(&a->hi);
	forst_sst_reader_release(rnode, f->file_id);

	/* no further than the scan's range: index entries follow the rows */
	if (a->cursor->range_hi.len > 0 &&
		(a->hi.len == 0 ||
		 fst_slice_cmp(fst_slice(a->hi.data, a->hi.len),
					   fst_slice(a->cursor->range_hi.data,
								 a->cursor->range_hi.len)) > 0))
	{
		resetStringInfo(&a->hi);
		appendBinaryStringInfo(&a->hi, a->cursor->range_hi.data,
							   a->cursor->range_hi.len);
	}
	a->cell_file = j;
	a->cell_block = d;
	a->cell_rows = 0;
	a->cell_weight = total * (double) nb / (double) Max(f->size, 1);
	forst_cursor_seek(a->cursor, fst_slice(a->lo.data, a->lo.len),
					  fst_slice(a->hi.data, a->hi.len));
	return true;
}

void
forst_analyze_row(ForstAnalyze *a)
{
	a->cell_rows += 1;
	a->sum += a->cell_weight;
}

double
forst_analyze_estimate(const ForstAnalyze *a)
{
	return a->npseudo > 0 ? a->sum / a->npseudo : 0;
}

void
forst_analyze_end(ForstAnalyze *a)
{
	fst_buf_free(&a->key);
	pfree(a->lo.data);
	pfree(a->hi.data);
	pfree(a->files);
	pfree(a->ends);
	pfree(a);
}
