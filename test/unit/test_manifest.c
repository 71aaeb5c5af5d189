/*
 * test_manifest.c — manifest encoding, validation, edits and look-ups.
 *
 * Setting FST_WRITE_CORPUS=<dir> makes manifest_write_corpus write a few
 * valid encoded manifests there (the fuzzer's seed corpus):
 *
 *	  FST_WRITE_CORPUS=test/fuzz/corpus/manifest build/unit_tests manifest_write_corpus
 */
#include "unit.h"
#include "manifest.h"
#include "ikey.h"
#include "coding.h"

#include <errno.h>

/* Fills *f with a file [kg1/k1@s1, kg2/k2@s2] (user keys are uint64 BE). */
static void
make_file(FstFileMeta *f, uint64 id, uint16 kg1, uint64 k1, uint64 s1,
		  uint16 kg2, uint64 k2, uint64 s2)
{
	char		a[32],
				b[32],
				u1[8],
				u2[8];
	size_t		la,
				lb;

	memset(f, 0, sizeof(*f));
	fst_put_be64(u1, k1);
	fst_put_be64(u2, k2);
	la = fst_ikey_build(a, kg1, u1, 8, s1);
	lb = fst_ikey_build(b, kg2, u2, 8, s2);
	if (!fst_filemeta_set_range(f, fst_slice(a, la), fst_slice(b, lb)))
		abort();
	f->file_id = id;
	f->size = 4096 + id;
	f->kg_min = kg1;
	f->kg_max = kg2;
	f->num_entries = 100 + id;
	f->num_tombstones = id % 7;
	f->seq_min = Min(s1, s2);
	f->seq_max = Max(s1, s2);
	f->xid_min = 700;
	f->xid_max = 900;
	if (id % 2 == 0)
	{
		f->pending_xid_min = 800 + (uint32) id;
		f->pending_xid_max = 850 + (uint32) id;
	}
	f->raw_bytes = 9000 + id;
}

static void
add_file(FstManifest *m, int level, uint64 id, uint16 kg1, uint64 k1,
		 uint16 kg2, uint64 k2, const char *owner)
{
	FstFileMeta f;

	make_file(&f, id, kg1, k1, 10 + id, kg2, k2, 10 + id);
	if (id % 3 == 0)
	{
		f.has_ttl = true;
		f.ttl_min = -5000 - (int64) id;
		f.ttl_max = (int64) id * 1000;
	}
	if (fst_manifest_append_file(m, level, &f, owner, NULL) != FST_OK)
		abort();
	fst_filemeta_clear(&f);
}

/* A manifest using every field; nfiles_per_level scales it. */
static void
build_rich(FstManifest *m, int per_level)
{
	static const char schema[] = "cols\0int8,text\0pk=1";
	int			i,
				l;
	uint64		id = 1;

	fst_manifest_init(m);
	for (i = 0; i < FST_MANIFEST_UUID_LEN; i++)
		m->table_uuid[i] = (uint8) (0xA0 + i);
	m->version = 42;
	m->writer_epoch = 7;
	m->lsn_covered = UINT64CONST(0x1234567890);
	m->next_file_id = 100000;
	m->last_seq = 1000000;
	m->created_at = INT64CONST(1795000000000000);
	m->max_key_groups = 256;
	m->kg_lo = 10;
	m->kg_hi = 200;
	m->ttl_attnum = 3;
	m->ttl_interval_us = INT64CONST(86400000000);
	if (fst_manifest_set_schema(m, schema, sizeof(schema), NULL) != FST_OK)
		abort();
	/* L0: overlapping, newest first */
	for (i = 0; i < per_level; i++, id++)
		add_file(m, 0, id, 0, 0, 255, 1000, NULL);
	/* L1, L3, L6: sorted, disjoint; L6 files are borrowed */
	for (l = 1; l < FST_NUM_LEVELS; l += 2 + (l == 3))
		for (i = 0; i < per_level; i++, id++)
			add_file(m, l, id, (uint16) i, 10, (uint16) i, 20,
					 l == 6 ? (i % 2 ? "c1/tables/src-a" : "c1/tables/src-b") : NULL);
	/* a borrowed file may reuse an id of ours: identity is (owner, id) */
	add_file(m, 2, 1, 250, 1, 250, 2, "c2/tables/other");
}

/* Field-by-field comparison, so that a failure names the field. */
static void
check_same(const FstManifest *a, const FstManifest *b)
{
	int			l,
				i;

	CHECK(memcmp(a->table_uuid, b->table_uuid, FST_MANIFEST_UUID_LEN) == 0);
	CHECK(a->version == b->version);
	CHECK(a->writer_epoch == b->writer_epoch);
	CHECK(a->lsn_covered == b->lsn_covered);
	CHECK(a->next_file_id == b->next_file_id);
	CHECK(a->last_seq == b->last_seq);
	CHECK(a->created_at == b->created_at);
	CHECK(a->max_key_groups == b->max_key_groups);
	CHECK(a->kg_lo == b->kg_lo && a->kg_hi == b->kg_hi);
	CHECK(a->schema_len == b->schema_len);
	CHECK(a->schema_len == 0 || memcmp(a->schema, b->schema, a->schema_len) == 0);
	CHECK(a->ttl_attnum == b->ttl_attnum);
	CHECK(a->ttl_interval_us == b->ttl_interval_us);
	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		CHECK_EQ_INT(a->levels[l].nfiles, b->levels[l].nfiles);
		for (i = 0; i < a->levels[l].nfiles; i++)
		{
			const FstManifestFile *x = &a->levels[l].files[i];
			const FstManifestFile *y = &b->levels[l].files[i];

			CHECK((x->owner == NULL) == (y->owner == NULL));
			CHECK(x->owner == NULL || strcmp(x->owner, y->owner) == 0);
			CHECK(x->meta.file_id == y->meta.file_id);
			CHECK(x->meta.level == l && y->meta.level == l);
			CHECK(x->meta.size == y->meta.size);
			CHECK(fst_slice_cmp(fst_filemeta_smallest(&x->meta),
								fst_filemeta_smallest(&y->meta)) == 0);
			CHECK(fst_slice_cmp(fst_filemeta_largest(&x->meta),
								fst_filemeta_largest(&y->meta)) == 0);
			CHECK(x->meta.kg_min == y->meta.kg_min);
			CHECK(x->meta.kg_max == y->meta.kg_max);
			CHECK(x->meta.num_entries == y->meta.num_entries);
			CHECK(x->meta.num_tombstones == y->meta.num_tombstones);
			CHECK(x->meta.seq_min == y->meta.seq_min);
			CHECK(x->meta.seq_max == y->meta.seq_max);
			CHECK(x->meta.xid_min == y->meta.xid_min);
			CHECK(x->meta.xid_max == y->meta.xid_max);
			CHECK(x->meta.pending_xid_min == y->meta.pending_xid_min);
			CHECK(x->meta.pending_xid_max == y->meta.pending_xid_max);
			CHECK(x->meta.has_ttl == y->meta.has_ttl);
			CHECK(x->meta.ttl_min == y->meta.ttl_min);
			CHECK(x->meta.ttl_max == y->meta.ttl_max);
			CHECK(x->meta.raw_bytes == y->meta.raw_bytes);
		}
	}
	CHECK(fst_manifest_equal(a, b));
}

/* Encodes m, decodes it back and compares. */
static void
check_roundtrip(const FstManifest *m)
{
	FstBuf		b;
	FstManifest d;
	FstError	err;

	fst_buf_init(&b);
	CHECK_OK(fst_manifest_encode(m, &b, &err), &err);
	CHECK_OK(fst_manifest_decode(b.data, b.len, &d, &err), &err);
	fst_buf_free(&b);
	check_same(m, &d);
	fst_manifest_free(&d);
}

FST_TEST(manifest_roundtrip_empty)
{
	FstManifest m;

	fst_manifest_init(&m);
	CHECK_OK(fst_manifest_validate(&m, FST_INVALID_ARGUMENT, NULL), &(FstError) {0});
	check_roundtrip(&m);
	CHECK(fst_manifest_total_files(&m) == 0);
	fst_manifest_free(&m);
}

FST_TEST(manifest_roundtrip_rich)
{
	FstManifest m,
				c;
	FstError	err;

	build_rich(&m, 40);
	CHECK_OK(fst_manifest_validate(&m, FST_INVALID_ARGUMENT, &err), &err);
	CHECK_EQ_INT(fst_manifest_total_files(&m), 40 * 4 + 1);
	CHECK_EQ_INT(fst_manifest_level_files(&m, 6), 40);
	check_roundtrip(&m);
	if (fst_test_failed())
		goto done;
	CHECK_OK(fst_manifest_copy(&c, &m, &err), &err);
	check_same(&m, &c);
	fst_manifest_free(&c);
	CHECK(fst_manifest_find_file(&m, 1, "c2/tables/other", NULL) != NULL);
done:
	fst_manifest_free(&m);
}

FST_TEST(manifest_object_name)
{
	char		buf[FST_MANIFEST_OBJECT_NAME_SIZE];
	uint64		v;

	CHECK(fst_manifest_object_name(42, buf, sizeof(buf)));
	CHECK(strcmp(buf, "manifest/00000000000000000042") == 0);
	CHECK(fst_manifest_parse_object_name(buf, &v) && v == 42);
	CHECK(fst_manifest_object_name(PG_UINT64_MAX, buf, sizeof(buf)));
	CHECK(strcmp(buf, "manifest/18446744073709551615") == 0);
	CHECK(fst_manifest_parse_object_name(buf, &v) && v == PG_UINT64_MAX);
	CHECK(!fst_manifest_object_name(1, buf, sizeof(buf) - 1));
	CHECK(!fst_manifest_parse_object_name("manifest/99999999999999999999", &v));
	CHECK(!fst_manifest_parse_object_name("manifest/0000000000000000004x", &v));
	CHECK(!fst_manifest_parse_object_name("manifest/42", &v));
}

static FstCode
apply_free_edit(const FstManifest *base, FstManifestEdit *e, FstManifest *next,
				FstError *err)
{
	FstCode		rc = fst_manifest_apply(base, e, next, err);

	fst_manifest_edit_free(e);
	return rc;
}

FST_TEST(manifest_apply_l0_newest_first)
{
	FstManifest base,
				next,
				next2;
	FstManifestEdit e;
	FstFileMeta f;
	FstError	err;

	fst_manifest_init(&base);
	base.version = 5;
	fst_manifest_edit_init(&e);
	make_file(&f, 1, 3, 1, 10, 3, 9, 11);
	CHECK_OK(fst_manifest_edit_add(&e, 0, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	make_file(&f, 2, 2, 1, 12, 4, 9, 13);
	CHECK_OK(fst_manifest_edit_add(&e, 0, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	e.has_next_file_id = true;
	e.next_file_id = 3;
	e.has_last_seq = true;
	e.last_seq = 13;
	e.has_lsn_covered = true;
	e.lsn_covered = 777;
	CHECK_OK(apply_free_edit(&base, &e, &next, &err), &err);
	CHECK(next.version == 6 && next.lsn_covered == 777 && next.last_seq == 13);
	CHECK_EQ_INT(next.levels[0].nfiles, 2);
	CHECK(next.levels[0].files[0].meta.file_id == 2);	/* added last = newest */
	CHECK(next.levels[0].files[1].meta.file_id == 1);

	/* a later flush goes in front */
	fst_manifest_edit_init(&e);
	make_file(&f, 3, 0, 5, 14, 0, 5, 14);
	CHECK_OK(fst_manifest_edit_add(&e, 0, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	e.has_next_file_id = true;
	e.next_file_id = 4;
	e.has_last_seq = true;
	e.last_seq = 14;
	CHECK_OK(apply_free_edit(&next, &e, &next2, &err), &err);
	CHECK(next2.version == 7 && next2.lsn_covered == 777);
	CHECK(next2.levels[0].files[0].meta.file_id == 3);
	CHECK(next2.levels[0].files[1].meta.file_id == 2);
	CHECK(next2.levels[0].files[2].meta.file_id == 1);
	CHECK(fst_manifest_level_bytes(&next2, 0) == 3 * 4096 + 6);
	check_roundtrip(&next2);
	fst_manifest_free(&next2);
	fst_manifest_free(&next);
	fst_manifest_free(&base);
}

FST_TEST(manifest_apply_move_l0_to_l1)
{
	FstManifest base,
				next;
	FstManifestEdit e;
	FstError	err;
	FstFileMeta f;
	const FstManifestFile *found;
	int			level = -1;

	build_rich(&base, 4);
	fst_manifest_edit_init(&e);
	/* move L0 file 2 to L1 with a range no L1 file has (kg 100..101) */
	CHECK_OK(fst_manifest_edit_remove(&e, 0, 2, NULL, &err), &err);
	make_file(&f, 2, 100, 0, 12, 101, 0, 12);
	CHECK_OK(fst_manifest_edit_add(&e, 1, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	CHECK_OK(apply_free_edit(&base, &e, &next, &err), &err);
	CHECK_EQ_INT(next.levels[0].nfiles, 3);
	CHECK_EQ_INT(next.levels[1].nfiles, 5);
	found = fst_manifest_find_file(&next, 2, NULL, &level);
	CHECK(found != NULL && level == 1);
	CHECK(next.levels[1].files[4].meta.file_id == 2);	/* sorted in last */
	CHECK(fst_manifest_find_file(&base, 2, NULL, &level) != NULL && level == 0);
	check_roundtrip(&next);
	fst_manifest_free(&next);
	fst_manifest_free(&base);
}

/* An edit without its removals adds its files to a manifest without them. */
FST_TEST(manifest_edit_drop_removals)
{
	FstManifest base,
				empty,
				next;
	FstManifestEdit e;
	FstError	err;
	FstFileMeta f;
	int			level = -1;

	build_rich(&base, 4);
	fst_manifest_init(&empty);
	fst_manifest_edit_init(&e);
	CHECK_OK(fst_manifest_edit_remove(&e, 0, 2, NULL, &err), &err);
	CHECK_OK(fst_manifest_edit_remove(&e, 0, 3, "other:sst/3", &err), &err);
	make_file(&f, 2, 100, 0, 12, 101, 0, 12);
	CHECK_OK(fst_manifest_edit_add(&e, 1, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	/* with its removals it does not apply to a manifest without those files */
	{
		FstManifest refused;

		CHECK(fst_manifest_apply(&empty, &e, &refused, &err) == FST_INVALID_ARGUMENT);
		fst_manifest_free(&refused);
	}
	fst_manifest_edit_drop_removals(&e);
	CHECK_EQ_INT(e.nremoves, 0);
	CHECK_EQ_INT(e.nadds, 1);
	e.has_last_seq = true;		/* as VACUUM FULL's rewrite sets them */
	e.last_seq = 12;
	e.has_next_file_id = true;
	e.next_file_id = 3;
	CHECK_OK(apply_free_edit(&empty, &e, &next, &err), &err);
	CHECK_EQ_INT(fst_manifest_total_files(&next), 1);
	CHECK(fst_manifest_find_file(&next, 2, NULL, &level) != NULL && level == 1);
	fst_manifest_free(&next);
	fst_manifest_free(&empty);
	fst_manifest_free(&base);
}

/* Applies e to base, expects refusal, and base unchanged. */
static void
expect_refused(const FstManifest *base, FstManifestEdit *e, const char *what)
{
	FstManifest copy,
				next;
	FstError	err;
	FstCode		rc;

	CHECK_OK(fst_manifest_copy(&copy, base, &err), &err);
	rc = fst_manifest_apply(base, e, &next, &err);
	fst_manifest_edit_free(e);
	CHECK_MSG(rc == FST_INVALID_ARGUMENT, "%s: apply returned %s", what,
			  fst_code_name(rc));
	CHECK(fst_manifest_total_files(&next) == 0);
	CHECK_MSG(fst_manifest_equal(base, &copy), "%s: base changed", what);
	fst_manifest_free(&next);
	fst_manifest_free(&copy);
}

FST_TEST(manifest_apply_invalid_refused)
{
	FstManifest base;
	FstManifestEdit e;
	FstFileMeta f;
	FstError	err;

	build_rich(&base, 4);

	fst_manifest_edit_init(&e);
	CHECK_OK(fst_manifest_edit_remove(&e, 1, 99999, NULL, &err), &err);
	expect_refused(&base, &e, "remove missing");

	fst_manifest_edit_init(&e);
	CHECK_OK(fst_manifest_edit_remove(&e, 1, 2, NULL, &err), &err); /* in L0 */
	expect_refused(&base, &e, "remove at wrong level");

	fst_manifest_edit_init(&e);
	CHECK_OK(fst_manifest_edit_remove(&e, 0, 2, NULL, &err), &err);
	CHECK_OK(fst_manifest_edit_remove(&e, 0, 2, NULL, &err), &err);
	expect_refused(&base, &e, "remove twice");

	fst_manifest_edit_init(&e);
	CHECK_OK(fst_manifest_edit_remove(&e, 2, 1, "c2/tables/wrong", &err), &err);
	expect_refused(&base, &e, "remove with wrong owner");

	fst_manifest_edit_init(&e);
	make_file(&f, 3, 0, 0, 1, 0, 1, 1);
	CHECK_OK(fst_manifest_edit_add(&e, 0, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	expect_refused(&base, &e, "add duplicate id");

	fst_manifest_edit_init(&e);
	make_file(&f, 500, 1, 15, 1, 1, 25, 1);		/* meets L1 file kg 1 */
	CHECK_OK(fst_manifest_edit_add(&e, 1, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	expect_refused(&base, &e, "add overlapping in L1");

	fst_manifest_edit_init(&e);
	make_file(&f, 200000, 0, 0, 1, 0, 1, 1);	/* >= next_file_id */
	CHECK_OK(fst_manifest_edit_add(&e, 0, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	expect_refused(&base, &e, "add id beyond next_file_id");

	fst_manifest_edit_init(&e);
	make_file(&f, 501, 0, 0, 2000000, 0, 1, 2000000);	/* seq > last_seq */
	CHECK_OK(fst_manifest_edit_add(&e, 0, &f, NULL, &err), &err);
	fst_filemeta_clear(&f);
	expect_refused(&base, &e, "add seq beyond last_seq");

	fst_manifest_edit_init(&e);
	e.has_last_seq = true;
	e.last_seq = base.last_seq - 1;
	expect_refused(&base, &e, "last_seq backwards");

	fst_manifest_edit_init(&e);
	e.has_writer_epoch = true;
	e.writer_epoch = base.writer_epoch - 1;
	expect_refused(&base, &e, "epoch backwards");

	fst_manifest_edit_init(&e);
	CHECK(fst_manifest_edit_add(&e, FST_NUM_LEVELS, &base.levels[1].files[0].meta,
								NULL, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_manifest_edit_remove(&e, -1, 1, NULL, &err) == FST_INVALID_ARGUMENT);
	fst_manifest_edit_free(&e);
	fst_manifest_free(&base);
}

/* Encodes a (possibly invalid) m without checks; decode must refuse it. */
static void
expect_corrupt_struct(FstManifest *m, const char *what)
{
	FstBuf		b;
	FstManifest d;
	FstError	err;
	FstCode		enc_rc,
				raw_rc,
				rc = FST_OK;
	size_t		enc_len;
	bool		empty_after;

	fst_buf_init(&b);
	enc_rc = fst_manifest_encode(m, &b, &err);
	enc_len = b.len;
	raw_rc = fst_manifest_encode_unchecked(m, &b, &err);
	fst_manifest_free(m);
	fst_manifest_init(&d);
	if (raw_rc == FST_OK)
		rc = fst_manifest_decode(b.data + enc_len, b.len - enc_len, &d, &err);
	fst_buf_free(&b);
	empty_after = fst_manifest_total_files(&d) == 0 && d.schema == NULL;
	fst_manifest_free(&d);
	CHECK_MSG(enc_rc == FST_INVALID_ARGUMENT,
			  "%s: encode accepted an invalid manifest", what);
	CHECK(enc_len == 0);
	CHECK(raw_rc == FST_OK);
	CHECK_MSG(rc == FST_CORRUPT, "%s: decode returned %s", what,
			  fst_code_name(rc));
	CHECK(empty_after);
}

FST_TEST(manifest_validation_rejections)
{
	FstManifest m;
	FstFileMeta *f;

#define BAD(stmt, what) \
	do { build_rich(&m, 3); stmt; expect_corrupt_struct(&m, what); \
		if (fst_test_failed()) return; } while (0)

	BAD(m.kg_lo = 201, "kg_lo > kg_hi");
	BAD(m.kg_hi = 256, "kg_hi >= max_key_groups");
	BAD(m.max_key_groups = 0, "max_key_groups 0");
	BAD(m.max_key_groups = FST_MAX_KEY_GROUPS + 1, "max_key_groups too big");
	BAD(m.ttl_attnum = 0, "ttl attnum 0");
	BAD(m.ttl_interval_us = 0, "ttl interval 0");
	BAD((m.ttl_attnum = -1), "ttl interval without column");
	BAD(m.next_file_id = 5, "own id >= next_file_id");
	BAD(m.last_seq = 11, "seq beyond last_seq");
	f = NULL;
	BAD((f = &m.levels[1].files[0].meta, f->smallest[9] = 99), "smallest > largest");
	BAD((f = &m.levels[0].files[0].meta, f->smallest_len = 9), "short key");
	BAD((f = &m.levels[0].files[0].meta, f->largest_len = 3), "short largest key");
	BAD(m.levels[1].files[1].meta.kg_min = 0, "kg_min mismatch");
	BAD(m.levels[1].files[1].meta.kg_max = 2, "kg_max mismatch");
	BAD(m.levels[0].files[0].meta.size = 0, "size 0");
	BAD(m.levels[0].files[0].meta.num_tombstones = 1000, "tombstones > entries");
	BAD((m.levels[0].files[0].meta.seq_min = 20), "seq_min > seq_max");
	BAD((f = &m.levels[3].files[0].meta, f->has_ttl = true, f->ttl_min = 5,
		 f->ttl_max = 4), "ttl range inverted");
	BAD(m.max_key_groups = 250, "file key group beyond max_key_groups");
	BAD(m.levels[3].files[1].meta.file_id = m.levels[0].files[2].meta.file_id,
		"duplicate id across levels");
	BAD(m.levels[6].files[2].meta.file_id = m.levels[6].files[0].meta.file_id,
		"duplicate borrowed id within an owner");
	BAD((m.levels[6].files[0].owner[0] = '\0'), "empty owner");

	/* the level field is not stored (position says it): only encode checks */
	{
		FstBuf		b;
		FstCode		rc;

		build_rich(&m, 3);
		m.levels[1].files[0].meta.level = 2;
		fst_buf_init(&b);
		rc = fst_manifest_encode(&m, &b, NULL);
		fst_buf_free(&b);
		fst_manifest_free(&m);
		CHECK(rc == FST_INVALID_ARGUMENT);
	}
}

/* Order within levels >= 1 (and its absence in L0). */
FST_TEST(manifest_validation_level_order)
{
	FstManifest m;

	/* unsorted */
	build_rich(&m, 0);
	add_file(&m, 2, 5, 3, 0, 3, 1, NULL);
	add_file(&m, 2, 6, 1, 0, 1, 1, NULL);
	expect_corrupt_struct(&m, "unsorted level 2");
	/* overlapping internal-key ranges */
	build_rich(&m, 0);
	add_file(&m, 4, 5, 1, 0, 3, 1, NULL);
	add_file(&m, 4, 6, 2, 0, 5, 1, NULL);
	expect_corrupt_struct(&m, "overlapping level 4");
	/* same user key at the boundary, newer version in the second file */
	build_rich(&m, 0);
	add_file(&m, 1, 5, 1, 0, 3, 1, NULL);	/* largest (3,1)@15 */
	add_file(&m, 1, 6, 3, 1, 5, 1, NULL);	/* smallest (3,1)@16 */
	expect_corrupt_struct(&m, "boundary key overlap");
	/* identical boundary keys */
	build_rich(&m, 0);
	add_file(&m, 1, 5, 1, 0, 3, 1, NULL);
	add_file(&m, 1, 6, 3, 1, 5, 1, NULL);
	fst_put_be64(m.levels[1].files[1].meta.smallest + FST_KG_BYTES + 8, 15);
	m.levels[1].files[1].meta.seq_min = 15;
	expect_corrupt_struct(&m, "identical boundary keys");
	/* one user key may span two files if the older versions come second */
	build_rich(&m, 0);
	add_file(&m, 1, 6, 1, 0, 3, 1, NULL);	/* largest (3,1)@16 */
	add_file(&m, 1, 5, 3, 1, 5, 1, NULL);	/* smallest (3,1)@15 */
	check_roundtrip(&m);
	fst_manifest_free(&m);
	/* overlap in L0 is fine */
	build_rich(&m, 0);
	add_file(&m, 0, 5, 1, 0, 3, 1, NULL);
	add_file(&m, 0, 6, 2, 0, 5, 1, NULL);
	check_roundtrip(&m);
	fst_manifest_free(&m);
}

/* ----------------------------------------------------------------
 *		byte-level surgery
 * ----------------------------------------------------------------
 */

/* Writes header + body + trailer as the codec would (major as given). */
static void
seal(FstBuf *out, uint32 major, uint32 minor, const FstBuf *body)
{
	char		hdr[24];

	fst_buf_reset(out);
	memcpy(hdr, "FSTMANI\0", 8);
	fst_put_fixed32(hdr + 8, major);
	fst_put_fixed32(hdr + 12, minor);
	fst_put_fixed64(hdr + 16, 24 + body->len + 4);
	fst_buf_append(out, hdr, sizeof(hdr));
	fst_buf_append(out, body->data, body->len);
	fst_buf_put_fixed32(out, fst_crc_mask(fst_crc32c(out->data, out->len)));
}

static void
put_sec(FstBuf *body, uint64 tag, const FstBuf *payload)
{
	fst_buf_put_varint(body, tag);
	fst_buf_put_lenbytes(body, payload->data, payload->len);
}

static void
sec_identity(FstBuf *body, bool extra_byte)
{
	FstBuf		p;
	char		uuid[16] = {1, 2, 3};

	fst_buf_init(&p);
	fst_buf_append(&p, uuid, 16);
	fst_buf_put_varint(&p, 9);	/* version */
	fst_buf_put_varint(&p, 1);	/* epoch */
	fst_buf_put_varint(&p, 100);	/* lsn */
	fst_buf_put_varint(&p, 50);	/* next file id */
	fst_buf_put_varint(&p, 1000);	/* last seq */
	fst_buf_put_varint(&p, 2);	/* created at, zigzag 1 */
	if (extra_byte)
		fst_buf_putc(&p, 0);
	put_sec(body, 1, &p);
	fst_buf_free(&p);
}

static void
sec_kg(FstBuf *body, uint64 max, uint64 lo, uint64 hi)
{
	FstBuf		p;

	fst_buf_init(&p);
	fst_buf_put_varint(&p, max);
	fst_buf_put_varint(&p, lo);
	fst_buf_put_varint(&p, hi);
	put_sec(body, 2, &p);
	fst_buf_free(&p);
}

static void
sec_schema(FstBuf *body, int64 attnum)
{
	FstBuf		p;

	fst_buf_init(&p);
	fst_buf_put_lenbytes(&p, "abc", 3);
	fst_buf_put_varint(&p, ((uint64) attnum << 1) ^ (uint64) (attnum >> 63));
	fst_buf_put_varint(&p, attnum == -1 ? 0 : 200);
	put_sec(body, 3, &p);
	fst_buf_free(&p);
}

/*
 * A files section: nlevels, then in level nlevels-1 nfiles (as given) and,
 * if with_file, one file record with the given flags and owner bytes.
 */
static void
sec_files(FstBuf *body, uint64 nlevels, uint64 nfiles, bool with_file,
		  uint64 flags, const char *owner, size_t owner_len)
{
	FstBuf		p;
	char		k1[32],
				k2[32];
	size_t		l1 = fst_ikey_build(k1, 1, "a", 1, 7);
	size_t		l2 = fst_ikey_build(k2, 2, "b", 1, 7);
	uint64		l;

	fst_buf_init(&p);
	fst_buf_put_varint(&p, nlevels);
	for (l = 0; l < nlevels && l < 16; l++)
	{
		if (l + 1 < nlevels)
		{
			fst_buf_put_varint(&p, 0);
			continue;
		}
		fst_buf_put_varint(&p, nfiles);
		if (!with_file)
			continue;
		fst_buf_put_varint(&p, 3);	/* file id */
		fst_buf_put_varint(&p, 4096);	/* size */
		fst_buf_put_lenbytes(&p, k1, l1);
		fst_buf_put_lenbytes(&p, k2, l2);
		fst_buf_put_varint(&p, 1);	/* kg_min */
		fst_buf_put_varint(&p, 2);	/* kg_max */
		fst_buf_put_varint(&p, 10);	/* entries */
		fst_buf_put_varint(&p, 1);	/* tombstones */
		fst_buf_put_varint(&p, 7);	/* seq_min */
		fst_buf_put_varint(&p, 7);	/* seq_max */
		fst_buf_put_varint(&p, 0);	/* xid_min */
		fst_buf_put_varint(&p, 0);	/* xid_max */
		fst_buf_put_varint(&p, 100);	/* raw bytes */
		fst_buf_put_varint(&p, flags);
		if (flags & 1)
		{
			fst_buf_put_varint(&p, 1);
			fst_buf_put_varint(&p, 4);
		}
		if (flags & 2)
			fst_buf_put_lenbytes(&p, owner, owner_len);
	}
	put_sec(body, 4, &p);
	fst_buf_free(&p);
}

static FstCode
decode_sealed(const FstBuf *body, uint32 major, uint32 minor)
{
	FstBuf		obj;
	FstManifest m;
	FstCode		rc;

	fst_buf_init(&obj);
	seal(&obj, major, minor, body);
	rc = fst_manifest_decode(obj.data, obj.len, &m, NULL);
	fst_manifest_free(&m);
	fst_buf_free(&obj);
	return rc;
}

/* body = identity, kg, schema, files(1 level, 1 file) + extra tail bytes */
#define BODY(stmt) \
	do { fst_buf_reset(&body); stmt; } while (0)
#define STD_BODY(files_stmt) \
	BODY((sec_identity(&body, false), sec_kg(&body, 128, 0, 127), \
		  sec_schema(&body, 2), files_stmt))

FST_TEST(manifest_decode_rejects_malformed_bytes)
{
	FstBuf		body,
				obj;
	FstManifest m;

	fst_buf_init(&body);
	fst_buf_init(&obj);

	STD_BODY(sec_files(&body, 1, 1, true, 0, NULL, 0));
	CHECK(decode_sealed(&body, 1, 0) == FST_OK);	/* the baseline is valid */
	CHECK(decode_sealed(&body, 1, 7) == FST_OK);	/* newer minor is fine */
	CHECK(decode_sealed(&body, 2, 0) == FST_NOT_SUPPORTED);
	CHECK(decode_sealed(&body, 0, 0) == FST_CORRUPT);	/* no forst writes 0 */

	/* header damage */
	seal(&obj, 1, 0, &body);
	obj.data[0] = 'X';
	CHECK(fst_manifest_decode(obj.data, obj.len, &m, NULL) == FST_CORRUPT);
	seal(&obj, 1, 0, &body);
	fst_buf_putc(&obj, 0);		/* trailing byte */
	CHECK(fst_manifest_decode(obj.data, obj.len, &m, NULL) == FST_CORRUPT);
	seal(&obj, 1, 0, &body);
	obj.data[30] ^= 0x40;		/* body byte: CRC mismatch */
	CHECK(fst_manifest_decode(obj.data, obj.len, &m, NULL) == FST_CORRUPT);
	CHECK(fst_manifest_decode(NULL, 0, &m, NULL) == FST_CORRUPT);

	/* sections */
	STD_BODY((sec_files(&body, 1, 0, false, 0, NULL, 0),
			  fst_buf_put_varint(&body, 9), fst_buf_put_lenbytes(&body, "xyz", 3)));
	CHECK(decode_sealed(&body, 1, 1) == FST_OK);	/* unknown tag skipped */
	BODY((sec_kg(&body, 128, 0, 127), sec_identity(&body, false),
		  sec_files(&body, 0, 0, false, 0, NULL, 0)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* out of order */
	BODY((sec_identity(&body, false), sec_identity(&body, false),
		  sec_kg(&body, 128, 0, 127), sec_files(&body, 0, 0, false, 0, NULL, 0)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* repeated */
	BODY((sec_kg(&body, 128, 0, 127), sec_files(&body, 0, 0, false, 0, NULL, 0)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* no identity */
	BODY((sec_identity(&body, false), sec_files(&body, 0, 0, false, 0, NULL, 0)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* no key groups */
	BODY((sec_identity(&body, false), sec_kg(&body, 128, 0, 127)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* no files */
	BODY((sec_identity(&body, true), sec_kg(&body, 128, 0, 127),
		  sec_files(&body, 0, 0, false, 0, NULL, 0)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* section tail */
	BODY((sec_identity(&body, false), sec_kg(&body, 70000, 0, 127),
		  sec_files(&body, 0, 0, false, 0, NULL, 0)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* uint16 overflow */
	BODY((sec_identity(&body, false), fst_buf_put_varint(&body, 2),
		  fst_buf_put_varint(&body, 200)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* length past end */
	BODY((sec_identity(&body, false), fst_buf_put_varint(&body, 2),
		  fst_buf_put_varint(&body, 11),
		  fst_buf_append(&body, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* varint overflow */
	STD_BODY(sec_files(&body, 0, 0, false, 0, NULL, 0));
	body.data[body.len - 1] = (char) 0x80;	/* unterminated varint */
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);
	BODY((sec_identity(&body, false), sec_kg(&body, 128, 0, 127),
		  sec_schema(&body, 40000), sec_files(&body, 0, 0, false, 0, NULL, 0)));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* attnum > int16 */
	BODY((sec_identity(&body, false), sec_kg(&body, 128, 0, 127),
		  sec_schema(&body, -1), sec_files(&body, 0, 0, false, 0, NULL, 0)));
	CHECK(decode_sealed(&body, 1, 0) == FST_OK);	/* no TTL */

	/* files */
	STD_BODY(sec_files(&body, FST_NUM_LEVELS, 1, true, 0, NULL, 0));
	CHECK(decode_sealed(&body, 1, 0) == FST_OK);	/* last level is fine */
	STD_BODY(sec_files(&body, FST_NUM_LEVELS + 1, 1, true, 0, NULL, 0));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* level range */
	STD_BODY(sec_files(&body, 1, UINT64CONST(1) << 60, true, 0, NULL, 0));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* huge count */
	STD_BODY(sec_files(&body, 1, 2, true, 0, NULL, 0));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* count > records */
	STD_BODY(sec_files(&body, 1, 1, true, 1, NULL, 0));
	CHECK(decode_sealed(&body, 1, 0) == FST_OK);	/* TTL range */
	STD_BODY(sec_files(&body, 1, 1, true, 4, NULL, 0));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* unknown flag */
	STD_BODY(sec_files(&body, 1, 1, true, 2, "t/x", 3));
	CHECK(decode_sealed(&body, 1, 0) == FST_OK);	/* owner */
	STD_BODY(sec_files(&body, 1, 1, true, 2, "t\0x", 3));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* NUL in owner */
	STD_BODY(sec_files(&body, 1, 1, true, 2, "", 0));
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);	/* empty owner */
	STD_BODY((sec_files(&body, 1, 1, true, 0, NULL, 0),
			  body.data[body.len - 1]++));	/* flags: TTL range missing */
	CHECK(decode_sealed(&body, 1, 0) == FST_CORRUPT);

	fst_buf_free(&obj);
	fst_buf_free(&body);
}

/* Every byte xor every mask in masks (NULL: all 255) is refused. */
static void
check_flips(const FstBuf *enc, const uint8 *masks, int nmasks)
{
	char	   *copy = fst_malloc(enc->len);
	size_t		i;
	int			k;
	int			bad = 0;
	FstManifest m;

	memcpy(copy, enc->data, enc->len);
	for (i = 0; i < enc->len && bad == 0; i++)
		for (k = 0; k < (masks ? nmasks : 255) && bad == 0; k++)
		{
			uint8		x = masks ? masks[k] : (uint8) (k + 1);
			FstCode		rc;

			copy[i] ^= x;
			rc = fst_manifest_decode(copy, enc->len, &m, NULL);
			copy[i] ^= x;
			fst_manifest_free(&m);
			if (rc != FST_CORRUPT && rc != FST_NOT_SUPPORTED)
				bad = (int) i + 1;
		}
	fst_free(copy);
	CHECK_MSG(bad == 0, "flip at byte %d accepted", bad - 1);
}

FST_TEST(manifest_every_flip_rejected)
{
	FstManifest m;
	FstBuf		b;
	FstError	err;
	static const uint8 masks[] = {0x01, 0x02, 0x10, 0x80, 0xff};

	fst_buf_init(&b);
	fst_manifest_init(&m);
	CHECK_OK(fst_manifest_encode(&m, &b, &err), &err);
	check_flips(&b, NULL, 0);
	fst_buf_reset(&b);
	build_rich(&m, 2);
	CHECK_OK(fst_manifest_encode(&m, &b, &err), &err);
	fst_manifest_free(&m);
	check_flips(&b, NULL, 0);
	fst_buf_reset(&b);
	build_rich(&m, 30);
	CHECK_OK(fst_manifest_encode(&m, &b, &err), &err);
	fst_manifest_free(&m);
	check_flips(&b, masks, lengthof(masks));
	fst_buf_free(&b);
}

FST_TEST(manifest_every_truncation_rejected)
{
	FstManifest m;
	FstBuf		b;
	FstError	err;
	size_t		n;
	char	   *copy;

	fst_buf_init(&b);
	build_rich(&m, 10);
	CHECK_OK(fst_manifest_encode(&m, &b, &err), &err);
	fst_manifest_free(&m);
	for (n = 0; n < b.len; n++)
	{
		/* a right-sized copy, so that ASan sees any read past the end */
		FstCode		rc;

		copy = fst_malloc(n);
		memcpy(copy, b.data, n);
		rc = fst_manifest_decode(copy, n, &m, NULL);
		fst_free(copy);
		fst_manifest_free(&m);
		CHECK_MSG(rc == FST_CORRUPT, "prefix of %zu bytes: %s", n,
				  fst_code_name(rc));
	}
	fst_buf_free(&b);
}

/* ----------------------------------------------------------------
 *		seed corpus for test/fuzz/fuzz_manifest.c
 * ----------------------------------------------------------------
 */

static bool
write_seed(const char *dir, const char *name, const FstManifest *m)
{
	char		path[1024];
	FstBuf		b;
	FILE	   *fp;
	bool		ok;

	fst_buf_init(&b);
	if (fst_manifest_encode(m, &b, NULL) != FST_OK)
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	ok = fp != NULL && fwrite(b.data, 1, b.len, fp) == b.len;
	if (fp != NULL && fclose(fp) != 0)
		ok = false;
	fst_buf_free(&b);
	return ok;
}

/* Does nothing unless FST_WRITE_CORPUS names a directory. */
FST_TEST(manifest_write_corpus)
{
	const char *dir = getenv("FST_WRITE_CORPUS");
	FstManifest m;
	bool		ok;

	if (dir == NULL || *dir == '\0')
		return;
	fst_manifest_init(&m);
	ok = write_seed(dir, "empty", &m);
	build_rich(&m, 1);
	ok = ok && write_seed(dir, "rich1", &m);
	fst_manifest_free(&m);
	build_rich(&m, 3);
	ok = ok && write_seed(dir, "rich3", &m);
	fst_manifest_free(&m);
	build_rich(&m, 0);
	m.ttl_attnum = -1;
	m.ttl_interval_us = 0;
	add_file(&m, 0, 5, 1, 0, 3, 1, NULL);
	add_file(&m, 1, 6, 1, 0, 3, 1, "c1/tables/x");
	ok = ok && write_seed(dir, "small", &m);
	fst_manifest_free(&m);
	CHECK_MSG(ok, "writing the corpus into %s failed: %s", dir, strerror(errno));
}
