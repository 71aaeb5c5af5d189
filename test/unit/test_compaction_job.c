/*
 * test_compaction_job.c — fst_compaction_job_run: a picked compaction's
 * inputs merged into outputs with MVCC garbage collection under a horizon
 * given by callbacks, expiry, output splitting, the pending xid range, the
 * manifest edit, trivial moves, errors; and whole-file expiry.
 */
#include "sst_testutil.h"
#include "compaction.h"

#define CJ_MAX_IN 3
#define CJ_MAX_OUT 16

typedef struct CjFixture
{
	FstManifest m;				/* the inputs' records */
	FstBuf		bytes[CJ_MAX_IN];
	FstRangeSource *src[CJ_MAX_IN];
	FstSstReader *r[CJ_MAX_IN];
	int			nfiles;
	bool		fail_reader;
	/* outputs */
	int			nout;
	FstBuf		out[CJ_MAX_OUT];
	FstBufSink	sinks[CJ_MAX_OUT];
} CjFixture;

static FstCode
cj_reader(void *arg, const FstFileMeta *f, FstSstReader **r, FstError *err)
{
	CjFixture  *fx = arg;

	if (fx->fail_reader)
		return fst_error(err, FST_TRANSIENT, "injected open failure");
	*r = fx->r[f->file_id - 1];
	return FST_OK;
}

static FstCode
cj_open(void *arg, uint64 *file_id, FstWriteSink **sink, FstError *err)
{
	CjFixture  *fx = arg;
	int			i = fx->nout;

	if (i >= CJ_MAX_OUT)
		return fst_error(err, FST_IO_ERROR, "too many outputs");
	fst_buf_init(&fx->out[i]);
	fst_buf_sink_init(&fx->sinks[i], &fx->out[i]);
	fx->nout++;
	*file_id = 100 + i;
	*sink = &fx->sinks[i].base;
	return FST_OK;
}

static FstCode
cj_finish(void *arg, uint64 file_id, const FstSstProps *props, FstError *err)
{
	return FST_OK;
}

/* xids: 10 running, 11 aborted, else committed; before 20: seen by all */
static FstXidState
cj_xid_state(void *arg, uint32 xid)
{
	return xid == 10 ? FST_XID_RUNNING : xid == 11 ? FST_XID_ABORTED :
		FST_XID_COMMITTED;
}

static bool
cj_before_horizon(void *arg, uint32 xid)
{
	return xid < 20;
}

/* payload "E...": expired; TTL = the first byte */
static bool
cj_expired(void *arg, FstSlice payload)
{
	return payload.len > 0 && payload.data[0] == 'E';
}

static bool
cj_ttl(void *arg, FstSlice payload, int64 *ttl)
{
	if (payload.len == 0 || payload.data[0] == '-')
		return false;
	*ttl = (uint8) payload.data[0];
	return true;
}

static void
cj_ent(TestEntry *e, const char *k, uint64 seq, uint8 flags, uint32 xid,
	   const char *payload)
{
	test_entry_make(e, 0, k, strlen(k), seq, flags, xid, payload,
					strlen(payload));
}

static int
cj_cmp(const void *a, const void *b)
{
	const TestEntry *x = a;
	const TestEntry *y = b;

	return fst_ikey_cmp(fst_slice(x->key, x->klen), fst_slice(y->key, y->klen));
}

static FstCode
cj_add(CjFixture *fx, int level, TestEntry *e, int n, FstError *err)
{
	FstSstOptions o;
	FstSstReadOptions ro;
	FstSstProps props;
	FstFileMeta meta;
	int			i = fx->nfiles;
	FstCode		rc;

	qsort(e, n, sizeof(TestEntry), cj_cmp);
	fst_sst_options_default(&o);
	fst_sst_props_init(&props);
	rc = test_build_sst(e, n, &o, &fx->bytes[i], &props, err);
	if (rc != FST_OK)
		return rc;
	fx->src[i] = fst_range_source_memory(fx->bytes[i].data, fx->bytes[i].len, false);
	fst_sst_read_options_default(&ro);
	rc = fst_sst_open(fx->src[i], &ro, &fx->r[i], err);
	if (rc != FST_OK)
		return rc;
	memset(&meta, 0, sizeof(meta));
	if (!fst_sst_props_to_filemeta(&props, &meta))
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	fst_sst_props_free(&props);
	meta.file_id = i + 1;
	rc = fst_manifest_append_file(&fx->m, level, &meta, i == 2 ? "other/" : NULL, err);
	fst_filemeta_clear(&meta);
	fx->nfiles++;
	return rc;
}

static void
cj_free(CjFixture *fx)
{
	for (int i = 0; i < fx->nfiles; i++)
	{
		fst_sst_close(fx->r[i]);
		fst_range_close(fx->src[i]);
		fst_buf_free(&fx->bytes[i]);
	}
	for (int i = 0; i < fx->nout; i++)
		fst_buf_free(&fx->out[i]);
	fst_manifest_free(&fx->m);
}

/*
 * Level 0: files 1 (newer) and 2; level 1: file 3 (owned by "other/").
 */
static FstCode
cj_setup(CjFixture *fx, FstError *err)
{
	TestEntry	e[8];
	FstCode		rc;

	memset(fx, 0, sizeof(*fx));
	fst_manifest_init(&fx->m);
	cj_ent(&e[0], "a", 30, FST_ENTRY_COMMITTED, 25, "a30");	/* after horizon */
	cj_ent(&e[1], "b", 31, 0, 10, "b31");	/* running */
	cj_ent(&e[2], "c", 32, 0, 11, "c32");	/* aborted */
	cj_ent(&e[3], "d", 33, FST_ENTRY_COMMITTED | FST_ENTRY_TOMBSTONE, 5, "");
	rc = cj_add(fx, 0, e, 4, err);
	if (rc != FST_OK)
		return rc;
	cj_ent(&e[0], "a", 20, FST_ENTRY_COMMITTED, 5, "a20");	/* all-visible */
	cj_ent(&e[1], "e", 21, 0, 6, "Exp");	/* committed, expired */
	cj_ent(&e[2], "f", 22, 0, 7, "-f22");	/* committed, no TTL */
	rc = cj_add(fx, 0, e, 3, err);
	if (rc != FST_OK)
		return rc;
	cj_ent(&e[0], "a", 10, FST_ENTRY_COMMITTED, 3, "a10");	/* shadowed */
	cj_ent(&e[1], "c", 5, FST_ENTRY_COMMITTED | FST_ENTRY_FROZEN, 0, "c5");
	cj_ent(&e[2], "d", 4, FST_ENTRY_COMMITTED | FST_ENTRY_FROZEN, 0, "d4");
	cj_ent(&e[3], "e", 3, FST_ENTRY_COMMITTED | FST_ENTRY_FROZEN, 0, "Eold");
	return cj_add(fx, 1, e, 4, err);
}

static void
cj_pick(CjFixture *fx, FstCompactionPick *pick, const FstFileMeta **in0,
		const FstFileMeta **in1, bool bottom)
{
	memset(pick, 0, sizeof(*pick));
	pick->level = 0;
	pick->output_level = 1;
	in0[0] = &fx->m.levels[0].files[0].meta;
	in0[1] = &fx->m.levels[0].files[1].meta;
	in1[0] = &fx->m.levels[1].files[0].meta;
	pick->ninputs[0] = 2;
	pick->ninputs[1] = 1;
	pick->inputs[0] = in0;
	pick->inputs[1] = in1;
	pick->bottom_level = bottom;
}

static void
cj_job(FstCompactionJob *job, CjFixture *fx, const FstCompactionPick *pick)
{
	fst_compaction_job_init(job, pick);
	job->mvcc.xid_state = cj_xid_state;
	job->mvcc.before_horizon = cj_before_horizon;
	job->mvcc.expired = cj_expired;
	job->mvcc.ttl_of = cj_ttl;
	job->reader = cj_reader;
	job->reader_arg = fx;
	job->params.target_file_size = UINT64CONST(64) << 20;
	job->params.output.open_output = cj_open;
	job->params.output.finish_output = cj_finish;
	job->params.output.arg = fx;
}

/* "key:seq:flags" of every entry of output i, concatenated with spaces */
static void
cj_dump(CjFixture *fx, int i, char *buf, size_t size)
{
	FstRangeSource *src = fst_range_source_memory(fx->out[i].data, fx->out[i].len, false);
	FstSstReadOptions ro;
	FstSstReader *r;
	FstIter    *it;
	FstError	err;
	size_t		used = 0;

	buf[0] = 0;
	fst_sst_read_options_default(&ro);
	if (fst_sst_open(src, &ro, &r, &err) != FST_OK)
	{
		snprintf(buf, size, "open failed: %s", err.msg);
		fst_range_close(src);
		return;
	}
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
	{
		FstEntry	e;

		if (!fst_entry_decode(fst_iter_key(it), fst_iter_value(it), &e))
			break;
		used += snprintf(buf + used, size - used, "%s%.*s:%llu:%x",
						 used ? " " : "", (int) e.user_part.len - FST_KG_BYTES,
						 e.user_part.data + FST_KG_BYTES,
						 (unsigned long long) e.hdr.seq, e.hdr.flags);
		if (used >= size)
			break;
	}
	fst_iter_destroy(it);
	fst_sst_close(r);
	fst_range_close(src);
}

FST_TEST(compaction_job_gc_bottom)
{
	CjFixture	fx;
	FstCompactionPick pick;
	const FstFileMeta *in0[2],
			   *in1[1];
	FstCompactionJob job;
	FstManifestEdit edit;
	FstError	err;
	char		dump[512];

	CHECK_OK(cj_setup(&fx, &err), &err);
	cj_pick(&fx, &pick, in0, in1, true);
	cj_job(&job, &fx, &pick);
	fst_manifest_edit_init(&edit);
	CHECK_OK(fst_compaction_job_run(&job, &edit, &err), &err);
	CHECK_EQ_INT(fx.nout, 1);
	cj_dump(&fx, 0, dump, sizeof(dump));
	/*
	 * a: 30 kept, 20 frozen (6 = committed|frozen), 10 shadowed; b running,
	 * kept unmarked; c: 32 aborted, 5 frozen; d: the tombstone at the
	 * bottom goes, 4 shadowed; e: expired at the bottom goes, 3 shadowed;
	 * f frozen.
	 */
	CHECK_MSG(strcmp(dump, "a:30:2 a:20:6 b:31:0 c:5:6 f:22:6") == 0,
			  "outputs: %s", dump);
	CHECK_EQ_INT(job.expired_rows, 1);
	CHECK_EQ_INT(job.pending_xid_min, 10);
	CHECK_EQ_INT(job.pending_xid_max, 10);
	/* the edit: three inputs out (the borrowed one with its owner), one in */
	CHECK_EQ_INT(edit.nremoves, 3);
	CHECK_EQ_INT(edit.removes[0].level, 0);
	CHECK_EQ_INT(edit.removes[2].level, 1);
	CHECK(edit.removes[2].owner && strcmp(edit.removes[2].owner, "other/") == 0);
	CHECK_EQ_INT(edit.nadds, 1);
	CHECK_EQ_INT(edit.adds[0].meta.level, 1);
	CHECK_EQ_INT(edit.adds[0].meta.file_id, 100);
	CHECK_EQ_INT(edit.adds[0].meta.pending_xid_min, 10);
	CHECK(edit.adds[0].owner == NULL);
	/* TTL range: "-f22" has none (never expires) */
	CHECK(edit.adds[0].meta.has_ttl);
	CHECK_EQ_INT(edit.adds[0].meta.ttl_max, PG_INT64_MAX);
	CHECK_EQ_INT(edit.adds[0].meta.ttl_min, 'a');
	fst_manifest_edit_free(&edit);
	fst_compaction_job_free(&job);
	cj_free(&fx);
}

FST_TEST(compaction_job_gc_above_bottom_and_split)
{
	CjFixture	fx;
	FstCompactionPick pick;
	const FstFileMeta *in0[2],
			   *in1[1];
	FstCompactionJob job;
	FstManifestEdit edit;
	FstError	err;
	char		dump[512];
	char		all[1024] = "";

	CHECK_OK(cj_setup(&fx, &err), &err);
	cj_pick(&fx, &pick, in0, in1, false);
	cj_job(&job, &fx, &pick);
	job.params.target_file_size = 1;	/* every row its own file */
	fst_manifest_edit_init(&edit);
	CHECK_OK(fst_compaction_job_run(&job, &edit, &err), &err);
	/* above the bottom: the tombstone stays (frozen), e becomes one (as
	 * compaction.c makes them: the tombstone flag and the old header) */
	CHECK_EQ_INT(fx.nout, 6);
	for (int i = 0; i < fx.nout; i++)
	{
		cj_dump(&fx, i, dump, sizeof(dump));
		strcat(all, i ? " | " : "");
		strcat(all, dump);
	}
	CHECK_MSG(strcmp(all, "a:30:2 a:20:6 | b:31:0 | c:5:6 | d:33:7 | e:21:1 | f:22:6") == 0,
			  "outputs: %s", all);
	CHECK_EQ_INT(job.expired_rows, 1);
	CHECK_EQ_INT(edit.nadds, 6);
	/* every output carries the range over all of them */
	for (int i = 0; i < edit.nadds; i++)
		CHECK_EQ_INT(edit.adds[i].meta.pending_xid_max, 10);
	fst_manifest_edit_free(&edit);
	fst_compaction_job_free(&job);
	cj_free(&fx);
}

FST_TEST(compaction_job_trivial_move_and_errors)
{
	CjFixture	fx;
	FstCompactionPick pick;
	const FstFileMeta *in0[2],
			   *in1[1];
	FstCompactionJob job;
	FstManifestEdit edit;
	FstError	err;
	FstCode		rc;

	CHECK_OK(cj_setup(&fx, &err), &err);

	/* the borrowed level-1 file moves to level 2 unread, owner kept */
	cj_pick(&fx, &pick, in0, in1, false);
	pick.level = 1;
	pick.output_level = 2;
	pick.trivial_move = true;
	pick.inputs[0] = in1;
	pick.ninputs[0] = 1;
	pick.ninputs[1] = 0;
	cj_job(&job, &fx, &pick);
	fx.fail_reader = true;		/* not asked */
	fst_manifest_edit_init(&edit);
	CHECK_OK(fst_compaction_job_run(&job, &edit, &err), &err);
	CHECK_EQ_INT(fx.nout, 0);
	CHECK_EQ_INT(edit.nremoves, 1);
	CHECK_EQ_INT(edit.nadds, 1);
	CHECK_EQ_INT(edit.adds[0].meta.level, 2);
	CHECK_EQ_INT(edit.adds[0].meta.file_id, 3);
	CHECK(edit.adds[0].owner && strcmp(edit.adds[0].owner, "other/") == 0);
	fst_manifest_edit_free(&edit);
	fst_compaction_job_free(&job);

	/* a reader that cannot be had: the error comes back, nothing written */
	cj_pick(&fx, &pick, in0, in1, true);
	cj_job(&job, &fx, &pick);
	fst_manifest_edit_init(&edit);
	rc = fst_compaction_job_run(&job, &edit, &err);
	CHECK_EQ_INT(rc, FST_TRANSIENT);
	CHECK(strstr(err.msg, "injected open failure") != NULL);
	CHECK_EQ_INT(fx.nout, 0);
	fst_manifest_edit_free(&edit);
	fst_compaction_job_free(&job);
	cj_free(&fx);
}

FST_TEST(compaction_expired_files_rule)
{
	FstManifest m;
	FstManifestEdit edit;
	FstFileMeta f;
	FstError	err;
	int			n;
	uint64		bytes,
				rows;
	char		lo[16],
				hi[16];
	size_t		lol,
				hil;

	fst_manifest_init(&m);
	lol = fst_ikey_build(lo, 0, "a", 1, 1);
	hil = fst_ikey_build(hi, 0, "z", 1, 1);
	for (int l = 0; l < 3; l++)
	{
		memset(&f, 0, sizeof(f));
		CHECK(fst_filemeta_set_range(&f, fst_slice(lo, lol), fst_slice(hi, hil)));
		f.file_id = 10 + l;
		f.size = 100;
		f.num_entries = 5;
		f.has_ttl = true;
		f.ttl_min = 1;
		f.ttl_max = l == 1 ? 50 : 9;	/* level 1's not wholly expired */
		CHECK_OK(fst_manifest_append_file(&m, l, &f, NULL, &err), &err);
		fst_filemeta_clear(&f);
	}
	/* TTL in a key column: every level */
	fst_manifest_edit_init(&edit);
	CHECK_OK(fst_compaction_expired_files(&m, 10, true, &edit, &n, &bytes, &rows, &err), &err);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(bytes, 200);
	CHECK_EQ_INT(rows, 10);
	fst_manifest_edit_free(&edit);
	/* otherwise the deepest level only */
	fst_manifest_edit_init(&edit);
	CHECK_OK(fst_compaction_expired_files(&m, 10, false, &edit, &n, &bytes, &rows, &err), &err);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(edit.removes[0].file_id, 12);
	fst_manifest_edit_free(&edit);
	fst_manifest_free(&m);
}
