/*
 * test_compaction_pick.c — leveled compaction picking: the level-0
 * trigger, level size scores, overlap selection and input growth, the
 * compact pointer's round robin, the bottom-level and trivial-move flags.
 */
#include "unit.h"
#include "compaction_pick.h"
#include "ikey.h"

#define MAXF 16

typedef struct TestLevels
{
	FstFileMeta metas[FST_NUM_LEVELS][MAXF];
	const FstFileMeta *ptrs[FST_NUM_LEVELS][MAXF];
	FstLevels	levels;
	char		ptrbuf[FST_NUM_LEVELS][32];
	uint64		next_id;
} TestLevels;

static void
tl_init(TestLevels *t)
{
	int			i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < FST_NUM_LEVELS; i++)
		t->levels.files[i] = t->ptrs[i];
	t->next_id = 1;
}

/* Appends a file holding user keys lo..hi (key group 0) to level. */
static void
tl_add(TestLevels *t, int level, const char *lo, const char *hi, uint64 size)
{
	int			n = t->levels.nfiles[level];
	FstFileMeta *m = &t->metas[level][n];
	char		s[64],
				l[64];
	size_t		slen = fst_ikey_build(s, 0, lo, strlen(lo), 100);
	size_t		llen = fst_ikey_build(l, 0, hi, strlen(hi), 1);

	memset(m, 0, sizeof(*m));
	fst_filemeta_set_range(m, fst_slice(s, slen), fst_slice(l, llen));
	m->file_id = t->next_id++;
	m->level = level;
	m->size = size;
	t->ptrs[level][n] = m;
	t->levels.nfiles[level] = n + 1;
}

static void
tl_set_pointer(TestLevels *t, int level, const char *ukey)
{
	char	   *b = t->ptrbuf[level];

	fst_put_be16(b, 0);
	memcpy(b + FST_KG_BYTES, ukey, strlen(ukey));
	t->levels.compact_pointer[level] = fst_slice(b, FST_KG_BYTES + strlen(ukey));
}

static void
tl_free(TestLevels *t)
{
	int			l,
				i;

	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < t->levels.nfiles[l]; i++)
			fst_filemeta_clear(&t->metas[l][i]);
}

/* Does the pointer slice name user key ukey? */
static bool
pointer_is(FstSlice p, const char *ukey)
{
	return p.len == FST_KG_BYTES + strlen(ukey) &&
		memcmp(p.data + FST_KG_BYTES, ukey, strlen(ukey)) == 0;
}

static void
small_opts(FstCompactionPickOptions *o)
{
	fst_compaction_pick_options_default(o);
	o->level1_target_bytes = 1000;
}

FST_TEST(pick_defaults)
{
	FstCompactionPickOptions o;

	fst_compaction_pick_options_default(&o);
	CHECK_EQ_INT(o.l0_compaction_trigger, 4);
	CHECK(o.level1_target_bytes == UINT64CONST(256) * 1024 * 1024);
	CHECK_EQ_INT(o.level_multiplier, 10);
	CHECK(fst_level_target_bytes(&o, 3) == UINT64CONST(25600) * 1024 * 1024);
}

FST_TEST(pick_l0_trigger_and_overlap)
{
	TestLevels *t = malloc(sizeof(TestLevels));
	FstCompactionPickOptions o;
	FstCompactionPick pick;
	bool		picked;
	FstError	err;
	double		scores[FST_NUM_LEVELS];

	tl_init(t);
	fst_compaction_pick_options_default(&o);
	tl_add(t, 0, "b", "e", 10);
	tl_add(t, 0, "d", "d", 10);
	tl_add(t, 0, "e", "h", 10);
	tl_add(t, 1, "a", "c", 10);
	tl_add(t, 1, "d", "f", 10);
	tl_add(t, 1, "g", "i", 10);
	tl_add(t, 1, "m", "p", 10);
	tl_add(t, 2, "x", "z", 10);
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(!picked);
	fst_compaction_scores(&t->levels, &o, scores);
	CHECK(scores[0] == 0.75);

	tl_add(t, 0, "b", "c", 10);
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked);
	CHECK_EQ_INT(pick.level, 0);
	CHECK_EQ_INT(pick.output_level, 1);
	CHECK(pick.score == 1.0);
	CHECK_EQ_INT(pick.ninputs[0], 4);
	CHECK_EQ_INT(pick.ninputs[1], 3);
	CHECK(pick.inputs[1][0] == t->ptrs[1][0]);
	CHECK(pick.inputs[1][1] == t->ptrs[1][1]);
	CHECK(pick.inputs[1][2] == t->ptrs[1][2]);
	CHECK_EQ_INT(pick.input_index[1][2], 2);
	CHECK(pick.bottom_level);
	CHECK(!pick.trivial_move);
	fst_compaction_pick_free(&pick);

	/* a level-2 file inside the range: not the bottom any more */
	tl_add(t, 3, "i", "k", 10);
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked && !pick.bottom_level);
	fst_compaction_pick_free(&pick);
	tl_free(t);
	free(t);
}

FST_TEST(pick_level_scores)
{
	TestLevels *t = malloc(sizeof(TestLevels));
	FstCompactionPickOptions o;
	FstCompactionPick pick;
	bool		picked;
	FstError	err;
	double		scores[FST_NUM_LEVELS];

	tl_init(t);
	small_opts(&o);
	tl_add(t, 0, "a", "b", 1);
	tl_add(t, 1, "a", "b", 700);
	tl_add(t, 1, "c", "d", 800);	/* L1: 1500 / 1000 */
	tl_add(t, 2, "a", "b", 9000);
	tl_add(t, 2, "c", "d", 11000);	/* L2: 20000 / 10000 */
	tl_add(t, 6, "a", "z", UINT64CONST(1) << 40);	/* last level: never */
	fst_compaction_scores(&t->levels, &o, scores);
	CHECK(scores[0] == 0.25);
	CHECK(scores[1] == 1.5);
	CHECK(scores[2] == 2.0);
	CHECK(scores[3] == 0.0);
	CHECK(scores[6] > 1.0);
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked);
	CHECK_EQ_INT(pick.level, 2);
	CHECK_EQ_INT(pick.output_level, 3);
	CHECK(pick.score == 2.0);
	CHECK_EQ_INT(pick.ninputs[0], 1);
	CHECK(pick.inputs[0][0] == t->ptrs[2][0]);
	CHECK_EQ_INT(pick.ninputs[1], 0);
	CHECK(pick.trivial_move);
	CHECK(!pick.bottom_level);	/* the last level overlaps */
	fst_compaction_pick_free(&pick);

	/* level 1 grows past level 2's score */
	tl_add(t, 1, "e", "f", 2000);
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked && pick.level == 1 && pick.output_level == 2);
	CHECK(pick.score == 3.5);
	/* a..b overlaps the level-2 file a..b: no trivial move */
	CHECK_EQ_INT(pick.ninputs[1], 1);
	CHECK(pick.inputs[1][0] == t->ptrs[2][0]);
	CHECK(!pick.trivial_move);
	fst_compaction_pick_free(&pick);
	tl_free(t);
	free(t);
}

FST_TEST(pick_grows_level_inputs)
{
	TestLevels *t = malloc(sizeof(TestLevels));
	FstCompactionPickOptions o;
	FstCompactionPick pick;
	bool		picked;
	FstError	err;

	tl_init(t);
	small_opts(&o);
	tl_add(t, 1, "a", "b", 500);
	tl_add(t, 1, "c", "d", 500);
	tl_add(t, 1, "e", "f", 500);
	tl_add(t, 1, "g", "h", 500);
	tl_add(t, 2, "b", "e", 100);
	tl_add(t, 2, "x", "y", 100);
	tl_set_pointer(t, 1, "b");
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked && pick.level == 1);
	/* c..d pulls in b..e, whose range covers a..b and e..f too */
	CHECK_EQ_INT(pick.ninputs[0], 3);
	CHECK_EQ_INT(pick.input_index[0][0], 0);
	CHECK_EQ_INT(pick.input_index[0][2], 2);
	CHECK_EQ_INT(pick.ninputs[1], 1);
	CHECK(pick.inputs[1][0] == t->ptrs[2][0]);
	CHECK(pointer_is(pick.compact_pointer, "f"));
	CHECK(pick.bottom_level);
	fst_compaction_pick_free(&pick);

	/* not beyond max_compaction_bytes */
	o.max_compaction_bytes = 1000;
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK_EQ_INT(pick.ninputs[0], 1);
	CHECK(pick.inputs[0][0] == t->ptrs[1][1]);
	CHECK(pointer_is(pick.compact_pointer, "d"));
	fst_compaction_pick_free(&pick);
	o.max_compaction_bytes = 0;

	/* not when the grown range would pull in another level-2 file */
	tl_free(t);
	tl_init(t);
	tl_add(t, 1, "a", "b", 500);
	tl_add(t, 1, "c", "d", 500);
	tl_add(t, 1, "e", "f", 500);
	tl_add(t, 2, "b", "e", 100);
	tl_add(t, 2, "f", "g", 100);
	tl_set_pointer(t, 1, "b");
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK_EQ_INT(pick.ninputs[0], 1);
	CHECK(pick.inputs[0][0] == t->ptrs[1][1]);
	CHECK_EQ_INT(pick.ninputs[1], 1);
	fst_compaction_pick_free(&pick);
	tl_free(t);
	free(t);
}

FST_TEST(pick_compact_pointer_round_robin)
{
	TestLevels *t = malloc(sizeof(TestLevels));
	FstCompactionPickOptions o;
	FstCompactionPick pick;
	bool		picked;
	FstError	err;
	static const char *const expect[] = {"b", "d", "f", "b", "d"};
	int			i;

	tl_init(t);
	small_opts(&o);
	tl_add(t, 1, "a", "b", 400);
	tl_add(t, 1, "c", "d", 400);
	tl_add(t, 1, "e", "f", 400);
	tl_add(t, 4, "q", "r", 1);
	for (i = 0; i < (int) lengthof(expect); i++)
	{
		CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
		CHECK(picked && pick.level == 1 && pick.ninputs[0] == 1);
		CHECK_MSG(pointer_is(pick.compact_pointer, expect[i]), "round %d", i);
		CHECK(pick.trivial_move);
		CHECK(pick.bottom_level);
		/* the caller stores the new pointer */
		memcpy(t->ptrbuf[1], pick.compact_pointer.data, pick.compact_pointer.len);
		t->levels.compact_pointer[1] = fst_slice(t->ptrbuf[1],
												 pick.compact_pointer.len);
		fst_compaction_pick_free(&pick);
	}
	/* a pointer between files picks the next one */
	tl_set_pointer(t, 1, "c5");
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(pick.inputs[0][0] == t->ptrs[1][2]);
	fst_compaction_pick_free(&pick);
	/* a file reaching into level 4's range is not at the bottom */
	tl_set_pointer(t, 1, "f");
	for (i = 0; i < 3; i++)
		fst_filemeta_clear(&t->metas[1][i]);
	t->levels.nfiles[1] = 0;
	tl_add(t, 1, "m", "z", 2000);
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(pick.inputs[0][0] == t->ptrs[1][0]);	/* wrapped */
	CHECK(!pick.bottom_level);
	fst_compaction_pick_free(&pick);
	tl_free(t);
	free(t);
}

FST_TEST(pick_rejects_bad_options)
{
	TestLevels *t = malloc(sizeof(TestLevels));
	FstCompactionPickOptions o;
	FstCompactionPick pick;
	bool		picked;
	FstError	err;

	tl_init(t);
	fst_compaction_pick_options_default(&o);
	o.l0_compaction_trigger = 0;
	CHECK_EQ_INT(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err),
				 FST_INVALID_ARGUMENT);
	CHECK(!picked);
	free(t);
}

/*
 * Freezing: with nothing due, the first file holding xids older than
 * freeze_xid is picked, lowest level first: level 0 as a level-0
 * compaction, a level with files below into the next level, the last
 * level with files alone into itself.  xids compare modulo 2^32.
 */
FST_TEST(pick_freeze_old_files)
{
	TestLevels *t = malloc(sizeof(TestLevels));
	FstCompactionPickOptions o;
	FstCompactionPick pick;
	bool		picked;
	FstError	err;

	tl_init(t);
	small_opts(&o);
	o.level1_target_bytes = 1000000;
	tl_add(t, 1, "a", "c", 10);
	tl_add(t, 1, "m", "p", 10);
	tl_add(t, 3, "a", "f", 10);
	tl_add(t, 3, "g", "z", 10);
	t->metas[1][1].xid_min = 500;
	t->metas[3][1].xid_min = 400;
	t->metas[3][0].xid_min = 0; /* all frozen */

	/* no freeze_xid, or none older than it: nothing */
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(!picked);
	o.freeze_xid = 400;
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(!picked);

	/* level 1's file m..p: into level 2, where nothing overlaps (a move) */
	o.freeze_xid = 600;
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked);
	CHECK_EQ_INT(pick.level, 1);
	CHECK_EQ_INT(pick.output_level, 2);
	CHECK_EQ_INT(pick.ninputs[0], 1);
	CHECK(pick.inputs[0][0] == t->ptrs[1][1]);
	CHECK(pick.trivial_move);
	fst_compaction_pick_free(&pick);

	/* level 1 frozen: the last level's g..z, alone, into level 3 */
	t->metas[1][1].xid_min = 0;
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked);
	CHECK_EQ_INT(pick.level, 3);
	CHECK_EQ_INT(pick.output_level, 3);
	CHECK_EQ_INT(pick.ninputs[0], 1);
	CHECK_EQ_INT(pick.ninputs[1], 0);
	CHECK(pick.inputs[0][0] == t->ptrs[3][1]);
	CHECK(pick.bottom_level);
	CHECK(!pick.trivial_move);
	fst_compaction_pick_free(&pick);

	/* modulo 2^32: 0xFFFFFF00 is older than 300 */
	t->metas[3][1].xid_min = 0xFFFFFF00;
	o.freeze_xid = 300;
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked && pick.level == 3 && pick.inputs[0][0] == t->ptrs[3][1]);
	fst_compaction_pick_free(&pick);
	o.freeze_xid = 0xFFFFFE00;
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(!picked);

	/* a level-0 file: a level-0 compaction; due compactions come first */
	tl_add(t, 0, "b", "d", 10);
	t->metas[0][0].xid_min = 100;
	o.freeze_xid = 200;
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked && pick.level == 0 && pick.output_level == 1);
	CHECK_EQ_INT(pick.ninputs[0], 1);
	CHECK_EQ_INT(pick.ninputs[1], 1);
	fst_compaction_pick_free(&pick);
	o.level1_target_bytes = 5;	/* level 1 is due: it goes first */
	CHECK_OK(fst_compaction_pick(&t->levels, &o, &pick, &picked, &err), &err);
	CHECK(picked && pick.level == 1 && pick.score >= 1.0);
	fst_compaction_pick_free(&pick);
	tl_free(t);
	free(t);
}
