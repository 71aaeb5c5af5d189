/*-------------------------------------------------------------------------
 *
 * sst_verify.c
 *	  forst-sst-verify: checks a local copy of forst's objects (downloaded
 *	  from the object store, e.g. with "aws s3 cp --recursive") with the
 *	  engine's own readers, independently of the server.
 *
 *	  forst-sst-verify DIR
 *
 * DIR is a copy of forst.remote_dir: it holds
 * <system id>/tables/<table>/manifest/<20 digits> and
 * <system id>/tables/<table>/sst/<2 hex>/<20 digits>.sst (objects/store.h).
 * For every table directory found below DIR:
 *	- every manifest decodes (format, checksum, invariants);
 *	- every file the newest manifest names exists with the listed size, and
 *	  its entry count and key range match the manifest's;
 * and every .sst file found opens (footer, index, filter, properties
 * checksums) and reads entry by entry to its end, which verifies the
 * CRC-32C of every data block; the count read equals its properties'.
 * A table directory without manifests is a dropped table whose files
 * other tables still borrow (garbage collection keeps those): each of its
 * .sst files must be named by a borrowed entry of some manifest found
 * below DIR.
 *
 * Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed";
 * exits 1 if anything failed or nothing was found.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "iter.h"
#include "manifest.h"
#include "objkey.h"
#include "rangesrc.h"
#include "sst.h"

static int	passed = 0;
static int	failed = 0;

/* The object keys that manifests below DIR borrow (after their rules). */
static char **borrowed_keys = NULL;
static int	nborrowed = 0;
static int	borrowed_cap = 0;

static void
result(bool ok, const char *fmt,...) pg_attribute_printf(2, 3);

static void
result(bool ok, const char *fmt,...)
{
	va_list		ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (ok)
		passed++;
	else
		failed++;
}

static bool
read_file(const char *path, FstBuf *out)
{
	FILE	   *f = fopen(path, "rb");
	char		chunk[65536];
	size_t		n;

	if (f == NULL)
		return false;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fst_buf_append(out, chunk, n);
	fclose(f);
	return !out->oom;
}

/* Reads every entry of one SST; returns the entries read, -1 on failure. */
static int64
verify_sst(const char *path, FstSstProps *props_out, FstError *err)
{
	FstRangeSource *src = NULL;
	FstSstReader *r = NULL;
	FstSstReadOptions ro;
	FstIter    *it;
	int64		n = 0;
	FstCode		rc;

	rc = fst_range_source_file(path, &src, err);
	if (rc != FST_OK)
		return -1;
	fst_sst_read_options_default(&ro);
	ro.verify_checksums = true;
	rc = fst_sst_open(src, &ro, &r, err);
	if (rc != FST_OK)
	{
		fst_range_close(src);
		return -1;
	}
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
		n++;
	rc = fst_iter_status(it, err);
	fst_iter_destroy(it);
	if (rc == FST_OK && props_out)
	{
		const FstSstProps *p = fst_sst_props(r);

		props_out->num_entries = p->num_entries;
		props_out->file_size = p->file_size;
	}
	fst_sst_close(r);
	fst_range_close(src);
	return rc == FST_OK ? n : -1;
}

static void
add_borrowed(const char *owner)
{
	const char *key = strrchr(owner, ':');

	if (key == NULL)
		return;
	if (nborrowed == borrowed_cap)
	{
		borrowed_cap = borrowed_cap ? borrowed_cap * 2 : 256;
		borrowed_keys = realloc(borrowed_keys, sizeof(char *) * borrowed_cap);
		if (borrowed_keys == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
	}
	borrowed_keys[nborrowed++] = strdup(key + 1);
}

/*
 * Calls visit(path, name, st, arg) for each entry of dir (stat'ed; names
 * starting with "." skipped).  False if dir cannot be opened.
 */
typedef void (*EntryVisit) (const char *path, const char *name,
							const struct stat *st, void *arg);

static bool
each_entry(const char *dir, EntryVisit visit, void *arg)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;

	if (d == NULL)
		return false;
	while ((de = readdir(d)) != NULL)
	{
		char		path[2048];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) == 0)
			visit(path, de->d_name, &st, arg);
	}
	closedir(d);
	return true;
}

static void collect_borrowed(const char *dir);

/* An entry below a manifest directory (*in_manifests) or elsewhere. */
static void
collect_entry(const char *path, const char *name, const struct stat *st, void *arg)
{
	if (S_ISDIR(st->st_mode))
		collect_borrowed(path);
	else if (*(bool *) arg)
	{
		FstBuf		buf;
		FstManifest m;
		FstError	err;

		fst_buf_init(&buf);
		if (read_file(path, &buf) &&
			fst_manifest_decode(buf.data, buf.len, &m, &err) == FST_OK)
		{
			for (int l = 0; l < FST_NUM_LEVELS; l++)
				for (int i = 0; i < m.levels[l].nfiles; i++)
					if (m.levels[l].files[i].owner)
						add_borrowed(m.levels[l].files[i].owner);
			fst_manifest_free(&m);
		}
		fst_buf_free(&buf);
	}
}

/* Notes the borrowed files of every manifest below dir. */
static void
collect_borrowed(const char *dir)
{
	size_t		len = strlen(dir);
	bool		in_manifests = len >= 9 && strcmp(dir + len - 9, "/manifest") == 0;

	(void) each_entry(dir, collect_entry, &in_manifests);
}

static bool
is_borrowed(const char *key)
{
	for (int i = 0; i < nborrowed; i++)
		if (strcmp(borrowed_keys[i], key) == 0)
			return true;
	return false;
}

/* A dropped table's files: where their keys begin in a path, how many. */
typedef struct DroppedFiles
{
	size_t		key_offset;
	int			files;
} DroppedFiles;

static void
dropped_file(const char *path, const char *name, const struct stat *st, void *arg)
{
	DroppedFiles *df = arg;

	result(is_borrowed(path + df->key_offset),
		   "%s: a dropped table's file that a manifest borrows", path);
	df->files++;
}

static void
dropped_spread_dir(const char *path, const char *name, const struct stat *st, void *arg)
{
	if (S_ISDIR(st->st_mode))
		(void) each_entry(path, dropped_file, arg);
}

/*
 * A table directory without manifests (<base>/<cluster>/tables/<t>): each
 * of its files must be one that a manifest borrows, by its object key
 * "<cluster>/tables/<t>/sst/<2 hex>/<id>.sst".
 */
static void
verify_dropped_table(const char *table_dir)
{
	char		sst_dir[2048];
	const char *key_start = table_dir + strlen(table_dir);
	DroppedFiles df = {0, 0};

	/* back over "<t>", "tables" and "<cluster>" to the store's base */
	for (int up = 0; up < 3 && key_start > table_dir; up++)
	{
		do
			key_start--;
		while (key_start > table_dir && *key_start != '/');
	}
	if (*key_start == '/')
		key_start++;
	/* a path below table_dir has its key where key_start is in table_dir */
	df.key_offset = key_start - table_dir;
	snprintf(sst_dir, sizeof(sst_dir), "%s/sst", table_dir);
	if (!each_entry(sst_dir, dropped_spread_dir, &df) || df.files == 0)
		result(false, "%s has no manifest directory and no files", table_dir);
}

/* sst/<2 hex>/<20 digits>.sst of a file id, as objects/store.c names it */
static void
sst_path(const char *table_dir, uint64 file_id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/sst/%02x/%020" INT64_MODIFIER "u.sst", table_dir,
			 fst_objkey_sst_spread(file_id), file_id);
}

static void
verify_table(const char *table_dir)
{
	char		path[2048];
	DIR		   *d;
	struct dirent *de;
	uint64		newest = 0;
	int			nmanifests = 0;
	FstManifest m;
	FstBuf		buf;
	FstError	err;
	int			level;

	/* every manifest decodes */
	snprintf(path, sizeof(path), "%s/manifest", table_dir);
	d = opendir(path);
	if (d == NULL)
	{
		verify_dropped_table(table_dir);
		return;
	}
	while ((de = readdir(d)) != NULL)
	{
		char		name[64];
		uint64		v;

		if (de->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "manifest/%s", de->d_name);
		if (!fst_manifest_parse_object_name(name, &v))
		{
			result(false, "%s/manifest/%s is not a manifest name", table_dir, de->d_name);
			continue;
		}
		snprintf(path, sizeof(path), "%s/manifest/%s", table_dir, de->d_name);
		fst_buf_init(&buf);
		if (!read_file(path, &buf))
			result(false, "read %s", path);
		else if (fst_manifest_decode(buf.data, buf.len, &m, &err) != FST_OK)
			result(false, "manifest %s decodes: %s", path, err.msg);
		else
		{
			bool		ok = m.version == v;

			result(ok, "manifest %s decodes (version %llu, %d files)", path,
				   (unsigned long long) m.version, fst_manifest_total_files(&m));
			fst_manifest_free(&m);
			nmanifests++;
			if (v > newest)
				newest = v;
		}
		fst_buf_free(&buf);
	}
	closedir(d);
	if (nmanifests == 0)
		return;

	/* the newest manifest's files are all there, as listed */
	{
		char		name[FST_MANIFEST_OBJECT_NAME_SIZE];

		fst_manifest_object_name(newest, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", table_dir, name);
	}
	fst_buf_init(&buf);
	if (!read_file(path, &buf) ||
		fst_manifest_decode(buf.data, buf.len, &m, &err) != FST_OK)
	{
		fst_buf_free(&buf);
		result(false, "newest manifest %s", path);
		return;
	}
	fst_buf_free(&buf);
	for (level = 0; level < FST_NUM_LEVELS; level++)
	{
		int			i;

		for (i = 0; i < m.levels[level].nfiles; i++)
		{
			const FstManifestFile *f = &m.levels[level].files[i];
			struct stat st;
			FstSstProps props;
			int64		n;

			if (f->owner != NULL)
				continue;		/* another table's file */
			sst_path(table_dir, f->meta.file_id, path, sizeof(path));
			if (stat(path, &st) != 0)
			{
				result(false, "manifest %llu names %s, which is missing",
					   (unsigned long long) newest, path);
				continue;
			}
			result((uint64) st.st_size == f->meta.size,
				   "%s has the manifest's size (%llu, listed %llu)", path,
				   (unsigned long long) st.st_size,
				   (unsigned long long) f->meta.size);
			memset(&props, 0, sizeof(props));
			n = verify_sst(path, &props, &err);
			result(n >= 0 && (uint64) n == f->meta.num_entries,
				   "%s holds the manifest's %llu entries (read %lld)%s%s", path,
				   (unsigned long long) f->meta.num_entries, (long long) n,
				   n < 0 ? ": " : "", n < 0 ? err.msg : "");
		}
	}
	fst_manifest_free(&m);
}

static void walk(const char *dir, bool in_tables);

/* An entry of a directory that is (*in_tables) or is not "tables". */
static void
walk_entry(const char *path, const char *name, const struct stat *st, void *arg)
{
	size_t		len = strlen(name);

	if (S_ISDIR(st->st_mode))
	{
		if (*(bool *) arg)
			verify_table(path);
		walk(path, strcmp(name, "tables") == 0);
	}
	else if (len > 4 && strcmp(name + len - 4, ".sst") == 0)
	{
		FstSstProps props;
		FstError	err;
		int64		n;

		memset(&props, 0, sizeof(props));
		n = verify_sst(path, &props, &err);
		if (n < 0)
			result(false, "%s: every block checksum verifies: %s", path, err.msg);
		else
			result((uint64) n == props.num_entries &&
				   props.file_size == (uint64) st->st_size,
				   "%s: every block checksum verifies, %lld entries", path,
				   (long long) n);
	}
}

/* Every .sst below dir reads intact; every "tables/<t>" is verified. */
static void
walk(const char *dir, bool in_tables)
{
	(void) each_entry(dir, walk_entry, &in_tables);
}

int
main(int argc, char **argv)
{
	if (argc != 2)
	{
		fprintf(stderr, "usage: %s DIR  (a local copy of forst.remote_dir)\n", argv[0]);
		return 2;
	}
	collect_borrowed(argv[1]);
	walk(argv[1], false);
	if (passed + failed == 0)
		result(false, "found forst objects below %s", argv[1]);
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
