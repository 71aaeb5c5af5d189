/*-------------------------------------------------------------------------
 *
 * dc_scan.c
 *	  The disk cache's directory: creating or adopting it, and the rebuild
 *	  scan that fills an empty index from the entry files a previous run
 *	  left (a restart keeps the cache).
 *
 * The rebuild reads each entry's header (not its payload: a corrupt
 * payload is found, deleted and re-fetched when it is read), keeps the
 * newest entries (by modification time) while they fit the capacity and
 * the slots, and deletes the rest, temp files of dead writers and every
 * file that is not an entry of this format and chunk size.  Its cost is
 * one open + 1 KiB read per entry.
 *
 *-------------------------------------------------------------------------
 */
#include "dc_internal.h"
#include "coding.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct ScanItem
{
	uint64		hash;
	uint64		chunk;
	uint64		bytes;			/* accounted */
	int64		mtime_ns;
	uint16		sub;			/* subdirectory */
} ScanItem;

/* Newest first. */
static int
scan_item_cmp(const void *a, const void *b)
{
	const ScanItem *x = a,
			   *y = b;

	return (x->mtime_ns < y->mtime_ns) - (x->mtime_ns > y->mtime_ns);
}

/* Is a temp file ".tmp.<pid>.<n>" garbage (its writer is gone, or stale)? */
static bool
temp_is_dead(const char *name, const struct stat *st)
{
	long		pid = strtol(name + 5, NULL, 10);

	if (pid <= 0 || (kill((pid_t) pid, 0) != 0 && errno == ESRCH))
		return true;
	return time(NULL) - st->st_mtime > DC_TEMP_GRACE;
}

/* Does path hold a valid entry header for (hash, chunk)? */
static bool
entry_file_valid(FstDiskCache *c, const char *path, const struct stat *st,
				 uint64 hash, uint64 chunk)
{
	char		hk[DC_HDR + DC_KEY_MAX];
	ssize_t		got;
	uint32		keylen;
	int			fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	got = dc_pread_all(fd, hk, sizeof(hk), 0);
	close(fd);
	if (got < DC_HDR)
		return false;
	keylen = fst_get_fixed32(hk + 12);
	return keylen <= DC_KEY_MAX && (size_t) got >= DC_HDR + keylen &&
		dc_header_valid(hk, hk + DC_HDR, c->opt.chunk_size) &&
		fst_get_fixed64(hk + 24) == chunk &&
		dc_hash_key(hk + DC_HDR, keylen) == hash &&
		(uint64) st->st_size == DC_HDR + keylen + fst_get_fixed32(hk + 36);
}

/*
 * Scan one subdirectory: collect valid entries, delete garbage.  Returns
 * false only when out of memory.
 */
static bool
scan_subdir(FstDiskCache *c, int subno, bool all_temps_dead,
			ScanItem **items, size_t *n, size_t *cap)
{
	char		sub[DC_PATH_MAX];
	char		path[DC_PATH_MAX + 300];
	DIR		   *d;
	struct dirent *de;
	bool		ok = true;

	snprintf(sub, sizeof(sub), "%s/%02x", c->dir, subno);
	d = opendir(sub);
	if (d == NULL)
		return true;
	while ((de = readdir(d)) != NULL)
	{
		const char *name = de->d_name;
		struct stat st;
		uint64		hash,
					chunk;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", sub, name);
		if (lstat(path, &st) != 0)
			continue;
		if (strncmp(name, ".tmp.", 5) == 0)
		{
			if (c->opt.cleanup && S_ISREG(st.st_mode) &&
				(all_temps_dead || temp_is_dead(name, &st)))
				(void) unlink(path);
			continue;
		}
		if (!S_ISREG(st.st_mode) ||
			!dc_parse_entry_name(name, &hash, &chunk) ||
			(int) (hash >> 56) != subno ||
			!entry_file_valid(c, path, &st, hash, chunk))
		{
			/* not an entry of this format and chunk size */
			if (c->opt.cleanup && !S_ISDIR(st.st_mode))
				(void) unlink(path);
			continue;
		}
		if (*n == *cap)
		{
			size_t		ncap = *cap ? *cap * 2 : 1024;
			ScanItem   *p = fst_realloc(*items, ncap * sizeof(ScanItem));

			if (p == NULL)
			{
				ok = false;
				break;
			}
			*items = p;
			*cap = ncap;
		}
		(*items)[*n].hash = hash;
		(*items)[*n].chunk = chunk;
		(*items)[*n].bytes = dc_accounted(c, (uint64) st.st_size);
		(*items)[*n].mtime_ns = (int64) st.st_mtim.tv_sec * 1000000000 +
			st.st_mtim.tv_nsec;
		(*items)[*n].sub = (uint16) subno;
		(*n)++;
	}
	closedir(d);
	return ok;
}

FstCode
dc_prepare_dir(const char *dir, FstError *err)
{
	char		marker[DC_PATH_MAX];
	char		sub[DC_PATH_MAX];
	struct stat st;
	DIR		   *d;
	struct dirent *de;
	bool		empty = true;
	int			fd;
	int			b;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return fst_error(err, FST_IO_ERROR, "could not create cache directory \"%s\": %s",
						 dir, strerror(errno));
	snprintf(marker, sizeof(marker), "%s/%s", dir, FST_DISKCACHE_MARKER);
	if (stat(marker, &st) != 0)
	{
		d = opendir(dir);
		if (d == NULL)
			return fst_error(err, FST_IO_ERROR, "could not open cache directory \"%s\": %s",
							 dir, strerror(errno));
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
				strcmp(de->d_name, FST_DISKCACHE_MARKER) != 0)
				empty = false;
		closedir(d);
		/* a concurrent first opener may have created the marker meanwhile */
		if (!empty && stat(marker, &st) != 0)
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "\"%s\" is not empty and not a forst cache directory (no %s)",
							 dir, FST_DISKCACHE_MARKER);
		/* O_EXCL: concurrent first openers both succeed (EEXIST is fine) */
		fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return fst_error(err, FST_IO_ERROR, "could not create \"%s\": %s",
							 marker, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	/* the last subdirectory exists: all do (every process attaches here) */
	snprintf(sub, sizeof(sub), "%s/%02x", dir, DC_NSUBDIRS - 1);
	if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
		return FST_OK;
	for (b = 0; b < DC_NSUBDIRS; b++)
	{
		snprintf(sub, sizeof(sub), "%s/%02x", dir, b);
		if (mkdir(sub, 0700) != 0 && errno != EEXIST)
			return fst_error(err, FST_IO_ERROR, "could not create \"%s\": %s",
							 sub, strerror(errno));
	}
	return FST_OK;
}

FstCode
dc_rebuild(FstDiskCache *c, bool all_temps_dead, FstError *err)
{
	DcIndex    *idx = c->idx;
	ScanItem   *items = NULL;
	size_t		n = 0,
				cap = 0,
				i;
	int			b;

	for (b = 0; b < DC_NSUBDIRS; b++)
	{
		if (!scan_subdir(c, b, all_temps_dead, &items, &n, &cap))
		{
			fst_free(items);
			return fst_error(err, FST_NO_MEMORY, "out of memory");
		}
	}
	qsort(items, n, sizeof(ScanItem), scan_item_cmp);

	/*
	 * Keep the newest while they fit; the capacity may have shrunk since
	 * the files were written.  Nothing evicts here: reserve is only asked
	 * for what fits.
	 */
	dc_lock(c, true);
	for (i = 0; i < n; i++)
	{
		ScanItem   *it = &items[i];
		int32		slot = -1;

		if (dc_index_find(idx, it->hash, it->chunk) >= 0)
			continue;
		if (idx->bytes_used + it->bytes <= idx->capacity && idx->free_head >= 0)
			slot = dc_index_reserve(idx, it->hash, it->chunk, it->bytes,
									NULL, NULL);
		if (slot >= 0)
			dc_index_publish(idx, slot, false);
		else
		{
			dc_unlink_entry(c, it->hash, it->chunk);
			dc_count(idx, DC_EVICTIONS, 1);
		}
	}
	__atomic_store_n(&idx->ready, 1, __ATOMIC_RELEASE);
	dc_unlock(c);
	fst_free(items);
	return FST_OK;
}
