/*
 * test_memtable_conc.c — one memtable writer racing lock-free readers
 * (threads standing in for backends), and an informational speed report.
 */
#include "memtable_testutil.h"

#include <pthread.h>
#include <time.h>

/* Entry i of the concurrency and speed tests: a scrambled key, seq i + 1. */
static void
conc_entry(TestEntry *e, uint32 i)
{
	char		uk[16];
	uint32		h = i * 2654435761U;
	char		payload[16];

	snprintf(uk, sizeof(uk), "%08x%04u", h, i % 10000);
	snprintf(payload, sizeof(payload), "p%u", i);
	test_entry_make(e, (uint16) (h % 4), uk, 12, (uint64) i + 1, 0, i,
					payload, strlen(payload));
}

/* Is payload "p<xid>"? */
static bool
payload_matches(FstSlice payload, uint32 xid)
{
	char		want[16];
	int			len = snprintf(want, sizeof(want), "p%u", xid);

	return payload.len == (size_t) len && memcmp(payload.data, want, len) == 0;
}

typedef struct ConcShared
{
	FstMemtable *mt;
	uint32		total;
	int			done;			/* atomic: the writer finished */
	int			writer_rc;
} ConcShared;

typedef struct ConcReader
{
	pthread_t	thread;
	ConcShared *sh;
	uint64		seed;
	int			scans;
	uint64		gets;
	char		failure[256];	/* first failure, empty if none */
} ConcReader;

#define READER_FAIL(r, ...) \
	do { snprintf((r)->failure, sizeof((r)->failure), __VA_ARGS__); \
		 goto out; } while (0)

static void *
conc_reader(void *arg)
{
	ConcReader *rd = arg;
	FstMemtable *mt = rd->sh->mt;
	FstIter    *it = fst_memtable_iter_create(mt);
	uint64		rng = rd->seed;
	uint64		last_count = 0;
	bool		last_pass = false;

	if (it == NULL)
		READER_FAIL(rd, "out of memory");
	while (!last_pass)
	{
		uint64		before,
					after,
					count = 0;
		FstSlice	prev = {NULL, 0};
		int			g;

		last_pass = __atomic_load_n(&rd->sh->done, __ATOMIC_ACQUIRE) != 0;
		before = fst_memtable_num_entries(mt);
		for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
		{
			FstSlice	k = fst_iter_key(it);
			FstEntry	e;

			if (!fst_entry_decode(k, fst_iter_value(it), &e))
				READER_FAIL(rd, "entry %llu does not decode", (unsigned long long) count);
			if (prev.data && fst_ikey_cmp(prev, k) >= 0)
				READER_FAIL(rd, "scan out of order at entry %llu", (unsigned long long) count);
			if (!payload_matches(e.payload, e.hdr.xid) ||
				e.hdr.seq != (uint64) e.hdr.xid + 1)
				READER_FAIL(rd, "torn entry at %llu", (unsigned long long) count);
			if (count % 64 == 0 &&
				fst_memtable_set_hint(mt, fst_memtable_iter_ref(it),
									  FST_MT_HINT_COMMITTED, NULL) != FST_OK)
				READER_FAIL(rd, "set_hint refused a ref from a scan");
			prev = k;			/* stays valid: nodes never move */
			count++;
		}
		after = fst_memtable_num_entries(mt);
		/* at most one entry (the writer's current one) linked, not counted */
		if (count < before || count > after + 1)
			READER_FAIL(rd, "scan saw %llu entries, count went %llu -> %llu",
						(unsigned long long) count, (unsigned long long) before,
						(unsigned long long) after);
		if (count < last_count)
			READER_FAIL(rd, "scan saw %llu entries after %llu",
						(unsigned long long) count, (unsigned long long) last_count);
		last_count = count;
		rd->scans++;

		/* every entry counted before must be found; later ones may be */
		for (g = 0; g < 2000; g++)
		{
			uint32		i = (uint32) fst_rand_range(&rng, after ? after : 1);
			TestEntry	e;
			FstEntry	ent;
			FstGetResult res;
			FstEntryHeader hdr;
			FstSlice	v;
			uint32		ref;

			if (after == 0)
				break;
			conc_entry(&e, i);
			fst_entry_decode(fst_slice(e.key, e.klen), fst_slice(e.val, e.vlen), &ent);
			if (fst_memtable_get(mt, ent.user_part, FST_MAX_SEQ, NULL, NULL, &res,
								 &hdr, &v, &ref, NULL) != FST_OK ||
				res != FST_GET_FOUND || hdr.seq != (uint64) i + 1 ||
				v.len != e.vlen || memcmp(v.data, e.val, v.len) != 0)
				READER_FAIL(rd, "get of entry %u (of %llu) failed", i,
							(unsigned long long) after);
			if (fst_memtable_entry(mt, ref, NULL, NULL, NULL, NULL) != FST_OK)
				READER_FAIL(rd, "ref of entry %u does not resolve", i);
			rd->gets++;
		}
	}
out:
	fst_iter_destroy(it);
	return NULL;
}

static void *
conc_writer(void *arg)
{
	ConcShared *sh = arg;
	uint32		i;

	for (i = 0; i < sh->total; i++)
	{
		TestEntry	e;
		FstCode		rc;

		conc_entry(&e, i);
		rc = mt_put(sh->mt, &e, NULL, NULL);
		if (rc != FST_OK)
		{
			sh->writer_rc = (int) rc;
			break;
		}
	}
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

FST_TEST(memtable_concurrent_writer_and_readers)
{
	ConcShared	sh;
	ConcReader	rd[3];
	pthread_t	writer;
	FstMemtableStats st;
	int			i;

	memset(&sh, 0, sizeof(sh));
	memset(rd, 0, sizeof(rd));
	sh.total = 200000;
	sh.mt = test_mt_create(32 * 1024 * 1024, fst_test_seed());
	CHECK(sh.mt != NULL);
	for (i = 0; i < 3; i++)
	{
		rd[i].sh = &sh;
		rd[i].seed = fst_test_seed() + (uint64) i * 7919;
		CHECK(pthread_create(&rd[i].thread, NULL, conc_reader, &rd[i]) == 0);
	}
	CHECK(pthread_create(&writer, NULL, conc_writer, &sh) == 0);
	pthread_join(writer, NULL);
	for (i = 0; i < 3; i++)
		pthread_join(rd[i].thread, NULL);
	CHECK_EQ_INT(sh.writer_rc, FST_OK);
	for (i = 0; i < 3; i++)
	{
		CHECK_MSG(rd[i].failure[0] == '\0', "reader %d: %s", i, rd[i].failure);
		CHECK(rd[i].scans >= 1);
	}
	fst_memtable_stats(sh.mt, &st);
	CHECK_EQ_INT(st.entries, sh.total);
	printf("    memtable concurrency: %d/%d/%d scans, %llu gets by 3 readers during %u inserts\n",
		   rd[0].scans, rd[1].scans, rd[2].scans,
		   (unsigned long long) (rd[0].gets + rd[1].gets + rd[2].gets), sh.total);
	test_mt_free(sh.mt);
}

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

FST_TEST(memtable_speed_report)
{
	uint32		n = 200000,
				i;
	FstMemtable *mt = test_mt_create(32 * 1024 * 1024, fst_test_seed());
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstEntry   *parsed = fst_calloc(n, sizeof(FstEntry));
	FstMemtableStats st;
	FstError	err;
	double		t0,
				t1,
				t2;
	uint64		rng = fst_test_seed();

	CHECK(mt && ents && parsed);
	for (i = 0; i < n; i++)
	{
		conc_entry(&ents[i], i);
		fst_entry_decode(fst_slice(ents[i].key, ents[i].klen),
						 fst_slice(ents[i].val, ents[i].vlen), &parsed[i]);
	}
	t0 = now_seconds();
	for (i = 0; i < n; i++)
		CHECK_OK(mt_put(mt, &ents[i], NULL, &err), &err);
	t1 = now_seconds();
	for (i = 0; i < n; i++)
	{
		FstGetResult res;
		uint32		k = (uint32) fst_rand_range(&rng, n);

		CHECK_OK(fst_memtable_get(mt, parsed[k].user_part, FST_MAX_SEQ, NULL, NULL,
								  &res, NULL, NULL, NULL, &err), &err);
		CHECK(res == FST_GET_FOUND);
	}
	t2 = now_seconds();
	fst_memtable_stats(mt, &st);
	printf("    memtable speed (informational; `make unit` builds with sanitizers): %.0f inserts/s, %.0f gets/s; "
		   "%.1f bytes/entry for %.1f bytes of key+value (overhead %.1f, height %d)\n",
		   n / (t1 - t0), n / (t2 - t1),
		   (double) (st.bytes_used) / n, (double) (st.key_bytes + st.value_bytes) / n,
		   (double) (st.bytes_used - st.key_bytes - st.value_bytes) / n, st.height);
	fst_free(ents);
	fst_free(parsed);
	test_mt_free(mt);
}
