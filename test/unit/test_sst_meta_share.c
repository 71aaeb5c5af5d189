/*
 * test_sst_meta_share.c — the reader's shared metadata hooks
 * (FstSstReadOptions.meta_get / meta_put / meta_release): a second reader
 * of a file takes the bloom filter, index and fences the first one put
 * instead of reading or building its own, answers every lookup as a reader
 * without the store does, holds a pin on each until it closes, and a store
 * that refuses leaves the reader its own copies.
 */
#include "sst_testutil.h"

/* A toy store, as shared memory holds the entries: (id, kind) -> bytes. */
typedef struct ToyMeta
{
	uint64		id[8];
	int			kind[8];
	uint64		check[8];
	char	   *data[8];
	size_t		len[8];
	int			pins[8];
	int			n;
	int			gets;
	int			hits;
	int			puts;
	bool		refuse;
} ToyMeta;

static int
toy_find(ToyMeta *t, uint64 id, int kind)
{
	int			i;

	for (i = 0; i < t->n; i++)
		if (t->id[i] == id && t->kind[i] == kind)
			return i;
	return -1;
}

static const char *
toy_meta_get(void *arg, uint64 id, int kind, uint64 check, size_t len,
			 uint64 *handle)
{
	ToyMeta    *t = arg;
	int			i = toy_find(t, id, kind);

	t->gets++;
	if (i < 0 || t->check[i] != check || t->len[i] != len)
		return NULL;
	t->hits++;
	t->pins[i]++;
	*handle = (uint64) i;
	return t->data[i];
}

static const char *
toy_meta_put(void *arg, uint64 id, int kind, uint64 check, const char *data,
			 size_t len, uint64 *handle)
{
	ToyMeta    *t = arg;
	int			i;

	t->puts++;
	if (t->refuse || t->n == 8 || toy_find(t, id, kind) >= 0)
		return NULL;
	i = t->n++;
	t->id[i] = id;
	t->kind[i] = kind;
	t->check[i] = check;
	t->data[i] = fst_malloc(len);
	memcpy(t->data[i], data, len);
	t->len[i] = len;
	t->pins[i] = 1;
	*handle = (uint64) i;
	return t->data[i];
}

static void
toy_meta_release(void *arg, uint64 handle)
{
	ToyMeta    *t = arg;

	t->pins[handle]--;
}

static int
toy_pins(const ToyMeta *t)
{
	int			i,
				n = 0;

	for (i = 0; i < t->n; i++)
		n += t->pins[i];
	return n;
}

/*
 * Counts the keys of 0..n-1 the filter lets by, and misses it lets by;
 * point reads of every 10th key through fst_sst_peek (index and fences)
 * must find its version.
 */
static void
probe(FstSstReader *r, const TestEntry *ents, int n, int *mays, int *misses_passed)
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
	for (i = 0; i < n; i += 10)
	{
		FstGetResult res;
		FstEntryHeader hdr;
		FstBuf		val;

		fst_buf_init(&val);
		CHECK_OK(fst_sst_get(r, fst_ikey_user_part(fst_slice(ents[i].key, ents[i].klen)),
							 FST_MAX_SEQ, NULL, NULL, &res, &hdr, &val, &err), &err);
		CHECK(res == FST_GET_FOUND && hdr.xid == (uint32) (1000 + i));
		fst_buf_free(&val);
	}
}

FST_TEST(sst_meta_share_hooks)
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
	ToyMeta    *toy = fst_calloc(1, sizeof(ToyMeta));
	int			mays0,
				passed0,
				mays,
				passed,
				f,
				x;
	size_t		mem_plain,
				mem_shared;
	int			i;

	fst_sst_options_default(&o);
	o.block_size = 512;			/* an index of many entries */
	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 10, 8);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, false);

	/* without the store: the answers every reader must give */
	CHECK_OK(fst_sst_open(src, NULL, &plain, &err), &err);
	probe(plain, ents, n, &mays0, &passed0);
	CHECK_EQ_INT(mays0, n);
	mem_plain = fst_sst_memory(plain);

	fst_sst_read_options_default(&ro);
	ro.cache_id = 7;
	ro.meta_get = toy_meta_get;
	ro.meta_put = toy_meta_put;
	ro.meta_release = toy_meta_release;
	ro.shared_arg = toy;

	/* the first reader finds nothing and puts filter, index and fences */
	CHECK_OK(fst_sst_open(src, &ro, &r1, &err), &err);
	probe(r1, ents, n, &mays, &passed);
	CHECK(mays == mays0 && passed == passed0);
	CHECK_EQ_INT(toy->n, 3);
	CHECK(toy_find(toy, 7, FST_META_FILTER) >= 0 && toy_find(toy, 7, FST_META_INDEX) >= 0 &&
		  toy_find(toy, 7, FST_META_FENCES) >= 0);
	CHECK_EQ_INT(toy_pins(toy), 3);
	CHECK_EQ_INT(fst_sst_reader_stats(r1)->filter_shared, 1);
	CHECK_EQ_INT(fst_sst_reader_stats(r1)->index_shared, 1);
	CHECK_EQ_INT(fst_sst_reader_stats(r1)->filter_loads, 1);
	mem_shared = fst_sst_memory(r1);
	f = toy_find(toy, 7, FST_META_FILTER);
	x = toy_find(toy, 7, FST_META_INDEX);
	CHECK_MSG(mem_plain - mem_shared == toy->len[f] + toy->len[x] +
			  toy->len[toy_find(toy, 7, FST_META_FENCES)],
			  "shared metadata is not the reader's memory (%zu vs %zu)",
			  mem_plain, mem_shared);

	/* a second reader takes all three: it reads no filter of its own */
	CHECK_OK(fst_sst_open(src, &ro, &r2, &err), &err);
	probe(r2, ents, n, &mays, &passed);
	CHECK(mays == mays0 && passed == passed0);
	CHECK_EQ_INT(fst_sst_reader_stats(r2)->filter_loads, 0);
	CHECK_EQ_INT(fst_sst_reader_stats(r2)->filter_shared, 1);
	CHECK_EQ_INT(fst_sst_reader_stats(r2)->index_shared, 1);
	CHECK_EQ_INT(toy->hits, 3);
	CHECK(toy->n == 3 && toy_pins(toy) == 6);

	/* another file under another id finds nothing, and is refused */
	toy->refuse = true;
	ro.cache_id = 8;
	CHECK_OK(fst_sst_open(src, &ro, &r3, &err), &err);
	probe(r3, ents, n, &mays, &passed);
	CHECK(mays == mays0 && passed == passed0);
	CHECK_EQ_INT(fst_sst_reader_stats(r3)->filter_shared, 0);
	CHECK_EQ_INT(fst_sst_reader_stats(r3)->index_shared, 0);
	CHECK(fst_sst_memory(r3) == mem_plain);

	/* pins go with their readers */
	fst_sst_close(r3);
	CHECK_EQ_INT(toy_pins(toy), 6);
	fst_sst_close(r1);
	CHECK_EQ_INT(toy_pins(toy), 3);
	fst_sst_close(r2);
	CHECK_EQ_INT(toy_pins(toy), 0);

	fst_sst_close(plain);
	fst_range_close(src);
	fst_buf_free(&file);
	for (i = 0; i < toy->n; i++)
		fst_free(toy->data[i]);
	fst_free(toy);
	fst_free(ents);
}
