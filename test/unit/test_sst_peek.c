/*
 * test_sst_peek.c — fst_sst_peek: point reads from a block already decoded
 * in the reader's block cache or in a shared cache (shared_peek), checked
 * against an iterator and fst_sst_read_at; an overwritten or damaged shared
 * block sends the caller to the ordinary path, never to a wrong answer.
 */
#include "sst_testutil.h"
#include "blockcache.h"

/* A toy shared cache with shared_get/put/peek (up to 512 blocks). */
typedef struct PeekToy
{
	uint64		id[512];
	uint64		off[512];
	char	   *data[512];
	size_t		len[512];
	int			n;
	int			peeks;
	bool		overwritten;	/* report every peek as overwritten */
	bool		damage;			/* damage the bytes peeked */
} PeekToy;

static int
toy_find(PeekToy *t, uint64 id, uint64 off)
{
	int			i;

	for (i = 0; i < t->n; i++)
		if (t->id[i] == id && t->off[i] == off)
			return i;
	return -1;
}

static bool
toy_get(void *arg, uint64 id, uint64 off, char **data, size_t *len)
{
	PeekToy    *t = arg;
	int			i = toy_find(t, id, off);

	if (i < 0)
		return false;
	*data = fst_malloc(t->len[i]);
	memcpy(*data, t->data[i], t->len[i]);
	*len = t->len[i];
	return true;
}

static bool
toy_put(void *arg, uint64 id, uint64 off, const char *data, size_t len)
{
	PeekToy    *t = arg;

	if (toy_find(t, id, off) >= 0)
		return true;
	if (t->n == 512)
		return false;
	t->id[t->n] = id;
	t->off[t->n] = off;
	t->data[t->n] = fst_malloc(len);
	memcpy(t->data[t->n], data, len);
	t->len[t->n] = len;
	t->n++;
	return true;
}

static bool
toy_peek(void *arg, uint64 id, uint64 off,
		 bool (*fn) (void *fnarg, const char *data, size_t len), void *fnarg)
{
	PeekToy    *t = arg;
	int			i = toy_find(t, id, off);
	char	   *bytes;
	bool		ok;

	if (i < 0)
		return false;
	t->peeks++;
	bytes = fst_malloc(t->len[i]);
	memcpy(bytes, t->data[i], t->len[i]);
	if (t->damage)
	{
		size_t		j;

		/* what a half-overwritten block may look like */
		for (j = 0; j < t->len[i]; j += 3)
			bytes[j] = (char) (bytes[j] ^ 0x5a);
	}
	ok = fn(fnarg, bytes, t->len[i]);
	fst_free(bytes);
	return ok && !t->overwritten && !t->damage;
}

/* key "u%05d": key i has 1 + i % 3 versions, seq descending */
static int
build_entries(TestEntry *e, int nkeys)
{
	int			n = 0;
	int			i,
				v;

	for (i = 0; i < nkeys; i++)
	{
		char		ukey[16];
		int			nv = 1 + i % 3;

		snprintf(ukey, sizeof(ukey), "u%05d", i * 2);	/* odd ones are absent */
		for (v = 0; v < nv; v++)
		{
			char		payload[40];

			snprintf(payload, sizeof(payload), "p%d-%d-%s", i, v, "xxxxxxxxxxxxxxxx");
			test_entry_make(&e[n++], 3, ukey, 6, (uint64) (1000 - v * 10 + i),
							FST_ENTRY_COMMITTED, (uint32) (100 + v), payload,
							strlen(payload));
		}
	}
	return n;
}

static void
target_for(int k, char *up, char *target)
{
	char		ukey[16];

	snprintf(ukey, sizeof(ukey), "u%05d", k);
	fst_put_be16(up, 3);
	memcpy(up + 2, ukey, 6);
	memcpy(target, up, 8);
	fst_put_be64(target + 8, FST_MAX_SEQ);
}

/*
 * Every key, present or absent: a peek that answers gives exactly the
 * versions an iterator finds, at the positions fst_sst_read_at reads.
 * Returns how many peeks answered.
 */
static int
check_all_keys(FstSstReader *r, int nkeys, int *failures)
{
	FstSstPeek *pk = fst_malloc(sizeof(FstSstPeek));
	FstIter    *it = fst_sst_iter_create(r);
	FstBuf		kb,
				vb;
	FstError	err;
	int			answered = 0;
	int			k;

	fst_buf_init(&kb);
	fst_buf_init(&vb);
	for (k = 0; k < nkeys * 2; k++)
	{
		char		up[8],
					target[16];
		int			j = 0;

		target_for(k, up, target);
		if (!fst_sst_peek(r, fst_slice(target, 16), fst_slice(up, 8), pk))
			continue;
		answered++;
		for (fst_iter_seek(it, fst_slice(target, 16)); fst_iter_valid(it); fst_iter_next(it), j++)
		{
			FstSlice	key = fst_iter_key(it);

			if (fst_slice_cmp(fst_ikey_user_part(key), fst_slice(up, 8)) != 0)
				break;
			if (j >= pk->nversions ||
				fst_slice_cmp(pk->v[j].key, key) != 0 ||
				fst_slice_cmp(pk->v[j].value, fst_iter_value(it)) != 0)
			{
				(*failures)++;
				break;
			}
			if (fst_sst_read_at(r, pk->block_no, pk->v[j].entry_no, &kb, &vb, &err) != FST_OK ||
				fst_slice_cmp(fst_slice(kb.data, kb.len), key) != 0)
				(*failures)++;
		}
		if (j != pk->nversions || (k % 2 == 1 && j != 0) ||
			(k % 2 == 0 && j != 1 + (k / 2) % 3))
			(*failures)++;
	}
	fst_iter_destroy(it);
	fst_buf_free(&kb);
	fst_buf_free(&vb);
	fst_free(pk);
	return answered;
}

FST_TEST(sst_peek_matches_iterator)
{
	int			nkeys = 600;
	TestEntry  *e = fst_calloc(nkeys * 3, sizeof(TestEntry));
	FstSstOptions o;
	FstSstReadOptions ro;
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstBlockCache *cache = fst_block_cache_create(1 << 20);
	PeekToy    *toy = fst_calloc(1, sizeof(PeekToy));
	FstSstPeek *pk = fst_malloc(sizeof(FstSstPeek));
	FstIter    *it;
	char		up[8],
				target[16];
	int			n,
				failures = 0,
				answered;

	fst_sst_options_default(&o);
	o.block_size = 512;
	o.restart_interval = 4;
	n = build_entries(e, nkeys);
	CHECK_OK(test_build_sst(e, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, true);
	fst_buf_free(&file);

	/* the reader's own cache */
	fst_sst_read_options_default(&ro);
	ro.cache = cache;
	ro.cache_id = 1;
	CHECK_OK(fst_sst_open(src, &ro, &r, &err), &err);
	target_for(10, up, target);
	CHECK(!fst_sst_peek(r, fst_slice(target, 16), fst_slice(up, 8), pk));	/* nothing cached */
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
		;
	fst_iter_destroy(it);
	answered = check_all_keys(r, nkeys, &failures);
	CHECK_EQ_INT(failures, 0);
	/* keys whose versions end a block go the ordinary way; most do not */
	CHECK_MSG(answered > nkeys * 2 * 3 / 4, "only %d of %d peeks answered", answered, nkeys * 2);
	fst_sst_close(r);

	/* a shared cache only, filled by another reader */
	fst_sst_read_options_default(&ro);
	ro.cache_id = 2;
	ro.shared_get = toy_get;
	ro.shared_put = toy_put;
	ro.shared_peek = toy_peek;
	ro.shared_arg = toy;
	CHECK_OK(fst_sst_open(src, &ro, &r, &err), &err);
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
		;
	fst_iter_destroy(it);
	CHECK(toy->n > 10);
	answered = check_all_keys(r, nkeys, &failures);
	CHECK_EQ_INT(failures, 0);
	CHECK_MSG(answered > nkeys * 2 * 3 / 4, "only %d of %d shared peeks answered", answered, nkeys * 2);
	CHECK(toy->peeks >= answered);

	/* overwritten meanwhile, or damaged: no answer, no crash */
	toy->overwritten = true;
	CHECK_EQ_INT(check_all_keys(r, nkeys, &failures), 0);
	toy->overwritten = false;
	toy->damage = true;
	CHECK_EQ_INT(check_all_keys(r, nkeys, &failures), 0);
	CHECK_EQ_INT(failures, 0);
	fst_sst_close(r);

	fst_range_close(src);
	fst_block_cache_destroy(cache);
	for (n = 0; n < toy->n; n++)
		fst_free(toy->data[n]);
	fst_free(toy);
	fst_free(pk);
	fst_free(e);
}

/*
 * The index fences hold 16 bytes of each user part: keys that share more
 * than that are told apart by whole-key compares among equal fences.  Keys
 * "<20 common bytes><5 digits>" (even ones present), several files' worth
 * of index entries with equal fences; every key, absent ones and keys
 * before the first and after the last included, peeks the same versions
 * as an iterator finds.
 */
FST_TEST(sst_peek_long_keys_equal_fences)
{
	int			nkeys = 800;
	TestEntry  *e = fst_calloc(nkeys, sizeof(TestEntry));
	FstSstOptions o;
	FstSstReadOptions ro;
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstBlockCache *cache = fst_block_cache_create(4 << 20);
	FstSstPeek *pk = fst_malloc(sizeof(FstSstPeek));
	FstIter    *it;
	const char *common = "tenant-0042/session/";	/* 20 bytes */
	int			i,
				answered = 0,
				failures = 0;

	for (i = 0; i < nkeys; i++)
	{
		char		ukey[32];

		snprintf(ukey, sizeof(ukey), "%s%05d", common, i * 2);
		test_entry_make(&e[i], 7, ukey, 25, (uint64) (500 + i), FST_ENTRY_COMMITTED,
						9, "payload-of-some-length", 22);
	}
	fst_sst_options_default(&o);
	o.block_size = 256;
	o.restart_interval = 2;
	CHECK_OK(test_build_sst(e, nkeys, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, true);
	fst_buf_free(&file);
	fst_sst_read_options_default(&ro);
	ro.cache = cache;
	ro.cache_id = 1;
	CHECK_OK(fst_sst_open(src, &ro, &r, &err), &err);
	CHECK(fst_sst_props(r)->num_data_blocks > 50);
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
		;
	for (i = -3; i < nkeys * 2 + 3; i++)
	{
		char		ukey[32],
					up[40],
					target[48];
		int			j = 0;

		if (i < 0)
			snprintf(ukey, sizeof(ukey), "%s", i == -1 ? "" : i == -2 ? "a" : "tenant-0042/sess");
		else
			snprintf(ukey, sizeof(ukey), "%s%05d", common, i);
		fst_put_be16(up, 7);
		memcpy(up + 2, ukey, strlen(ukey));
		memcpy(target, up, 2 + strlen(ukey));
		fst_put_be64(target + 2 + strlen(ukey), FST_MAX_SEQ);
		if (!fst_sst_peek(r, fst_slice(target, 10 + strlen(ukey)),
						  fst_slice(up, 2 + strlen(ukey)), pk))
			continue;
		answered++;
		for (fst_iter_seek(it, fst_slice(target, 10 + strlen(ukey))); fst_iter_valid(it);
			 fst_iter_next(it), j++)
		{
			FstSlice	key = fst_iter_key(it);

			if (fst_slice_cmp(fst_ikey_user_part(key), fst_slice(up, 2 + strlen(ukey))) != 0)
				break;
			if (j >= pk->nversions || fst_slice_cmp(pk->v[j].key, key) != 0 ||
				fst_slice_cmp(pk->v[j].value, fst_iter_value(it)) != 0)
				failures++;
		}
		if (j != pk->nversions || (i >= 0 && i < nkeys * 2 && j != (i % 2 == 0 ? 1 : 0)))
			failures++;
	}
	CHECK_EQ_INT(failures, 0);
	CHECK_MSG(answered > nkeys * 3 / 2, "only %d peeks answered", answered);
	fst_iter_destroy(it);
	fst_sst_close(r);
	fst_range_close(src);
	fst_block_cache_destroy(cache);
	fst_free(pk);
	fst_free(e);
}
