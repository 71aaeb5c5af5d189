/*-------------------------------------------------------------------------
 *
 * manifest.c
 *	  Manifest lifecycle, file identity, equality, edits and look-ups.
 *
 * The invariants (fst_manifest_validate) moved to manifest_check.c, and the
 * byte encoding lives in manifest_codec.c.  Decode there and apply here end
 * with that same validation, so that a manifest read from storage and one
 * produced by an edit obey exactly the same rules.
 *
 *-------------------------------------------------------------------------
 */
#include "manifest.h"

#include <stdio.h>
#include <stdlib.h>

#include "ikey.h"
#include "manifest_internal.h"

/* ----------------------------------------------------------------
 *		lifecycle
 * ----------------------------------------------------------------
 */

void
fst_manifest_init(FstManifest *m)
{
	memset(m, 0, sizeof(*m));
	m->format_major = FST_MANIFEST_FORMAT_MAJOR;
	m->format_minor = FST_MANIFEST_FORMAT_MINOR;
	m->next_file_id = 1;
	m->max_key_groups = FST_DEFAULT_MAX_KEY_GROUPS;
	m->kg_lo = 0;
	m->kg_hi = FST_DEFAULT_MAX_KEY_GROUPS - 1;
	m->ttl_attnum = -1;
}

static void
manifest_file_clear(FstManifestFile *f)
{
	fst_filemeta_clear(&f->meta);
	fst_free(f->owner);
	f->owner = NULL;
}

void
fst_manifest_free(FstManifest *m)
{
	int			l;

	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		FstManifestLevel *lv = &m->levels[l];
		int			i;

		for (i = 0; i < lv->nfiles; i++)
			manifest_file_clear(&lv->files[i]);
		fst_free(lv->files);
	}
	fst_free(m->schema);
	fst_manifest_init(m);
}

/* Deep copy of one file record; false on out of memory (dst cleared). */
static bool
manifest_file_copy(FstManifestFile *dst, const FstFileMeta *meta,
				   const char *owner)
{
	dst->owner = NULL;
	if (!fst_filemeta_copy(&dst->meta, meta))
		return false;
	if (owner != NULL && (dst->owner = fst_strdup(owner)) == NULL)
	{
		fst_filemeta_clear(&dst->meta);
		return false;
	}
	return true;
}

/* Makes room for one more file at a level. */
static bool
level_reserve(FstManifestLevel *lv, int extra)
{
	FstManifestFile *p;
	int			ncap;

	if (lv->nfiles + extra <= lv->cap)
		return true;
	if (extra > PG_INT32_MAX / 2 - lv->nfiles)
		return false;
	ncap = lv->cap ? lv->cap : 8;
	while (ncap < lv->nfiles + extra)
		ncap *= 2;
	p = fst_realloc(lv->files, (size_t) ncap * sizeof(FstManifestFile));
	if (p == NULL)
		return false;
	lv->files = p;
	lv->cap = ncap;
	return true;
}

FstCode
fst_manifest_append_file(FstManifest *m, int level, const FstFileMeta *meta,
						 const char *owner, FstError *err)
{
	FstManifestLevel *lv;

	if (level < 0 || level >= FST_NUM_LEVELS)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "manifest level %d out of range", level);
	lv = &m->levels[level];
	if (!level_reserve(lv, 1) ||
		!manifest_file_copy(&lv->files[lv->nfiles], meta, owner))
		return fst_error(err, FST_NO_MEMORY, "out of memory adding a file");
	lv->files[lv->nfiles].meta.level = level;
	lv->nfiles++;
	return FST_OK;
}

FstCode
fst_manifest_set_schema(FstManifest *m, const void *data, size_t len,
						FstError *err)
{
	char	   *p = NULL;

	if (len > 0)
	{
		if ((p = fst_malloc(len)) == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory copying schema");
		memcpy(p, data, len);
	}
	fst_free(m->schema);
	m->schema = p;
	m->schema_len = len;
	return FST_OK;
}

/* Copies everything but the file arrays. */
static FstCode
copy_scalars(FstManifest *dst, const FstManifest *src, FstError *err)
{
	fst_manifest_init(dst);
	memcpy(dst, src, offsetof(FstManifest, levels));
	dst->schema = NULL;
	dst->schema_len = 0;
	if (fst_manifest_set_schema(dst, src->schema, src->schema_len, err) != FST_OK)
	{
		fst_manifest_init(dst);
		return FST_NO_MEMORY;
	}
	return FST_OK;
}

FstCode
fst_manifest_copy(FstManifest *dst, const FstManifest *src, FstError *err)
{
	FstCode		rc;
	int			l,
				i;

	if ((rc = copy_scalars(dst, src, err)) != FST_OK)
		return rc;
	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		const FstManifestLevel *sl = &src->levels[l];

		for (i = 0; i < sl->nfiles; i++)
		{
			rc = fst_manifest_append_file(dst, l, &sl->files[i].meta,
										  sl->files[i].owner, err);
			if (rc != FST_OK)
			{
				fst_manifest_free(dst);
				return rc;
			}
		}
	}
	return FST_OK;
}

/* ----------------------------------------------------------------
 *		file identity (shared with manifest_check.c)
 * ----------------------------------------------------------------
 */

int
fst_manifest_owner_cmp(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == NULL) ? ((b == NULL) ? 0 : -1) : 1;
	return strcmp(a, b);
}

int
fst_manifest_file_identity_cmp(const void *pa, const void *pb)
{
	const FstManifestFile *a = *(const FstManifestFile *const *) pa;
	const FstManifestFile *b = *(const FstManifestFile *const *) pb;

	if (a->meta.file_id != b->meta.file_id)
		return a->meta.file_id < b->meta.file_id ? -1 : 1;
	return fst_manifest_owner_cmp(a->owner, b->owner);
}

/* ----------------------------------------------------------------
 *		equality
 * ----------------------------------------------------------------
 */

static bool
bytes_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static bool
file_equal(const FstManifestFile *x, const FstManifestFile *y)
{
	const FstFileMeta *a = &x->meta;
	const FstFileMeta *b = &y->meta;

	return fst_manifest_owner_cmp(x->owner, y->owner) == 0 &&
		a->file_id == b->file_id && a->level == b->level &&
		a->size == b->size &&
		bytes_equal(a->smallest, a->smallest_len, b->smallest, b->smallest_len) &&
		bytes_equal(a->largest, a->largest_len, b->largest, b->largest_len) &&
		a->kg_min == b->kg_min && a->kg_max == b->kg_max &&
		a->num_entries == b->num_entries &&
		a->num_tombstones == b->num_tombstones &&
		a->seq_min == b->seq_min && a->seq_max == b->seq_max &&
		a->xid_min == b->xid_min && a->xid_max == b->xid_max &&
		a->pending_xid_min == b->pending_xid_min &&
		a->pending_xid_max == b->pending_xid_max &&
		a->has_ttl == b->has_ttl && a->ttl_min == b->ttl_min &&
		a->ttl_max == b->ttl_max && a->raw_bytes == b->raw_bytes;
}

bool
fst_manifest_equal(const FstManifest *a, const FstManifest *b)
{
	int			l,
				i;

	if (memcmp(a->table_uuid, b->table_uuid, FST_MANIFEST_UUID_LEN) != 0 ||
		a->version != b->version || a->writer_epoch != b->writer_epoch ||
		a->lsn_covered != b->lsn_covered ||
		a->next_file_id != b->next_file_id || a->last_seq != b->last_seq ||
		a->created_at != b->created_at ||
		a->max_key_groups != b->max_key_groups ||
		a->kg_lo != b->kg_lo || a->kg_hi != b->kg_hi ||
		!bytes_equal(a->schema, a->schema_len, b->schema, b->schema_len) ||
		a->ttl_attnum != b->ttl_attnum ||
		a->ttl_interval_us != b->ttl_interval_us)
		return false;
	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		if (a->levels[l].nfiles != b->levels[l].nfiles)
			return false;
		for (i = 0; i < a->levels[l].nfiles; i++)
			if (!file_equal(&a->levels[l].files[i], &b->levels[l].files[i]))
				return false;
	}
	return true;
}

/* ----------------------------------------------------------------
 *		edits
 * ----------------------------------------------------------------
 */

void
fst_manifest_edit_init(FstManifestEdit *e)
{
	memset(e, 0, sizeof(*e));
}

void
fst_manifest_edit_free(FstManifestEdit *e)
{
	int			i;

	for (i = 0; i < e->nadds; i++)
		manifest_file_clear(&e->adds[i]);
	for (i = 0; i < e->nremoves; i++)
		fst_free(e->removes[i].owner);
	fst_free(e->adds);
	fst_free(e->removes);
	fst_manifest_edit_init(e);
}

void
fst_manifest_edit_drop_removals(FstManifestEdit *e)
{
	for (int i = 0; i < e->nremoves; i++)
		fst_free(e->removes[i].owner);
	e->nremoves = 0;
}

/* Grows an array of elem-sized slots so that one more fits. */
static bool
grow_array(void **arr, int n, int *cap, size_t elem)
{
	void	   *p;
	int			ncap;

	if (n < *cap)
		return true;
	if (*cap > PG_INT32_MAX / 4)
		return false;
	ncap = *cap ? *cap * 2 : 8;
	p = fst_realloc(*arr, (size_t) ncap * elem);
	if (p == NULL)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

FstCode
fst_manifest_edit_add(FstManifestEdit *e, int level, const FstFileMeta *meta,
					  const char *owner, FstError *err)
{
	void	   *arr = e->adds;

	if (level < 0 || level >= FST_NUM_LEVELS)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "manifest level %d out of range", level);
	if (!grow_array(&arr, e->nadds, &e->adds_cap, sizeof(FstManifestFile)))
		return fst_error(err, FST_NO_MEMORY, "out of memory growing an edit");
	e->adds = arr;
	if (!manifest_file_copy(&e->adds[e->nadds], meta, owner))
		return fst_error(err, FST_NO_MEMORY, "out of memory growing an edit");
	e->adds[e->nadds].meta.level = level;
	e->nadds++;
	return FST_OK;
}

FstCode
fst_manifest_edit_remove(FstManifestEdit *e, int level, uint64 file_id,
						 const char *owner, FstError *err)
{
	void	   *arr = e->removes;
	FstManifestRemoval *r;

	if (level < 0 || level >= FST_NUM_LEVELS)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "manifest level %d out of range", level);
	if (!grow_array(&arr, e->nremoves, &e->removes_cap,
					sizeof(FstManifestRemoval)))
		return fst_error(err, FST_NO_MEMORY, "out of memory growing an edit");
	e->removes = arr;
	r = &e->removes[e->nremoves];
	r->level = level;
	r->file_id = file_id;
	r->owner = NULL;
	if (owner != NULL && (r->owner = fst_strdup(owner)) == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory growing an edit");
	e->nremoves++;
	return FST_OK;
}

static int
file_smallest_cmp(const void *pa, const void *pb)
{
	const FstManifestFile *a = pa;
	const FstManifestFile *b = pb;
	int			r = fst_ikey_cmp(fst_filemeta_smallest(&a->meta),
								 fst_filemeta_smallest(&b->meta));

	if (r != 0)
		return r;
	return fst_manifest_file_identity_cmp(&a, &b);
}

/* Checks that an optional counter does not go backwards. */
#define EDIT_COUNTER(field, fmt_name) \
	do { \
		if (edit->has_##field) \
		{ \
			if (edit->field < base->field) \
			{ \
				rc = fst_error(err, FST_INVALID_ARGUMENT, \
							   "edit moves %s back from %llu to %llu", fmt_name, \
							   (unsigned long long) base->field, \
							   (unsigned long long) edit->field); \
				goto fail; \
			} \
			next->field = edit->field; \
		} \
	} while (0)

FstCode
fst_manifest_apply(const FstManifest *base, const FstManifestEdit *edit,
				   FstManifest *next, FstError *err)
{
	bool	   *removed[FST_NUM_LEVELS];
	FstCode		rc;
	int			l,
				i,
				j;

	memset(removed, 0, sizeof(removed));
	if ((rc = copy_scalars(next, base, err)) != FST_OK)
		return rc;
	if (base->version == PG_UINT64_MAX)
	{
		rc = fst_error(err, FST_INVALID_ARGUMENT, "manifest version overflow");
		goto fail;
	}
	next->version = base->version + 1;
	EDIT_COUNTER(lsn_covered, "lsn covered");
	EDIT_COUNTER(last_seq, "last sequence");
	EDIT_COUNTER(next_file_id, "next file id");
	EDIT_COUNTER(writer_epoch, "writer epoch");
	if (edit->has_created_at)
		next->created_at = edit->created_at;

	/* mark removals; each must name a file base has at that level */
	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		if (base->levels[l].nfiles == 0)
			continue;
		removed[l] = fst_calloc(base->levels[l].nfiles, sizeof(bool));
		if (removed[l] == NULL)
		{
			rc = fst_error(err, FST_NO_MEMORY, "out of memory applying an edit");
			goto fail;
		}
	}
	for (i = 0; i < edit->nremoves; i++)
	{
		const FstManifestRemoval *r = &edit->removes[i];
		const FstManifestLevel *lv;
		bool		found = false;

		if (r->level < 0 || r->level >= FST_NUM_LEVELS)
		{
			rc = fst_error(err, FST_INVALID_ARGUMENT,
						   "edit removes from level %d", r->level);
			goto fail;
		}
		lv = &base->levels[r->level];
		for (j = 0; j < lv->nfiles && !found; j++)
		{
			if (!removed[r->level][j] && lv->files[j].meta.file_id == r->file_id &&
				fst_manifest_owner_cmp(lv->files[j].owner, r->owner) == 0)
				removed[r->level][j] = found = true;
		}
		if (!found)
		{
			rc = fst_error(err, FST_INVALID_ARGUMENT,
						   "edit removes file %llu%s%s, not in level %d",
						   (unsigned long long) r->file_id,
						   r->owner ? " of " : "", r->owner ? r->owner : "",
						   r->level);
			goto fail;
		}
	}

	/* new L0 files first, the one added last to the edit first of all */
	for (i = edit->nadds - 1; i >= 0; i--)
	{
		if (edit->adds[i].meta.level != 0)
			continue;
		rc = fst_manifest_append_file(next, 0, &edit->adds[i].meta,
									  edit->adds[i].owner, err);
		if (rc != FST_OK)
			goto fail;
	}
	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		const FstManifestLevel *lv = &base->levels[l];

		for (i = 0; i < lv->nfiles; i++)
		{
			if (removed[l][i])
				continue;
			rc = fst_manifest_append_file(next, l, &lv->files[i].meta,
										  lv->files[i].owner, err);
			if (rc != FST_OK)
				goto fail;
		}
	}
	for (i = 0; i < edit->nadds; i++)
	{
		int			al = edit->adds[i].meta.level;

		if (al == 0)
			continue;
		if (al < 0 || al >= FST_NUM_LEVELS)
		{
			rc = fst_error(err, FST_INVALID_ARGUMENT, "edit adds to level %d", al);
			goto fail;
		}
		rc = fst_manifest_append_file(next, al, &edit->adds[i].meta,
									  edit->adds[i].owner, err);
		if (rc != FST_OK)
			goto fail;
	}
	for (l = 1; l < FST_NUM_LEVELS; l++)
		if (next->levels[l].nfiles > 1)
			qsort(next->levels[l].files, next->levels[l].nfiles,
				  sizeof(FstManifestFile), file_smallest_cmp);

	rc = fst_manifest_validate(next, FST_INVALID_ARGUMENT, err);
	if (rc != FST_OK)
	{
		fst_error_prefix(err, "edit refused");
		goto fail;
	}
	for (l = 0; l < FST_NUM_LEVELS; l++)
		fst_free(removed[l]);
	return FST_OK;

fail:
	for (l = 0; l < FST_NUM_LEVELS; l++)
		fst_free(removed[l]);
	fst_manifest_free(next);
	return rc;
}

/* ----------------------------------------------------------------
 *		look-ups
 * ----------------------------------------------------------------
 */

uint64
fst_manifest_level_bytes(const FstManifest *m, int level)
{
	uint64		sum = 0;
	int			i;

	if (level < 0 || level >= FST_NUM_LEVELS)
		return 0;
	for (i = 0; i < m->levels[level].nfiles; i++)
		sum += m->levels[level].files[i].meta.size;
	return sum;
}

int
fst_manifest_level_files(const FstManifest *m, int level)
{
	if (level < 0 || level >= FST_NUM_LEVELS)
		return 0;
	return m->levels[level].nfiles;
}

int
fst_manifest_total_files(const FstManifest *m)
{
	int			n = 0;
	int			l;

	for (l = 0; l < FST_NUM_LEVELS; l++)
		n += m->levels[l].nfiles;
	return n;
}

uint64
fst_manifest_total_bytes(const FstManifest *m)
{
	uint64		sum = 0;
	int			l;

	for (l = 0; l < FST_NUM_LEVELS; l++)
		sum += fst_manifest_level_bytes(m, l);
	return sum;
}

const FstManifestFile *
fst_manifest_find_file(const FstManifest *m, uint64 file_id,
					   const char *owner, int *level)
{
	int			l,
				i;

	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < m->levels[l].nfiles; i++)
		{
			const FstManifestFile *f = &m->levels[l].files[i];

			if (f->meta.file_id == file_id &&
				fst_manifest_owner_cmp(f->owner, owner) == 0)
			{
				if (level)
					*level = l;
				return f;
			}
		}
	return NULL;
}

bool
fst_manifest_object_name(uint64 version, char *buf, size_t size)
{
	if (buf == NULL || size < FST_MANIFEST_OBJECT_NAME_SIZE)
		return false;
	snprintf(buf, size, "manifest/%020llu", (unsigned long long) version);
	return true;
}

bool
fst_manifest_parse_object_name(const char *name, uint64 *version)
{
	uint64		v = 0;
	int			i;

	if (name == NULL || strncmp(name, "manifest/", 9) != 0 ||
		strlen(name) != FST_MANIFEST_OBJECT_NAME_SIZE - 1)
		return false;
	for (i = 9; name[i] != '\0'; i++)
	{
		int			d = name[i] - '0';

		if (d < 0 || d > 9 || v > (PG_UINT64_MAX - (uint64) d) / 10)
			return false;
		v = v * 10 + (uint64) d;
	}
	*version = v;
	return true;
}

/* Does f's key range meet the user-part range [begin, end]? */
static bool
file_meets(const FstFileMeta *f, const FstSlice *begin, const FstSlice *end)
{
	if (begin != NULL &&
		fst_slice_cmp(fst_ikey_user_part(fst_filemeta_largest(f)), *begin) < 0)
		return false;
	if (end != NULL &&
		fst_slice_cmp(fst_ikey_user_part(fst_filemeta_smallest(f)), *end) > 0)
		return false;
	return true;
}

FstCode
fst_manifest_overlapping(const FstManifest *m, int level, const FstSlice *begin,
						 const FstSlice *end, const FstManifestFile ***out,
						 int *nout, FstError *err)
{
	const FstManifestLevel *lv;
	const FstManifestFile **res;
	int			lo = 0,
				i,
				n = 0;

	*out = NULL;
	*nout = 0;
	if (level < 0 || level >= FST_NUM_LEVELS)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "manifest level %d out of range", level);
	lv = &m->levels[level];
	if (lv->nfiles == 0)
		return FST_OK;
	if (level > 0 && begin != NULL)
	{
		/* first file whose largest user part is >= begin */
		int			hi = lv->nfiles;

		while (lo < hi)
		{
			int			mid = lo + (hi - lo) / 2;
			FstSlice	g = fst_filemeta_largest(&lv->files[mid].meta);

			if (fst_slice_cmp(fst_ikey_user_part(g), *begin) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	res = fst_malloc((size_t) (lv->nfiles - lo) * sizeof(*res));
	if (res == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory listing files");
	for (i = lo; i < lv->nfiles; i++)
	{
		const FstFileMeta *f = &lv->files[i].meta;

		if (file_meets(f, begin, end))
			res[n++] = &lv->files[i];
		else if (level > 0 && end != NULL &&
				 fst_slice_cmp(fst_ikey_user_part(fst_filemeta_smallest(f)),
							   *end) > 0)
			break;				/* sorted: nothing further can meet */
	}
	if (n == 0)
	{
		fst_free(res);
		res = NULL;
	}
	*out = res;
	*nout = n;
	return FST_OK;
}
