/*-------------------------------------------------------------------------
 *
 * compaction_pick.c
 *	  Leveled compaction picking (see compaction_pick.h).
 *
 *-------------------------------------------------------------------------
 */
#include "compaction_pick.h"

#include "ikey.h"

void
fst_compaction_pick_options_default(FstCompactionPickOptions *opt)
{
	opt->l0_compaction_trigger = 4;
	opt->level1_target_bytes = UINT64CONST(256) * 1024 * 1024;
	opt->level_multiplier = 10;
	opt->max_compaction_bytes = 0;
	opt->freeze_xid = 0;
}

uint64
fst_level_target_bytes(const FstCompactionPickOptions *opt, int level)
{
	uint64		t = Max(opt->level1_target_bytes, 1);
	int			i;

	for (i = 1; i < level; i++)
	{
		if (t > PG_UINT64_MAX / (uint64) Max(opt->level_multiplier, 1))
			return PG_UINT64_MAX;
		t *= (uint64) Max(opt->level_multiplier, 1);
	}
	return t;
}

void
fst_compaction_scores(const FstLevels *levels,
					  const FstCompactionPickOptions *opt,
					  double scores[FST_NUM_LEVELS])
{
	int			level;

	scores[0] = (double) levels->nfiles[0] /
		(double) Max(opt->l0_compaction_trigger, 1);
	for (level = 1; level < FST_NUM_LEVELS; level++)
	{
		uint64		bytes = 0;
		int			i;

		for (i = 0; i < levels->nfiles[level]; i++)
			bytes += levels->files[level][i]->size;
		scores[level] = (double) bytes /
			(double) fst_level_target_bytes(opt, level);
	}
}

/* ---------------------------------------------------------------------- */

static inline FstSlice
smallest_up(const FstFileMeta *f)
{
	return fst_ikey_user_part(fst_filemeta_smallest(f));
}

static inline FstSlice
largest_up(const FstFileMeta *f)
{
	return fst_ikey_user_part(fst_filemeta_largest(f));
}

static inline bool
overlaps(const FstFileMeta *f, FstSlice lo, FstSlice hi)
{
	return !(fst_slice_cmp(largest_up(f), lo) < 0 ||
			 fst_slice_cmp(smallest_up(f), hi) > 0);
}

/* Widens [*lo, *hi] to cover the given files. */
static void
extend_range(const FstFileMeta *const *files, const int *idx, int n,
			 FstSlice *lo, FstSlice *hi, bool *have)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		const FstFileMeta *f = files[idx[i]];

		if (!*have || fst_slice_cmp(smallest_up(f), *lo) < 0)
			*lo = smallest_up(f);
		if (!*have || fst_slice_cmp(largest_up(f), *hi) > 0)
			*hi = largest_up(f);
		*have = true;
	}
}

/* Indexes of the files of level overlapping [lo, hi], into idx. */
static int
collect_overlapping(const FstLevels *levels, int level, FstSlice lo,
					FstSlice hi, int *idx)
{
	int			n = 0;
	int			i;

	for (i = 0; i < levels->nfiles[level]; i++)
		if (overlaps(levels->files[level][i], lo, hi))
			idx[n++] = i;
	return n;
}

static uint64
sum_bytes(const FstFileMeta *const *files, const int *idx, int n)
{
	uint64		total = 0;
	int			i;

	for (i = 0; i < n; i++)
		total += files[idx[i]]->size;
	return total;
}

void
fst_compaction_pick_free(FstCompactionPick *pick)
{
	int			i;

	for (i = 0; i < 2; i++)
	{
		fst_free(pick->inputs[i]);
		fst_free(pick->input_index[i]);
		pick->inputs[i] = NULL;
		pick->input_index[i] = NULL;
		pick->ninputs[i] = 0;
	}
}

/*
 * The level of the first file (lowest level first) holding unfrozen xids
 * older than freeze_xid, and its index; -1 if none.  *self: it is in the
 * last level with files, to be rewritten into that level.
 */
static int
freeze_pick(const FstLevels *levels, uint32 freeze_xid, int *index, bool *self)
{
	int			k,
				i,
				deeper;

	for (k = 0; k < FST_NUM_LEVELS; k++)
		for (i = 0; i < levels->nfiles[k]; i++)
		{
			const FstFileMeta *f = levels->files[k][i];

			if (f->xid_min == 0 || !fst_xid_precedes(f->xid_min, freeze_xid))
				continue;
			*index = i;
			*self = (k > 0);
			for (deeper = k + 1; deeper < FST_NUM_LEVELS; deeper++)
				if (levels->nfiles[deeper] > 0)
					*self = false;
			return k;
		}
	return -1;
}

FstCode
fst_compaction_pick(const FstLevels *levels,
					const FstCompactionPickOptions *opt,
					FstCompactionPick *pick, bool *picked, FstError *err)
{
	double		scores[FST_NUM_LEVELS];
	int			level = -1;
	int			out;
	int			i,
				k;
	int		   *tmp = NULL;
	FstSlice	lo = {0},
				hi = {0};
	bool		have = false;
	int			freeze_file = -1;
	bool		self = false;

	memset(pick, 0, sizeof(*pick));
	*picked = false;
	if (opt->l0_compaction_trigger < 1 || opt->level_multiplier < 1 ||
		opt->level1_target_bytes == 0)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "invalid compaction picking options");
	for (k = 0; k < FST_NUM_LEVELS; k++)
		for (i = 0; i < levels->nfiles[k]; i++)
			if (!fst_ikey_valid(fst_filemeta_smallest(levels->files[k][i])) ||
				!fst_ikey_valid(fst_filemeta_largest(levels->files[k][i])))
				return fst_error(err, FST_INVALID_ARGUMENT,
								 "file " UINT64_FORMAT " in level %d has no valid key range",
								 levels->files[k][i]->file_id, k);

	fst_compaction_scores(levels, opt, scores);
	for (k = 0; k < FST_NUM_LEVELS - 1; k++)
		if (scores[k] >= 1.0 && (level < 0 || scores[k] > scores[level]))
			level = k;
	if (level < 0 && opt->freeze_xid != 0)
		level = freeze_pick(levels, opt->freeze_xid, &freeze_file, &self);
	if (level < 0)
		return FST_OK;
	out = self ? level : level + 1;

	pick->level = level;
	pick->output_level = out;
	pick->score = scores[level];
	pick->input_index[0] = fst_malloc(sizeof(int) * Max(levels->nfiles[level], 1));
	pick->input_index[1] = fst_malloc(sizeof(int) * Max(levels->nfiles[out], 1));
	tmp = fst_malloc(sizeof(int) * Max(levels->nfiles[level], 1));
	if (pick->input_index[0] == NULL || pick->input_index[1] == NULL ||
		tmp == NULL)
		goto oom;

	if (level == 0)
	{
		for (i = 0; i < levels->nfiles[0]; i++)
			pick->input_index[0][i] = i;
		pick->ninputs[0] = levels->nfiles[0];
	}
	else
	{
		FstSlice	ptr = levels->compact_pointer[level];
		int			start = 0;

		if (freeze_file >= 0)
			start = freeze_file;
		else if (ptr.len > 0)
		{
			for (start = 0; start < levels->nfiles[level]; start++)
				if (fst_slice_cmp(smallest_up(levels->files[level][start]), ptr) > 0)
					break;
			if (start == levels->nfiles[level])
				start = 0;		/* wrap around */
		}
		pick->input_index[0][0] = start;
		pick->ninputs[0] = 1;
	}
	extend_range(levels->files[level], pick->input_index[0], pick->ninputs[0],
				 &lo, &hi, &have);
	if (!self)
		pick->ninputs[1] = collect_overlapping(levels, out, lo, hi,
											   pick->input_index[1]);

	/* grow the level-n side if that costs no further output-level file */
	if (level > 0 && pick->ninputs[1] > 0)
	{
		FstSlice	all_lo = lo,
					all_hi = hi;
		int			n0;

		extend_range(levels->files[out], pick->input_index[1],
					 pick->ninputs[1], &all_lo, &all_hi, &have);
		n0 = collect_overlapping(levels, level, all_lo, all_hi, tmp);
		if (n0 > pick->ninputs[0])
		{
			FstSlice	new_lo = lo,
						new_hi = hi;
			bool		new_have = false;
			int			n1;
			int		   *idx1 = fst_malloc(sizeof(int) *
										  Max(levels->nfiles[out], 1));

			if (idx1 == NULL)
				goto oom;
			extend_range(levels->files[level], tmp, n0, &new_lo, &new_hi,
						 &new_have);
			n1 = collect_overlapping(levels, out, new_lo, new_hi, idx1);
			if (n1 == pick->ninputs[1] &&
				(opt->max_compaction_bytes == 0 ||
				 sum_bytes(levels->files[level], tmp, n0) +
				 sum_bytes(levels->files[out], idx1, n1) <=
				 opt->max_compaction_bytes))
			{
				memcpy(pick->input_index[0], tmp, sizeof(int) * n0);
				pick->ninputs[0] = n0;
				lo = new_lo;
				hi = new_hi;
			}
			fst_free(idx1);
		}
	}

	/* the file pointers, and the whole range for the bottom-level test */
	for (k = 0; k < 2; k++)
	{
		int			lv = (k == 0) ? level : out;

		pick->inputs[k] = fst_malloc(sizeof(FstFileMeta *) *
									 Max(pick->ninputs[k], 1));
		if (pick->inputs[k] == NULL)
			goto oom;
		for (i = 0; i < pick->ninputs[k]; i++)
			pick->inputs[k][i] = levels->files[lv][pick->input_index[k][i]];
	}
	extend_range(levels->files[out], pick->input_index[1], pick->ninputs[1],
				 &lo, &hi, &have);
	pick->bottom_level = true;
	for (k = out + 1; k < FST_NUM_LEVELS && pick->bottom_level; k++)
		for (i = 0; i < levels->nfiles[k]; i++)
			if (overlaps(levels->files[k][i], lo, hi))
			{
				pick->bottom_level = false;
				break;
			}
	pick->trivial_move = (level > 0 && !self && pick->ninputs[0] == 1 &&
						  pick->ninputs[1] == 0);
	/* the largest user part among the level-n inputs */
	pick->compact_pointer = largest_up(pick->inputs[0][0]);
	for (i = 1; i < pick->ninputs[0]; i++)
		if (fst_slice_cmp(largest_up(pick->inputs[0][i]),
						  pick->compact_pointer) > 0)
			pick->compact_pointer = largest_up(pick->inputs[0][i]);
	fst_free(tmp);
	*picked = true;
	return FST_OK;

oom:
	fst_free(tmp);
	fst_compaction_pick_free(pick);
	return fst_error(err, FST_NO_MEMORY, "out of memory picking a compaction");
}
