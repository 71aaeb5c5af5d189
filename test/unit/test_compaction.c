/*
 * test_compaction.c — the compaction merge: drop rules, TTL, key-group
 * filter, custom hook, output splitting, interrupts, errors, and a
 * randomized check that every snapshot at or above the horizon reads the
 * same rows before and after.  Outputs are written to memory and read back
 * with the SST reader.
 */
#include "unit.h"
#include "kvtest.h"
#include "compaction.h"
#include "merge_iter.h"

#define MAX_OUT 256

/* An output factory keeping every file in memory. */
typedef struct MemOut
{
	int			n;
	FstBuf		bufs[MAX_OUT];
	FstBufSink	sinks[MAX_OUT];
	bool		finished[MAX_OUT];
	int			abandoned;
	int			fail_finish_at; /* finish of output n fails (-1: never) */
} MemOut;

static FstCode
mem_open(void *arg, uint64 *file_id, FstWriteSink **sink, FstError *err)
{
	MemOut	   *m = arg;
	int			i = m->n;

	if (i >= MAX_OUT)
		return fst_error(err, FST_IO_ERROR, "too many outputs");
	fst_buf_init(&m->bufs[i]);
	fst_buf_sink_init(&m->sinks[i], &m->bufs[i]);
	m->finished[i] = false;
	m->n++;
	*file_id = 1000 + i;
	*sink = &m->sinks[i].base;
	return FST_OK;
}

static FstCode
mem_finish(void *arg, uint64 file_id, const FstSstProps *props, FstError *err)
{
	MemOut	   *m = arg;
	int			i = (int) (file_id - 1000);

	if (i == m->fail_finish_at)
		return fst_error(err, FST_TRANSIENT, "upload failed");
	if (props->file_size != m->bufs[i].len)
		return fst_error(err, FST_CORRUPT, "size mismatch");
	m->finished[i] = true;
	return FST_OK;
}

static void
mem_abandon(void *arg, uint64 file_id)
{
	((MemOut *) arg)->abandoned++;
}

static void
mem_init(MemOut *m)
{
	memset(m, 0, sizeof(*m));
	m->fail_finish_at = -1;
}

static void
mem_free(MemOut *m)
{
	int			i;

	for (i = 0; i < m->n; i++)
		fst_buf_free(&m->bufs[i]);
	m->n = 0;
}

static void
params_init(FstCompactionParams *p, MemOut *m, uint64 horizon, bool bottom)
{
	memset(p, 0, sizeof(*p));
	fst_drop_policy_init(&p->policy, horizon, bottom);
	fst_sst_options_default(&p->sst);
	p->target_file_size = UINT64CONST(64) << 20;
	p->output_level = 3;
	p->output.open_output = mem_open;
	p->output.finish_output = mem_finish;
	p->output.abandon_output = mem_abandon;
	p->output.arg = m;
}

static void
kvs_add_copy(TestKVs *t, FstSlice k, FstSlice v)
{
	char	   *kb = malloc(k.len);
	char	   *vb = malloc(v.len);

	memcpy(kb, k.data, k.len);
	memcpy(vb, v.data, v.len);
	if (t->n == t->cap)
	{
		t->cap = t->cap ? t->cap * 2 : 16;
		t->kv = realloc(t->kv, sizeof(FstKV) * t->cap);
	}
	t->kv[t->n].key = fst_slice(kb, k.len);
	t->kv[t->n].value = fst_slice(vb, v.len);
	t->n++;
}

/* Reads every finished output back, in order, appending to out. */
static FstCode
read_outputs(MemOut *m, const FstCompactionResult *res, TestKVs *out,
			 FstError *err)
{
	int			i;

	for (i = 0; i < res->nfiles; i++)
	{
		int			idx = (int) (res->files[i].file_id - 1000);
		FstRangeSource *src;
		FstSstReader *r;
		FstIter    *it;
		FstCode		rc;

		if (!m->finished[idx])
			return fst_error(err, FST_INVALID_ARGUMENT, "unfinished output listed");
		src = fst_range_source_memory(m->bufs[idx].data, m->bufs[idx].len, false);
		rc = fst_sst_open(src, NULL, &r, err);
		if (rc != FST_OK)
		{
			fst_range_close(src);
			return rc;
		}
		it = fst_sst_iter_create(r);
		for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
			kvs_add_copy(out, fst_iter_key(it), fst_iter_value(it));
		rc = fst_iter_status(it, err);
		fst_iter_destroy(it);
		fst_sst_close(r);
		fst_range_close(src);
		if (rc != FST_OK)
			return rc;
	}
	return FST_OK;
}

/* Runs a compaction of in (sorted) and reads the result into out. */
static FstCode
run(const TestKVs *in, const FstCompactionParams *p, MemOut *m,
	FstCompactionResult *res, TestKVs *out, FstError *err)
{
	FstIter    *it = kvs_iter(in);
	FstCode		rc;

	fst_compaction_result_init(res);
	rc = fst_compaction_run(it, p, res, err);
	fst_iter_destroy(it);
	if (rc == FST_OK)
		rc = read_outputs(m, res, out, err);
	return rc;
}

/* Is out[i] the internal key (ukey, seq) with the given tombstone flag? */
static bool
out_is(const TestKVs *out, int i, const char *ukey, uint64 seq, bool tomb)
{
	FstEntry	e;

	if (i >= out->n || !fst_entry_decode(out->kv[i].key, out->kv[i].value, &e))
		return false;
	return e.user_key.len == strlen(ukey) &&
		memcmp(e.user_key.data, ukey, e.user_key.len) == 0 &&
		e.hdr.seq == seq &&
		((e.hdr.flags & FST_ENTRY_TOMBSTONE) != 0) == tomb &&
		(!tomb || e.payload.len == 0);
}

static void
basic_input(TestKVs *in)
{
	kvs_init(in);
	kvs_add(in, "a", 10, 0, "a10");
	kvs_add(in, "a", 8, 0, "a8");
	kvs_add(in, "a", 5, 0, "a5");
	kvs_add(in, "a", 3, 0, "a3");
	kvs_add(in, "b", 2, FST_ENTRY_TOMBSTONE, NULL);
	kvs_add(in, "b", 1, 0, "b1");
	kvs_add(in, "c", 9, FST_ENTRY_TOMBSTONE, NULL);
	kvs_add(in, "c", 4, 0, "c4");
	kvs_add(in, "d", 6, 0, "d6");	/* at the horizon of the tests */
	kvs_add(in, "d", 2, 0, "d2");
}

FST_TEST(compaction_horizon_and_tombstones_above_bottom)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;

	basic_input(&in);
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 6, false);
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, 7);
	CHECK(out_is(&out, 0, "a", 10, false));
	CHECK(out_is(&out, 1, "a", 8, false));
	CHECK(out_is(&out, 2, "a", 5, false));	/* what the horizon sees */
	CHECK(out_is(&out, 3, "b", 2, true));	/* kept above the bottom */
	CHECK(out_is(&out, 4, "c", 9, true));
	CHECK(out_is(&out, 5, "c", 4, false));
	CHECK(out_is(&out, 6, "d", 6, false));
	CHECK_EQ_INT(res.nfiles, 1);
	CHECK_EQ_INT(res.files[0].level, 3);
	CHECK_EQ_INT(res.files[0].num_entries, 7);
	CHECK_EQ_INT(res.files[0].num_tombstones, 2);
	CHECK_EQ_INT(res.stats.entries_in, 10);
	CHECK_EQ_INT(res.stats.entries_out, 7);
	CHECK_EQ_INT(res.stats.dropped_shadowed, 3);
	CHECK_EQ_INT(res.stats.dropped_tombstones, 0);
	CHECK(res.stats.bytes_in > res.stats.bytes_out && res.stats.bytes_out > 0);
	CHECK_EQ_INT(res.stats.file_bytes_out, res.files[0].size);
	CHECK_EQ_INT(m.abandoned, 0);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);
	kvs_free(&in);
}

FST_TEST(compaction_bottom_level_drops_tombstones)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;

	basic_input(&in);
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 6, true);
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, 6);
	CHECK(out_is(&out, 0, "a", 10, false));
	CHECK(out_is(&out, 2, "a", 5, false));
	CHECK(out_is(&out, 3, "c", 9, true));	/* above the horizon: kept */
	CHECK(out_is(&out, 4, "c", 4, false));
	CHECK(out_is(&out, 5, "d", 6, false));
	CHECK_EQ_INT(res.stats.dropped_tombstones, 1);
	CHECK_EQ_INT(res.stats.dropped_shadowed, 3);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);

	/* horizon beyond everything at the bottom: one live version per row */
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, FST_MAX_SEQ, true);
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, 2);
	CHECK(out_is(&out, 0, "a", 10, false));
	CHECK(out_is(&out, 1, "d", 6, false));
	CHECK_EQ_INT(res.stats.dropped_tombstones, 2);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);

	/* everything dropped: no output at all */
	kvs_free(&in);
	kvs_init(&in);
	kvs_add(&in, "x", 3, FST_ENTRY_TOMBSTONE, NULL);
	kvs_add(&in, "x", 2, 0, "x2");
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 10, true);
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(res.nfiles, 0);
	CHECK_EQ_INT(m.n, 0);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);
	kvs_free(&in);
}

/* Payload "t<number>" carries a TTL; anything else has none. */
static bool
test_ttl_of(void *arg, FstSlice payload, int64 *ttl)
{
	char		tmp[32];

	if (payload.len < 2 || payload.len >= sizeof(tmp) || payload.data[0] != 't')
		return false;
	memcpy(tmp, payload.data + 1, payload.len - 1);
	tmp[payload.len - 1] = '\0';
	*ttl = strtoll(tmp, NULL, 10);
	return true;
}

static void
ttl_input(TestKVs *in)
{
	kvs_init(in);
	kvs_add(in, "a", 5, 0, "t50");	/* expired, first below horizon */
	kvs_add(in, "a", 3, 0, "t500");
	kvs_add(in, "b", 9, 0, "t50");	/* expired but above the horizon */
	kvs_add(in, "b", 4, 0, "t40");	/* expired, first below */
	kvs_add(in, "c", 2, 0, "none");	/* no TTL */
	kvs_add(in, "d", 1, 0, "t700");	/* live */
}

FST_TEST(compaction_ttl_expiry)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;
	int			bottom;

	ttl_input(&in);
	for (bottom = 0; bottom <= 1; bottom++)
	{
		kvs_init(&out);
		mem_init(&m);
		params_init(&p, &m, 6, bottom);
		p.policy.ttl_enabled = true;
		p.policy.ttl_cutoff = 100;
		p.policy.ttl_of = test_ttl_of;
		CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
		if (!bottom)
		{
			CHECK_EQ_INT(out.n, 5);
			CHECK(out_is(&out, 0, "a", 5, true));	/* replaced */
			CHECK(out_is(&out, 1, "b", 9, false));
			CHECK(out_is(&out, 2, "b", 4, true));
			CHECK(out_is(&out, 3, "c", 2, false));
			CHECK(out_is(&out, 4, "d", 1, false));
			CHECK_EQ_INT(res.stats.expired_to_tombstone, 2);
			CHECK_EQ_INT(res.stats.dropped_expired, 0);
			CHECK_EQ_INT(res.files[0].num_tombstones, 2);
		}
		else
		{
			CHECK_EQ_INT(out.n, 3);
			CHECK(out_is(&out, 0, "b", 9, false));
			CHECK(out_is(&out, 1, "c", 2, false));
			CHECK(out_is(&out, 2, "d", 1, false));
			CHECK_EQ_INT(res.stats.dropped_expired, 2);
			CHECK_EQ_INT(res.stats.expired_to_tombstone, 0);
		}
		CHECK_EQ_INT(res.stats.dropped_shadowed, 1);	/* a@3 */
		/* the TTL range covers the rows written, not the tombstones */
		CHECK(res.files[0].has_ttl);
		CHECK_EQ_INT(res.files[0].ttl_min, 50);
		CHECK_EQ_INT(res.files[0].ttl_max, 700);
		fst_compaction_result_free(&res);
		kvs_free(&out);
		mem_free(&m);
	}
	kvs_free(&in);
}

FST_TEST(compaction_key_group_filter)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;
	int			kg,
				i;

	kvs_init(&in);
	for (kg = 0; kg < 5; kg++)
		for (i = 0; i < 3; i++)
		{
			char		uk[8];

			snprintf(uk, sizeof(uk), "k%d", i);
			kvs_add_raw(&in, (uint16) kg, uk, 2, 100 - i, FST_ENTRY_COMMITTED,
						7, "v", 1);
		}
	kvs_sort(&in);
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 0, false);
	p.policy.kg_filter = true;
	p.policy.kg_lo = 1;
	p.policy.kg_hi = 2;
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, 6);
	for (i = 0; i < out.n; i++)
	{
		kg = fst_ikey_key_group(out.kv[i].key);
		CHECK(kg >= 1 && kg <= 2);
	}
	CHECK_EQ_INT(res.stats.dropped_key_group, 9);
	CHECK_EQ_INT(res.files[0].kg_min, 1);
	CHECK_EQ_INT(res.files[0].kg_max, 2);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);
	kvs_free(&in);
}

typedef struct HookState
{
	int			calls;
	int			newest_calls;
} HookState;

/* Drops payload "drop", keeps payload "keep" whatever the rules say. */
static FstDropDecision
test_hook(void *arg, const FstEntry *e, bool newest_of_key)
{
	HookState  *h = arg;

	h->calls++;
	if (newest_of_key)
		h->newest_calls++;
	if (e->payload.len == 4 && memcmp(e->payload.data, "drop", 4) == 0)
		return FST_DROP_DROP;
	if (e->payload.len == 4 && memcmp(e->payload.data, "keep", 4) == 0)
		return FST_DROP_KEEP;
	if (e->payload.len == 4 && memcmp(e->payload.data, "tomb", 4) == 0)
		return FST_DROP_TOMBSTONE;
	return FST_DROP_DEFAULT;
}

FST_TEST(compaction_custom_hook)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;
	HookState	h = {0};

	kvs_init(&in);
	kvs_add(&in, "a", 9, 0, "drop");	/* above the horizon, dropped anyway */
	kvs_add(&in, "a", 4, 0, "a4");
	kvs_add(&in, "a", 2, 0, "keep");	/* shadowed, but kept */
	kvs_add(&in, "a", 1, 0, "a1");	/* shadowed */
	kvs_add(&in, "b", 3, 0, "drop");	/* first below: dropped... */
	kvs_add(&in, "b", 2, 0, "b2");	/* ...and still shadows b2 */
	kvs_add(&in, "c", 3, FST_ENTRY_TOMBSTONE, NULL);
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 5, true);
	p.policy.custom = test_hook;
	p.policy.custom_arg = &h;
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, 2);
	CHECK(out_is(&out, 0, "a", 4, false));
	CHECK(out_is(&out, 1, "a", 2, false));
	CHECK_EQ_INT(h.calls, 7);
	CHECK_EQ_INT(h.newest_calls, 3);
	CHECK_EQ_INT(res.stats.dropped_custom, 2);
	CHECK_EQ_INT(res.stats.dropped_shadowed, 2);
	CHECK_EQ_INT(res.stats.dropped_tombstones, 1);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);
	kvs_free(&in);
}

/* TOMBSTONE from the hook: same key and sequence, empty tombstone value */
FST_TEST(compaction_custom_hook_tombstone)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;
	HookState	h = {0};

	kvs_init(&in);
	kvs_add(&in, "a", 4, 0, "tomb");	/* becomes a tombstone at seq 4 */
	kvs_add(&in, "a", 3, 0, "a3");	/* shadowed by it */
	kvs_add(&in, "b", 2, 0, "b2");
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 5, false);
	p.policy.custom = test_hook;
	p.policy.custom_arg = &h;
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, 2);
	CHECK(out_is(&out, 0, "a", 4, true));
	CHECK(out_is(&out, 1, "b", 2, false));
	CHECK_EQ_INT(res.stats.expired_to_tombstone, 1);
	CHECK_EQ_INT(res.stats.dropped_shadowed, 1);
	CHECK_EQ_INT(res.files[0].num_tombstones, 1);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);
	kvs_free(&in);
}

FST_TEST(compaction_splits_outputs_between_rows)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;
	char		payload[200];
	uint64		total = 0;
	int			i,
				v;

	memset(payload, 'p', sizeof(payload));
	kvs_init(&in);
	for (i = 0; i < 300; i++)
	{
		char		uk[16];
		int			nver = (i % 50 == 7) ? 120 : 1 + i % 3;

		snprintf(uk, sizeof(uk), "row%05d", i);
		for (v = 0; v < nver; v++)
			kvs_add_raw(&in, 0, uk, strlen(uk), 1000000 - i * 1000 - v,
						FST_ENTRY_COMMITTED, 5, payload, sizeof(payload));
	}
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 0, false); /* horizon 0: every version is kept */
	p.sst.block_size = 1024;
	p.sst.compression = FST_COMPRESS_NONE;
	p.target_file_size = 8192;
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, in.n);
	CHECK(res.nfiles > 5);
	for (i = 0; i < res.nfiles; i++)
	{
		const FstFileMeta *f = &res.files[i];

		total += f->num_entries;
		if (i + 1 < res.nfiles)
		{
			/* disjoint user parts: no row straddles two files */
			CHECK(fst_slice_cmp(fst_ikey_user_part(fst_filemeta_largest(f)),
								fst_ikey_user_part(fst_filemeta_smallest(&res.files[i + 1]))) < 0);
			CHECK(f->size >= p.target_file_size);
			/* and a file ends soon after reaching the target */
			CHECK(f->size < p.target_file_size + 140 * 256);
		}
	}
	CHECK_EQ_INT(total, in.n);
	for (i = 0; i < in.n; i++)
		CHECK(fst_ikey_cmp(in.kv[i].key, out.kv[i].key) == 0);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);
	kvs_free(&in);
}

/*
 * Highly compressible rows: the size target alone would put them all in one
 * file, whose data blocks a TID could not all address.  max_file_blocks
 * cuts the outputs, still only between rows.
 */
FST_TEST(compaction_splits_outputs_by_block_count)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;
	char		payload[300];
	uint64		total = 0;
	int			i,
				v;

	memset(payload, 'q', sizeof(payload));
	kvs_init(&in);
	for (i = 0; i < 400; i++)
	{
		char		uk[16];
		int			nver = (i % 40 == 3) ? 12 : 1;

		snprintf(uk, sizeof(uk), "key%05d", i);
		for (v = 0; v < nver; v++)
			kvs_add_raw(&in, 0, uk, strlen(uk), 1000000 - i * 100 - v,
						FST_ENTRY_COMMITTED, 5, payload, sizeof(payload));
	}
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 0, false);	/* horizon 0: every version is kept */
	p.sst.block_size = 1024;
	p.sst.compression = FST_COMPRESS_LZ4;
	p.max_file_blocks = 16;
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, in.n);
	CHECK(res.nfiles > 5);
	for (i = 0; i < res.nfiles; i++)
	{
		int			idx = (int) (res.files[i].file_id - 1000);
		FstRangeSource *src = fst_range_source_memory(m.bufs[idx].data,
													  m.bufs[idx].len, false);
		FstSstReader *r;

		CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
		/* at the limit, plus the rest of one row of at most 12 versions */
		CHECK(fst_sst_props(r)->num_data_blocks <= p.max_file_blocks + 5);
		if (i + 1 < res.nfiles)
		{
			CHECK(fst_sst_props(r)->num_data_blocks >= p.max_file_blocks);
			CHECK(fst_slice_cmp(fst_ikey_user_part(fst_filemeta_largest(&res.files[i])),
								fst_ikey_user_part(fst_filemeta_smallest(&res.files[i + 1]))) < 0);
		}
		total += res.files[i].num_entries;
		fst_sst_close(r);
		fst_range_close(src);
	}
	CHECK_EQ_INT(total, in.n);
	for (i = 0; i < in.n; i++)
		CHECK(fst_ikey_cmp(in.kv[i].key, out.kv[i].key) == 0);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);
	kvs_free(&in);
}

static bool
stop_after(void *arg)
{
	return --(*(int *) arg) < 0;
}

FST_TEST(compaction_interrupt_and_errors)
{
	TestKVs		in;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;
	FstIter    *ch[2];
	FstIter    *it;
	int			budget = 3;
	int			i;

	kvs_init(&in);
	for (i = 0; i < 100; i++)
	{
		char		uk[16];

		snprintf(uk, sizeof(uk), "r%04d", i);
		kvs_add(&in, uk, 5, 0, "v");
	}
	/* interrupted after 4 checks of 10 entries: some output was open */
	mem_init(&m);
	params_init(&p, &m, 0, false);
	p.should_stop = stop_after;
	p.stop_arg = &budget;
	p.check_interval = 10;
	fst_compaction_result_init(&res);
	it = kvs_iter(&in);
	CHECK_EQ_INT(fst_compaction_run(it, &p, &res, &err), FST_INTERRUPTED);
	fst_iter_destroy(it);
	CHECK_EQ_INT(res.stats.entries_in, 39);
	CHECK_EQ_INT(m.abandoned, 1);
	CHECK_EQ_INT(res.nfiles, 0);
	fst_compaction_result_free(&res);
	mem_free(&m);

	/* an input error ends the compaction with that error */
	mem_init(&m);
	params_init(&p, &m, 0, false);
	ch[0] = kvs_iter(&in);
	ch[1] = fst_error_iter_create(FST_CORRUPT, "block checksum mismatch");
	it = fst_merge_iter_create(ch, 2);
	fst_compaction_result_init(&res);
	CHECK_EQ_INT(fst_compaction_run(it, &p, &res, &err), FST_CORRUPT);
	CHECK(strstr(err.msg, "checksum") != NULL);
	fst_iter_destroy(it);
	fst_compaction_result_free(&res);
	mem_free(&m);

	/* the factory failing to finish the second output */
	mem_init(&m);
	m.fail_finish_at = 1;
	params_init(&p, &m, 0, false);
	p.sst.block_size = 256;
	p.target_file_size = 512;
	fst_compaction_result_init(&res);
	it = kvs_iter(&in);
	CHECK_EQ_INT(fst_compaction_run(it, &p, &res, &err), FST_TRANSIENT);
	fst_iter_destroy(it);
	CHECK_EQ_INT(res.nfiles, 1);	/* the first one is durable and listed */
	CHECK_EQ_INT(m.abandoned, 1);
	fst_compaction_result_free(&res);
	mem_free(&m);
	kvs_free(&in);
}

/* Rows as of snap, as (key, value) pairs of the visible iterator. */
static void
visible_rows(FstIter *merged, uint64 snap, TestKVs *rows)
{
	FstIter    *it = fst_visible_iter_create(merged, snap, NULL, NULL);

	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
		kvs_add_copy(rows, fst_iter_key(it), fst_iter_value(it));
	fst_iter_destroy(it);
}

static bool
same_kvs(const TestKVs *a, const TestKVs *b)
{
	int			i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (fst_slice_cmp(a->kv[i].key, b->kv[i].key) != 0 ||
			fst_slice_cmp(a->kv[i].value, b->kv[i].value) != 0)
			return false;
	return true;
}

/*
 * Random versions in several sources, compacted with a random horizon:
 * every snapshot at or after the horizon reads the same rows.  At the
 * bottom level the output alone must do; above it, an older "lower level"
 * source stays underneath and must remain hidden where it was.
 */
FST_TEST(compaction_randomized_snapshots)
{
	uint64		rng = fst_test_seed();
	uint64		dropped = 0;
	uint64		files = 0;
	int			round;

	for (round = 0; round < 40; round++)
	{
		TestKVs		src[4],
					lower,
					out;
		int			nsrc = 1 + (int) fst_rand_range(&rng, 4);
		bool		bottom = fst_rand_range(&rng, 2) == 0;
		uint64		seq = 1000;
		uint64		horizon;
		uint64		snap;
		FstIter    *ch[5];
		MemOut		m;
		FstCompactionParams p;
		FstCompactionResult res;
		FstError	err;
		int			s,
					i;

		/* the lower level holds the oldest versions */
		kvs_init(&lower);
		for (i = 0; i < 30 && !bottom; i++)
		{
			char		uk[8];

			snprintf(uk, sizeof(uk), "k%02d", (int) fst_rand_range(&rng, 40));
			kvs_add(&lower, uk, 1 + fst_rand_range(&rng, 999), 0, "lower");
		}
		kvs_sort(&lower);
		for (i = 1; i < lower.n; i++)	/* no duplicate internal keys */
			if (fst_ikey_cmp(lower.kv[i - 1].key, lower.kv[i].key) == 0)
			{
				free((void *) lower.kv[i].key.data);
				free((void *) lower.kv[i].value.data);
				memmove(&lower.kv[i], &lower.kv[i + 1],
						sizeof(FstKV) * (lower.n - i - 1));
				lower.n--;
				i--;
			}
		for (s = 0; s < nsrc; s++)
		{
			int			n = (int) fst_rand_range(&rng, 80);

			kvs_init(&src[s]);
			for (i = 0; i < n; i++)
			{
				char		uk[8];
				char		pl[16];
				uint8		fl = fst_rand_range(&rng, 4) == 0 ?
					FST_ENTRY_TOMBSTONE : 0;

				snprintf(uk, sizeof(uk), "k%02d", (int) fst_rand_range(&rng, 40));
				snprintf(pl, sizeof(pl), "t%d", (int) fst_rand_range(&rng, 200));
				kvs_add(&src[s], uk, seq++, fl, fl ? NULL : pl);
			}
			kvs_sort(&src[s]);
		}
		horizon = 1000 + fst_rand_range(&rng, seq - 1000 + 1);

		mem_init(&m);
		params_init(&p, &m, horizon, bottom);
		p.sst.block_size = 256;
		p.target_file_size = 1 + fst_rand_range(&rng, 3000);
		for (s = 0; s < nsrc; s++)
			ch[s] = kvs_iter(&src[s]);
		{
			FstIter    *it = fst_merge_iter_create(ch, nsrc);

			fst_compaction_result_init(&res);
			CHECK_OK(fst_compaction_run(it, &p, &res, &err), &err);
			fst_iter_destroy(it);
		}
		kvs_init(&out);
		CHECK_OK(read_outputs(&m, &res, &out, &err), &err);
		for (i = 0; i + 1 < res.nfiles; i++)
			CHECK(fst_slice_cmp(fst_ikey_user_part(fst_filemeta_largest(&res.files[i])),
								fst_ikey_user_part(fst_filemeta_smallest(&res.files[i + 1]))) < 0);

		for (snap = horizon; snap <= seq; snap++)
		{
			TestKVs		before,
						after;

			kvs_init(&before);
			kvs_init(&after);
			for (s = 0; s < nsrc; s++)
				ch[s] = kvs_iter(&src[s]);
			ch[nsrc] = kvs_iter(&lower);
			visible_rows(fst_merge_iter_create(ch, nsrc + 1), snap, &before);
			ch[0] = kvs_iter(&out);
			ch[1] = kvs_iter(&lower);
			visible_rows(fst_merge_iter_create(ch, 2), snap, &after);
			CHECK_MSG(same_kvs(&before, &after),
					  "round %d snapshot " UINT64_FORMAT " horizon " UINT64_FORMAT
					  " bottom %d: %d rows before, %d after",
					  round, snap, horizon, bottom, before.n, after.n);
			kvs_free(&before);
			kvs_free(&after);
		}
		CHECK(res.stats.entries_out <= res.stats.entries_in);
		CHECK_EQ_INT(res.stats.entries_out, out.n);
		dropped += res.stats.dropped_shadowed + res.stats.dropped_tombstones;
		files += res.nfiles;

		fst_compaction_result_free(&res);
		mem_free(&m);
		kvs_free(&out);
		kvs_free(&lower);
		for (s = 0; s < nsrc; s++)
			kvs_free(&src[s]);
	}
	/* the rounds did exercise dropping and splitting */
	CHECK(dropped > 100);
	CHECK(files > 80);
}

/* Freezes what it is asked to; the rest is judged as usual. */
static FstDropDecision
freeze_hook(void *arg, const FstEntry *e, bool newest_of_key)
{
	if (e->payload.len > 0 && e->payload.data[0] == 'f')
		return FST_DROP_FREEZE;
	return FST_DROP_DEFAULT;
}

/*
 * FREEZE: the version is kept with the frozen and committed flags and a
 * zero xid and command id, its payload unchanged; the output's xid range
 * covers only what was not frozen, modulo 2^32.
 */
FST_TEST(compaction_freeze)
{
	TestKVs		in,
				out;
	MemOut		m;
	FstCompactionParams p;
	FstCompactionResult res;
	FstError	err;
	FstEntry	e;

	kvs_init(&in);
	kvs_add_raw(&in, 0, "a", 1, 9, FST_ENTRY_COMMITTED, 0xFFFFFFF0, "fa9", 3);
	kvs_add_raw(&in, 0, "b", 1, 8, FST_ENTRY_COMMITTED, 0xFFFFFFF8, "b8", 2);
	kvs_add_raw(&in, 0, "c", 1, 7, FST_ENTRY_COMMITTED | FST_ENTRY_TOMBSTONE,
				20, "f", 1);
	kvs_add_raw(&in, 0, "d", 1, 6, FST_ENTRY_COMMITTED, 5, "d6", 2);
	kvs_init(&out);
	mem_init(&m);
	params_init(&p, &m, 100, false);
	p.policy.custom = freeze_hook;
	CHECK_OK(run(&in, &p, &m, &res, &out, &err), &err);
	CHECK_EQ_INT(out.n, 4);
	CHECK_EQ_INT(res.stats.frozen, 2);
	CHECK(fst_entry_decode(out.kv[0].key, out.kv[0].value, &e));
	CHECK(e.hdr.flags == (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED));
	CHECK(e.hdr.xid == 0 && e.hdr.cid == 0 && e.hdr.seq == 9);
	CHECK(e.payload.len == 3 && memcmp(e.payload.data, "fa9", 3) == 0);
	CHECK(fst_entry_decode(out.kv[1].key, out.kv[1].value, &e));
	CHECK(e.hdr.flags == FST_ENTRY_COMMITTED && e.hdr.xid == 0xFFFFFFF8);
	CHECK(fst_entry_decode(out.kv[2].key, out.kv[2].value, &e));
	CHECK(e.hdr.flags == (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED | FST_ENTRY_TOMBSTONE));
	CHECK(e.hdr.xid == 0);
	/* 0xFFFFFFF8 .. 5 across the wrap; the frozen xids are not noted */
	CHECK(res.files[0].xid_min == 0xFFFFFFF8);
	CHECK(res.files[0].xid_max == 5);
	fst_compaction_result_free(&res);
	kvs_free(&out);
	mem_free(&m);
	kvs_free(&in);
}
