/*
 * test_level_iter.c — the level iterator: one level's files in order, one
 * file open at a time, against a merge of all of them.
 */
#include "unit.h"
#include "kvtest.h"
#include "level_iter.h"
#include "merge_iter.h"

#define MAX_FILES 16

typedef struct TestLevel
{
	TestKVs		kv[MAX_FILES];
	FstFileMeta meta[MAX_FILES];
	const FstFileMeta *files[MAX_FILES];
	int			n;
	int			open_now;		/* iterators open at the moment */
	int			open_max;
	int			opens;
	int			releases;
	int			fail_file;		/* open of this file fails (-1: none) */
} TestLevel;

static FstIter *
tl_open(void *arg, int i, FstError *err)
{
	TestLevel  *tl = arg;

	if (i == tl->fail_file)
	{
		fst_error(err, FST_IO_ERROR, "file %d is gone", i);
		return NULL;
	}
	tl->opens++;
	tl->open_now++;
	if (tl->open_now > tl->open_max)
		tl->open_max = tl->open_now;
	return kvs_iter(&tl->kv[i]);
}

static void
tl_release(void *arg, int i)
{
	TestLevel  *tl = arg;

	tl->open_now--;
	tl->releases++;
}

/* Sets each file's range from its entries. */
static void
tl_finish(TestLevel *tl)
{
	int			i;

	for (i = 0; i < tl->n; i++)
	{
		TestKVs    *t = &tl->kv[i];
		int			j = i;

		memset(&tl->meta[i], 0, sizeof(FstFileMeta));
		kvs_sort(t);
		if (t->n > 0)
		{
			if (!fst_filemeta_set_range(&tl->meta[i], t->kv[0].key,
										t->kv[t->n - 1].key))
				abort();
		}
		else
		{
			/* an empty file: the range of the last key before it */
			while (j > 0 && tl->kv[j].n == 0)
				j--;
			if (tl->kv[j].n == 0 ||
				!fst_filemeta_set_range(&tl->meta[i], tl->kv[j].kv[tl->kv[j].n - 1].key,
										tl->kv[j].kv[tl->kv[j].n - 1].key))
				abort();
		}
		tl->files[i] = &tl->meta[i];
	}
	tl->fail_file = -1;
}

static void
tl_free(TestLevel *tl)
{
	int			i;

	for (i = 0; i < tl->n; i++)
	{
		kvs_free(&tl->kv[i]);
		fst_filemeta_clear(&tl->meta[i]);
	}
}

/* Three files: a b | d e e | g */
static void
tl_small(TestLevel *tl)
{
	memset(tl, 0, sizeof(*tl));
	tl->n = 3;
	kvs_init(&tl->kv[0]);
	kvs_init(&tl->kv[1]);
	kvs_init(&tl->kv[2]);
	kvs_add(&tl->kv[0], "a", 1, 0, "a1");
	kvs_add(&tl->kv[0], "b", 2, 0, "b2");
	kvs_add(&tl->kv[1], "d", 3, 0, "d3");
	kvs_add(&tl->kv[1], "e", 9, 0, "e9");
	kvs_add(&tl->kv[1], "e", 4, 0, "e4");
	kvs_add(&tl->kv[2], "g", 5, 0, "g5");
	tl_finish(tl);
}

FST_TEST(level_iter_walk_one_file_at_a_time)
{
	TestLevel	tl;
	FstIter    *it;
	FstError	err;
	static const char *const keys[] = {"a", "b", "d", "e", "e", "g"};
	static const uint64 seqs[] = {1, 2, 3, 9, 4, 5};
	static const int file_of[] = {0, 0, 1, 1, 1, 2};
	int			i;

	tl_small(&tl);
	it = fst_level_iter_create(tl.files, tl.n, tl_open, tl_release, &tl);
	CHECK(it != NULL);
	CHECK(fst_is_level_iter(it));
	CHECK(!fst_iter_valid(it));
	CHECK_EQ_INT(tl.opens, 0);
	fst_iter_seek_first(it);
	for (i = 0; i < 6; i++)
	{
		CHECK_MSG(kvs_at(it, keys[i], seqs[i]), "entry %d", i);
		CHECK_EQ_INT(fst_level_iter_current_file(it), file_of[i]);
		CHECK(fst_level_iter_current(it) != NULL);
		CHECK_EQ_INT(tl.open_now, 1);
		fst_iter_next(it);
	}
	CHECK(!fst_iter_valid(it));
	CHECK_EQ_INT(fst_level_iter_current_file(it), -1);
	CHECK(fst_level_iter_current(it) == NULL);
	CHECK_OK(fst_iter_status(it, &err), &err);
	/* at the end nothing stays open */
	CHECK_EQ_INT(tl.open_now, 0);
	CHECK_EQ_INT(tl.open_max, 1);
	CHECK_EQ_INT(tl.opens, 3);
	CHECK_EQ_INT(tl.releases, 3);
	fst_iter_destroy(it);
	tl_free(&tl);
}

FST_TEST(level_iter_seek)
{
	TestLevel	tl;
	FstIter    *it;
	char		buf[64];
	FstError	err;

	tl_small(&tl);
	it = fst_level_iter_create(tl.files, tl.n, tl_open, tl_release, &tl);
	CHECK(it != NULL);
	/* before everything */
	fst_iter_seek(it, kvs_target(buf, "0", FST_MAX_SEQ));
	CHECK(kvs_at(it, "a", 1));
	/* in the gap between two files: the next file's first entry */
	fst_iter_seek(it, kvs_target(buf, "c", FST_MAX_SEQ));
	CHECK(kvs_at(it, "d", 3));
	CHECK_EQ_INT(tl.open_now, 1);
	/* among a key's versions */
	fst_iter_seek(it, kvs_target(buf, "e", 5));
	CHECK(kvs_at(it, "e", 4));
	/* past the last version of a file's last key: the next file */
	fst_iter_seek(it, kvs_target(buf, "e", 3));
	CHECK(kvs_at(it, "g", 5));
	CHECK_EQ_INT(fst_level_iter_current_file(it), 2);
	/* seeking within the same file keeps it open */
	tl.opens = 0;
	fst_iter_seek(it, kvs_target(buf, "g", FST_MAX_SEQ));
	CHECK(kvs_at(it, "g", 5));
	CHECK_EQ_INT(tl.opens, 0);
	/* past everything: invalid, nothing open */
	fst_iter_seek(it, kvs_target(buf, "h", FST_MAX_SEQ));
	CHECK(!fst_iter_valid(it));
	CHECK_EQ_INT(tl.open_now, 0);
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_destroy(it);
	CHECK_EQ_INT(tl.open_now, 0);
	tl_free(&tl);
}

FST_TEST(level_iter_skips_empty_files)
{
	TestLevel	tl;
	FstIter    *it;
	char		buf[64];

	memset(&tl, 0, sizeof(tl));
	tl.n = 4;
	kvs_init(&tl.kv[0]);
	kvs_init(&tl.kv[1]);
	kvs_init(&tl.kv[2]);
	kvs_init(&tl.kv[3]);
	kvs_add(&tl.kv[0], "a", 1, 0, "a1");
	/* files 1 and 2 are empty (every entry dropped by a filter, say) */
	kvs_add(&tl.kv[3], "c", 2, 0, "c2");
	tl_finish(&tl);
	it = fst_level_iter_create(tl.files, tl.n, tl_open, tl_release, &tl);
	CHECK(it != NULL);
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "a", 1));
	fst_iter_next(it);
	CHECK(kvs_at(it, "c", 2));
	CHECK_EQ_INT(fst_level_iter_current_file(it), 3);
	CHECK_EQ_INT(tl.open_now, 1);
	fst_iter_next(it);
	CHECK(!fst_iter_valid(it));
	fst_iter_seek(it, kvs_target(buf, "b", FST_MAX_SEQ));
	CHECK(kvs_at(it, "c", 2));
	fst_iter_destroy(it);
	CHECK_EQ_INT(tl.open_now, 0);
	tl_free(&tl);
}

FST_TEST(level_iter_open_failure)
{
	TestLevel	tl;
	FstIter    *it;
	FstError	err;

	tl_small(&tl);
	tl.fail_file = 1;
	it = fst_level_iter_create(tl.files, tl.n, tl_open, tl_release, &tl);
	CHECK(it != NULL);
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "a", 1));
	fst_iter_next(it);
	fst_iter_next(it);
	/* moving into file 1 fails: invalid, with the open's error */
	CHECK(!fst_iter_valid(it));
	fst_error_clear(&err);
	CHECK_EQ_INT(fst_iter_status(it, &err), FST_IO_ERROR);
	CHECK(strstr(err.msg, "file 1 is gone") != NULL);
	CHECK_EQ_INT(tl.open_now, 0);
	/* positioning again clears it */
	tl.fail_file = -1;
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "a", 1));
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_destroy(it);
	CHECK_EQ_INT(tl.open_now, 0);
	tl_free(&tl);
}

/*
 * Random levels, random seeks and walks: the level iterator yields what a
 * merge of all its files yields.
 */
FST_TEST(level_iter_matches_merge)
{
	uint64		rng = fst_test_seed();
	int			round;

	for (round = 0; round < 200; round++)
	{
		TestLevel	tl;
		FstIter    *lv,
				   *mg;
		FstIter    *ch[MAX_FILES];
		int			nkeys = 1 + (int) fst_rand_range(&rng, 60);
		int			k,
					f,
					step;

		memset(&tl, 0, sizeof(tl));
		tl.n = 1 + (int) fst_rand_range(&rng, MAX_FILES);
		for (f = 0; f < tl.n; f++)
			kvs_init(&tl.kv[f]);
		/* keys k000..: consecutive runs of keys go to consecutive files */
		for (k = 0, f = 0; k < nkeys; k++)
		{
			char		ukey[8];
			int			v,
						nv = 1 + (int) fst_rand_range(&rng, 3);

			snprintf(ukey, sizeof(ukey), "k%03d", k * 2);
			for (v = 0; v < nv; v++)
				kvs_add(&tl.kv[f], ukey, 100 - v * 10 - (uint64) k % 7, 0, "x");
			if (f < tl.n - 1 && fst_rand_range(&rng, 4) == 0)
				f++;
		}
		/* files past the last key's stay empty: a level has none such */
		tl.n = Min(tl.n, f + (tl.kv[f].n > 0 ? 1 : 0));
		tl_finish(&tl);
		lv = fst_level_iter_create(tl.files, tl.n, tl_open, tl_release, &tl);
		for (f = 0; f < tl.n; f++)
			ch[f] = kvs_iter(&tl.kv[f]);
		mg = fst_merge_iter_create(ch, tl.n);
		CHECK(lv != NULL && mg != NULL);
		for (step = 0; step < 20; step++)
		{
			char		buf[64];
			char		ukey[8];
			int			walk;

			snprintf(ukey, sizeof(ukey), "k%03d", (int) fst_rand_range(&rng, nkeys * 2 + 2));
			if (step == 0)
			{
				fst_iter_seek_first(lv);
				fst_iter_seek_first(mg);
			}
			else
			{
				FstSlice	t = kvs_target(buf, ukey, fst_rand_range(&rng, 120));

				fst_iter_seek(lv, t);
				fst_iter_seek(mg, t);
			}
			for (walk = 0; walk < 30; walk++)
			{
				CHECK_EQ_INT(fst_iter_valid(lv), fst_iter_valid(mg));
				if (!fst_iter_valid(mg))
					break;
				CHECK(fst_slice_cmp(fst_iter_key(lv), fst_iter_key(mg)) == 0);
				CHECK(tl.open_now == 1);
				fst_iter_next(lv);
				fst_iter_next(mg);
			}
		}
		fst_iter_destroy(lv);
		fst_iter_destroy(mg);
		CHECK_EQ_INT(tl.open_now, 0);
		tl_free(&tl);
	}
}
