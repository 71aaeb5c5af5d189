/*
 * test_flush_build.c — fst_flush_build: a memtable's entries into a flush's
 * SST, with the transaction fate, freezing and TTL rules as callbacks.
 */
#include "memtable_testutil.h"
#include "flush_build.h"

/* xids: 10.. committed, 20.. running, 30.. aborted; below 15 frozen */
typedef struct FbRules
{
	int			fate_calls;
} FbRules;

static FstFlushFate
fb_fate(void *arg, uint32 xid)
{
	FbRules    *r = arg;

	r->fate_calls++;
	if (xid >= 10 && xid < 20)
		return FST_FLUSH_COMMITTED;
	if (xid >= 20 && xid < 30)
		return FST_FLUSH_PENDING;
	return FST_FLUSH_DROP;
}

static bool
fb_frozen(void *arg, uint32 xid)
{
	return xid < 15;
}

/* the payload's first byte is the TTL; '-' means none */
static bool
fb_ttl(void *arg, FstSlice payload, int64 *ttl)
{
	if (payload.len == 0 || payload.data[0] == '-')
		return false;
	*ttl = payload.data[0] - '0';
	return true;
}

/* A sink that fails once it got limit bytes. */
typedef struct FailSink
{
	FstWriteSink base;
	size_t		got;
	size_t		limit;
} FailSink;

static FstCode
fail_append(FstWriteSink *sink, const char *data, size_t len, FstError *err)
{
	FailSink   *fs = (FailSink *) sink;

	if (fs->got + len > fs->limit)
		return fst_error(err, FST_IO_ERROR, "injected write failure");
	fs->got += len;
	return FST_OK;
}

static FstCode
fb_put(FstMemtable *mt, const char *ukey, uint64 seq, uint8 flags, uint32 xid,
	   const char *payload, uint8 hint, FstError *err)
{
	TestEntry	e;
	uint32		ref;
	FstCode		rc;

	test_entry_make(&e, 0, ukey, strlen(ukey), seq, flags, xid, payload,
					strlen(payload));
	rc = mt_put(mt, &e, &ref, err);
	if (rc == FST_OK && hint)
		rc = fst_memtable_set_hint(mt, ref, hint, err);
	return rc;
}

FST_TEST(flush_build_filters_and_marks)
{
	FstMemtable *mt = test_mt_create(1 << 20, 5);
	FstFlushBuild fb;
	FbRules		rules = {0};
	FstBuf		file;
	FstBufSink	sink;
	FstSstProps props;
	FstSstReadOptions ro;
	FstSstReader *r;
	FstRangeSource *src;
	FstIter    *it;
	FstError	err;
	struct
	{
		const char *key;
		uint8		flags;		/* expected; 0xff: dropped */
		uint32		xid;
	}			want[] = {
		{"a", FST_ENTRY_COMMITTED | FST_ENTRY_FROZEN, 0},	/* frozen before */
		{"b", FST_ENTRY_COMMITTED | FST_ENTRY_FROZEN, 0},	/* committed, < 15 */
		{"c", FST_ENTRY_COMMITTED, 17},	/* committed, not frozen */
		{"e", 0, 22},			/* running: unmarked */
		{"f", FST_ENTRY_COMMITTED, 31},	/* hinted committed */
		{"h", FST_ENTRY_COMMITTED | FST_ENTRY_TOMBSTONE, 18},
		{"i", 0, 25},
	};
	int			n = 0;

	CHECK(mt);
	CHECK_OK(fb_put(mt, "a", 1, FST_ENTRY_COMMITTED | FST_ENTRY_FROZEN, 0, "5", 0, &err), &err);
	CHECK_OK(fb_put(mt, "b", 2, 0, 11, "3", 0, &err), &err);
	CHECK_OK(fb_put(mt, "c", 3, 0, 17, "-", 0, &err), &err);
	CHECK_OK(fb_put(mt, "d", 4, 0, 33, "1", 0, &err), &err);	/* aborted */
	CHECK_OK(fb_put(mt, "e", 5, 0, 22, "7", 0, &err), &err);
	CHECK_OK(fb_put(mt, "f", 6, 0, 31, "9", FST_MT_HINT_COMMITTED, &err), &err);
	CHECK_OK(fb_put(mt, "g", 9, 0, 12, "0", FST_MT_HINT_ABORTED, &err), &err);
	CHECK_OK(fb_put(mt, "h", 7, FST_ENTRY_TOMBSTONE, 18, "", 0, &err), &err);
	CHECK_OK(fb_put(mt, "i", 8, 0, 25, "8", 0, &err), &err);

	fst_flush_build_init(&fb);
	fb.opt.block_size = 256;
	fb.fate = fb_fate;
	fb.frozen = fb_frozen;
	fb.ttl = fb_ttl;
	fb.arg = &rules;
	fst_buf_init(&file);
	fst_buf_sink_init(&sink, &file);
	fst_sst_props_init(&props);
	CHECK_OK(fst_flush_build(mt, &fb, &sink.base, &props, &err), &err);
	CHECK_EQ_INT(fb.max_seq, 9);	/* dropped entries count too */
	CHECK_EQ_INT(fb.dropped, 2);
	CHECK_EQ_INT(fb.pending_xid_min, 22);
	CHECK_EQ_INT(fb.pending_xid_max, 25);
	CHECK_EQ_INT(rules.fate_calls, 6);	/* b c d e h i: not a, f, g */
	CHECK_EQ_INT(props.num_entries, 7);
	/* "-" never expires; the tombstone is not counted */
	CHECK(props.has_ttl);
	CHECK_EQ_INT(props.ttl_min, 3);
	CHECK_EQ_INT(props.ttl_max, PG_INT64_MAX);

	src = fst_range_source_memory(file.data, file.len, false);
	fst_sst_read_options_default(&ro);
	CHECK_OK(fst_sst_open(src, &ro, &r, &err), &err);
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
	{
		FstEntry	e;

		CHECK(fst_entry_decode(fst_iter_key(it), fst_iter_value(it), &e));
		CHECK(n < (int) lengthof(want));
		CHECK_MSG(e.user_part.len == 3 && e.user_part.data[2] == want[n].key[0],
				  "entry %d", n);
		CHECK_MSG(e.hdr.flags == want[n].flags, "entry %d flags %x, want %x",
				  n, e.hdr.flags, want[n].flags);
		CHECK_EQ_INT(e.hdr.xid, want[n].xid);
		n++;
	}
	CHECK_OK(fst_iter_status(it, &err), &err);
	CHECK_EQ_INT(n, lengthof(want));
	fst_iter_destroy(it);
	fst_sst_close(r);
	fst_range_close(src);
	fst_sst_props_free(&props);
	fst_buf_free(&file);

	/* no TTL rule: no TTL range; nothing frozen without frozen() */
	fst_flush_build_init(&fb);
	fb.fate = fb_fate;
	fb.arg = &rules;
	fst_buf_init(&file);
	fst_buf_sink_init(&sink, &file);
	fst_sst_props_init(&props);
	CHECK_OK(fst_flush_build(mt, &fb, &sink.base, &props, &err), &err);
	CHECK(!props.has_ttl);
	CHECK_EQ_INT(props.num_entries, 7);
	fst_sst_props_free(&props);
	fst_buf_free(&file);
	test_mt_free(mt);
}

FST_TEST(flush_build_all_dropped_and_errors)
{
	FstMemtable *mt = test_mt_create(1 << 20, 6);
	FstFlushBuild fb;
	FbRules		rules = {0};
	FstBuf		file;
	FstBufSink	sink;
	FailSink	fail;
	FstSstProps props;
	FstError	err;
	char		payload[200];
	FstCode		rc;

	CHECK(mt);
	CHECK_OK(fb_put(mt, "a", 1, 0, 30, "x", 0, &err), &err);
	CHECK_OK(fb_put(mt, "b", 2, 0, 31, "x", 0, &err), &err);
	fst_flush_build_init(&fb);
	fb.fate = fb_fate;
	fb.arg = &rules;
	fst_buf_init(&file);
	fst_buf_sink_init(&sink, &file);
	fst_sst_props_init(&props);
	CHECK_OK(fst_flush_build(mt, &fb, &sink.base, &props, &err), &err);
	CHECK_EQ_INT(props.num_entries, 0);		/* the caller writes no file */
	CHECK_EQ_INT(fb.max_seq, 2);
	fst_sst_props_free(&props);
	fst_buf_free(&file);

	/* a failing sink's error comes back */
	memset(payload, 'p', sizeof(payload) - 1);
	payload[sizeof(payload) - 1] = 0;
	for (int i = 0; i < 50; i++)
	{
		char		k[8];

		snprintf(k, sizeof(k), "k%03d", i);
		CHECK_OK(fb_put(mt, k, 100 + i, FST_ENTRY_COMMITTED, 10, payload, 0, &err), &err);
	}
	fb.opt.block_size = 256;
	memset(&fail, 0, sizeof(fail));
	fail.base.append = fail_append;
	fail.limit = 1000;
	rc = fst_flush_build(mt, &fb, &fail.base, NULL, &err);
	CHECK_EQ_INT(rc, FST_IO_ERROR);
	CHECK(strstr(err.msg, "injected write failure") != NULL);
	test_mt_free(mt);
}
