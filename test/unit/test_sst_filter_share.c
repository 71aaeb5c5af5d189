/*
 * test_sst_filter_share.c — the reader's shared filter hooks
 * (FstSstReadOptions.filter_get / filter_put / filter_release): a second
 * reader of a file takes the filter the first one put instead of reading
 * its own, answers every lookup as a reader without the store does, holds
 * a pin until it closes, and a store that refuses leaves the reader its
 * own copy.
 */
#include "sst_testutil.h"

/* A toy store of one filter, as shared memory holds them. */
typedef struct ToyFilters
{
	uint64		id;
	uint64		offset;
	char	   *data;
	size_t		len;
	int			pins;
	int			gets;
	int			puts;
	bool		refuse;
} ToyFilters;

static const char *
toy_filter_get(void *arg, uint64 id, uint64 offset, size_t len, uint64 *handle)
{
	ToyFilters *t = arg;

	t->gets++;
	if (t->data == NULL || t->id != id || t->offset != offset || t->len != len)
		return NULL;
	t->pins++;
	*handle = 42;
	return t->data;
}

static const char *
toy_filter_put(void *arg, uint64 id, uint64 offset, const char *data,
			   size_t len, uint64 *handle)
{
	ToyFilters *t = arg;

	t->puts++;
	if (t->refuse || t->data != NULL)
		return NULL;
	t->data = fst_malloc(len);
	memcpy(t->data, data, len);
	t->id = id;
	t->offset = offset;
	t->len = len;
	t->pins++;
	*handle = 42;
	return t->data;
}

static void
toy_filter_release(void *arg, uint64 handle)
{
	ToyFilters *t = arg;

	if (handle == 42)
		t->pins--;
}

/* Counts the keys of 0..n-1 (hits) and of misses the filter answers "may". */
static void
probe(FstSstReader *r, int n, int *mays, int *misses_passed)
{
	FstError	err;
	int			i;
	bool		may;

	*mays = *misses_passed = 0;
	for (i = 0; i < n; i++)
	{
		char		k[24];
		int			kl;

		fst_put_be16(k, 0);
		kl = snprintf(k + 2, sizeof(k) - 2, "key%08d", i) + 2;
		CHECK_OK(fst_sst_may_contain(r, fst_slice(k, kl), &may, &err), &err);
		*mays += may;
		kl = snprintf(k + 2, sizeof(k) - 2, "miss%d", i) + 2;
		CHECK_OK(fst_sst_may_contain(r, fst_slice(k, kl), &may, &err), &err);
		*misses_passed += may;
	}
}

FST_TEST(sst_filter_share_hooks)
{
	int			n = 5000;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o;
	FstSstReadOptions ro;
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *plain,
			   *r1,
			   *r2,
			   *r3;
	ToyFilters *toy = fst_calloc(1, sizeof(ToyFilters));
	int			mays0,
				passed0,
				mays,
				passed;
	size_t		mem_plain,
				mem_shared;
	int			i;

	fst_sst_options_default(&o);
	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 10, 8);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, false);

	/* without the store: the answers every reader must give */
	CHECK_OK(fst_sst_open(src, NULL, &plain, &err), &err);
	probe(plain, n, &mays0, &passed0);
	CHECK_EQ_INT(mays0, n);
	mem_plain = fst_sst_memory(plain);

	fst_sst_read_options_default(&ro);
	ro.cache_id = 7;
	ro.filter_get = toy_filter_get;
	ro.filter_put = toy_filter_put;
	ro.filter_release = toy_filter_release;
	ro.shared_arg = toy;

	/* the first reader finds nothing, reads the filter and puts it */
	CHECK_OK(fst_sst_open(src, &ro, &r1, &err), &err);
	probe(r1, n, &mays, &passed);
	CHECK(mays == mays0 && passed == passed0);
	CHECK(toy->puts == 1 && toy->data != NULL && toy->pins == 1);
	CHECK_EQ_INT(fst_sst_reader_stats(r1)->filter_shared, 1);
	CHECK_EQ_INT(fst_sst_reader_stats(r1)->filter_loads, 1);
	mem_shared = fst_sst_memory(r1);
	CHECK_MSG(mem_plain - mem_shared == toy->len,
			  "a shared filter is not the reader's memory (%zu vs %zu, filter %zu)",
			  mem_plain, mem_shared, toy->len);

	/* a second reader takes it: it reads no filter of its own */
	CHECK_OK(fst_sst_open(src, &ro, &r2, &err), &err);
	probe(r2, n, &mays, &passed);
	CHECK(mays == mays0 && passed == passed0);
	CHECK_EQ_INT(fst_sst_reader_stats(r2)->filter_loads, 0);
	CHECK_EQ_INT(fst_sst_reader_stats(r2)->filter_shared, 1);
	CHECK(toy->puts == 1 && toy->pins == 2);

	/* another file under another id finds nothing, and is refused */
	toy->refuse = true;
	ro.cache_id = 8;
	CHECK_OK(fst_sst_open(src, &ro, &r3, &err), &err);
	probe(r3, n, &mays, &passed);
	CHECK(mays == mays0 && passed == passed0);
	CHECK_EQ_INT(fst_sst_reader_stats(r3)->filter_shared, 0);
	CHECK_EQ_INT(fst_sst_reader_stats(r3)->filter_loads, 1);
	CHECK(fst_sst_memory(r3) == mem_plain);

	/* pins go with their readers */
	fst_sst_close(r3);
	CHECK_EQ_INT(toy->pins, 2);
	fst_sst_close(r1);
	CHECK_EQ_INT(toy->pins, 1);
	fst_sst_close(r2);
	CHECK_EQ_INT(toy->pins, 0);

	fst_sst_close(plain);
	fst_range_close(src);
	fst_buf_free(&file);
	fst_free(toy->data);
	fst_free(toy);
	fst_free(ents);
}
