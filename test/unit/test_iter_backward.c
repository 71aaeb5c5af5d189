/*
 * test_iter_backward.c — every sorted source of the engine read backward
 * (seek_last, seek_before, prev) and with the directions mixed, against a
 * sorted reference array: the array iterator, an SST file of many small
 * blocks, a memtable, a level of files, and a merge of all of them.
 *
 * Keys come from three key groups and a two-letter alphabet, so that many
 * user keys are prefixes of others, with several versions each.
 */
#include "memtable_testutil.h"
#include "level_iter.h"
#include "merge_iter.h"
#include "rangesrc.h"

#define BW_ENTRIES	600
#define BW_FILES	3

typedef struct BwRef
{
	TestEntry  *e;				/* sorted by fst_ikey_cmp */
	int			n;
} BwRef;

static FstSlice
bw_key(const TestEntry *e)
{
	return fst_slice(e->key, e->klen);
}

/* Entries with random user keys and unique sequences, sorted. */
static void
bw_make(BwRef *ref, uint64 *rng)
{
	int			i;

	ref->n = BW_ENTRIES;
	ref->e = fst_calloc(ref->n, sizeof(TestEntry));
	for (i = 0; i < ref->n; i++)
	{
		char		ukey[8];
		int			len = 1 + (int) fst_rand_range(rng, 5);
		int			j;
		char		payload[16];

		for (j = 0; j < len; j++)
			ukey[j] = fst_rand_range(rng, 2) ? 'a' : 'b';
		snprintf(payload, sizeof(payload), "v%d", i);
		test_entry_make(&ref->e[i], (uint16) fst_rand_range(rng, 3), ukey, len,
						(uint64) (i + 1) * 3, FST_ENTRY_COMMITTED, 7,
						payload, strlen(payload));
	}
	qsort(ref->e, ref->n, sizeof(TestEntry), cmp_test_entry);
}

/* Whether it is at reference entry i (i outside [0, n): not valid). */
static bool
bw_at(FstIter *it, const BwRef *ref, int i)
{
	if (i < 0 || i >= ref->n)
		return !fst_iter_valid(it);
	return fst_iter_valid(it) &&
		fst_slice_cmp(fst_iter_key(it), bw_key(&ref->e[i])) == 0 &&
		fst_slice_cmp(fst_iter_value(it),
					  fst_slice(ref->e[i].val, ref->e[i].vlen)) == 0;
}

/* The first reference entry >= target (n if none). */
static int
bw_lower_bound(const BwRef *ref, FstSlice target)
{
	int			i = 0;

	while (i < ref->n && fst_ikey_cmp(bw_key(&ref->e[i]), target) < 0)
		i++;
	return i;
}

/*
 * A target near entry i: its own key, or its user part with the largest
 * or the smallest sequence (before and after all of its versions).
 */
static FstSlice
bw_target(const BwRef *ref, int i, int kind, char *buf)
{
	FstSlice	k = bw_key(&ref->e[i]);
	size_t		uplen = k.len - FST_SEQ_BYTES;

	if (kind == 0)
		return k;
	memcpy(buf, k.data, uplen);
	fst_put_be64(buf + uplen, kind == 1 ? FST_MAX_SEQ : 0);
	return fst_slice(buf, uplen + FST_SEQ_BYTES);
}

/*
 * Checks it (over exactly the reference's entries) forward, backward,
 * positioned by every kind of seek, and on random walks that turn around.
 */
static void
bw_check(FstIter *it, const BwRef *ref, uint64 *rng, const char *what)
{
	FstError	err;
	char		buf[80];
	int			i,
				kind,
				walk;

	fst_iter_seek_first(it);
	for (i = 0; i < ref->n; i++, fst_iter_next(it))
		CHECK_MSG(bw_at(it, ref, i), "%s: forward at %d", what, i);
	CHECK_MSG(!fst_iter_valid(it), "%s: forward past the end", what);

	fst_iter_seek_last(it);
	for (i = ref->n - 1; i >= 0; i--, fst_iter_prev(it))
		CHECK_MSG(bw_at(it, ref, i), "%s: backward at %d", what, i);
	CHECK_MSG(!fst_iter_valid(it), "%s: backward past the start", what);
	fst_iter_prev(it);
	CHECK_MSG(!fst_iter_valid(it), "%s: prev when not valid", what);
	CHECK_OK(fst_iter_status(it, &err), &err);

	for (i = 0; i < ref->n; i++)
		for (kind = 0; kind < 3; kind++)
		{
			FstSlice	t = bw_target(ref, i, kind, buf);
			int			lb = bw_lower_bound(ref, t);

			fst_iter_seek(it, t);
			CHECK_MSG(bw_at(it, ref, lb), "%s: seek to target %d/%d", what, i, kind);
			fst_iter_seek_before(it, t);
			CHECK_MSG(bw_at(it, ref, lb - 1), "%s: seek_before target %d/%d", what, i, kind);
		}

	for (walk = 0; walk < 200; walk++)
	{
		int			step;
		int			pos;

		i = (int) fst_rand_range(rng, (uint64) ref->n);
		kind = (int) fst_rand_range(rng, 3);
		if (fst_rand_range(rng, 2))
		{
			fst_iter_seek(it, bw_target(ref, i, kind, buf));
			pos = bw_lower_bound(ref, bw_target(ref, i, kind, buf));
		}
		else
		{
			fst_iter_seek_before(it, bw_target(ref, i, kind, buf));
			pos = bw_lower_bound(ref, bw_target(ref, i, kind, buf)) - 1;
		}
		for (step = 0; step < 12 && pos >= 0 && pos < ref->n; step++)
		{
			CHECK_MSG(bw_at(it, ref, pos), "%s: walk %d step %d at %d", what, walk, step, pos);
			if (fst_rand_range(rng, 2))
			{
				fst_iter_next(it);
				pos++;
			}
			else
			{
				fst_iter_prev(it);
				pos--;
			}
		}
		CHECK_MSG(bw_at(it, ref, pos), "%s: walk %d ends at %d", what, walk, pos);
	}
	CHECK_OK(fst_iter_status(it, &err), &err);
}

/* An SST file of entries[0..n-1] with blocks of a few entries. */
static FstIter *
bw_sst(const TestEntry *ents, int n, FstBuf *file, FstRangeSource **src,
	   FstSstReader **r)
{
	FstSstOptions opt;
	FstSstProps props;
	FstError	err;

	fst_sst_options_default(&opt);
	opt.block_size = 256;
	opt.restart_interval = 3;
	fst_sst_props_init(&props);
	if (test_build_sst(ents, n, &opt, file, &props, &err) != FST_OK)
	{
		fprintf(stderr, "test_build_sst: %s\n", err.msg);
		abort();
	}
	fst_sst_props_free(&props);
	*src = fst_range_source_memory(file->data, file->len, false);
	if (fst_sst_open(*src, NULL, r, &err) != FST_OK)
		abort();
	return fst_sst_iter_create(*r);
}

FST_TEST(iter_backward_array_sst_memtable)
{
	uint64		rng = fst_test_seed() ^ 0x5eed;
	BwRef		ref;
	FstKV	   *kvs;
	FstIter    *it;
	FstBuf		file;
	FstRangeSource *src;
	FstSstReader *r;
	FstMemtable *mt;
	FstError	err;
	int			i;

	bw_make(&ref, &rng);
	kvs = fst_calloc(ref.n, sizeof(FstKV));
	for (i = 0; i < ref.n; i++)
	{
		kvs[i].key = bw_key(&ref.e[i]);
		kvs[i].value = fst_slice(ref.e[i].val, ref.e[i].vlen);
	}
	it = fst_array_iter_create(kvs, ref.n);
	bw_check(it, &ref, &rng, "array");
	fst_iter_destroy(it);

	it = bw_sst(ref.e, ref.n, &file, &src, &r);
	CHECK(fst_sst_props(r)->num_data_blocks > 10);
	bw_check(it, &ref, &rng, "sst");
	fst_iter_destroy(it);
	fst_sst_close(r);
	fst_range_close(src);
	fst_buf_free(&file);

	mt = test_mt_create(1 << 20, rng);
	CHECK(mt != NULL);
	for (i = 0; i < ref.n; i++)
	{
		/* in an order unlike the key order */
		int			j = (int) (((uint64) i * 7919) % (uint64) ref.n);

		CHECK_OK(mt_put(mt, &ref.e[j], NULL, &err), &err);
	}
	it = fst_memtable_iter_create(mt);
	bw_check(it, &ref, &rng, "memtable");
	fst_iter_destroy(it);
	/* an empty memtable has no last entry */
	test_mt_free(mt);
	mt = test_mt_create(1 << 16, rng);
	it = fst_memtable_iter_create(mt);
	fst_iter_seek_last(it);
	CHECK(!fst_iter_valid(it));
	fst_iter_seek_before(it, bw_key(&ref.e[0]));
	CHECK(!fst_iter_valid(it));
	fst_iter_destroy(it);
	test_mt_free(mt);
	fst_free(kvs);
	fst_free(ref.e);
}

/* The files of a level: array iterators over consecutive slices. */
typedef struct BwLevel
{
	FstKV	   *kvs;
	int			start[BW_FILES + 1];
	FstFileMeta meta[BW_FILES];
	const FstFileMeta *files[BW_FILES];
} BwLevel;

static FstIter *
bw_level_open(void *arg, int i, FstError *err)
{
	BwLevel    *lv = arg;

	return fst_array_iter_create(lv->kvs + lv->start[i],
								 (size_t) (lv->start[i + 1] - lv->start[i]));
}

FST_TEST(iter_backward_merge_of_every_source)
{
	uint64		rng = fst_test_seed() ^ 0xbacc;
	BwRef		ref;
	TestEntry  *part[3];
	int			npart[3] = {0, 0, 0};
	BwLevel		lv;
	int			nlv = 0;
	FstBuf		file[2];
	FstRangeSource *src[2];
	FstSstReader *r[2];
	FstIter    *children[4];
	FstIter    *it;
	FstMemtable *mt;
	FstError	err;
	int			i,
				f;

	bw_make(&ref, &rng);
	for (i = 0; i < 3; i++)
		part[i] = fst_calloc(ref.n, sizeof(TestEntry));
	lv.kvs = fst_calloc(ref.n, sizeof(FstKV));
	mt = test_mt_create(1 << 20, rng);
	CHECK(mt != NULL);
	/* each entry to one source: the memtable, two files, or the level */
	for (i = 0; i < ref.n; i++)
	{
		int			s = (int) fst_rand_range(&rng, 4);

		if (s == 0)
			CHECK_OK(mt_put(mt, &ref.e[i], NULL, &err), &err);
		else if (s < 3)
			part[s - 1][npart[s - 1]++] = ref.e[i];
		else
		{
			lv.kvs[nlv].key = bw_key(&ref.e[i]);
			lv.kvs[nlv].value = fst_slice(ref.e[i].val, ref.e[i].vlen);
			nlv++;
		}
	}
	CHECK(nlv >= BW_FILES);
	for (f = 0; f <= BW_FILES; f++)
		lv.start[f] = nlv * f / BW_FILES;
	for (f = 0; f < BW_FILES; f++)
	{
		memset(&lv.meta[f], 0, sizeof(FstFileMeta));
		if (!fst_filemeta_set_range(&lv.meta[f], lv.kvs[lv.start[f]].key,
									lv.kvs[lv.start[f + 1] - 1].key))
			abort();
		lv.files[f] = &lv.meta[f];
	}
	children[0] = fst_memtable_iter_create(mt);
	children[1] = bw_sst(part[0], npart[0], &file[0], &src[0], &r[0]);
	children[2] = bw_sst(part[1], npart[1], &file[1], &src[1], &r[1]);
	children[3] = fst_level_iter_create(lv.files, BW_FILES, bw_level_open, NULL, &lv);
	it = fst_merge_iter_create(children, 4);
	CHECK(it != NULL);
	bw_check(it, &ref, &rng, "merge");
	fst_iter_destroy(it);
	for (f = 0; f < 2; f++)
	{
		fst_sst_close(r[f]);
		fst_range_close(src[f]);
		fst_buf_free(&file[f]);
	}
	for (f = 0; f < BW_FILES; f++)
		fst_filemeta_clear(&lv.meta[f]);
	for (i = 0; i < 3; i++)
		fst_free(part[i]);
	fst_free(lv.kvs);
	test_mt_free(mt);
	fst_free(ref.e);
}

FST_TEST(iter_backward_visible_iter_refuses)
{
	FstError	err;
	FstIter    *it = fst_visible_iter_create(fst_merge_iter_create(NULL, 0),
											 FST_MAX_SEQ, NULL, NULL);

	fst_iter_seek_last(it);
	CHECK(!fst_iter_valid(it));
	CHECK_EQ_INT(fst_iter_status(it, &err), FST_INVALID_ARGUMENT);
	fst_iter_destroy(it);
}
