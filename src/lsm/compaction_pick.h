/*-------------------------------------------------------------------------
 *
 * compaction_pick.h
 *	  Choosing the next leveled compaction from a table's file set.
 *
 * The caller describes the levels: level 0 newest file first (its files may
 * overlap), levels >= 1 sorted by smallest key with disjoint user-key
 * ranges.  Every level gets a score: level 0 its file count over
 * l0_compaction_trigger, level n >= 1 its bytes over its target size
 * (level1_target_bytes * level_multiplier^(n-1)).  The last level cannot be
 * compacted further down; its score is reported but never picked.  The
 * level with the highest score >= 1 is compacted (ties: the lower level).
 *
 * Level 0: all its files plus every level-1 file overlapping their range.
 * Level n: one file, taken round-robin — the first whose smallest user part
 * is greater than the level's compact pointer (wrapping to the first file)
 * — plus every level n+1 file overlapping it.  The level-n set then grows
 * to every level-n file within the combined range when that pulls in no
 * further level n+1 file and stays within max_compaction_bytes.  After
 * running the compaction the caller stores pick.compact_pointer as the
 * level's new pointer.
 *
 * All ranges are compared by user part (key group + user key), since one
 * user part's versions never straddle two files of a level >= 1.
 *
 *
 * Freezing: when no level is due and freeze_xid is set, a file whose
 * oldest unfrozen xid precedes freeze_xid (modulo 2^32) is rewritten so
 * that the caller's drop policy can freeze its versions (VACUUM's way of
 * letting relfrozenxid advance over files compaction would not touch).
 * The first such file, lowest level first, is picked: in level 0 as a
 * level-0 compaction; in a level with files further down, into the next
 * level (a trivial move if nothing there overlaps it, so that it sinks to
 * the last level); in the last level with files, alone into its own level
 * (output_level == level, never a trivial move).
 *-------------------------------------------------------------------------
 */
#ifndef FST_COMPACTION_PICK_H
#define FST_COMPACTION_PICK_H

#include "filemeta.h"

typedef struct FstCompactionPickOptions
{
	int			l0_compaction_trigger;	/* default 4 */
	uint64		level1_target_bytes;	/* default 256 MiB */
	int			level_multiplier;	/* default 10 */
	uint64		max_compaction_bytes;	/* cap on growing inputs; 0 = none */
	uint32		freeze_xid;		/* rewrite files with older xids; 0 = none */
} FstCompactionPickOptions;

extern void fst_compaction_pick_options_default(FstCompactionPickOptions *opt);

/* The file set as the picker sees it (everything borrowed). */
typedef struct FstLevels
{
	const FstFileMeta *const *files[FST_NUM_LEVELS];
	int			nfiles[FST_NUM_LEVELS];
	/* per level: user part after which to pick next (len 0 = none) */
	FstSlice	compact_pointer[FST_NUM_LEVELS];
} FstLevels;

typedef struct FstCompactionPick
{
	int			level;
	int			output_level;
	double		score;
	/* inputs[0] from level, inputs[1] from output_level; in level order */
	int			ninputs[2];
	const FstFileMeta **inputs[2];	/* malloc'ed arrays */
	int		   *input_index[2]; /* positions in FstLevels.files[] */
	/* no file in a level below output_level overlaps the inputs' range */
	bool		bottom_level;
	/* one level-n file overlapping nothing in n+1: just move it down */
	bool		trivial_move;
	/* largest user part of inputs[0] (borrowed from the file metadata) */
	FstSlice	compact_pointer;
} FstCompactionPick;

/* Target bytes of level (>= 1). */
extern uint64 fst_level_target_bytes(const FstCompactionPickOptions *opt,
									 int level);

/* The score of every level (observability; what pick uses). */
extern void fst_compaction_scores(const FstLevels *levels,
								  const FstCompactionPickOptions *opt,
								  double scores[FST_NUM_LEVELS]);

/*
 * Picks the next compaction.  *picked is false when no level scores >= 1
 * (pick is then empty).  FST_NO_MEMORY, FST_INVALID_ARGUMENT on options
 * that make no sense.  Free the pick with fst_compaction_pick_free.
 */
extern FstCode fst_compaction_pick(const FstLevels *levels,
								   const FstCompactionPickOptions *opt,
								   FstCompactionPick *pick, bool *picked,
								   FstError *err);
extern void fst_compaction_pick_free(FstCompactionPick *pick);

#endif							/* FST_COMPACTION_PICK_H */
