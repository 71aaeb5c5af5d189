/*-------------------------------------------------------------------------
 *
 * manifest_check.c
 *	  The invariants of a manifest: fst_manifest_validate.
 *
 * Checks every invariant listed in manifest.h: the table-wide settings
 * (key groups, TTL, schema), each file on its own (level, size, keys, key
 * groups, sequence and TTL ranges, owner, file id), the order of the files
 * of levels >= 1, and that no (owner, file id) appears twice.  It is the
 * one rule book for both ways a manifest comes to be: decode
 * (manifest_codec.c) reports a violation as FST_CORRUPT, apply and encode
 * (manifest.c, manifest_codec.c) as FST_INVALID_ARGUMENT; the caller passes
 * the code.  It reads the manifest only, allocating nothing but a scratch
 * array for the duplicate check.
 *
 *-------------------------------------------------------------------------
 */
#include "manifest.h"

#include <stdlib.h>

#include "ikey.h"
#include "manifest_internal.h"

static FstCode
validate_file(const FstManifest *m, const FstManifestFile *f, int level,
			  FstCode code, FstError *err)
{
	const FstFileMeta *fm = &f->meta;
	FstSlice	s = fst_filemeta_smallest(fm);
	FstSlice	g = fst_filemeta_largest(fm);
	uint64		id = fm->file_id;

	if (fm->level != level)
		return fst_error(err, code, "file %llu: level field %d in level %d",
						 (unsigned long long) id, fm->level, level);
	if (fm->size == 0)
		return fst_error(err, code, "file %llu: size 0",
						 (unsigned long long) id);
	if (!fst_ikey_valid(s) || !fst_ikey_valid(g) ||
		fm->smallest == NULL || fm->largest == NULL)
		return fst_error(err, code, "file %llu: key shorter than an internal key",
						 (unsigned long long) id);
	if (fst_ikey_cmp(s, g) > 0)
		return fst_error(err, code, "file %llu: smallest key > largest key",
						 (unsigned long long) id);
	if (fm->kg_min != fst_ikey_key_group(s) ||
		fm->kg_max != fst_ikey_key_group(g))
		return fst_error(err, code,
						 "file %llu: key-group range [%u, %u] does not match its keys",
						 (unsigned long long) id, fm->kg_min, fm->kg_max);
	if (fm->kg_max >= m->max_key_groups && fm->kg_max != FST_KG_INDEX)
		return fst_error(err, code, "file %llu: key group %u >= max_key_groups %u",
						 (unsigned long long) id, fm->kg_max, m->max_key_groups);
	if (fm->seq_min > fm->seq_max || fm->seq_max > m->last_seq)
		return fst_error(err, code,
						 "file %llu: sequence range [%llu, %llu] invalid (last sequence %llu)",
						 (unsigned long long) id,
						 (unsigned long long) fm->seq_min,
						 (unsigned long long) fm->seq_max,
						 (unsigned long long) m->last_seq);
	if (fm->num_tombstones > fm->num_entries)
		return fst_error(err, code, "file %llu: more tombstones than entries",
						 (unsigned long long) id);
	if (fm->has_ttl && fm->ttl_min > fm->ttl_max)
		return fst_error(err, code, "file %llu: TTL range inverted",
						 (unsigned long long) id);
	if (f->owner != NULL)
	{
		size_t		n = strlen(f->owner);

		if (n == 0 || n > FST_MANIFEST_MAX_OWNER)
			return fst_error(err, code, "file %llu: owner length %zu invalid",
							 (unsigned long long) id, n);
	}
	else if (id >= m->next_file_id)
		return fst_error(err, code, "file %llu: id not below next file id %llu",
						 (unsigned long long) id,
						 (unsigned long long) m->next_file_id);
	return FST_OK;
}

FstCode
fst_manifest_validate(const FstManifest *m, FstCode code, FstError *err)
{
	const FstManifestFile **all;
	int			total = fst_manifest_total_files(m);
	int			n = 0;
	int			l,
				i;
	FstCode		rc;

	if (m->max_key_groups == 0 || m->max_key_groups > FST_MAX_KEY_GROUPS)
		return fst_error(err, code, "max_key_groups %u out of range",
						 m->max_key_groups);
	if (m->kg_lo > m->kg_hi || m->kg_hi >= m->max_key_groups)
		return fst_error(err, code, "key-group range [%u, %u] invalid for %u groups",
						 m->kg_lo, m->kg_hi, m->max_key_groups);
	if (m->ttl_attnum == -1 ? m->ttl_interval_us != 0 :
		(m->ttl_attnum < 1 || m->ttl_interval_us <= 0))
		return fst_error(err, code, "TTL setting (column %d, interval %lld) invalid",
						 m->ttl_attnum, (long long) m->ttl_interval_us);
	if (m->schema_len > 0 && m->schema == NULL)
		return fst_error(err, code, "schema length without schema bytes");

	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		const FstManifestLevel *lv = &m->levels[l];

		if (lv->nfiles < 0 || (lv->nfiles > 0 && lv->files == NULL))
			return fst_error(err, code, "level %d: bad file array", l);
		for (i = 0; i < lv->nfiles; i++)
		{
			if ((rc = validate_file(m, &lv->files[i], l, code, err)) != FST_OK)
				return rc;
			if (l > 0 && i > 0 &&
				fst_ikey_cmp(fst_filemeta_largest(&lv->files[i - 1].meta),
							 fst_filemeta_smallest(&lv->files[i].meta)) >= 0)
				return fst_error(err, code,
								 "level %d: files %llu and %llu overlap or are out of order",
								 l,
								 (unsigned long long) lv->files[i - 1].meta.file_id,
								 (unsigned long long) lv->files[i].meta.file_id);
		}
	}

	/* duplicate identities across the whole manifest */
	if (total < 2)
		return FST_OK;
	all = fst_malloc((size_t) total * sizeof(*all));
	if (all == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory validating manifest");
	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < m->levels[l].nfiles; i++)
			all[n++] = &m->levels[l].files[i];
	qsort(all, n, sizeof(*all), fst_manifest_file_identity_cmp);
	rc = FST_OK;
	for (i = 1; i < n; i++)
	{
		if (fst_manifest_file_identity_cmp(&all[i - 1], &all[i]) == 0)
		{
			rc = fst_error(err, code, "file %llu%s%s appears twice",
						   (unsigned long long) all[i]->meta.file_id,
						   all[i]->owner ? " of " : "",
						   all[i]->owner ? all[i]->owner : "");
			break;
		}
	}
	fst_free(all);
	return rc;
}
