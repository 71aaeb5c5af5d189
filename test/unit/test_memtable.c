/*
 * test_memtable.c — the shared-memory skiplist memtable: round trips,
 * versions and visibility, refs and hints, FST_FULL, attaching at another
 * address, freezing, and a randomized comparison with a sorted reference.
 * Concurrency and speed: test_memtable_conc.c.
 */
#include "memtable_testutil.h"

typedef struct VisArg
{
	uint32		reject_xid;
	int			calls;
	uint32		last_ref;
	uint8		last_hint;
} VisArg;

static bool
vis_reject_xid(void *arg, FstMemtable *mt, const FstEntryHeader *h,
			   uint32 ref, uint8 hint)
{
	VisArg	   *v = arg;

	v->calls++;
	v->last_ref = ref;
	v->last_hint = hint;
	return h->xid != v->reject_xid && !(hint & FST_MT_HINT_ABORTED);
}

FST_TEST(memtable_roundtrip_versions_and_seek)
{
	/* inserted out of order; includes prefix-related keys and key groups */
	TestEntry	e[10];
	TestEntry	sorted[10];
	uint32		refs[10];
	FstMemtable *mt = test_mt_create(64 * 1024, fst_test_seed());
	FstError	err;
	FstIter    *it;
	FstGetResult res;
	FstEntryHeader hdr;
	FstSlice	val;
	FstMemtableStats st;
	VisArg		va;
	uint32		ref;
	char		up[16];
	char		k[32];
	size_t		kl;
	int			i,
				n = 10;

	CHECK(mt != NULL);
	test_entry_make(&e[0], 1, "abc", 3, 10, 0, 100, "abc10", 5);
	test_entry_make(&e[1], 1, "ab", 2, 11, 0, 101, "ab11", 4);
	test_entry_make(&e[2], 1, "ab", 2, 30, 0, 103, "ab30", 4);
	test_entry_make(&e[3], 1, "ab", 2, 20, FST_ENTRY_TOMBSTONE, 102, NULL, 0);
	test_entry_make(&e[4], 0, "zz", 2, 5, FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED, 7, "zz5", 3);
	test_entry_make(&e[5], 2, "", 0, 40, 0, 104, "empty40", 7);
	test_entry_make(&e[6], 1, "b", 1, 12, 0, 105, "b12", 3);
	test_entry_make(&e[7], 1, "a", 1, 13, 0, 106, "a13", 3);
	test_entry_make(&e[8], 1, "ab\0", 3, 14, 0, 107, "ab0-14", 6);
	test_entry_make(&e[9], 1, "abc", 3, 50, FST_ENTRY_SPECULATIVE, 108, "abc50", 5);
	for (i = 0; i < n; i++)
		CHECK_OK(mt_put(mt, &e[i], &refs[i], &err), &err);

	/* a scan yields fst_ikey_cmp order, with the refs insert returned */
	memcpy(sorted, e, sizeof(e));
	qsort(sorted, n, sizeof(TestEntry), cmp_test_entry);
	it = fst_memtable_iter_create(mt);
	CHECK(it != NULL);
	i = 0;
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it), i++)
	{
		FstSlice	ik = fst_iter_key(it);
		FstSlice	v = fst_iter_value(it);
		FstSlice	rk;
		int			j;

		CHECK(i < n);
		CHECK(ik.len == sorted[i].klen && memcmp(ik.data, sorted[i].key, ik.len) == 0);
		CHECK(v.len == sorted[i].vlen && memcmp(v.data, sorted[i].val, v.len) == 0);
		for (j = 0; j < n; j++)
			if (memcmp(e[j].key, ik.data, ik.len) == 0 && e[j].klen == ik.len)
				break;
		CHECK(j < n && refs[j] == fst_memtable_iter_ref(it));
		CHECK_OK(fst_memtable_entry(mt, refs[j], &rk, NULL, NULL, &err), &err);
		CHECK(rk.data == ik.data);
		CHECK(fst_memtable_iter_hint(it) == 0);
	}
	CHECK_OK(fst_iter_status(it, &err), &err);
	CHECK_EQ_INT(i, n);

	/* seek: at a key, between keys, between versions, past the end */
	kl = fst_ikey_build(k, 1, "ab", 2, 30);
	fst_iter_seek(it, fst_slice(k, kl));
	CHECK(fst_iter_valid(it) && fst_memtable_iter_ref(it) == refs[2]);
	kl = fst_ikey_build(k, 1, "ab", 2, 25);
	fst_iter_seek(it, fst_slice(k, kl));
	CHECK(fst_iter_valid(it) && fst_memtable_iter_ref(it) == refs[3]);
	kl = fst_ikey_build(k, 1, "ab", 2, 0);
	fst_iter_seek(it, fst_slice(k, kl));
	CHECK(fst_iter_valid(it) && fst_memtable_iter_ref(it) == refs[8]);	/* "ab\0" */
	kl = fst_ikey_build(k, 1, "aa", 2, FST_MAX_SEQ);
	fst_iter_seek(it, fst_slice(k, kl));
	CHECK(fst_iter_valid(it) && fst_memtable_iter_ref(it) == refs[2]);
	kl = fst_ikey_build(k, 0, "", 0, FST_MAX_SEQ);
	fst_iter_seek(it, fst_slice(k, kl));
	CHECK(fst_iter_valid(it) && fst_memtable_iter_ref(it) == refs[4]);
	kl = fst_ikey_build(k, 2, "", 0, 39);
	fst_iter_seek(it, fst_slice(k, kl));
	CHECK(!fst_iter_valid(it));
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_seek(it, fst_slice(k, 5));
	CHECK(!fst_iter_valid(it));
	CHECK(fst_iter_status(it, &err) == FST_INVALID_ARGUMENT);
	fst_iter_seek_first(it);
	CHECK(fst_iter_valid(it));
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_destroy(it);

	/* get: newest version, max_seq, tombstones, prefixes, absent keys */
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "ab", 2), FST_MAX_SEQ, NULL, NULL,
							  &res, &hdr, &val, &ref, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 30 && hdr.xid == 103 && ref == refs[2]);
	CHECK(val.len == e[2].vlen && memcmp(val.data, e[2].val, val.len) == 0);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "ab", 2), 29, NULL, NULL,
							  &res, &hdr, &val, &ref, &err), &err);
	CHECK(res == FST_GET_DELETED && hdr.seq == 20 && ref == refs[3] && val.len == 0);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "ab", 2), 19, NULL, NULL,
							  &res, &hdr, &val, &ref, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 11 && ref == refs[1]);
	CHECK(val.len == e[1].vlen && memcmp(val.data, e[1].val, val.len) == 0);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "ab", 2), 10, NULL, NULL,
							  &res, &hdr, &val, &ref, &err), &err);
	CHECK(res == FST_GET_NONE && ref == 0);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "abc", 3), 49, NULL, NULL,
							  &res, &hdr, NULL, NULL, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 10);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "abc", 3), FST_MAX_SEQ, NULL, NULL,
							  &res, &hdr, NULL, NULL, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 50 && hdr.flags == FST_ENTRY_SPECULATIVE);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "aa", 2), FST_MAX_SEQ, NULL, NULL,
							  &res, NULL, NULL, NULL, &err), &err);
	CHECK(res == FST_GET_NONE);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 0, "ab", 2), FST_MAX_SEQ, NULL, NULL,
							  &res, NULL, NULL, NULL, &err), &err);
	CHECK(res == FST_GET_NONE);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 2, "", 0), FST_MAX_SEQ, NULL, NULL,
							  &res, &hdr, &val, NULL, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 40 && val.len == FST_ENTRY_HEADER_SIZE + 7);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 3, "", 0), FST_MAX_SEQ, NULL, NULL,
							  &res, NULL, NULL, NULL, &err), &err);
	CHECK(res == FST_GET_NONE);
	CHECK(fst_memtable_get(mt, fst_slice("x", 1), FST_MAX_SEQ, NULL, NULL,
						   &res, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);

	/* the visibility callback sees ref and hint, and can skip versions */
	memset(&va, 0, sizeof(va));
	va.reject_xid = 103;
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "ab", 2), FST_MAX_SEQ, vis_reject_xid,
							  &va, &res, &hdr, NULL, &ref, &err), &err);
	CHECK(res == FST_GET_DELETED && hdr.seq == 20 && va.calls == 2);
	CHECK(va.last_ref == refs[3] && va.last_hint == 0);
	CHECK_OK(fst_memtable_set_hint(mt, refs[3], FST_MT_HINT_ABORTED, &err), &err);
	memset(&va, 0, sizeof(va));
	va.reject_xid = 103;
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "ab", 2), FST_MAX_SEQ, vis_reject_xid,
							  &va, &res, &hdr, NULL, &ref, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 11 && ref == refs[1] && va.calls == 3);
	memset(&va, 0, sizeof(va));
	va.reject_xid = 101;
	CHECK_OK(fst_memtable_get(mt, user_part(up, 1, "ab", 2), 19, vis_reject_xid,
							  &va, &res, &hdr, NULL, &ref, &err), &err);
	CHECK(res == FST_GET_NONE && va.calls == 1);

	fst_memtable_stats(mt, &st);
	CHECK_EQ_INT(st.entries, n);
	CHECK_EQ_INT(st.tombstones, 1);
	CHECK_EQ_INT(st.seq_min, 5);
	CHECK_EQ_INT(st.seq_max, 50);
	CHECK_EQ_INT(st.xid_min, 100);	/* xid 7 is frozen */
	CHECK_EQ_INT(st.xid_max, 108);
	CHECK_EQ_INT(st.capacity, 64 * 1024);
	CHECK(st.bytes_used > 0 && st.bytes_used < st.capacity);
	{
		uint64		kb = 0,
					vb = 0;

		for (i = 0; i < n; i++)
		{
			kb += e[i].klen;
			vb += e[i].vlen;
		}
		CHECK_EQ_INT(st.key_bytes, kb);
		CHECK_EQ_INT(st.value_bytes, vb);
	}
	CHECK(!st.frozen && st.height >= 1 && st.height <= FST_MT_MAX_HEIGHT);
	test_mt_free(mt);
}

FST_TEST(memtable_empty)
{
	FstMemtable *mt = test_mt_create(FST_MT_MIN_REGION_SIZE, 0);
	FstMemtableStats st;
	FstGetResult res;
	FstError	err;
	FstIter    *it;
	char		up[4];

	CHECK(mt != NULL);
	fst_memtable_stats(mt, &st);
	CHECK(st.entries == 0 && st.seq_min == 0 && st.seq_max == 0 &&
		  st.xid_min == 0 && st.xid_max == 0 && st.height == 1);
	CHECK_OK(fst_memtable_get(mt, user_part(up, 0, "a", 1), FST_MAX_SEQ, NULL, NULL,
							  &res, NULL, NULL, NULL, &err), &err);
	CHECK(res == FST_GET_NONE);
	it = fst_memtable_iter_create(mt);
	fst_iter_seek_first(it);
	CHECK(!fst_iter_valid(it));
	CHECK(fst_memtable_iter_ref(it) == 0 && fst_memtable_iter_hint(it) == 0);
	fst_iter_next(it);
	CHECK(!fst_iter_valid(it));
	fst_iter_destroy(it);
	test_mt_free(mt);
}

FST_TEST(memtable_refuses_duplicates_malformed_and_frozen)
{
	FstMemtable *mt = test_mt_create(8192, fst_test_seed());
	FstMemtableStats before,
				after;
	TestEntry	e;
	FstError	err;
	char	   *big;
	uint32		ref;

	CHECK(mt != NULL);
	test_entry_make(&e, 1, "k", 1, 7, 0, 1, "v", 1);
	CHECK_OK(mt_put(mt, &e, &ref, &err), &err);
	fst_memtable_stats(mt, &before);

	/* the same internal key, even with another value */
	test_entry_make(&e, 1, "k", 1, 7, FST_ENTRY_TOMBSTONE, 2, NULL, 0);
	CHECK(mt_put(mt, &e, NULL, &err) == FST_INVALID_ARGUMENT);
	/* other sequence: fine; "k" with another key group: fine */
	test_entry_make(&e, 1, "k", 1, 8, 0, 1, "v", 1);
	CHECK_OK(mt_put(mt, &e, NULL, &err), &err);
	test_entry_make(&e, 2, "k", 1, 7, 0, 1, "v", 1);
	CHECK_OK(mt_put(mt, &e, NULL, &err), &err);
	fst_memtable_stats(mt, &before);

	/* malformed: short value, unknown flags, short key */
	test_entry_make(&e, 1, "m", 1, 7, 0, 1, NULL, 0);
	CHECK(fst_memtable_insert(mt, fst_slice(e.key, e.klen), fst_slice(e.val, 8),
							  NULL, &err) == FST_INVALID_ARGUMENT);
	e.val[0] = (char) 0x40;
	CHECK(mt_put(mt, &e, NULL, &err) == FST_INVALID_ARGUMENT);
	test_entry_make(&e, 1, "m", 1, 7, 0, 1, NULL, 0);
	CHECK(fst_memtable_insert(mt, fst_slice(e.key, 9), fst_slice(e.val, e.vlen),
							  NULL, &err) == FST_INVALID_ARGUMENT);
	/* a key over the limit, and an entry no memtable of this size can hold */
	big = fst_calloc(1, FST_MT_MAX_KEY_LEN + 16);
	CHECK(big != NULL);
	CHECK(fst_memtable_insert(mt, fst_slice(big, FST_MT_MAX_KEY_LEN + 1),
							  fst_slice(e.val, e.vlen), NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_insert(mt, fst_slice(big, 4000), fst_slice(big, 4000),
							  NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_insert(mt, fst_slice(e.key, e.klen), fst_slice(big, 9000),
							  NULL, &err) == FST_INVALID_ARGUMENT);
	fst_free(big);
	fst_memtable_stats(mt, &after);
	CHECK(memcmp(&before, &after, sizeof(before)) == 0);

	/* freeze: no more inserts; reads and hints still work */
	CHECK(!fst_memtable_is_frozen(mt));
	fst_memtable_freeze(mt);
	CHECK(fst_memtable_is_frozen(mt));
	test_entry_make(&e, 1, "n", 1, 9, 0, 1, "v", 1);
	CHECK(mt_put(mt, &e, NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK_OK(fst_memtable_set_hint(mt, ref, FST_MT_HINT_COMMITTED, &err), &err);
	CHECK_OK(fst_memtable_entry(mt, ref, NULL, NULL, NULL, &err), &err);
	fst_memtable_stats(mt, &after);
	CHECK(after.frozen && after.entries == before.entries);
	test_mt_free(mt);
}

FST_TEST(memtable_full_leaves_it_intact)
{
	size_t		size = 16 * 1024;
	FstMemtable *mt = test_mt_create(size, fst_test_seed());
	FstMemtableStats before,
				after;
	TestEntry	e;
	FstError	err;
	FstCode		rc;
	FstIter    *it;
	uint64		rng = fst_test_seed();
	int			n = 0,
				i,
				fulls = 0;

	CHECK(mt != NULL);
	for (;;)
	{
		char		uk[16];

		snprintf(uk, sizeof(uk), "key%06d", (int) fst_rand_range(&rng, 1000000));
		test_entry_make(&e, 0, uk, 9, (uint64) n + 1, 0, 1, "payload-payload", 15);
		fst_memtable_stats(mt, &before);
		rc = mt_put(mt, &e, NULL, &err);
		if (rc == FST_OK)
		{
			n++;
			continue;
		}
		CHECK_MSG(rc == FST_FULL, "insert returned %s: %s", fst_code_name(rc), err.msg);
		CHECK(err.code == FST_FULL);
		fst_memtable_stats(mt, &after);
		CHECK(memcmp(&before, &after, sizeof(before)) == 0);
		/* a later draw of a lower height may still fit: go on a while */
		if (++fulls == 20)
			break;
	}
	CHECK(n > 100);
	fst_memtable_stats(mt, &after);
	CHECK_EQ_INT(after.entries, n);
	CHECK(after.bytes_used <= size && after.bytes_used + 64 > size - 64);

	/* everything still readable, in order */
	it = fst_memtable_iter_create(mt);
	i = 0;
	{
		FstBuf		prev;

		fst_buf_init(&prev);
		for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it), i++)
		{
			FstSlice	k = fst_iter_key(it);
			FstEntry	ent;
			FstGetResult res;
			FstEntryHeader hdr;

			CHECK(fst_entry_decode(k, fst_iter_value(it), &ent));
			CHECK(i == 0 || fst_ikey_cmp(fst_slice(prev.data, prev.len), k) < 0);
			fst_buf_reset(&prev);
			fst_buf_append(&prev, k.data, k.len);
			CHECK_OK(fst_memtable_get(mt, ent.user_part, ent.hdr.seq, NULL, NULL, &res,
									  &hdr, NULL, NULL, &err), &err);
			CHECK(res == FST_GET_FOUND && hdr.seq == ent.hdr.seq);
		}
		fst_buf_free(&prev);
	}
	CHECK_EQ_INT(i, n);
	fst_iter_destroy(it);
	test_mt_free(mt);
}

FST_TEST(memtable_refs_and_hints)
{
	int			n = 500;
	FstMemtable *mt = test_mt_create(256 * 1024, fst_test_seed());
	uint32	   *refs = fst_calloc(n, sizeof(uint32));
	TestEntry	e;
	FstError	err;
	FstSlice	k,
				v;
	FstMemtableStats st;
	uint8		hint;
	int			i;

	CHECK(mt != NULL && refs != NULL);
	for (i = 0; i < n; i++)
	{
		test_entry_numbered(&e, (i * 7919) % n, (uint64) i + 1, (size_t) (i % 40));
		CHECK_OK(mt_put(mt, &e, &refs[i], &err), &err);
		CHECK(refs[i] != 0 && refs[i] % 8 == 0);
	}
	for (i = 0; i < n; i++)
	{
		test_entry_numbered(&e, (i * 7919) % n, (uint64) i + 1, (size_t) (i % 40));
		CHECK_OK(fst_memtable_entry(mt, refs[i], &k, &v, &hint, &err), &err);
		CHECK(k.len == e.klen && memcmp(k.data, e.key, k.len) == 0);
		CHECK(v.len == e.vlen && memcmp(v.data, e.val, v.len) == 0);
		CHECK(hint == 0);
		/* nothing but a node start resolves */
		CHECK(fst_memtable_entry(mt, refs[i] + 8, &k, &v, &hint, &err) == FST_INVALID_ARGUMENT);
		CHECK(fst_memtable_entry(mt, refs[i] + 4, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);
		CHECK(fst_memtable_entry(mt, refs[i] - 1, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);
	}
	fst_memtable_stats(mt, &st);
	CHECK(fst_memtable_entry(mt, 0, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_entry(mt, 8, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_entry(mt, 192, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);	/* head */
	CHECK(fst_memtable_entry(mt, (uint32) st.bytes_used, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_entry(mt, (uint32) st.capacity - 8, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_entry(mt, PG_UINT32_MAX - 7, NULL, NULL, NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_get_hint(mt, 12345, &hint, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_set_hint(mt, 12345, FST_MT_HINT_COMMITTED, &err) == FST_INVALID_ARGUMENT);

	/* hints: OR'ed, never cleared, fates exclusive, unknown bits refused */
	CHECK_OK(fst_memtable_set_hint(mt, refs[3], FST_MT_HINT_COMMITTED, &err), &err);
	CHECK_OK(fst_memtable_set_hint(mt, refs[3], FST_MT_HINT_SUPERSEDED, &err), &err);
	CHECK_OK(fst_memtable_set_hint(mt, refs[3], FST_MT_HINT_COMMITTED, &err), &err);
	CHECK_OK(fst_memtable_get_hint(mt, refs[3], &hint, &err), &err);
	CHECK(hint == (FST_MT_HINT_COMMITTED | FST_MT_HINT_SUPERSEDED));
	CHECK(fst_memtable_set_hint(mt, refs[3], FST_MT_HINT_ABORTED, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_set_hint(mt, refs[4], FST_MT_HINT_ABORTED | FST_MT_HINT_COMMITTED, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_set_hint(mt, refs[4], 0x80, &err) == FST_INVALID_ARGUMENT);
	CHECK_OK(fst_memtable_get_hint(mt, refs[4], &hint, &err), &err);
	CHECK(hint == 0);
	CHECK_OK(fst_memtable_get_hint(mt, refs[3], &hint, &err), &err);
	CHECK(hint == (FST_MT_HINT_COMMITTED | FST_MT_HINT_SUPERSEDED));
	/* hints change neither order nor contents */
	{
		FstIter    *it = fst_memtable_iter_create(mt);
		int			seen = 0;

		for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
		{
			if (fst_memtable_iter_ref(it) == refs[3])
				CHECK(fst_memtable_iter_hint(it) == hint);
			else
				CHECK(fst_memtable_iter_hint(it) == 0);
			seen++;
		}
		CHECK_EQ_INT(seen, n);
		fst_iter_destroy(it);
	}
	fst_free(refs);
	test_mt_free(mt);
}

FST_TEST(memtable_attach_at_another_address)
{
	size_t		size = 128 * 1024;
	int			n = 300;
	FstMemtable *mt = test_mt_create(size, fst_test_seed());
	FstMemtable *mt2;
	char	   *copy;
	FstIter    *a,
			   *b;
	TestEntry	e;
	FstError	err;
	uint32		ref = 0;
	int			i;
	FstMemtable *bad;

	CHECK(mt != NULL);
	for (i = 0; i < n; i++)
	{
		test_entry_numbered(&e, (i * 37) % n, (uint64) i + 1, (size_t) (i % 30));
		CHECK_OK(mt_put(mt, &e, i == 17 ? &ref : NULL, &err), &err);
	}
	CHECK_OK(fst_memtable_set_hint(mt, ref, FST_MT_HINT_COMMITTED, &err), &err);

	/* another buffer: the region moves, and the original is scribbled over */
	copy = fst_malloc(size + 64);
	CHECK(copy != NULL);
	memcpy(copy + 8, fst_memtable_region(mt), size);
	CHECK_OK(fst_memtable_attach(copy + 8, &mt2, &err), &err);
	CHECK((char *) mt2 == copy + 8);
	CHECK(fst_memtable_capacity(mt2) == size);
	a = fst_memtable_iter_create(mt);
	b = fst_memtable_iter_create(mt2);
	i = 0;
	for (fst_iter_seek_first(a), fst_iter_seek_first(b); fst_iter_valid(a);
		 fst_iter_next(a), fst_iter_next(b), i++)
	{
		FstSlice	kb;

		CHECK(fst_iter_valid(b));
		kb = fst_iter_key(b);
		CHECK(kb.data >= copy && kb.data < copy + size + 8);
		CHECK(fst_slice_cmp(fst_iter_key(a), kb) == 0);
		CHECK(fst_slice_cmp(fst_iter_value(a), fst_iter_value(b)) == 0);
		CHECK(fst_memtable_iter_ref(a) == fst_memtable_iter_ref(b));
		CHECK(fst_memtable_iter_hint(a) == fst_memtable_iter_hint(b));
	}
	CHECK(!fst_iter_valid(b));
	CHECK_EQ_INT(i, n);
	fst_iter_destroy(a);
	memset(fst_memtable_region(mt), 0x5a, size);
	for (i = 0; i < n; i++)
	{
		FstEntry	ent;
		FstGetResult res;
		FstEntryHeader hdr;
		FstSlice	v;

		test_entry_numbered(&e, (i * 37) % n, (uint64) i + 1, (size_t) (i % 30));
		CHECK(fst_entry_decode(fst_slice(e.key, e.klen), fst_slice(e.val, e.vlen), &ent));
		CHECK_OK(fst_memtable_get(mt2, ent.user_part, FST_MAX_SEQ, NULL, NULL, &res,
								  &hdr, &v, NULL, &err), &err);
		CHECK(res == FST_GET_FOUND && hdr.seq == (uint64) i + 1);
		CHECK(v.len == e.vlen && memcmp(v.data, e.val, v.len) == 0);
	}
	fst_iter_seek_first(b);
	CHECK(fst_iter_valid(b));
	fst_iter_destroy(b);
	/* the attached copy takes inserts too */
	test_entry_make(&e, 9, "new", 3, 1000, 0, 1, "x", 1);
	CHECK_OK(mt_put(mt2, &e, NULL, &err), &err);
	CHECK_EQ_INT(fst_memtable_num_entries(mt2), n + 1);

	/* attach refuses what is not a memtable of this version */
	CHECK(fst_memtable_attach(fst_memtable_region(mt), &bad, &err) == FST_CORRUPT);
	CHECK(bad == NULL);
	((uint32 *) (copy + 8))[1] = FST_MT_VERSION + 1;
	CHECK(fst_memtable_attach(copy + 8, &mt2, &err) == FST_NOT_SUPPORTED);
	((uint32 *) (copy + 8))[1] = FST_MT_VERSION;
	((uint32 *) (copy + 8))[2] = 12345;	/* capacity */
	CHECK(fst_memtable_attach(copy + 8, &mt2, &err) == FST_CORRUPT);
	CHECK(fst_memtable_attach(copy + 4, &mt2, &err) == FST_INVALID_ARGUMENT);

	/* init refuses misaligned, too small and too large regions */
	CHECK(fst_memtable_init(copy + 4, 4096, 0, &mt2, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_memtable_init(copy, FST_MT_MIN_REGION_SIZE - 8, 0, &mt2, &err) == FST_INVALID_ARGUMENT);
	if (sizeof(size_t) > 4)
		CHECK(fst_memtable_init(copy, (size_t) PG_UINT32_MAX + 1, 0, &mt2, &err) == FST_INVALID_ARGUMENT);
	fst_free(copy);
	test_mt_free(mt);
}

/* ---------------------------------------------------------------------- */

typedef struct RandVis
{
	uint32		mod;			/* reject xids divisible by mod */
} RandVis;

static bool
rand_visible(void *arg, FstMemtable *mt, const FstEntryHeader *h,
			 uint32 ref, uint8 hint)
{
	return h->xid % ((RandVis *) arg)->mod != 0;
}

FST_TEST(memtable_randomized_vs_reference)
{
	int			nkeys = 150,
				n = 6000,
				i,
				j;
	uint64		rng = fst_test_seed();
	char		(*ukeys)[8] = fst_calloc(nkeys, 8);
	int		   *ulens = fst_calloc(nkeys, sizeof(int));
	uint16	   *kgs = fst_calloc(nkeys, sizeof(uint16));
	uint64	   *seqs = fst_calloc(n, sizeof(uint64));
	TestEntry  *ref = fst_calloc(n, sizeof(TestEntry));
	FstMemtable *mt = test_mt_create(2 * 1024 * 1024, fst_test_seed() + 1);
	FstError	err;
	FstIter    *it;

	CHECK(ukeys && ulens && kgs && seqs && ref && mt);
	/* user keys over a 2-letter alphabet: many are prefixes of others */
	for (i = 0; i < nkeys; i++)
	{
		ulens[i] = (int) fst_rand_range(&rng, 7);
		for (j = 0; j < ulens[i]; j++)
			ukeys[i][j] = "ab"[fst_rand_range(&rng, 2)];
		kgs[i] = (uint16) fst_rand_range(&rng, 3);
	}
	/* unique sequences in random order */
	for (i = 0; i < n; i++)
		seqs[i] = (uint64) i * 3 + 1;
	for (i = n - 1; i > 0; i--)
	{
		uint64		t;

		j = (int) fst_rand_range(&rng, (uint64) i + 1);
		t = seqs[i];
		seqs[i] = seqs[j];
		seqs[j] = t;
	}
	for (i = 0; i < n; i++)
	{
		int			k = (int) fst_rand_range(&rng, nkeys);
		bool		tomb = fst_rand_range(&rng, 5) == 0;
		char		payload[64];
		size_t		plen = tomb ? 0 : (size_t) fst_rand_range(&rng, 60);

		for (j = 0; j < (int) plen; j++)
			payload[j] = (char) fst_rand_next(&rng);
		test_entry_make(&ref[i], kgs[k], ukeys[k], (size_t) ulens[k], seqs[i],
						tomb ? FST_ENTRY_TOMBSTONE : 0,
						(uint32) fst_rand_range(&rng, 1000), payload, plen);
		CHECK_OK(mt_put(mt, &ref[i], NULL, &err), &err);
		/* re-inserting the same internal key always fails */
		if (i % 97 == 0)
			CHECK(mt_put(mt, &ref[fst_rand_range(&rng, (uint64) i + 1)], NULL, &err) == FST_INVALID_ARGUMENT);
	}
	qsort(ref, n, sizeof(TestEntry), cmp_test_entry);

	/* full scan equality */
	it = fst_memtable_iter_create(mt);
	i = 0;
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it), i++)
	{
		CHECK(i < n);
		CHECK(fst_slice_cmp(fst_iter_key(it), fst_slice(ref[i].key, ref[i].klen)) == 0);
		CHECK(fst_slice_cmp(fst_iter_value(it), fst_slice(ref[i].val, ref[i].vlen)) == 0);
	}
	CHECK_EQ_INT(i, n);

	/* random gets and seeks */
	for (i = 0; i < 20000; i++)
	{
		int			k = (int) fst_rand_range(&rng, nkeys);
		uint16		kg = (uint16) (fst_rand_range(&rng, 10) == 0 ? 3 : kgs[k]);
		uint64		max_seq = fst_rand_range(&rng, 4) == 0 ? FST_MAX_SEQ :
			fst_rand_range(&rng, (uint64) n * 3 + 2);
		RandVis		rv;
		bool		use_vis = fst_rand_range(&rng, 2) == 0;
		char		up[16];
		FstSlice	upart = user_part(up, kg, ukeys[k], (size_t) ulens[k]);
		char		target[32];
		size_t		tlen;
		FstGetResult res,
					want = FST_GET_NONE;
		FstEntryHeader hdr;
		FstSlice	val;
		uint32		r;
		int			lo = 0,
					hi = n,
					found = -1;

		rv.mod = (uint32) fst_rand_range(&rng, 5) + 2;
		tlen = fst_ikey_build(target, kg, ukeys[k], (size_t) ulens[k], max_seq);
		/* reference: first entry >= target, then walk the key's versions */
		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (fst_ikey_cmp(fst_slice(ref[mid].key, ref[mid].klen), fst_slice(target, tlen)) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		fst_iter_seek(it, fst_slice(target, tlen));
		if (lo < n)
		{
			CHECK(fst_iter_valid(it));
			CHECK(fst_slice_cmp(fst_iter_key(it), fst_slice(ref[lo].key, ref[lo].klen)) == 0);
		}
		else
			CHECK(!fst_iter_valid(it));
		for (j = lo; j < n; j++)
		{
			FstSlice	rk = fst_slice(ref[j].key, ref[j].klen);
			uint32		xid = fst_get_fixed32(ref[j].val + 1);

			if (fst_slice_cmp(fst_ikey_user_part(rk), upart) != 0)
				break;
			if (use_vis && xid % rv.mod == 0)
				continue;
			found = j;
			want = (ref[j].val[0] & FST_ENTRY_TOMBSTONE) ? FST_GET_DELETED : FST_GET_FOUND;
			break;
		}
		CHECK_OK(fst_memtable_get(mt, upart, max_seq, use_vis ? rand_visible : NULL, &rv,
								  &res, &hdr, &val, &r, &err), &err);
		CHECK_EQ_INT(res, want);
		if (found >= 0)
		{
			FstSlice	ik;

			CHECK(hdr.seq == fst_ikey_seq(fst_slice(ref[found].key, ref[found].klen)));
			CHECK_OK(fst_memtable_entry(mt, r, &ik, NULL, NULL, &err), &err);
			CHECK(fst_slice_cmp(ik, fst_slice(ref[found].key, ref[found].klen)) == 0);
			if (want == FST_GET_FOUND)
				CHECK(fst_slice_cmp(val, fst_slice(ref[found].val, ref[found].vlen)) == 0);
		}
	}
	fst_iter_destroy(it);
	fst_free(ukeys);
	fst_free(ulens);
	fst_free(kgs);
	fst_free(seqs);
	fst_free(ref);
	test_mt_free(mt);
}

/*
 * Point lookups at the newest version (max_seq = FST_MAX_SEQ) go through
 * the memtable's hash; here against a model, with several versions per key
 * inserted out of sequence order, with absent keys, and with more distinct
 * keys than the hash takes (lookups of the later ones fall back to the
 * skiplist).
 */
FST_TEST(memtable_point_lookup_hash)
{
	size_t		size = 64 * 1024;
	FstMemtable *mt = test_mt_create(size, fst_test_seed());
	uint64		rng = fst_test_seed();
	uint64		newest[2000];
	int			nkeys = 0,
				k,
				inserted = 0;
	uint64		seq = 1000000;
	TestEntry	e;
	FstError	err;
	FstCode		rc = FST_OK;

	CHECK(mt != NULL);
	memset(newest, 0, sizeof(newest));
	/* new keys until the region is full, a quarter with 2 or 3 versions */
	while (rc == FST_OK && nkeys < 2000)
	{
		int			nv = fst_rand_range(&rng, 4) == 0 ? 2 + (int) fst_rand_range(&rng, 2) : 1;
		char		uk[16];
		int			v;

		snprintf(uk, sizeof(uk), "hk%05d", nkeys);
		for (v = 0; v < nv && rc == FST_OK; v++)
		{
			/* sequences out of order: a later insert may be older */
			uint64		s = seq + fst_rand_range(&rng, 1000);

			seq += 1000;
			test_entry_make(&e, 3, uk, 7, s, 0, 1, "v", 1);
			rc = mt_put(mt, &e, NULL, &err);
			if (rc == FST_OK)
			{
				inserted++;
				if (s > newest[nkeys])
					newest[nkeys] = s;
			}
		}
		if (newest[nkeys] != 0)
			nkeys++;
	}
	CHECK_MSG(rc == FST_FULL, "insert returned %s", fst_code_name(rc));
	/* more keys than 3/4 of the buckets: the hash filled up on the way */
	CHECK_MSG(nkeys > (int) (size / 64) * 3 / 4, "only %d keys", nkeys);

	for (k = 0; k < nkeys + 50; k++)
	{
		char		uk[16];
		char		up[16];
		FstGetResult res;
		FstEntryHeader hdr;

		snprintf(uk, sizeof(uk), "hk%05d", k);
		fst_put_be16(up, 3);
		memcpy(up + 2, uk, 7);
		CHECK_OK(fst_memtable_get(mt, fst_slice(up, 9), FST_MAX_SEQ, NULL, NULL,
								  &res, &hdr, NULL, NULL, &err), &err);
		if (k < nkeys)
			CHECK_MSG(res == FST_GET_FOUND && hdr.seq == newest[k],
					  "key %d: result %d seq %llu, want %llu", k, (int) res,
					  (unsigned long long) hdr.seq, (unsigned long long) newest[k]);
		else
			CHECK_MSG(res == FST_GET_NONE, "absent key %d found", k);
		/* the same key in another key group is absent */
		fst_put_be16(up, 4);
		CHECK_OK(fst_memtable_get(mt, fst_slice(up, 9), FST_MAX_SEQ, NULL, NULL,
								  &res, &hdr, NULL, NULL, &err), &err);
		CHECK(res == FST_GET_NONE);
	}
	CHECK(inserted > nkeys);
	test_mt_free(mt);
}

/*
 * Once the hash is full, a key that already has a bucket still gets its
 * bucket moved to each newer version: a lookup trusts the bucket it finds
 * (a full hash used to leave it on the older version).
 */
FST_TEST(memtable_hash_full_newer_version)
{
	size_t		size = 64 * 1024;
	FstMemtable *mt = test_mt_create(size, fst_test_seed());
	int			nkeys = (int) (size / 64) * 3 / 4 + 50;
	uint64		seq = 1000;
	TestEntry	e;
	FstError	err;
	int			k;

	CHECK(mt != NULL);
	for (k = 0; k < nkeys; k++)
	{
		char		uk[16];

		snprintf(uk, sizeof(uk), "hf%05d", k);
		test_entry_make(&e, 3, uk, 7, seq++, 0, 1, "v", 1);
		CHECK_OK(mt_put(mt, &e, NULL, &err), &err);
	}
	/* newer versions of keys that got buckets before the hash filled up */
	for (k = 0; k < 20; k++)
	{
		char		uk[16];
		char		up[16];
		FstGetResult res;
		FstEntryHeader hdr;
		uint64		want = seq++;

		snprintf(uk, sizeof(uk), "hf%05d", k);
		test_entry_make(&e, 3, uk, 7, want, 0, 1, "w", 1);
		CHECK_OK(mt_put(mt, &e, NULL, &err), &err);
		fst_put_be16(up, 3);
		memcpy(up + 2, uk, 7);
		CHECK_OK(fst_memtable_get(mt, fst_slice(up, 9), FST_MAX_SEQ, NULL, NULL,
								  &res, &hdr, NULL, NULL, &err), &err);
		CHECK_MSG(res == FST_GET_FOUND && hdr.seq == want,
				  "key %d: result %d seq %llu, want %llu", k, (int) res,
				  (unsigned long long) hdr.seq, (unsigned long long) want);
	}
	test_mt_free(mt);
}

/*
 * Splices searched before other writers' inserts (fst_memtable_find_splice,
 * then fst_memtable_insert_at): each entry's splice is searched, then up to
 * three other entries go in first (often into the same gap: keys over a
 * 2-letter alphabet), then the entry with its stale splice.  The memtable
 * must hold exactly the reference, in order; a splice whose key another
 * insert took meanwhile must still be refused as a duplicate; a splice from
 * another memtable must be ignored.
 */
FST_TEST(memtable_splice_searched_before_other_inserts)
{
	int			n = 4000,
				i,
				j,
				done = 0,
				stale_dups = 0;
	uint64		rng = fst_test_seed() + 7;
	TestEntry  *ref = fst_calloc(n, sizeof(TestEntry));
	bool	   *in = fst_calloc(n, sizeof(bool));
	FstMemtableSplice *sp = fst_calloc(1, sizeof(FstMemtableSplice));
	FstMemtable *mt = test_mt_create(2 * 1024 * 1024, fst_test_seed() + 3);
	FstMemtable *other = test_mt_create(64 * 1024, fst_test_seed() + 4);
	FstError	err;
	FstIter    *it;

	CHECK(ref && in && sp && mt && other);
	for (i = 0; i < n; i++)
	{
		char		uk[6];
		int			ul = (int) fst_rand_range(&rng, 6);

		for (j = 0; j < ul; j++)
			uk[j] = "ab"[fst_rand_range(&rng, 2)];
		test_entry_make(&ref[i], 1, uk, (size_t) ul, (uint64) i + 1, 0, 7,
						"v", 1);
	}
	/* a splice searched in another memtable is ignored */
	CHECK_OK(mt_put(other, &ref[0], NULL, &err), &err);
	fst_memtable_find_splice(other, fst_slice(ref[1].key, ref[1].klen), sp);
	CHECK_OK(fst_memtable_insert_at(mt, fst_slice(ref[1].key, ref[1].klen),
									fst_slice(ref[1].val, ref[1].vlen), sp,
									NULL, &err), &err);
	in[1] = true;
	done = 1;

	while (done < n)
	{
		int			k = (int) fst_rand_range(&rng, n);
		int			others = (int) fst_rand_range(&rng, 4);
		FstCode		rc;

		if (in[k])
			continue;
		fst_memtable_find_splice(mt, fst_slice(ref[k].key, ref[k].klen), sp);
		for (j = 0; j < others && done < n; j++)
		{
			/* now and then the entry itself, as if another writer had it */
			int			m = fst_rand_range(&rng, 8) == 0 ? k :
				(int) fst_rand_range(&rng, n);

			if (in[m])
				continue;
			CHECK_OK(mt_put(mt, &ref[m], NULL, &err), &err);
			in[m] = true;
			done++;
		}
		rc = fst_memtable_insert_at(mt, fst_slice(ref[k].key, ref[k].klen),
									fst_slice(ref[k].val, ref[k].vlen), sp,
									NULL, &err);
		if (in[k])
		{
			/* one of the others was this entry: a duplicate now */
			CHECK(rc == FST_INVALID_ARGUMENT);
			stale_dups++;
		}
		else
		{
			CHECK_OK(rc, &err);
			in[k] = true;
			done++;
		}
	}
	CHECK(stale_dups > 0);

	/* the memtable holds the reference, in order */
	qsort(ref, n, sizeof(TestEntry), cmp_test_entry);
	it = fst_memtable_iter_create(mt);
	i = 0;
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it), i++)
	{
		CHECK(i < n);
		CHECK(fst_slice_cmp(fst_iter_key(it), fst_slice(ref[i].key, ref[i].klen)) == 0);
	}
	CHECK_EQ_INT(i, n);
	/* every key is found through the skiplist as well */
	for (i = 0; i < n; i += 13)
	{
		fst_iter_seek(it, fst_slice(ref[i].key, ref[i].klen));
		CHECK(fst_iter_valid(it) &&
			  fst_slice_cmp(fst_iter_key(it), fst_slice(ref[i].key, ref[i].klen)) == 0);
	}
	fst_iter_destroy(it);
	test_mt_free(other);
	test_mt_free(mt);
	fst_free(sp);
	fst_free(in);
	fst_free(ref);
}
