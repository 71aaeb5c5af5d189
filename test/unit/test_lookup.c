/*
 * test_lookup.c — fst_lookup_get, the point read path of the server and of
 * bench/engine: memtables and SST files of several levels, newest version
 * first, with a visibility callback, tombstones, bloom filters, missing
 * keys and failing reads.
 */
#include "memtable_testutil.h"
#include "lookup.h"
#include "lookup_plan.h"

#define LK_MAX_FILES 4

/* A range source over memory that fails every read once told to. */
typedef struct FailSource
{
	FstRangeSource base;
	const char *data;
	bool		fail;
} FailSource;

static FstCode
fail_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
		  FstError *err)
{
	FailSource *fs = (FailSource *) src;

	if (fs->fail)
		return fst_error(err, FST_IO_ERROR, "injected read failure");
	memcpy(buf, fs->data + offset, len);
	return FST_OK;
}

static void
fail_close(FstRangeSource *src)
{
}

/* Files of a manifest, their bytes, sources and readers. */
typedef struct LkFixture
{
	FstManifest m;
	int			nfiles;
	FstBuf		bytes[LK_MAX_FILES];
	FailSource	src[LK_MAX_FILES];
	FstSstReader *r[LK_MAX_FILES];
	uint64		ids[LK_MAX_FILES];
	int			opened;			/* reader callback calls */
} LkFixture;

static FstCode
lk_reader(void *arg, const FstFileMeta *f, FstSstReader **r, FstError *err)
{
	LkFixture  *fx = arg;

	fx->opened++;
	for (int i = 0; i < fx->nfiles; i++)
		if (fx->ids[i] == f->file_id)
		{
			*r = fx->r[i];
			return FST_OK;
		}
	return fst_error(err, FST_NOT_FOUND, "no file " UINT64_FORMAT, f->file_id);
}

static void *
lk_alloc(void *arg, size_t n)
{
	FstBuf	   *b = arg;

	fst_buf_reset(b);
	if (!fst_buf_reserve(b, n))
		return NULL;
	return b->data;
}

/* Adds a file of ents (sorted) at level as file id. */
static FstCode
lk_add_file(LkFixture *fx, int level, uint64 id, TestEntry *ents, int n,
			FstError *err)
{
	FstSstOptions o;
	FstSstReadOptions ro;
	FstSstProps props;
	FstFileMeta meta;
	int			i = fx->nfiles;
	FstCode		rc;

	qsort(ents, n, sizeof(TestEntry), cmp_test_entry);
	fst_sst_options_default(&o);
	o.block_size = 256;
	fst_sst_props_init(&props);
	rc = test_build_sst(ents, n, &o, &fx->bytes[i], &props, err);
	if (rc != FST_OK)
		return rc;
	memset(&fx->src[i], 0, sizeof(fx->src[i]));
	fx->src[i].base.size = fx->bytes[i].len;
	fx->src[i].base.read = fail_read;
	fx->src[i].base.close = fail_close;
	fx->src[i].data = fx->bytes[i].data;
	fst_sst_read_options_default(&ro);
	rc = fst_sst_open(&fx->src[i].base, &ro, &fx->r[i], err);
	if (rc != FST_OK)
		return rc;
	memset(&meta, 0, sizeof(meta));
	if (!fst_sst_props_to_filemeta(&props, &meta))
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	fst_sst_props_free(&props);
	meta.file_id = id;
	rc = fst_manifest_append_file(&fx->m, level, &meta, NULL, err);
	fst_filemeta_clear(&meta);
	fx->ids[i] = id;
	fx->nfiles++;
	return rc;
}

static void
lk_free(LkFixture *fx)
{
	for (int i = 0; i < fx->nfiles; i++)
	{
		fst_sst_close(fx->r[i]);
		fst_buf_free(&fx->bytes[i]);
	}
	fst_manifest_free(&fx->m);
}

static void
ent(TestEntry *e, const char *ukey, uint64 seq, uint8 flags, uint32 xid,
	const char *payload)
{
	test_entry_make(e, 0, ukey, strlen(ukey), seq, flags, xid, payload,
					strlen(payload));
}

/*
 * Level 2: a..z (seq 1..26, payload "l2"), level 1: b, c, d, x (seq
 * 40..43, "l1"; c a tombstone), level 0: b, e (seq 60, 61, "l0"; b by xid
 * 666).
 */
static FstCode
lk_setup(LkFixture *fx, FstError *err)
{
	TestEntry	e[26];
	FstCode		rc;

	memset(fx, 0, sizeof(*fx));
	fst_manifest_init(&fx->m);
	for (int i = 0; i < 26; i++)
	{
		char		k[2] = {(char) ('a' + i), 0};

		ent(&e[i], k, 1 + i, FST_ENTRY_COMMITTED, 100, "l2");
	}
	rc = lk_add_file(fx, 2, 7, e, 26, err);
	if (rc != FST_OK)
		return rc;
	ent(&e[0], "b", 40, FST_ENTRY_COMMITTED, 200, "l1");
	ent(&e[1], "c", 41, FST_ENTRY_COMMITTED | FST_ENTRY_TOMBSTONE, 200, "");
	ent(&e[2], "d", 42, FST_ENTRY_COMMITTED, 200, "l1");
	ent(&e[3], "x", 43, FST_ENTRY_COMMITTED, 200, "l1");
	rc = lk_add_file(fx, 1, 8, e, 4, err);
	if (rc != FST_OK)
		return rc;
	ent(&e[0], "b", 60, FST_ENTRY_COMMITTED, 666, "l0");
	ent(&e[1], "e", 61, FST_ENTRY_COMMITTED, 300, "l0");
	return lk_add_file(fx, 0, 9, e, 2, err);
}

static void
lk_init(FstLookup *lk, LkFixture *fx, FstBuf *entry)
{
	fst_lookup_init(lk);
	lk->manifest = &fx->m;
	lk->reader = lk_reader;
	lk->reader_arg = fx;
	lk->want_entry = true;
	lk->alloc = lk_alloc;
	lk->alloc_arg = entry;
}

static bool
payload_is(const FstLookupHit *h, const char *p)
{
	size_t		n = strlen(p);

	return h->value.len == FST_ENTRY_HEADER_SIZE + n &&
		memcmp(h->value.data + FST_ENTRY_HEADER_SIZE, p, n) == 0;
}

static FstSlice
up(char *buf, const char *ukey)
{
	return user_part(buf, 0, ukey, strlen(ukey));
}

FST_TEST(lookup_newest_across_levels)
{
	LkFixture	fx;
	FstLookup	lk;
	FstLookupHit h;
	FstBuf		entry;
	FstError	err;
	char		b[16];

	fst_buf_init(&entry);
	CHECK_OK(lk_setup(&fx, &err), &err);
	lk_init(&lk, &fx, &entry);

	/* in all three levels: level 0's */
	CHECK_OK(fst_lookup_get(&lk, up(b, "b"), &h, &err), &err);
	CHECK(h.found && h.in_sst);
	CHECK_EQ_INT(h.hdr.seq, 60);
	CHECK_EQ_INT(h.file->file_id, 9);
	CHECK(payload_is(&h, "l0"));
	CHECK(fst_slice_cmp(fst_ikey_user_part(h.ikey), up(b, "b")) == 0);

	/* levels 1 and 2: level 1's */
	CHECK_OK(fst_lookup_get(&lk, up(b, "d"), &h, &err), &err);
	CHECK(h.found && h.hdr.seq == 42 && payload_is(&h, "l1"));

	/* level 2 only */
	CHECK_OK(fst_lookup_get(&lk, up(b, "q"), &h, &err), &err);
	CHECK(h.found && h.hdr.seq == 17 && payload_is(&h, "l2"));
	CHECK_EQ_INT(h.file->file_id, 7);

	/* the position is the version's address in its file */
	{
		FstBuf		k,
					v;

		fst_buf_init(&k);
		fst_buf_init(&v);
		CHECK_OK(fst_sst_read_at(fx.r[0], h.block, h.entry, &k, &v, &err), &err);
		CHECK(fst_slice_cmp(fst_slice(k.data, k.len), h.ikey) == 0);
		fst_buf_free(&k);
		fst_buf_free(&v);
	}

	/* a newer version in a memtable wins; memtable order does not matter */
	{
		FstMemtable *mts[2];
		TestEntry	me;
		uint32		ref;

		mts[0] = test_mt_create(1 << 20, 1);
		mts[1] = test_mt_create(1 << 20, 2);
		CHECK(mts[0] && mts[1]);
		ent(&me, "q", 70, FST_ENTRY_COMMITTED, 400, "m0");
		CHECK_OK(mt_put(mts[1], &me, &ref, &err), &err);
		ent(&me, "q", 80, FST_ENTRY_COMMITTED, 400, "m1");
		CHECK_OK(mt_put(mts[0], &me, &ref, &err), &err);
		lk.memtables = mts;
		lk.nmemtables = 2;
		fx.opened = 0;
		CHECK_OK(fst_lookup_get(&lk, up(b, "q"), &h, &err), &err);
		CHECK(h.found && !h.in_sst && h.memtable == 0 && h.ref == ref);
		CHECK(h.hdr.seq == 80 && payload_is(&h, "m1"));
		/* every file's versions are older: none was opened */
		CHECK_EQ_INT(fx.opened, 0);
		lk.memtables = NULL;
		lk.nmemtables = 0;
		test_mt_free(mts[0]);
		test_mt_free(mts[1]);
	}

	lk_free(&fx);
	fst_buf_free(&entry);
}

/*
 * expect_found: the last file's filter is not read, and the answers are
 * those of a lookup that reads every filter, for keys that exist in one
 * level or several, and for a key that does not exist.
 */
FST_TEST(lookup_expect_found)
{
	LkFixture	fx;
	FstLookup	lk;
	FstLookup	plain;
	FstLookupHit h,
				hp;
	FstBuf		entry,
				entry2;
	FstError	err;
	char		b[16];
	const char *keys[] = {"b", "d", "q", "e", "zz", "c"};

	fst_buf_init(&entry);
	fst_buf_init(&entry2);
	CHECK_OK(lk_setup(&fx, &err), &err);
	lk_init(&lk, &fx, &entry);
	lk_init(&plain, &fx, &entry2);
	lk.expect_found = true;
	for (int i = 0; i < (int) lengthof(keys); i++)
	{
		CHECK_OK(fst_lookup_get(&lk, up(b, keys[i]), &h, &err), &err);
		CHECK_OK(fst_lookup_get(&plain, up(b, keys[i]), &hp, &err), &err);
		CHECK(h.found == hp.found);
		if (h.found)
		{
			CHECK_EQ_INT(h.hdr.seq, hp.hdr.seq);
			CHECK_EQ_INT(h.file->file_id, hp.file->file_id);
			CHECK(h.value.len == hp.value.len &&
				  memcmp(h.value.data, hp.value.data, h.value.len) == 0);
		}
	}
	/* q may be in levels 1 and 2: both filters read, or level 1's only */
	lk.stats.bloom_checks = plain.stats.bloom_checks = 0;
	CHECK_OK(fst_lookup_get(&lk, up(b, "q"), &h, &err), &err);
	CHECK_OK(fst_lookup_get(&plain, up(b, "q"), &hp, &err), &err);
	CHECK(h.found && hp.found);
	CHECK_EQ_INT(plain.stats.bloom_checks - lk.stats.bloom_checks, 1);
	lk_free(&fx);
	fst_buf_free(&entry);
	fst_buf_free(&entry2);
}

FST_TEST(lookup_tombstone)
{
	LkFixture	fx;
	FstLookup	lk;
	FstLookupHit h;
	FstBuf		entry;
	FstError	err;
	char		b[16];

	fst_buf_init(&entry);
	CHECK_OK(lk_setup(&fx, &err), &err);
	lk_init(&lk, &fx, &entry);
	/* level 1's tombstone hides level 2's value: the caller sees it */
	CHECK_OK(fst_lookup_get(&lk, up(b, "c"), &h, &err), &err);
	CHECK(h.found);
	CHECK_EQ_INT(h.hdr.seq, 41);
	CHECK(h.hdr.flags & FST_ENTRY_TOMBSTONE);
	lk_free(&fx);
	fst_buf_free(&entry);
}

FST_TEST(lookup_missing_and_bloom)
{
	LkFixture	fx;
	FstLookup	lk;
	FstLookupHit h;
	FstBuf		entry;
	FstError	err;
	char		b[16];
	char		k[4];
	int			n = 0;

	fst_buf_init(&entry);
	CHECK_OK(lk_setup(&fx, &err), &err);
	lk_init(&lk, &fx, &entry);

	/* outside every file's range: no file is asked */
	CHECK_OK(fst_lookup_get(&lk, up(b, "zz"), &h, &err), &err);
	CHECK(!h.found);
	CHECK_OK(fst_lookup_get(&lk, up(b, "A"), &h, &err), &err);
	CHECK(!h.found);
	CHECK_EQ_INT(fx.opened, 0);
	CHECK_EQ_INT(lk.stats.bloom_checks, 0);

	/* inside level 2's range but absent ("a?"): the filter rules most out */
	for (int c = 0; c < 200; c++)
	{
		k[0] = 'a' + c % 25;
		k[1] = (char) (' ' + c / 25);
		k[2] = 0;
		CHECK_OK(fst_lookup_get(&lk, up(b, k), &h, &err), &err);
		CHECK(!h.found);
		n++;
	}
	CHECK(lk.stats.bloom_checks >= (uint64) n);
	CHECK(lk.stats.bloom_negatives > lk.stats.bloom_checks / 2);
	CHECK_EQ_INT(lk.stats.bloom_negatives + lk.stats.bloom_false_positives,
				 lk.stats.bloom_checks);
	lk_free(&fx);
	fst_buf_free(&entry);
}

/* Rejects one xid; records the last version it was called on. */
typedef struct AcceptCtx
{
	uint32		reject_xid;
	uint64		last_seq;
	int			calls;
} AcceptCtx;

static bool
accept_xid(void *arg, FstMemtable *mt, const FstEntryHeader *hdr, uint32 ref,
		   uint8 hint)
{
	AcceptCtx  *a = arg;

	a->calls++;
	a->last_seq = hdr->seq;
	return hdr->xid != a->reject_xid;
}

FST_TEST(lookup_visibility_callback)
{
	LkFixture	fx;
	FstLookup	lk;
	FstLookupHit h;
	FstBuf		entry;
	FstError	err;
	AcceptCtx	a = {666, 0, 0};
	char		b[16];

	fst_buf_init(&entry);
	CHECK_OK(lk_setup(&fx, &err), &err);
	lk_init(&lk, &fx, &entry);
	lk.accept = accept_xid;
	lk.accept_arg = &a;

	/* level 0's version of b is invisible: level 1's wins */
	CHECK_OK(fst_lookup_get(&lk, up(b, "b"), &h, &err), &err);
	CHECK(h.found && h.hdr.seq == 40 && payload_is(&h, "l1"));
	CHECK_EQ_INT(a.last_seq, 40);

	/* every version invisible: nothing */
	a.reject_xid = 100;
	CHECK_OK(fst_lookup_get(&lk, up(b, "q"), &h, &err), &err);
	CHECK(!h.found);

	/*
	 * The winner is not the last version accept() saw: it is called on the
	 * winner again.  The first memtable asked holds the winner (d at 50),
	 * the second an older invisible version (rejected last).
	 */
	{
		FstMemtable *mts[2];
		TestEntry	me;
		uint32		ref;

		mts[0] = test_mt_create(1 << 20, 3);
		mts[1] = test_mt_create(1 << 20, 4);
		CHECK(mts[0] && mts[1]);
		ent(&me, "d", 50, FST_ENTRY_COMMITTED, 300, "m");
		CHECK_OK(mt_put(mts[0], &me, &ref, &err), &err);
		ent(&me, "d", 45, FST_ENTRY_COMMITTED, 100, "m");
		CHECK_OK(mt_put(mts[1], &me, &ref, &err), &err);
		lk.memtables = mts;
		lk.nmemtables = 2;
		a.calls = 0;
		CHECK_OK(fst_lookup_get(&lk, up(b, "d"), &h, &err), &err);
		CHECK(h.found && !h.in_sst && h.memtable == 0 && h.hdr.seq == 50);
		CHECK_EQ_INT(a.calls, 3);
		CHECK_EQ_INT(a.last_seq, 50);
		lk.memtables = NULL;
		lk.nmemtables = 0;
		test_mt_free(mts[0]);
		test_mt_free(mts[1]);
	}

	/* a is in level 2 only: accept() is not called again on the winner */
	a.reject_xid = 0;
	a.calls = 0;
	CHECK_OK(fst_lookup_get(&lk, up(b, "a"), &h, &err), &err);
	CHECK(h.found && h.hdr.seq == 1);
	CHECK_EQ_INT(a.calls, 1);
	lk_free(&fx);
	fst_buf_free(&entry);
}

FST_TEST(lookup_read_error_propagates)
{
	LkFixture	fx;
	FstLookup	lk;
	FstLookupHit h;
	FstBuf		entry;
	FstError	err;
	FstCode		rc;
	char		b[16];

	fst_buf_init(&entry);
	CHECK_OK(lk_setup(&fx, &err), &err);
	lk_init(&lk, &fx, &entry);
	/* level 2's data blocks cannot be read (no cache holds them) */
	fx.src[0].fail = true;
	rc = fst_lookup_get(&lk, up(b, "q"), &h, &err);
	CHECK_EQ_INT(rc, FST_IO_ERROR);
	CHECK_MSG(strstr(err.msg, "injected read failure") != NULL &&
			  strstr(err.msg, "SST file 7") != NULL, "message: %s", err.msg);
	/* answered by level 0 before level 2 is reached: no error */
	CHECK_OK(fst_lookup_get(&lk, up(b, "e"), &h, &err), &err);
	CHECK(h.found && h.hdr.seq == 61);
	fx.src[0].fail = false;

	/* a reader that cannot be had */
	fx.ids[2] = 99;
	rc = fst_lookup_get(&lk, up(b, "e"), &h, &err);
	CHECK_EQ_INT(rc, FST_NOT_FOUND);
	lk_free(&fx);
	fst_buf_free(&entry);
}

/*
 * fst_lookup_plan_*: the files and blocks a batch of lookups will read are
 * the ones fst_lookup_get then reads; keys a memtable holds or no file
 * admits need none.
 */
FST_TEST(lookup_plan_names_the_reads)
{
	LkFixture	fx;
	FstLookup	lk;
	FstLookupHit h;
	FstLookupPlan plan;
	FstBuf		entry;
	FstError	err;
	FstMemtable *mts[1];
	TestEntry	me;
	uint32		ref;
	char		bufs[6][16];
	FstSlice	keys[6];
	const char *names[6] = {"b", "d", "q", "zz", "e", "b"};

	fst_buf_init(&entry);
	CHECK_OK(lk_setup(&fx, &err), &err);
	lk_init(&lk, &fx, &entry);
	mts[0] = test_mt_create(1 << 20, 1);
	CHECK(mts[0] != NULL);
	ent(&me, "q", 70, FST_ENTRY_COMMITTED, 400, "m0");
	CHECK_OK(mt_put(mts[0], &me, &ref, &err), &err);
	lk.memtables = mts;
	lk.nmemtables = 1;
	for (int i = 0; i < 6; i++)
		keys[i] = up(bufs[i], names[i]);

	/* phase 1 opens no reader and names files 9, 8, 7, newest first */
	fx.opened = 0;
	CHECK_OK(fst_lookup_plan_files(&lk, keys, 6, &plan, &err), &err);
	CHECK_EQ_INT(fx.opened, 0);
	CHECK(plan.held[2] && !plan.held[0] && !plan.held[3]);
	CHECK_EQ_INT(plan.keys_held, 1);
	CHECK_EQ_INT(plan.nfiles, 3);
	CHECK_EQ_INT(plan.files[0]->file_id, 9);
	CHECK_EQ_INT(plan.files[1]->file_id, 8);
	CHECK_EQ_INT(plan.files[2]->file_id, 7);

	/*
	 * phase 2: b and e in file 9 (one block: the file is small), d in file
	 * 8 (file 9's range holds d, its filter rules it out); zz in no file;
	 * q held; the duplicate b adds nothing
	 */
	CHECK_OK(fst_lookup_plan_blocks(&lk, keys, &plan, &err), &err);
	CHECK_EQ_INT(plan.keys_absent, 1);
	CHECK_EQ_INT(plan.nblocks, 2);
	CHECK_EQ_INT(plan.blocks[0].file->file_id, 8);
	CHECK_EQ_INT(plan.blocks[1].file->file_id, 9);
	CHECK(plan.blocks[0].len > 0 && plan.blocks[1].len > 0);
	CHECK(plan.bloom_negatives >= 1);
	fst_lookup_plan_free(&plan);
	CHECK(plan.held == NULL && plan.blocks == NULL && plan.files == NULL);

	/* every key of level 2's range: the planned block is the one read */
	lk.memtables = NULL;
	lk.nmemtables = 0;
	for (int c = 0; c < 26; c++)
	{
		char		k[2] = {(char) ('a' + c), 0};
		FstSlice	key = up(bufs[0], k);
		uint64		off,
					len;
		int			fi;

		CHECK_OK(fst_lookup_plan_files(&lk, &key, 1, &plan, &err), &err);
		CHECK_OK(fst_lookup_plan_blocks(&lk, &key, &plan, &err), &err);
		CHECK_OK(fst_lookup_get(&lk, key, &h, &err), &err);
		CHECK(h.found && h.in_sst);
		CHECK_EQ_INT(plan.nblocks, 1);
		CHECK_EQ_INT(plan.blocks[0].file->file_id, h.file->file_id);
		for (fi = 0; fi < fx.nfiles && fx.ids[fi] != h.file->file_id; fi++)
			;
		CHECK(fi < fx.nfiles);
		CHECK(fst_sst_block_for(fx.r[fi], key, &off, &len));
		CHECK_EQ_INT(plan.blocks[0].offset, off);
		CHECK_EQ_INT(plan.blocks[0].len, len);
		fst_lookup_plan_free(&plan);
	}

	/* an empty batch, and a batch over no files */
	CHECK_OK(fst_lookup_plan_files(&lk, keys, 0, &plan, &err), &err);
	CHECK_OK(fst_lookup_plan_blocks(&lk, keys, &plan, &err), &err);
	CHECK_EQ_INT(plan.nblocks, 0);
	fst_lookup_plan_free(&plan);
	lk.manifest = NULL;
	CHECK_OK(fst_lookup_plan_files(&lk, keys, 6, &plan, &err), &err);
	CHECK_OK(fst_lookup_plan_blocks(&lk, keys, &plan, &err), &err);
	CHECK_EQ_INT(plan.nfiles, 0);
	CHECK_EQ_INT(plan.nblocks, 0);
	CHECK_EQ_INT(plan.keys_absent, 6);
	fst_lookup_plan_free(&plan);

	test_mt_free(mts[0]);
	lk_free(&fx);
	fst_buf_free(&entry);
}
