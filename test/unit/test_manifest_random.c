/*
 * test_manifest_random.c — many random manifest edits (flushes, compactions,
 * borrowed-file ingests, drops, refused edits), checking after each step the
 * invariants, the version chain, the encoding round trip and
 * fst_manifest_overlapping against a brute-force scan.  Seeded by
 * fst_test_seed() (FST_TEST_SEED=<n> to vary it).
 */
#include "unit.h"
#include "manifest.h"
#include "ikey.h"

#define RAND_STEPS		400
#define RAND_KGS		64

typedef struct Key
{
	char		b[FST_IKEY_OVERHEAD + 8];
	size_t		len;
} Key;

static void
key_build(Key *k, uint16 kg, uint64 ukey, uint64 seq)
{
	char		u[8];

	fst_put_be64(u, ukey);
	k->len = fst_ikey_build(k->b, kg, u, 8, seq);
}

/* A random file (id given) with sequences in [seq_lo, seq_hi]. */
static void
rand_file(uint64 *rng, FstFileMeta *f, uint64 id, uint64 seq_lo, uint64 seq_hi)
{
	Key			a,
				b;
	uint16		kg1 = (uint16) fst_rand_range(rng, RAND_KGS);
	uint16		kg2 = (uint16) (kg1 + fst_rand_range(rng, 3));
	uint64		k1 = fst_rand_range(rng, 1000);
	uint64		k2 = fst_rand_range(rng, 1000);

	if (kg2 >= RAND_KGS)
		kg2 = kg1;
	if (kg1 == kg2 && k2 < k1)
	{
		uint64		t = k1;

		k1 = k2;
		k2 = t;
	}
	/* the smallest entry is the newer one, so equal user keys stay ordered */
	key_build(&a, kg1, k1, seq_hi);
	key_build(&b, kg2, k2, seq_lo);
	memset(f, 0, sizeof(*f));
	if (!fst_filemeta_set_range(f, fst_slice(a.b, a.len), fst_slice(b.b, b.len)))
		abort();
	f->file_id = id;
	f->size = 1 + fst_rand_range(rng, 1 << 20);
	f->kg_min = kg1;
	f->kg_max = kg2;
	f->num_entries = fst_rand_range(rng, 10000);
	f->num_tombstones = fst_rand_range(rng, f->num_entries + 1);
	f->seq_min = seq_lo;
	f->seq_max = seq_hi;
	f->xid_min = (uint32) fst_rand_next(rng);
	f->xid_max = (uint32) fst_rand_next(rng);
	if (fst_rand_range(rng, 2) == 0)
	{
		f->pending_xid_min = 3 + (uint32) fst_rand_range(rng, 1000000);
		f->pending_xid_max = f->pending_xid_min + (uint32) fst_rand_range(rng, 1000);
	}
	f->has_ttl = fst_rand_range(rng, 2) == 0;
	if (f->has_ttl)
	{
		f->ttl_min = -(int64) fst_rand_range(rng, 1000);
		f->ttl_max = (int64) fst_rand_range(rng, 1000);
	}
	f->raw_bytes = fst_rand_next(rng) >> 20;
}

static bool
ranges_overlap(const FstFileMeta *a, const FstFileMeta *b)
{
	return !(fst_ikey_cmp(fst_filemeta_largest(a), fst_filemeta_smallest(b)) < 0 ||
			 fst_ikey_cmp(fst_filemeta_largest(b), fst_filemeta_smallest(a)) < 0);
}

/* Brute-force check of fst_manifest_overlapping at one level. */
static void
check_overlapping(uint64 *rng, const FstManifest *m, int level)
{
	const FstManifestFile **res;
	int			nres,
				i,
				j = 0;
	Key			kb,
				ke;
	FstSlice	b,
				e;
	bool		use_b = fst_rand_range(rng, 4) != 0;
	bool		use_e = fst_rand_range(rng, 4) != 0;
	FstError	err;
	uint16		kg = (uint16) fst_rand_range(rng, RAND_KGS);

	key_build(&kb, kg, fst_rand_range(rng, 1000), 0);
	key_build(&ke, (uint16) (kg + fst_rand_range(rng, 4)),
			  fst_rand_range(rng, 1000), 0);
	b = fst_ikey_user_part(fst_slice(kb.b, kb.len));
	e = fst_ikey_user_part(fst_slice(ke.b, ke.len));
	CHECK_OK(fst_manifest_overlapping(m, level, use_b ? &b : NULL,
									  use_e ? &e : NULL, &res, &nres, &err), &err);
	for (i = 0; i < m->levels[level].nfiles; i++)
	{
		const FstManifestFile *f = &m->levels[level].files[i];
		FstSlice	s = fst_ikey_user_part(fst_filemeta_smallest(&f->meta));
		FstSlice	g = fst_ikey_user_part(fst_filemeta_largest(&f->meta));
		bool		meets = (!use_b || fst_slice_cmp(g, b) >= 0) &&
			(!use_e || fst_slice_cmp(s, e) <= 0);

		if (meets)
		{
			if (j >= nres || res[j] != f)
				break;
			j++;
		}
	}
	fst_free(res);
	CHECK_MSG(i == m->levels[level].nfiles && j == nres,
			  "overlapping(level %d) differs from a scan", level);
}

/* Applies e to *cur; on expected success replaces *cur with the result. */
static bool
step(FstManifest *cur, FstManifestEdit *e, bool expect_ok, int delta_files)
{
	FstManifest next;
	FstBuf		buf;
	FstManifest dec;
	FstError	err;
	FstCode		rc;
	bool		ok = true;
	int			before = fst_manifest_total_files(cur);

	rc = fst_manifest_apply(cur, e, &next, &err);
	fst_manifest_edit_free(e);
	if (!expect_ok)
	{
		fst_manifest_free(&next);
		if (rc != FST_INVALID_ARGUMENT)
			fst_test_fail(__FILE__, __LINE__, "bad edit: apply returned %s",
						  fst_code_name(rc));
		return rc == FST_INVALID_ARGUMENT;
	}
	if (rc != FST_OK)
	{
		fst_test_fail(__FILE__, __LINE__, "apply: %s", err.msg);
		return false;
	}
	ok = next.version == cur->version + 1 &&
		fst_manifest_total_files(&next) == before + delta_files &&
		fst_manifest_validate(&next, FST_CORRUPT, NULL) == FST_OK;
	fst_buf_init(&buf);
	if (ok && (fst_manifest_encode(&next, &buf, &err) != FST_OK ||
			   fst_manifest_decode(buf.data, buf.len, &dec, &err) != FST_OK))
		ok = false;
	else if (ok)
	{
		ok = fst_manifest_equal(&next, &dec);
		fst_manifest_free(&dec);
	}
	fst_buf_free(&buf);
	fst_manifest_free(cur);
	*cur = next;
	if (!ok)
		fst_test_fail(__FILE__, __LINE__, "version %llu: invariants or round trip",
					  (unsigned long long) cur->version);
	return ok;
}

FST_TEST(manifest_random_edits)
{
	uint64		rng = fst_test_seed();
	uint64		borrowed_id = 1;
	FstManifest cur;
	FstManifestEdit e;
	FstFileMeta f;
	int			s;

	fst_manifest_init(&cur);
	cur.max_key_groups = RAND_KGS;
	cur.kg_hi = RAND_KGS - 1;
	for (s = 0; s < RAND_STEPS && !fst_test_failed(); s++)
	{
		int			op = (int) fst_rand_range(&rng, 10);
		int			level = fst_rand_range(&rng, 2) ? 0 :
			(int) fst_rand_range(&rng, FST_NUM_LEVELS - 1);
		FstManifestLevel *lv = &cur.levels[level];
		bool		ok = true;

		fst_manifest_edit_init(&e);
		if (op < 4)
		{
			/* flush: a new L0 file, newest first */
			uint64		id = cur.next_file_id;
			uint64		hi = cur.last_seq + 1 + fst_rand_range(&rng, 100);

			rand_file(&rng, &f, id, cur.last_seq + 1, hi);
			fst_manifest_edit_add(&e, 0, &f, NULL, NULL);
			fst_filemeta_clear(&f);
			e.has_next_file_id = e.has_last_seq = e.has_lsn_covered = true;
			e.next_file_id = id + 1;
			e.last_seq = hi;
			e.lsn_covered = cur.lsn_covered + fst_rand_range(&rng, 5000);
			ok = step(&cur, &e, true, 1);
			CHECK(cur.levels[0].files[0].meta.file_id == id);
		}
		else if (op < 7 && lv->nfiles > 0)
		{
			/* compaction: one file of level + what it meets below */
			const FstManifestFile *in = &lv->files[fst_rand_range(&rng, lv->nfiles)];
			FstSlice	lo = fst_filemeta_smallest(&in->meta);
			FstSlice	hi = fst_filemeta_largest(&in->meta);
			FstSlice	b = fst_ikey_user_part(lo);
			FstSlice	en = fst_ikey_user_part(hi);
			const FstManifestFile **below;
			uint64		smin = in->meta.seq_min,
						smax = in->meta.seq_max;
			int			nbelow,
						i;

			CHECK_OK(fst_manifest_overlapping(&cur, level + 1, &b, &en,
											  &below, &nbelow, NULL),
					 &(FstError) {0});
			fst_manifest_edit_remove(&e, level, in->meta.file_id, in->owner, NULL);
			for (i = 0; i < nbelow; i++)
			{
				const FstFileMeta *bm = &below[i]->meta;

				fst_manifest_edit_remove(&e, level + 1, bm->file_id,
										 below[i]->owner, NULL);
				if (fst_ikey_cmp(fst_filemeta_smallest(bm), lo) < 0)
					lo = fst_filemeta_smallest(bm);
				if (fst_ikey_cmp(fst_filemeta_largest(bm), hi) > 0)
					hi = fst_filemeta_largest(bm);
				smin = Min(smin, bm->seq_min);
				smax = Max(smax, bm->seq_max);
			}
			fst_free(below);
			memset(&f, 0, sizeof(f));
			rand_file(&rng, &f, cur.next_file_id, smin, smax);
			fst_filemeta_set_range(&f, lo, hi);
			f.kg_min = fst_ikey_key_group(lo);
			f.kg_max = fst_ikey_key_group(hi);
			fst_manifest_edit_add(&e, level + 1, &f, NULL, NULL);
			fst_filemeta_clear(&f);
			e.has_next_file_id = true;
			e.next_file_id = cur.next_file_id + 1;
			ok = step(&cur, &e, true, -nbelow);
		}
		else if (op < 8)
		{
			/* ingest a borrowed file somewhere in levels >= 1 */
			int			l = 1 + (int) fst_rand_range(&rng, FST_NUM_LEVELS - 1);
			bool		clash = false;
			int			i;

			rand_file(&rng, &f, borrowed_id++, 0, cur.last_seq);
			for (i = 0; i < cur.levels[l].nfiles; i++)
				clash |= ranges_overlap(&f, &cur.levels[l].files[i].meta);
			fst_manifest_edit_add(&e, l, &f,
								  fst_rand_range(&rng, 2) ? "c9/tables/a" : "c9/tables/b",
								  NULL);
			fst_filemeta_clear(&f);
			ok = step(&cur, &e, !clash, clash ? 0 : 1);
		}
		else if (op < 9 && lv->nfiles > 0)
		{
			/* drop a file (TTL expiry of a whole file) */
			const FstManifestFile *in = &lv->files[fst_rand_range(&rng, lv->nfiles)];

			fst_manifest_edit_remove(&e, level, in->meta.file_id, in->owner, NULL);
			ok = step(&cur, &e, true, -1);
		}
		else
		{
			/* refused: removing a file that is not there */
			FstManifest before;

			CHECK_OK(fst_manifest_copy(&before, &cur, NULL), &(FstError) {0});
			fst_manifest_edit_remove(&e, level, cur.next_file_id + 5, NULL, NULL);
			ok = step(&cur, &e, false, 0) && fst_manifest_equal(&before, &cur);
			fst_manifest_free(&before);
		}
		if (!ok)
			break;
		check_overlapping(&rng, &cur, (int) fst_rand_range(&rng, FST_NUM_LEVELS));
	}
	CHECK(cur.version > RAND_STEPS / 2);
	fst_manifest_free(&cur);
}
