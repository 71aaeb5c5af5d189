/*
 * test_model.c — the randomized model test of the engine core.
 *
 * Random puts and deletes, with sequence numbers that grow with random gaps,
 * are flushed batch by batch into level-0 SST files; leveled compactions are
 * picked and run at random horizons (the oldest snapshot still open); the
 * file set lives in a manifest that every step edits, encodes and decodes.
 * After every step, at several snapshots not older than the horizon, every
 * point lookup and a full scan must equal a plain in-memory model: for each
 * key, the newest version at or below the snapshot, absent if a tombstone.
 *
 * Keys are drawn from four key groups and a two-letter alphabet so that many
 * user keys are prefixes of others (the comparator's tricky case).
 */
#include "sst_testutil.h"
#include "compaction.h"
#include "compaction_pick.h"
#include "manifest.h"
#include "merge_iter.h"

#define MODEL_KEYS		160
#define MODEL_STEPS		70
#define MODEL_MAX_FILES 4096

typedef struct ModelVersion
{
	uint64		seq;
	bool		tomb;
	char		val[24];
	int			vlen;
} ModelVersion;

typedef struct ModelKey
{
	char		up[16];			/* user part: key group + user key */
	int			uplen;
	ModelVersion *v;			/* ascending seq */
	int			nv;
	int			cap;
} ModelKey;

typedef struct Model
{
	ModelKey	keys[MODEL_KEYS];
	int			nkeys;
	FstBuf		files[MODEL_MAX_FILES];	/* by file id */
	FstManifest m;
	uint64		seq;
	uint64		horizon;
	uint64		rng;
	FstBufSink	sink;
	uint64		open_id;
	int			compactions;
	int			trivial_moves;
	uint64		dropped;
} Model;

static int
cmp_modelkey(const void *a, const void *b)
{
	const ModelKey *x = a,
			   *y = b;

	return fst_slice_cmp(fst_slice(x->up, x->uplen), fst_slice(y->up, y->uplen));
}

static void
model_make_keys(Model *md)
{
	while (md->nkeys < MODEL_KEYS)
	{
		ModelKey	k;
		int			len = (int) fst_rand_range(&md->rng, 7);
		int			i;
		bool		dup = false;

		memset(&k, 0, sizeof(k));
		fst_put_be16(k.up, (uint16) fst_rand_range(&md->rng, 4));
		for (i = 0; i < len; i++)
			k.up[2 + i] = "ab"[fst_rand_range(&md->rng, 2)];
		k.uplen = 2 + len;
		for (i = 0; i < md->nkeys && !dup; i++)
			dup = md->keys[i].uplen == k.uplen && memcmp(md->keys[i].up, k.up, k.uplen) == 0;
		if (!dup)
			md->keys[md->nkeys++] = k;
	}
	qsort(md->keys, md->nkeys, sizeof(ModelKey), cmp_modelkey);
}

/* The model's answer: newest version with seq <= snap, or NULL. */
static const ModelVersion *
model_visible(const ModelKey *k, uint64 snap)
{
	int			i;

	for (i = k->nv - 1; i >= 0; i--)
		if (k->v[i].seq <= snap)
			return k->v[i].tomb ? NULL : &k->v[i];
	return NULL;
}

static int
cmp_testentry(const void *a, const void *b)
{
	const TestEntry *x = a,
			   *y = b;

	return fst_ikey_cmp(fst_slice(x->key, x->klen), fst_slice(y->key, y->klen));
}

/* One batch of random writes flushed into a new L0 file. */
static FstCode
model_flush(Model *md, FstError *err)
{
	int			n = 1 + (int) fst_rand_range(&md->rng, 60);
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o;
	FstSstProps props;
	FstManifestEdit edit;
	FstManifest next;
	FstFileMeta meta;
	uint64		id = md->m.next_file_id;
	FstCode		rc;
	int			i;

	for (i = 0; i < n; i++)
	{
		ModelKey   *k = &md->keys[fst_rand_range(&md->rng, md->nkeys)];
		ModelVersion *v;

		if (k->nv == k->cap)
		{
			k->cap = k->cap ? k->cap * 2 : 4;
			k->v = fst_realloc(k->v, k->cap * sizeof(ModelVersion));
		}
		v = &k->v[k->nv++];
		md->seq += 1 + fst_rand_range(&md->rng, 3);
		v->seq = md->seq;
		v->tomb = fst_rand_range(&md->rng, 4) == 0;
		v->vlen = v->tomb ? 0 : snprintf(v->val, sizeof(v->val), "v%llu", (unsigned long long) v->seq);
		test_entry_make(&ents[i], fst_get_be16(k->up), k->up + 2, k->uplen - 2, v->seq,
						FST_ENTRY_COMMITTED | (v->tomb ? FST_ENTRY_TOMBSTONE : 0),
						(uint32) v->seq, v->val, v->vlen);
	}
	qsort(ents, n, sizeof(TestEntry), cmp_testentry);
	fst_sst_options_default(&o);
	o.block_size = 256 + fst_rand_range(&md->rng, 512);
	fst_sst_props_init(&props);
	rc = test_build_sst(ents, n, &o, &md->files[id], &props, err);
	fst_free(ents);
	if (rc != FST_OK)
		return rc;
	memset(&meta, 0, sizeof(meta));
	fst_sst_props_to_filemeta(&props, &meta);
	meta.file_id = id;
	fst_sst_props_free(&props);

	fst_manifest_edit_init(&edit);
	fst_manifest_edit_add(&edit, 0, &meta, NULL, err);
	edit.has_next_file_id = true;
	edit.next_file_id = id + 1;
	edit.has_last_seq = true;
	edit.last_seq = md->seq;
	rc = fst_manifest_apply(&md->m, &edit, &next, err);
	fst_manifest_edit_free(&edit);
	fst_filemeta_clear(&meta);
	if (rc != FST_OK)
		return rc;
	fst_manifest_free(&md->m);
	md->m = next;
	return FST_OK;
}

static FstIter *
open_file_iter(Model *md, uint64 id, FstRangeSource **src, FstSstReader **r)
{
	FstError	err;

	*src = fst_range_source_memory(md->files[id].data, md->files[id].len, false);
	if (fst_sst_open(*src, NULL, r, &err) != FST_OK)
		return fst_error_iter_create(err.code, err.msg);
	return fst_sst_iter_create(*r);
}

static FstCode
out_open(void *arg, uint64 *file_id, FstWriteSink **sink, FstError *err)
{
	Model	   *md = arg;

	if (md->m.next_file_id + md->open_id >= MODEL_MAX_FILES)
		return fst_error(err, FST_FULL, "model ran out of file ids");
	*file_id = md->m.next_file_id + md->open_id++;
	fst_buf_init(&md->files[*file_id]);
	fst_buf_sink_init(&md->sink, &md->files[*file_id]);
	*sink = &md->sink.base;
	return FST_OK;
}

static FstCode
out_finish(void *arg, uint64 file_id, const FstSstProps *props, FstError *err)
{
	return FST_OK;
}

/* Picks and runs one compaction, if any is due; *ran tells. */
static FstCode
model_compact(Model *md, bool *ran, FstError *err)
{
	const FstFileMeta **arrays[FST_NUM_LEVELS];
	FstLevels	levels;
	FstCompactionPickOptions po;
	FstCompactionPick pick;
	FstCompactionParams params;
	FstCompactionResult result;
	FstIter    *children[256];
	FstRangeSource *srcs[256];
	FstSstReader *readers[256];
	FstManifestEdit edit;
	FstManifest next;
	bool		picked;
	FstCode		rc;
	int			nchild = 0;
	int			l,
				i,
				s;

	*ran = false;
	memset(&levels, 0, sizeof(levels));
	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		arrays[l] = fst_calloc(md->m.levels[l].nfiles + 1, sizeof(FstFileMeta *));
		for (i = 0; i < md->m.levels[l].nfiles; i++)
			arrays[l][i] = &md->m.levels[l].files[i].meta;
		levels.files[l] = arrays[l];
		levels.nfiles[l] = md->m.levels[l].nfiles;
	}
	fst_compaction_pick_options_default(&po);
	po.l0_compaction_trigger = 2 + (int) fst_rand_range(&md->rng, 3);
	po.level1_target_bytes = 4096;
	po.level_multiplier = 4;
	rc = fst_compaction_pick(&levels, &po, &pick, &picked, err);
	if (rc != FST_OK || !picked)
		goto out;
	*ran = true;

	/* the oldest open snapshot moves forward at random */
	md->horizon += fst_rand_range(&md->rng, md->seq - md->horizon + 1);

	fst_manifest_edit_init(&edit);
	for (s = 0; s < 2; s++)
		for (i = 0; i < pick.ninputs[s]; i++)
		{
			const FstFileMeta *f = pick.inputs[s][i];

			fst_manifest_edit_remove(&edit, s == 0 ? pick.level : pick.output_level,
									 f->file_id, NULL, err);
			if (!pick.trivial_move)
				children[nchild] = open_file_iter(md, f->file_id, &srcs[nchild], &readers[nchild]),
					nchild++;
		}
	fst_compaction_result_init(&result);
	if (pick.trivial_move)
	{
		FstFileMeta moved;

		fst_filemeta_copy(&moved, pick.inputs[0][0]);
		moved.level = pick.output_level;
		fst_manifest_edit_add(&edit, pick.output_level, &moved, NULL, err);
		fst_filemeta_clear(&moved);
		md->trivial_moves++;
	}
	else
	{
		FstIter    *merged = fst_merge_iter_create(children, nchild);

		memset(&params, 0, sizeof(params));
		fst_drop_policy_init(&params.policy, md->horizon, pick.bottom_level);
		fst_sst_options_default(&params.sst);
		params.sst.block_size = 512;
		params.target_file_size = 1024 + fst_rand_range(&md->rng, 4096);
		params.output_level = pick.output_level;
		params.output.open_output = out_open;
		params.output.finish_output = out_finish;
		params.output.arg = md;
		md->open_id = 0;
		rc = fst_compaction_run(merged, &params, &result, err);
		fst_iter_destroy(merged);
		for (i = 0; i < nchild; i++)
		{
			fst_sst_close(readers[i]);
			fst_range_close(srcs[i]);
		}
		if (rc == FST_OK)
		{
			for (i = 0; i < result.nfiles; i++)
				fst_manifest_edit_add(&edit, pick.output_level, &result.files[i], NULL, err);
			edit.has_next_file_id = true;
			edit.next_file_id = md->m.next_file_id + md->open_id;
			md->dropped += result.stats.dropped_shadowed + result.stats.dropped_tombstones;
		}
		md->compactions++;
	}
	if (rc == FST_OK)
		rc = fst_manifest_apply(&md->m, &edit, &next, err);
	if (rc == FST_OK)
	{
		fst_manifest_free(&md->m);
		md->m = next;
	}
	fst_manifest_edit_free(&edit);
	fst_compaction_result_free(&result);
	fst_compaction_pick_free(&pick);
out:
	for (l = 0; l < FST_NUM_LEVELS; l++)
		fst_free(arrays[l]);
	return rc;
}

/* Point lookup through the levels, newest source first. */
static FstCode
engine_get(Model *md, const ModelKey *k, uint64 snap, FstGetResult *res,
		   FstBuf *val, FstError *err)
{
	int			l,
				i;

	*res = FST_GET_NONE;
	for (l = 0; l < FST_NUM_LEVELS && *res == FST_GET_NONE; l++)
	{
		for (i = 0; i < md->m.levels[l].nfiles && *res == FST_GET_NONE; i++)
		{
			const FstFileMeta *f = &md->m.levels[l].files[i].meta;
			FstRangeSource *src;
			FstSstReader *r;
			FstCode		rc;

			if (fst_slice_cmp(fst_slice(k->up, k->uplen), fst_ikey_user_part(fst_filemeta_smallest(f))) < 0 ||
				fst_slice_cmp(fst_slice(k->up, k->uplen), fst_ikey_user_part(fst_filemeta_largest(f))) > 0)
				continue;
			src = fst_range_source_memory(md->files[f->file_id].data, md->files[f->file_id].len, false);
			rc = fst_sst_open(src, NULL, &r, err);
			if (rc == FST_OK)
			{
				rc = fst_sst_get(r, fst_slice(k->up, k->uplen), snap, NULL, NULL, res, NULL, val, err);
				fst_sst_close(r);
			}
			fst_range_close(src);
			if (rc != FST_OK)
				return rc;
		}
	}
	return FST_OK;
}

static void
model_verify(Model *md, uint64 snap, int step)
{
	FstIter    *children[512];
	FstRangeSource *srcs[512];
	FstSstReader *readers[512];
	FstIter    *vis;
	FstBuf		val;
	FstError	err;
	int			n = 0,
				l,
				i,
				ki;

	fst_buf_init(&val);
	for (ki = 0; ki < md->nkeys; ki++)
	{
		const ModelVersion *want = model_visible(&md->keys[ki], snap);
		FstGetResult res;

		CHECK_OK(engine_get(md, &md->keys[ki], snap, &res, &val, &err), &err);
		CHECK_MSG((res == FST_GET_FOUND) == (want != NULL),
				  "step %d snapshot %llu key %d: engine %d, model %s", step,
				  (unsigned long long) snap, ki, res, want ? "found" : "absent");
		if (want)
			CHECK_MSG(val.len == FST_ENTRY_HEADER_SIZE + (size_t) want->vlen &&
					  memcmp(val.data + FST_ENTRY_HEADER_SIZE, want->val, want->vlen) == 0,
					  "step %d key %d: wrong value", step, ki);
	}
	fst_buf_free(&val);

	/* full scan over every file, newest source first */
	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < md->m.levels[l].nfiles; i++, n++)
			children[n] = open_file_iter(md, md->m.levels[l].files[i].meta.file_id,
										 &srcs[n], &readers[n]);
	vis = fst_visible_iter_create(fst_merge_iter_create(children, n), snap, NULL, NULL);
	fst_iter_seek_first(vis);
	for (ki = 0; ki < md->nkeys; ki++)
	{
		const ModelVersion *want = model_visible(&md->keys[ki], snap);
		FstEntry	e;

		if (want == NULL)
			continue;
		CHECK_MSG(fst_iter_valid(vis), "step %d: scan ended before key %d", step, ki);
		CHECK(fst_entry_decode(fst_iter_key(vis), fst_iter_value(vis), &e));
		CHECK_MSG(fst_slice_cmp(e.user_part, fst_slice(md->keys[ki].up, md->keys[ki].uplen)) == 0 &&
				  e.hdr.seq == want->seq,
				  "step %d snapshot %llu: scan has the wrong row at key %d", step,
				  (unsigned long long) snap, ki);
		fst_iter_next(vis);
	}
	CHECK_MSG(!fst_iter_valid(vis), "step %d: scan has extra rows", step);
	CHECK_OK(fst_iter_status(vis, &err), &err);
	fst_iter_destroy(vis);
	for (i = 0; i < n; i++)
	{
		fst_sst_close(readers[i]);
		fst_range_close(srcs[i]);
	}
}

static void
run_model(uint64 seed)
{
	Model	   *md = fst_calloc(1, sizeof(Model));
	FstError	err;
	int			step,
				i;

	md->rng = seed;
	fst_manifest_init(&md->m);
	md->m.next_file_id = 1;
	model_make_keys(md);
	for (step = 0; step < MODEL_STEPS && !fst_test_failed(); step++)
	{
		bool		ran = true;
		int			c;
		FstBuf		enc;
		FstManifest decoded;

		CHECK_OK(model_flush(md, &err), &err);
		for (c = 0; c < 4 && ran && fst_rand_range(&md->rng, 5) != 0; c++)
			CHECK_OK(model_compact(md, &ran, &err), &err);
		/* the manifest survives its encoding */
		fst_buf_init(&enc);
		CHECK_OK(fst_manifest_encode(&md->m, &enc, &err), &err);
		CHECK_OK(fst_manifest_decode(enc.data, enc.len, &decoded, &err), &err);
		CHECK(fst_manifest_equal(&md->m, &decoded));
		fst_manifest_free(&decoded);
		fst_buf_free(&enc);

		model_verify(md, FST_MAX_SEQ, step);
		model_verify(md, md->horizon, step);
		model_verify(md, md->horizon + fst_rand_range(&md->rng, md->seq - md->horizon + 1), step);
	}
	CHECK_MSG(md->compactions > 5, "only %d compactions ran", md->compactions);
	CHECK_MSG(md->dropped > 0, "compactions never dropped a version");
	{
		int			deep = 0;

		for (i = 2; i < FST_NUM_LEVELS; i++)
			deep += md->m.levels[i].nfiles;
		CHECK_MSG(deep > 0, "no file reached level 2");
	}
	fst_manifest_free(&md->m);
	for (i = 0; i < MODEL_MAX_FILES; i++)
		fst_buf_free(&md->files[i]);
	for (i = 0; i < md->nkeys; i++)
		fst_free(md->keys[i].v);
	fst_free(md);
}

FST_TEST(model_random_lsm_equals_reference)
{
	int			round;

	for (round = 0; round < 4 && !fst_test_failed(); round++)
		run_model(fst_test_seed() + (uint64) round * 7919);
}
