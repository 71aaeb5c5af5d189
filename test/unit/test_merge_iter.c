/*
 * test_merge_iter.c — array and error iterators, the merging iterator and
 * the visible iterator.
 */
#include "unit.h"
#include "kvtest.h"
#include "merge_iter.h"

FST_TEST(array_iter_seek)
{
	TestKVs		t;
	FstIter    *it;
	char		buf[64];
	FstError	err;

	kvs_init(&t);
	kvs_add(&t, "b", 5, 0, "b5");
	kvs_add(&t, "b", 3, 0, "b3");
	kvs_add(&t, "d", 1, 0, "d1");
	it = kvs_iter(&t);
	CHECK(!fst_iter_valid(it));
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "b", 5));
	fst_iter_seek(it, kvs_target(buf, "a", 1));
	CHECK(kvs_at(it, "b", 5));
	fst_iter_seek(it, kvs_target(buf, "b", 4));
	CHECK(kvs_at(it, "b", 3));
	fst_iter_seek(it, kvs_target(buf, "b", 3));
	CHECK(kvs_at(it, "b", 3));
	fst_iter_seek(it, kvs_target(buf, "c", FST_MAX_SEQ));
	CHECK(kvs_at(it, "d", 1));
	fst_iter_next(it);
	CHECK(!fst_iter_valid(it));
	fst_iter_seek(it, kvs_target(buf, "d", 0));
	CHECK(!fst_iter_valid(it));
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_destroy(it);
	kvs_free(&t);
}

FST_TEST(error_iter_reports)
{
	FstIter    *it = fst_error_iter_create(FST_CORRUPT, "bad block 7");
	FstError	err;

	fst_error_clear(&err);
	fst_iter_seek_first(it);
	CHECK(!fst_iter_valid(it));
	CHECK_EQ_INT(fst_iter_status(it, &err), FST_CORRUPT);
	CHECK(strstr(err.msg, "bad block 7") != NULL);
	fst_iter_destroy(it);
}

FST_TEST(merge_iter_basic)
{
	TestKVs		a,
				b,
				c,
				empty;
	FstIter    *ch[4];
	FstIter    *it;
	char		buf[64];
	FstError	err;
	static const char *const exp_keys[] = {"a", "b", "b", "b", "c", "e", "e"};
	static const uint64 exp_seqs[] = {1, 9, 5, 2, 4, 8, 3};
	int			i;

	kvs_init(&a);
	kvs_init(&b);
	kvs_init(&c);
	kvs_init(&empty);
	kvs_add(&a, "b", 9, 0, "x");
	kvs_add(&a, "e", 3, 0, "x");
	kvs_add(&b, "a", 1, 0, "x");
	kvs_add(&b, "b", 2, 0, "x");
	kvs_add(&b, "e", 8, 0, "x");
	kvs_add(&c, "b", 5, 0, "x");
	kvs_add(&c, "c", 4, 0, "x");
	ch[0] = kvs_iter(&a);
	ch[1] = kvs_iter(&empty);
	ch[2] = kvs_iter(&b);
	ch[3] = kvs_iter(&c);
	it = fst_merge_iter_create(ch, 4);
	CHECK(it != NULL);
	fst_iter_seek_first(it);
	for (i = 0; i < (int) lengthof(exp_keys); i++)
	{
		CHECK_MSG(kvs_at(it, exp_keys[i], exp_seqs[i]), "entry %d", i);
		fst_iter_next(it);
	}
	CHECK(!fst_iter_valid(it));
	CHECK_OK(fst_iter_status(it, &err), &err);

	/* seeks: between, at, and after entries */
	fst_iter_seek(it, kvs_target(buf, "b", 6));
	CHECK(kvs_at(it, "b", 5));
	fst_iter_seek(it, kvs_target(buf, "b", FST_MAX_SEQ));
	CHECK(kvs_at(it, "b", 9));
	fst_iter_seek(it, kvs_target(buf, "bb", FST_MAX_SEQ));
	CHECK(kvs_at(it, "c", 4));
	fst_iter_next(it);
	CHECK(kvs_at(it, "e", 8));
	fst_iter_seek(it, kvs_target(buf, "e", 2));
	CHECK(!fst_iter_valid(it));
	fst_iter_seek(it, kvs_target(buf, "f", FST_MAX_SEQ));
	CHECK(!fst_iter_valid(it));
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_destroy(it);

	/* a single child, and none */
	ch[0] = kvs_iter(&c);
	it = fst_merge_iter_create(ch, 1);
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "b", 5));
	fst_iter_next(it);
	CHECK(kvs_at(it, "c", 4));
	fst_iter_next(it);
	CHECK(!fst_iter_valid(it));
	fst_iter_destroy(it);
	it = fst_merge_iter_create(NULL, 0);
	fst_iter_seek_first(it);
	CHECK(!fst_iter_valid(it));
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_destroy(it);

	kvs_free(&a);
	kvs_free(&b);
	kvs_free(&c);
}

FST_TEST(merge_iter_equal_keys_prefer_lower_index)
{
	TestKVs		a,
				b;
	FstIter    *ch[2];
	FstIter    *it;

	kvs_init(&a);
	kvs_init(&b);
	kvs_add(&a, "k", 7, 0, "old");
	kvs_add(&b, "k", 7, 0, "new");
	ch[0] = kvs_iter(&b);
	ch[1] = kvs_iter(&a);
	it = fst_merge_iter_create(ch, 2);
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "k", 7));
	CHECK(fst_iter_value(it).data == b.kv[0].value.data);
	fst_iter_next(it);
	CHECK(fst_iter_value(it).data == a.kv[0].value.data);
	fst_iter_destroy(it);
	kvs_free(&a);
	kvs_free(&b);
}

FST_TEST(merge_iter_error_propagates)
{
	TestKVs		a;
	FstIter    *ch[3];
	FstIter    *it;
	FstError	err;

	kvs_init(&a);
	kvs_add(&a, "a", 1, 0, "x");
	ch[0] = kvs_iter(&a);
	ch[1] = fst_error_iter_create(FST_IO_ERROR, "disk on fire");
	ch[2] = kvs_iter(&a);
	it = fst_merge_iter_create(ch, 3);
	fst_error_clear(&err);
	fst_iter_seek_first(it);
	CHECK(!fst_iter_valid(it));
	CHECK_EQ_INT(fst_iter_status(it, &err), FST_IO_ERROR);
	CHECK(strstr(err.msg, "disk on fire") != NULL);
	fst_iter_destroy(it);

	/* a NULL child fails creation and frees the others */
	ch[0] = kvs_iter(&a);
	ch[1] = NULL;
	CHECK(fst_merge_iter_create(ch, 2) == NULL);
	kvs_free(&a);
}

FST_TEST(visible_iter_tombstones_and_max_seq)
{
	TestKVs		a,
				b;
	FstIter    *ch[2];
	FstIter    *it;
	char		buf[64];
	FstError	err;

	kvs_init(&a);
	kvs_init(&b);
	/* newer source */
	kvs_add(&a, "a", 10, FST_ENTRY_TOMBSTONE, NULL);
	kvs_add(&a, "b", 12, 0, "b12");
	kvs_add(&a, "d", 11, FST_ENTRY_TOMBSTONE, NULL);
	/* older source */
	kvs_add(&b, "a", 4, 0, "a4");
	kvs_add(&b, "b", 6, 0, "b6");
	kvs_add(&b, "c", 3, 0, "c3");
	kvs_add(&b, "d", 2, 0, "d2");

	ch[0] = kvs_iter(&a);
	ch[1] = kvs_iter(&b);
	it = fst_visible_iter_create(fst_merge_iter_create(ch, 2), FST_MAX_SEQ,
								 NULL, NULL);
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "b", 12));
	fst_iter_next(it);
	CHECK(kvs_at(it, "c", 3));
	fst_iter_next(it);
	CHECK(!fst_iter_valid(it));
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_seek(it, kvs_target(buf, "a", FST_MAX_SEQ));
	CHECK(kvs_at(it, "b", 12));
	fst_iter_destroy(it);

	/* as of seq 9: the deletes and b12 are not there yet */
	ch[0] = kvs_iter(&a);
	ch[1] = kvs_iter(&b);
	it = fst_visible_iter_create(fst_merge_iter_create(ch, 2), 9, NULL, NULL);
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "a", 4));
	fst_iter_next(it);
	CHECK(kvs_at(it, "b", 6));
	fst_iter_next(it);
	CHECK(kvs_at(it, "c", 3));
	fst_iter_next(it);
	CHECK(kvs_at(it, "d", 2));
	fst_iter_next(it);
	CHECK(!fst_iter_valid(it));
	fst_iter_seek(it, kvs_target(buf, "c", FST_MAX_SEQ));
	CHECK(kvs_at(it, "c", 3));
	fst_iter_destroy(it);
	kvs_free(&a);
	kvs_free(&b);
}

static bool
reject_xids_above_10(void *arg, const FstEntryHeader *hdr)
{
	(*(int *) arg)++;
	return hdr->xid <= 10;
}

FST_TEST(visible_iter_callback)
{
	TestKVs		a;
	FstIter    *it;
	int			calls = 0;

	kvs_init(&a);
	kvs_add(&a, "a", 15, 0, "a15");
	kvs_add(&a, "a", 7, 0, "a7");
	kvs_add(&a, "b", 20, FST_ENTRY_TOMBSTONE, NULL);
	kvs_add(&a, "b", 8, 0, "b8");
	kvs_add(&a, "c", 12, 0, "c12");
	kvs_add(&a, "d", 9, FST_ENTRY_TOMBSTONE, NULL);
	kvs_add(&a, "d", 1, 0, "d1");
	it = fst_visible_iter_create(kvs_iter(&a), FST_MAX_SEQ,
								 reject_xids_above_10, &calls);
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "a", 7));
	fst_iter_next(it);
	CHECK(kvs_at(it, "b", 8));
	fst_iter_next(it);
	CHECK(!fst_iter_valid(it));
	CHECK(calls >= 6);
	fst_iter_destroy(it);
	kvs_free(&a);
}

FST_TEST(visible_iter_corrupt_entry)
{
	TestKVs		a;
	FstIter    *it;
	FstError	err;

	kvs_init(&a);
	kvs_add(&a, "a", 1, 0, "ok");
	kvs_add(&a, "b", 1, 0, "bad");
	((char *) a.kv[1].value.data)[0] = (char) 0x80;	/* unknown flag */
	it = fst_visible_iter_create(kvs_iter(&a), FST_MAX_SEQ, NULL, NULL);
	fst_iter_seek_first(it);
	CHECK(kvs_at(it, "a", 1));
	fst_iter_next(it);
	CHECK(!fst_iter_valid(it));
	CHECK_EQ_INT(fst_iter_status(it, &err), FST_CORRUPT);
	fst_iter_destroy(it);
	kvs_free(&a);
}

/*
 * Random sources: the merge must equal a sort of everything, and the
 * visible view must equal a brute-force pick from that sort.
 */
FST_TEST(merge_iter_randomized)
{
	uint64		rng = fst_test_seed();
	int			round;

	for (round = 0; round < 30; round++)
	{
		int			nsrc = 1 + (int) fst_rand_range(&rng, 6);
		TestKVs		src[6];
		TestKVs		all;
		FstIter    *ch[6];
		FstIter    *it;
		FstError	err;
		uint64		seq = 1;
		uint64		max_seq;
		int			s,
					i;

		kvs_init(&all);
		for (s = 0; s < nsrc; s++)
		{
			int			n = (int) fst_rand_range(&rng, 40);

			kvs_init(&src[s]);
			for (i = 0; i < n; i++)
			{
				char		uk[8];
				uint8		fl = fst_rand_range(&rng, 4) == 0 ?
					FST_ENTRY_TOMBSTONE : 0;

				snprintf(uk, sizeof(uk), "k%02d", (int) fst_rand_range(&rng, 30));
				kvs_add(&src[s], uk, seq, fl, fl ? NULL : uk);
				kvs_add(&all, uk, seq, fl, fl ? NULL : uk);
				seq++;
			}
			kvs_sort(&src[s]);
		}
		kvs_sort(&all);

		for (s = 0; s < nsrc; s++)
			ch[s] = kvs_iter(&src[s]);
		it = fst_merge_iter_create(ch, nsrc);
		fst_iter_seek_first(it);
		for (i = 0; i < all.n; i++)
		{
			CHECK_MSG(fst_iter_valid(it), "round %d entry %d", round, i);
			CHECK(fst_ikey_cmp(fst_iter_key(it), all.kv[i].key) == 0);
			fst_iter_next(it);
		}
		CHECK(!fst_iter_valid(it));
		/* seek to random targets */
		for (i = 0; i < 20 && all.n > 0; i++)
		{
			char		buf[64];
			char		uk[8];
			FstSlice	t;
			int			j;

			snprintf(uk, sizeof(uk), "k%02d", (int) fst_rand_range(&rng, 31));
			t = kvs_target(buf, uk, fst_rand_range(&rng, seq + 1));
			fst_iter_seek(it, t);
			for (j = 0; j < all.n && fst_ikey_cmp(all.kv[j].key, t) < 0; j++)
				;
			if (j == all.n)
				CHECK(!fst_iter_valid(it));
			else
				CHECK(fst_iter_valid(it) &&
					  fst_ikey_cmp(fst_iter_key(it), all.kv[j].key) == 0);
		}
		fst_iter_destroy(it);

		/* visible view as of a random sequence */
		max_seq = fst_rand_range(&rng, seq + 1);
		for (s = 0; s < nsrc; s++)
			ch[s] = kvs_iter(&src[s]);
		it = fst_visible_iter_create(fst_merge_iter_create(ch, nsrc),
									 max_seq, NULL, NULL);
		fst_iter_seek_first(it);
		for (i = 0; i < all.n;)
		{
			FstSlice	up = fst_ikey_user_part(all.kv[i].key);
			int			j = i;
			int			pick = -1;

			for (; j < all.n && fst_slice_cmp(fst_ikey_user_part(all.kv[j].key), up) == 0; j++)
				if (pick < 0 && fst_ikey_seq(all.kv[j].key) <= max_seq)
					pick = j;
			if (pick >= 0 && !(all.kv[pick].value.data[0] & FST_ENTRY_TOMBSTONE))
			{
				CHECK_MSG(fst_iter_valid(it), "round %d", round);
				CHECK(fst_ikey_cmp(fst_iter_key(it), all.kv[pick].key) == 0);
				fst_iter_next(it);
			}
			i = j;
		}
		CHECK(!fst_iter_valid(it));
		CHECK_OK(fst_iter_status(it, &err), &err);
		fst_iter_destroy(it);

		for (s = 0; s < nsrc; s++)
			kvs_free(&src[s]);
		kvs_free(&all);
	}
}
