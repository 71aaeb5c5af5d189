/*-------------------------------------------------------------------------
 *
 * diskcache.c
 *	  Local disk cache of SST chunks: handles, the cached range source,
 *	  write-through admission and eviction by key (see diskcache.h for the
 *	  format, the eviction policy and the concurrency rules, and
 *	  dc_internal.h for how the files divide the work).
 *
 *-------------------------------------------------------------------------
 */
#include "dc_internal.h"
#include "coding.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct CachedSource
{
	FstRangeSource base;
	FstDiskCache *cache;
	FstRangeSource *origin;
	char	   *key;
	size_t		keylen;
	uint64		hash;
	uint64		chunk_size;		/* effective: object size for whole files */
	bool		bypass;			/* one unit is larger than the cache */
	bool		admit_all;		/* skip the admission filter (prewarm) */
	uint64		admit_from;		/* and for chunks that reach past this */
	char	   *scratch;		/* one entry file */
	size_t		scratch_cap;
	char	   *fetch;			/* a run of fetched chunks */
	size_t		fetch_cap;
} CachedSource;

/* ---- the cached range source -------------------------------------------- */

static inline uint64
chunk_len(const CachedSource *s, uint64 chunk)
{
	uint64		start = chunk * s->chunk_size;

	return Min(s->chunk_size, s->base.size - start);
}

/*
 * Fetch chunks [first, last] from the origin in one request, fill them
 * (those the admission filter lets in; readmit: the run holds a chunk that
 * was cached and found corrupt, and the run goes back without a second
 * miss).
 */
static FstCode
fetch_run(CachedSource *s, uint64 first, uint64 last, uint64 offset,
		  size_t len, char *buf, bool readmit, FstError *err)
{
	DcIndex    *idx = s->cache->idx;
	uint64		start = first * s->chunk_size;
	uint64		end = Min((last + 1) * s->chunk_size, s->base.size);
	size_t		rlen = (size_t) (end - start);
	uint64		ch;
	uint64		copy_from,
				copy_to;
	FstCode		rc;

	if (!dc_grow_buf(&s->fetch, &s->fetch_cap, rlen))
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	rc = fst_range_read(s->origin, start, rlen, s->fetch, err);
	if (rc != FST_OK)
		return rc;
	dc_count(idx, DC_ORIGIN_READS, 1);
	dc_count(idx, DC_BYTES_FETCHED, rlen);
	/* the caller's part of the run */
	copy_from = Max(start, offset);
	copy_to = Min(end, offset + len);
	memcpy(buf + (copy_from - offset), s->fetch + (copy_from - start),
		   copy_to - copy_from);
	for (ch = first; ch <= last; ch++)
	{
		if (s->cache->opt.admit_on_second_miss && !readmit && !s->admit_all &&
			ch * s->chunk_size + chunk_len(s, ch) <= s->admit_from &&
			!dc_index_missed_before(idx, s->hash, ch))
		{
			dc_count(idx, DC_NOT_ADMITTED, 1);
			continue;
		}
		(void) dc_write_entry(s->cache, s->key, s->keylen, s->hash,
							  s->base.size, ch,
							  s->fetch + (ch * s->chunk_size - start),
							  chunk_len(s, ch));
	}
	return FST_OK;
}

/* A hit: set the entry's reference bit, or adopt a file not indexed yet. */
static void
note_hit(CachedSource *s, uint64 ch, size_t plen)
{
	FstDiskCache *c = s->cache;
	DcIndex    *idx = c->idx;
	int32		slot;

	dc_lock(c, false);
	slot = dc_index_find(idx, s->hash, ch);
	if (slot >= 0)
		dc_index_slot(idx, slot)->ref = 1;
	dc_unlock(c);
	if (slot >= 0 || !__atomic_load_n(&idx->ready, __ATOMIC_ACQUIRE))
		return;

	/*
	 * Written by a handle with another index (before the rebuild has run,
	 * files are served without being indexed: the rebuild takes them in).
	 * Checked again under the lock, and only if the file is still there,
	 * so that accounting never counts a file twice or a deleted one.
	 */
	dc_lock(c, true);
	if (dc_index_find(idx, s->hash, ch) < 0)
	{
		char		path[DC_PATH_MAX];
		struct stat st;

		dc_path(c, s->hash, ch, path, sizeof(path));
		if (stat(path, &st) == 0)
		{
			slot = dc_index_reserve(idx, s->hash, ch,
									dc_accounted(c, DC_HDR + s->keylen + plen),
									dc_unlink_entry, c);
			if (slot >= 0)
			{
				dc_index_publish(idx, slot, true);
				dc_count(idx, DC_ADOPTIONS, 1);
			}
		}
	}
	dc_unlock(c);
}

/* A miss or a corrupt entry: forget it (and delete a corrupt file). */
static void
note_miss(CachedSource *s, uint64 ch, bool corrupt)
{
	FstDiskCache *c = s->cache;
	DcIndex    *idx = c->idx;
	int32		slot;

	dc_lock(c, true);
	slot = dc_index_find(idx, s->hash, ch);
	if (slot >= 0 && dc_index_slot(idx, slot)->state == DC_SLOT_VALID)
	{
		/* stale (deleted from outside) or corrupt: its file must go */
		dc_unlink_entry(c, s->hash, ch);
		dc_index_remove(idx, slot);
	}
	else if (slot < 0 && corrupt)
		dc_unlink_entry(c, s->hash, ch);
	dc_unlock(c);
	if (corrupt)
		dc_count(idx, DC_CORRUPT, 1);
	dc_count(idx, DC_MISSES, 1);
}

static FstCode
cached_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
			FstError *err)
{
	CachedSource *s = (CachedSource *) src;
	DcIndex    *idx = s->cache->idx;
	uint64		first,
				last,
				ch;
	uint64		run_start = 0;
	bool		in_run = false;
	bool		run_corrupt = false;
	FstCode		rc;

	if (len == 0)
		return FST_OK;
	if (s->bypass)
	{
		/* not cacheable: fetch just what was asked */
		rc = fst_range_read(s->origin, offset, len, buf, err);
		if (rc != FST_OK)
			return rc;
		dc_count(idx, DC_MISSES, 1);
		dc_count(idx, DC_ORIGIN_READS, 1);
		dc_count(idx, DC_BYTES_FETCHED, len);
		return FST_OK;
	}
	first = offset / s->chunk_size;
	last = (offset + len - 1) / s->chunk_size;
	for (ch = first; ch <= last + 1; ch++)
	{
		bool		hit = false;

		if (ch <= last)
		{
			uint64		cstart = ch * s->chunk_size;
			size_t		plen = (size_t) chunk_len(s, ch);
			DcLookup	lr;

			lr = dc_read_entry(s->cache, s->key, s->keylen, s->hash,
							   s->base.size, ch, plen,
							   &s->scratch, &s->scratch_cap);
			if (lr == DC_LOOKUP_HIT)
			{
				uint64		from = Max(cstart, offset);
				uint64		to = Min(cstart + plen, offset + len);

				memcpy(buf + (from - offset),
					   s->scratch + DC_HDR + s->keylen + (from - cstart),
					   to - from);
				dc_count(idx, DC_HITS, 1);
				dc_count(idx, DC_BYTES_FROM_CACHE, to - from);
				note_hit(s, ch, plen);
				hit = true;
			}
			else
			{
				note_miss(s, ch, lr == DC_LOOKUP_CORRUPT);
				if (lr == DC_LOOKUP_CORRUPT)
					run_corrupt = true;
			}
		}
		if (!hit && ch <= last)
		{
			if (!in_run)
			{
				run_start = ch;
				in_run = true;
			}
		}
		else if (in_run)
		{
			rc = fetch_run(s, run_start, ch - 1, offset, len, buf,
						   run_corrupt, err);
			if (rc != FST_OK)
				return rc;
			in_run = false;
			run_corrupt = false;
		}
	}
	return FST_OK;
}

static void
cached_close(FstRangeSource *src)
{
	CachedSource *s = (CachedSource *) src;

	fst_range_close(s->origin);
	fst_free(s->key);
	fst_free(s->scratch);
	fst_free(s->fetch);
	fst_free(s);
}

FstCode
fst_range_source_cached(FstDiskCache *cache, FstRangeSource *origin,
						const char *object_key, uint64 object_size,
						FstRangeSource **out, FstError *err)
{
	CachedSource *s;
	size_t		keylen;

	*out = NULL;
	if (cache == NULL || origin == NULL || object_key == NULL)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "cached source needs a cache, an origin and a key");
	keylen = strlen(object_key);
	if (keylen == 0 || keylen > DC_KEY_MAX)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object key of %zu bytes cannot be cached", keylen);
	if (object_size == 0)
		object_size = origin->size;
	else if (object_size != origin->size)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object \"%s\": size " UINT64_FORMAT
						 " differs from its origin's " UINT64_FORMAT,
						 object_key, object_size, origin->size);
	s = fst_calloc(1, sizeof(CachedSource));
	if (s == NULL || (s->key = fst_strdup(object_key)) == NULL)
	{
		fst_free(s);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	s->base.size = object_size;
	s->base.read = cached_read;
	s->base.close = cached_close;
	s->cache = cache;
	s->origin = origin;
	s->admit_from = UINT64_MAX;
	s->keylen = keylen;
	s->hash = dc_hash_key(object_key, keylen);
	s->chunk_size = cache->opt.chunk_size ? cache->opt.chunk_size
		: Max(object_size, 1);
	s->bypass = dc_accounted(cache, DC_HDR + keylen +
							 Min(s->chunk_size, object_size)) > cache->idx->capacity;
	*out = &s->base;
	return FST_OK;
}

void
fst_range_source_cached_admit_all(FstRangeSource *cached)
{
	((CachedSource *) cached)->admit_all = true;
}

void
fst_range_source_cached_admit_from(FstRangeSource *cached, uint64 offset)
{
	((CachedSource *) cached)->admit_from = offset;
}

/* ---- whole objects ------------------------------------------------------ */

/* The origin of fst_diskcache_get: there is none, a miss is a miss. */
static FstCode
no_origin_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
			   FstError *err)
{
	return fst_error(err, FST_NOT_FOUND, "not in the disk cache");
}

static void
no_origin_close(FstRangeSource *src)
{
	fst_free(src);
}

FstCode
fst_diskcache_get(FstDiskCache *cache, const char *key, FstBuf *out,
				  FstError *err)
{
	size_t		keylen = key ? strlen(key) : 0;
	char		path[DC_PATH_MAX];
	char		h[DC_HDR];
	FstRangeSource *origin;
	FstRangeSource *src;
	uint64		size;
	int			fd;
	ssize_t		n;
	FstCode		rc;

	if (keylen == 0 || keylen > DC_KEY_MAX)
		return fst_error(err, FST_INVALID_ARGUMENT, "cannot look up: bad key");
	/* the object's size, from its first chunk's header (checked below) */
	dc_path(cache, dc_hash_key(key, keylen), 0, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fst_error(err, FST_NOT_FOUND, "\"%s\" is not in the disk cache", key);
	n = dc_pread_all(fd, h, sizeof(h), 0);
	close(fd);
	size = n == DC_HDR ? fst_get_fixed64(h + 16) : 0;
	if (size == 0 || size > SIZE_MAX / 2)
		return fst_error(err, FST_NOT_FOUND, "\"%s\" is not in the disk cache", key);

	origin = fst_calloc(1, sizeof(FstRangeSource));
	if (origin == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	origin->size = size;
	origin->read = no_origin_read;
	origin->close = no_origin_close;
	rc = fst_range_source_cached(cache, origin, key, size, &src, err);
	if (rc != FST_OK)
	{
		fst_range_close(origin);
		return rc;
	}
	fst_buf_reset(out);
	if (!fst_buf_reserve(out, (size_t) size))
		rc = fst_error(err, FST_NO_MEMORY, "out of memory");
	else
	{
		/* every chunk is read and verified; any miss fails the origin */
		rc = fst_range_read(src, 0, (size_t) size, out->data, err);
		if (rc == FST_OK)
			out->len = (size_t) size;
	}
	fst_range_close(src);
	if (rc != FST_OK && rc != FST_NO_MEMORY)
		rc = fst_error(err, FST_NOT_FOUND, "\"%s\" is not in the disk cache", key);
	return rc;
}

/* ---- admission and eviction by key -------------------------------------- */

FstCode
fst_diskcache_admit(FstDiskCache *cache, const char *key, const void *data,
					size_t len, FstError *err)
{
	size_t		keylen = key ? strlen(key) : 0;
	uint64		hash;
	uint64		cs;
	uint64		ch,
				n;

	if (keylen == 0 || keylen > DC_KEY_MAX || (data == NULL && len > 0))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "cannot admit: bad key or data");
	if (len == 0)
		return FST_OK;
	hash = dc_hash_key(key, keylen);
	cs = cache->opt.chunk_size ? cache->opt.chunk_size : len;
	n = (len + cs - 1) / cs;
	/* in order: the tail (what an open reads) ends up the most recent */
	for (ch = 0; ch < n; ch++)
	{
		uint64		start = ch * cs;

		(void) dc_write_entry(cache, key, keylen, hash, len, ch,
							  (const char *) data + start,
							  (size_t) Min(cs, len - start));
	}
	return FST_OK;
}

FstCode
fst_diskcache_admit_source(FstDiskCache *cache, const char *key,
						   const FstPutSource *src, FstError *err)
{
	size_t		keylen = key ? strlen(key) : 0;
	uint64		hash;
	uint64		cs;
	uint64		ch,
				n;
	char	   *chunk;
	FstCode		code = FST_OK;

	if (keylen == 0 || keylen > DC_KEY_MAX || src == NULL)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "cannot admit: bad key or source");
	if (src->len == 0)
		return FST_OK;
	hash = dc_hash_key(key, keylen);
	cs = cache->opt.chunk_size ? cache->opt.chunk_size : src->len;
	if (cs > (uint64) SIZE_MAX)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	chunk = fst_malloc((size_t) Min(cs, src->len));
	if (chunk == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	n = (src->len + cs - 1) / cs;
	/* in order, as fst_diskcache_admit does */
	for (ch = 0; ch < n && code == FST_OK; ch++)
	{
		uint64		start = ch * cs;
		size_t		len = (size_t) Min(cs, src->len - start);

		code = src->read(src->arg, start, chunk, len, err);
		if (code == FST_OK)
			(void) dc_write_entry(cache, key, keylen, hash, src->len, ch,
								  chunk, len);
	}
	fst_free(chunk);
	return code;
}

void
fst_diskcache_evict_key(FstDiskCache *cache, const char *key)
{
	DcIndex    *idx = cache->idx;
	size_t		keylen = key ? strlen(key) : 0;
	uint64		hash;
	char		sub[DC_PATH_MAX];
	char		path[DC_PATH_MAX + 300];
	char		prefix[20];
	DIR		   *d;
	struct dirent *de;
	uint32		i;

	if (keylen == 0)
		return;
	hash = dc_hash_key(key, keylen);
	/* indexed entries (a sweep of the slots: objects are deleted rarely) */
	dc_lock(cache, true);
	for (i = 0; i < idx->nslots; i++)
	{
		DcSlot	   *s = dc_index_slot(idx, (int32) i);

		if (s->state == DC_SLOT_VALID && s->hash == hash)
		{
			dc_unlink_entry(cache, s->hash, s->chunk);
			dc_index_remove(idx, (int32) i);
		}
	}
	dc_unlock(cache);
	/* and files no index of this handle knows */
	snprintf(sub, sizeof(sub), "%s/%02x", cache->dir, (unsigned) (hash >> 56));
	snprintf(prefix, sizeof(prefix), "%016llx.", (unsigned long long) hash);
	d = opendir(sub);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
	{
		if (strncmp(de->d_name, prefix, 17) == 0)
		{
			snprintf(path, sizeof(path), "%s/%s", sub, de->d_name);
			(void) unlink(path);
		}
	}
	closedir(d);
}

/* ---- handles ------------------------------------------------------------ */

void
fst_diskcache_options_default(FstDiskCacheOptions *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->chunk_size = FST_DISKCACHE_DEFAULT_CHUNK;
	opt->cleanup = true;
}

size_t
fst_diskcache_region_size(uint64 capacity_bytes)
{
	return dc_index_size(dc_index_nslots(capacity_bytes));
}

uint32
fst_diskcache_max_entries(uint64 capacity_bytes)
{
	return dc_index_nslots(capacity_bytes);
}

void
fst_diskcache_region_init(void *region, uint64 capacity_bytes)
{
	dc_index_init((DcIndex *) region, capacity_bytes,
				  dc_index_nslots(capacity_bytes));
}

FstCode
fst_diskcache_attach(const char *dir, void *region,
					 const FstDiskCacheOptions *opt, FstDiskCache **out,
					 FstError *err)
{
	FstDiskCache *c;
	FstCode		rc;

	*out = NULL;
	if (dir == NULL || dir[0] != '/' || strlen(dir) > DC_PATH_MAX - 64)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "cache directory must be an absolute path");
	if (opt && opt->chunk_size > FST_DISKCACHE_MAX_CHUNK)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "cache chunk size %u is over the maximum %d",
						 opt->chunk_size, FST_DISKCACHE_MAX_CHUNK);
	rc = dc_prepare_dir(dir, err);
	if (rc != FST_OK)
		return rc;
	c = fst_calloc(1, sizeof(FstDiskCache));
	if (c == NULL || (c->dir = fst_strdup(dir)) == NULL)
	{
		fst_free(c);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	if (opt)
		c->opt = *opt;
	else
		fst_diskcache_options_default(&c->opt);
	c->idx = (DcIndex *) region;
	*out = c;
	return FST_OK;
}

FstCode
fst_diskcache_rebuild(FstDiskCache *cache, FstError *err)
{
	return dc_rebuild(cache, true, err);
}

FstCode
fst_diskcache_open(const char *dir, uint64 capacity_bytes,
				   const FstDiskCacheOptions *opt, FstDiskCache **out,
				   FstError *err)
{
	void	   *region;
	FstCode		rc;

	*out = NULL;
	region = fst_malloc(fst_diskcache_region_size(capacity_bytes));
	if (region == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	fst_diskcache_region_init(region, capacity_bytes);
	rc = fst_diskcache_attach(dir, region, opt, out, err);
	if (rc != FST_OK)
	{
		fst_free(region);
		return rc;
	}
	(*out)->owns_idx = true;
	/* other handles may be writing here: only dead writers' temp files go */
	rc = dc_rebuild(*out, false, err);
	if (rc != FST_OK)
	{
		fst_diskcache_close(*out);
		*out = NULL;
	}
	return rc;
}

void
fst_diskcache_close(FstDiskCache *cache)
{
	if (cache == NULL)
		return;
	if (cache->owns_idx)
		fst_free(cache->idx);
	fst_free(cache->dir);
	fst_free(cache);
}

void
fst_diskcache_stats(const FstDiskCache *cache, FstDiskCacheStats *out)
{
	DcIndex    *idx = cache->idx;

	memset(out, 0, sizeof(*out));
	out->hits = dc_counter(idx, DC_HITS);
	out->misses = dc_counter(idx, DC_MISSES);
	out->bytes_read_from_cache = dc_counter(idx, DC_BYTES_FROM_CACHE);
	out->bytes_fetched = dc_counter(idx, DC_BYTES_FETCHED);
	out->origin_reads = dc_counter(idx, DC_ORIGIN_READS);
	out->admissions = dc_counter(idx, DC_ADMISSIONS);
	out->bytes_admitted = dc_counter(idx, DC_BYTES_ADMITTED);
	out->adoptions = dc_counter(idx, DC_ADOPTIONS);
	out->evictions = dc_counter(idx, DC_EVICTIONS);
	out->corrupt_entries = dc_counter(idx, DC_CORRUPT);
	out->write_errors = dc_counter(idx, DC_WRITE_ERRORS);
	out->not_admitted = dc_counter(idx, DC_NOT_ADMITTED);
	/* a consistent pair, read without the lock: good enough for stats */
	out->entries = __atomic_load_n(&idx->entries, __ATOMIC_RELAXED);
	out->bytes_used = __atomic_load_n(&idx->bytes_used, __ATOMIC_RELAXED);
	out->capacity = idx->capacity;
	out->ready = __atomic_load_n(&idx->ready, __ATOMIC_ACQUIRE) != 0;
}

void
fst_diskcache_reset_counters(FstDiskCache *cache)
{
	int			i;

	for (i = 0; i < DC_NUM_COUNTERS; i++)
		__atomic_store_n(&cache->idx->counters[i], 0, __ATOMIC_RELAXED);
}

void
fst_diskcache_entry_path(const FstDiskCache *cache, const char *key,
						 uint64 chunk, char *path, size_t pathlen)
{
	dc_path(cache, dc_hash_key(key, strlen(key)), chunk, path, pathlen);
}
