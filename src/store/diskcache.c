/*-------------------------------------------------------------------------
 *
 * diskcache.c
 *	  Local disk cache of SST chunks (see diskcache.h for the format, the
 *	  eviction policy and the concurrency rules).
 *
 *-------------------------------------------------------------------------
 */
#include "diskcache.h"
#include "coding.h"

#include "common/hashfn.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define DC_MAGIC		"FSTDCE01"
#define DC_VERSION		1
#define DC_HDR			FST_DISKCACHE_ENTRY_HEADER
#define DC_KEY_MAX		1024
#define DC_PATH_MAX		1400
#define DC_NSUBDIRS		256
#define DC_TEMP_GRACE	600		/* seconds a live process's temp file may
								 * live before open() deletes it anyway */

/* One cached entry in the index: hash chain + LRU list. */
typedef struct DcEntry
{
	uint64		hash;			/* of the object key */
	uint64		chunk;
	uint64		bytes;			/* file size */
	struct DcEntry *hnext;
	struct DcEntry *prev;		/* towards the most recently used */
	struct DcEntry *next;		/* towards the least recently used */
} DcEntry;

struct FstDiskCache
{
	char	   *dir;
	uint64		capacity;
	FstDiskCacheOptions opt;
	DcEntry   **buckets;
	size_t		nbuckets;		/* power of two */
	DcEntry    *lru_head;		/* most recent */
	DcEntry    *lru_tail;		/* least recent */
	uint64		tmp_counter;
	FstDiskCacheStats stats;
};

typedef struct CachedSource
{
	FstRangeSource base;
	FstDiskCache *cache;
	FstRangeSource *origin;
	char	   *key;
	size_t		keylen;
	uint64		hash;
	uint64		chunk_size;		/* effective: object size for whole files */
	uint64		nchunks;
	bool		bypass;			/* one unit is larger than the cache */
	char	   *scratch;		/* one entry file */
	size_t		scratch_cap;
	char	   *fetch;			/* a run of fetched chunks */
	size_t		fetch_cap;
} CachedSource;

/* ---- small helpers ------------------------------------------------------ */

static uint64
dc_hash_key(const char *key, size_t len)
{
	return hash_bytes_extended((const unsigned char *) key, (int) len, 0);
}

static void
dc_path(const FstDiskCache *c, uint64 hash, uint64 chunk, char *path,
		size_t pathlen)
{
	snprintf(path, pathlen, "%s/%02x/%016llx.%llx", c->dir,
			 (unsigned) (hash >> 56), (unsigned long long) hash,
			 (unsigned long long) chunk);
}

static bool
grow_buf(char **buf, size_t *cap, size_t need)
{
	char	   *p;

	if (*cap >= need)
		return true;
	p = fst_realloc(*buf, need);
	if (p == NULL)
		return false;
	*buf = p;
	*cap = need;
	return true;
}

static ssize_t
pread_all(int fd, char *buf, size_t len, off_t off)
{
	size_t		done = 0;

	while (done < len)
	{
		ssize_t		n = pread(fd, buf + done, len - done, off + done);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += n;
	}
	return (ssize_t) done;
}

static void
usage_changed(FstDiskCache *c, int64 delta)
{
	if (c->opt.usage_hook && delta != 0)
		c->opt.usage_hook(c->opt.hook_arg, delta);
}

/* ---- the index ---------------------------------------------------------- */

static inline size_t
bucket_of(const FstDiskCache *c, uint64 hash, uint64 chunk)
{
	uint64		h = hash ^ (chunk * UINT64CONST(0x9E3779B97F4A7C15));

	h ^= h >> 29;
	return (size_t) (h & (c->nbuckets - 1));
}

static DcEntry *
idx_find(FstDiskCache *c, uint64 hash, uint64 chunk)
{
	DcEntry    *e;

	for (e = c->buckets[bucket_of(c, hash, chunk)]; e; e = e->hnext)
		if (e->hash == hash && e->chunk == chunk)
			return e;
	return NULL;
}

static void
lru_unlink(FstDiskCache *c, DcEntry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->lru_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->lru_tail = e->prev;
	e->prev = e->next = NULL;
}

static void
lru_push_front(FstDiskCache *c, DcEntry *e)
{
	e->prev = NULL;
	e->next = c->lru_head;
	if (c->lru_head)
		c->lru_head->prev = e;
	c->lru_head = e;
	if (c->lru_tail == NULL)
		c->lru_tail = e;
}

static void
lru_touch(FstDiskCache *c, DcEntry *e)
{
	if (c->lru_head != e)
	{
		lru_unlink(c, e);
		lru_push_front(c, e);
	}
}

static void
idx_grow(FstDiskCache *c)
{
	size_t		newn = c->nbuckets * 2;
	DcEntry   **nb = fst_calloc(newn, sizeof(DcEntry *));
	DcEntry   **old = c->buckets;
	size_t		oldn = c->nbuckets;
	size_t		i;

	if (nb == NULL)
		return;					/* longer chains; still correct */
	c->buckets = nb;
	c->nbuckets = newn;
	for (i = 0; i < oldn; i++)
	{
		DcEntry    *e = old[i];

		while (e)
		{
			DcEntry    *next = e->hnext;
			size_t		b = bucket_of(c, e->hash, e->chunk);

			e->hnext = nb[b];
			nb[b] = e;
			e = next;
		}
	}
	fst_free(old);
}

/*
 * Record an entry of bytes (new, or an existing one whose file was
 * replaced) as the most recently used.  false only when out of memory.
 */
static bool
idx_put(FstDiskCache *c, uint64 hash, uint64 chunk, uint64 bytes)
{
	DcEntry    *e = idx_find(c, hash, chunk);
	size_t		b;

	if (e)
	{
		c->stats.bytes_used = c->stats.bytes_used - e->bytes + bytes;
		usage_changed(c, (int64) bytes - (int64) e->bytes);
		e->bytes = bytes;
		lru_touch(c, e);
		return true;
	}
	e = fst_calloc(1, sizeof(DcEntry));
	if (e == NULL)
		return false;
	e->hash = hash;
	e->chunk = chunk;
	e->bytes = bytes;
	b = bucket_of(c, hash, chunk);
	e->hnext = c->buckets[b];
	c->buckets[b] = e;
	lru_push_front(c, e);
	c->stats.entries++;
	c->stats.bytes_used += bytes;
	usage_changed(c, (int64) bytes);
	if (c->stats.entries > c->nbuckets)
		idx_grow(c);
	return true;
}

/* Forget an entry (its file is gone or about to be). */
static void
idx_remove(FstDiskCache *c, DcEntry *e)
{
	DcEntry   **pp = &c->buckets[bucket_of(c, e->hash, e->chunk)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	lru_unlink(c, e);
	c->stats.entries--;
	c->stats.bytes_used -= e->bytes;
	usage_changed(c, -(int64) e->bytes);
	fst_free(e);
}

/* Delete an entry's file and forget it. */
static void
drop_entry(FstDiskCache *c, DcEntry *e)
{
	char		path[DC_PATH_MAX];

	dc_path(c, e->hash, e->chunk, path, sizeof(path));
	(void) unlink(path);
	idx_remove(c, e);
}

static bool
over_budget(FstDiskCache *c, uint64 incoming)
{
	if (c->stats.bytes_used + incoming > c->capacity)
		return true;
	if (c->opt.over_budget)
		return c->opt.over_budget(c->opt.hook_arg, incoming);
	return false;
}

/* Evict least recently used entries until incoming bytes fit. */
static void
make_room(FstDiskCache *c, uint64 incoming, const DcEntry *keep)
{
	while (c->lru_tail && over_budget(c, incoming))
	{
		DcEntry    *victim = c->lru_tail;

		if (victim == keep)
		{
			if (victim->prev == NULL)
				break;
			victim = victim->prev;
		}
		drop_entry(c, victim);
		c->stats.evictions++;
	}
}

/* ---- entry files -------------------------------------------------------- */

static void
encode_header(char *h, const char *key, size_t keylen, uint64 object_size,
			  uint64 chunk, uint32 chunk_size, const char *payload,
			  size_t plen)
{
	uint32		crc;

	memcpy(h, DC_MAGIC, 8);
	fst_put_fixed32(h + 8, DC_VERSION);
	fst_put_fixed32(h + 12, (uint32) keylen);
	fst_put_fixed64(h + 16, object_size);
	fst_put_fixed64(h + 24, chunk);
	fst_put_fixed32(h + 32, chunk_size);
	fst_put_fixed32(h + 36, (uint32) plen);
	fst_put_fixed32(h + 40, fst_crc32c(payload, plen));
	crc = fst_crc32c(h, 44);
	crc = fst_crc32c_extend(crc, key, keylen);
	fst_put_fixed32(h + 44, crc);
}

/* Checks a header alone (and the key bytes after it); payload not read. */
static bool
header_valid(const char *h, const char *key_bytes, uint32 chunk_size)
{
	uint32		keylen;
	uint32		crc;

	if (memcmp(h, DC_MAGIC, 8) != 0 || fst_get_fixed32(h + 8) != DC_VERSION)
		return false;
	keylen = fst_get_fixed32(h + 12);
	if (keylen == 0 || keylen > DC_KEY_MAX)
		return false;
	if (fst_get_fixed32(h + 32) != chunk_size)
		return false;
	crc = fst_crc32c(h, 44);
	crc = fst_crc32c_extend(crc, key_bytes, keylen);
	return crc == fst_get_fixed32(h + 44);
}

/*
 * Write an entry: temp file in the entry's subdirectory, renamed into
 * place.  Makes room first.  Returns true when the entry is published.
 */
static bool
write_entry(FstDiskCache *c, const char *key, size_t keylen, uint64 hash,
			uint64 object_size, uint64 chunk, const char *payload,
			size_t plen)
{
	char		hdr[DC_HDR];
	char		path[DC_PATH_MAX];
	char		tmp[DC_PATH_MAX];
	uint64		bytes = DC_HDR + keylen + plen;
	struct iovec iov[3];
	size_t		total = 0;
	int			fd;
	DcEntry    *old;

	if (bytes > c->capacity || plen > UINT32_MAX)
		return false;

	/*
	 * An entry being replaced (objects are immutable, so it holds the same
	 * bytes, or it is a colliding key's) goes first, so that it does not
	 * count twice while the new one is written.  Then evict until the new
	 * entry fits: the directory never exceeds the capacity.
	 */
	old = idx_find(c, hash, chunk);
	if (old)
		drop_entry(c, old);
	make_room(c, bytes, NULL);
	if (c->stats.bytes_used + bytes > c->capacity)
		return false;

	encode_header(hdr, key, keylen, object_size, chunk,
				  c->opt.chunk_size, payload, plen);
	snprintf(tmp, sizeof(tmp), "%s/%02x/.tmp.%d.%llu", c->dir,
			 (unsigned) (hash >> 56), (int) getpid(),
			 (unsigned long long) ++c->tmp_counter);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
	{
		c->stats.write_errors++;
		return false;
	}
	iov[0].iov_base = hdr;
	iov[0].iov_len = DC_HDR;
	iov[1].iov_base = (void *) key;
	iov[1].iov_len = keylen;
	iov[2].iov_base = (void *) payload;
	iov[2].iov_len = plen;
	while (total < bytes)
	{
		ssize_t		n;
		size_t		skip = total;
		int			i = 0;
		struct iovec v[3];
		int			nv = 0;

		for (i = 0; i < 3; i++)
		{
			if (skip >= iov[i].iov_len)
			{
				skip -= iov[i].iov_len;
				continue;
			}
			v[nv].iov_base = (char *) iov[i].iov_base + skip;
			v[nv].iov_len = iov[i].iov_len - skip;
			skip = 0;
			nv++;
		}
		n = writev(fd, v, nv);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	if (close(fd) != 0 || total != bytes)
	{
		unlink(tmp);
		c->stats.write_errors++;
		return false;
	}
	dc_path(c, hash, chunk, path, sizeof(path));
	if (rename(tmp, path) != 0)
	{
		unlink(tmp);
		c->stats.write_errors++;
		return false;
	}
	if (!idx_put(c, hash, chunk, bytes))
	{
		/* cannot account for it: do not keep it */
		unlink(path);
		c->stats.write_errors++;
		return false;
	}
	c->stats.admissions++;
	return true;
}

typedef enum
{
	LOOKUP_HIT,
	LOOKUP_MISS,
	LOOKUP_CORRUPT
} LookupResult;

/*
 * Read and verify the entry of (s->key, chunk), whose payload is plen
 * bytes, into s->scratch.  On a hit the payload starts at
 * s->scratch + DC_HDR + keylen.
 */
static LookupResult
read_entry(CachedSource *s, uint64 chunk, size_t plen)
{
	FstDiskCache *c = s->cache;
	char		path[DC_PATH_MAX];
	size_t		need = DC_HDR + s->keylen + plen;
	struct stat st;
	const char *h;
	int			fd;
	ssize_t		n;

	if (!grow_buf(&s->scratch, &s->scratch_cap, need))
		return LOOKUP_MISS;
	dc_path(c, s->hash, chunk, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return LOOKUP_MISS;		/* absent, or vanished under us */
	if (fstat(fd, &st) != 0)
	{
		close(fd);
		return LOOKUP_MISS;
	}
	if ((uint64) st.st_size != need)
	{
		/*
		 * Either truncated/extended, or the entry of a colliding key
		 * (different key length): read its header to tell.
		 */
		char		hk[DC_HDR + DC_KEY_MAX];

		n = pread_all(fd, hk, sizeof(hk), 0);
		close(fd);
		if (n >= DC_HDR && fst_get_fixed32(hk + 12) <= DC_KEY_MAX &&
			(size_t) n >= DC_HDR + fst_get_fixed32(hk + 12) &&
			header_valid(hk, hk + DC_HDR, c->opt.chunk_size) &&
			(fst_get_fixed32(hk + 12) != s->keylen ||
			 memcmp(hk + DC_HDR, s->key, s->keylen) != 0))
			return LOOKUP_MISS; /* collision: replaced by the fill */
		return LOOKUP_CORRUPT;
	}
	n = pread_all(fd, s->scratch, need, 0);
	close(fd);
	if (n < 0 || (size_t) n != need)
		return LOOKUP_CORRUPT;
	h = s->scratch;
	if (fst_get_fixed32(h + 12) != s->keylen ||
		!header_valid(h, h + DC_HDR, c->opt.chunk_size))
		return LOOKUP_CORRUPT;
	if (memcmp(h + DC_HDR, s->key, s->keylen) != 0)
		return LOOKUP_MISS;		/* hash collision: replaced by the fill */
	if (fst_get_fixed64(h + 16) != s->base.size ||
		fst_get_fixed64(h + 24) != chunk ||
		fst_get_fixed32(h + 36) != plen ||
		fst_crc32c(h + DC_HDR + s->keylen, plen) != fst_get_fixed32(h + 40))
		return LOOKUP_CORRUPT;
	return LOOKUP_HIT;
}

/* ---- the cached range source -------------------------------------------- */

static inline uint64
chunk_len(const CachedSource *s, uint64 chunk)
{
	uint64		start = chunk * s->chunk_size;

	return Min(s->chunk_size, s->base.size - start);
}

/* Fetch chunks [first, last] from the origin in one request, fill them. */
static FstCode
fetch_run(CachedSource *s, uint64 first, uint64 last, uint64 offset,
		  size_t len, char *buf, FstError *err)
{
	FstDiskCache *c = s->cache;
	uint64		start = first * s->chunk_size;
	uint64		end = Min((last + 1) * s->chunk_size, s->base.size);
	size_t		rlen = (size_t) (end - start);
	uint64		ch;
	uint64		copy_from,
				copy_to;
	FstCode		rc;

	if (!grow_buf(&s->fetch, &s->fetch_cap, rlen))
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	rc = fst_range_read(s->origin, start, rlen, s->fetch, err);
	if (rc != FST_OK)
		return rc;
	c->stats.origin_reads++;
	c->stats.bytes_fetched += rlen;
	/* the caller's part of the run */
	copy_from = Max(start, offset);
	copy_to = Min(end, offset + len);
	memcpy(buf + (copy_from - offset), s->fetch + (copy_from - start),
		   copy_to - copy_from);
	for (ch = first; ch <= last; ch++)
		(void) write_entry(c, s->key, s->keylen, s->hash, s->base.size, ch,
						   s->fetch + (ch * s->chunk_size - start),
						   chunk_len(s, ch));
	return FST_OK;
}

static FstCode
cached_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
			FstError *err)
{
	CachedSource *s = (CachedSource *) src;
	FstDiskCache *c = s->cache;
	uint64		first,
				last,
				ch;
	uint64		run_start = 0;
	bool		in_run = false;
	FstCode		rc;

	if (len == 0)
		return FST_OK;
	if (s->bypass)
	{
		/* not cacheable: fetch just what was asked */
		rc = fst_range_read(s->origin, offset, len, buf, err);
		if (rc != FST_OK)
			return rc;
		c->stats.misses++;
		c->stats.origin_reads++;
		c->stats.bytes_fetched += len;
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
			DcEntry    *e = idx_find(c, s->hash, ch);
			LookupResult lr = read_entry(s, ch, plen);

			if (lr == LOOKUP_HIT)
			{
				uint64		from = Max(cstart, offset);
				uint64		to = Min(cstart + plen, offset + len);

				memcpy(buf + (from - offset),
					   s->scratch + DC_HDR + s->keylen + (from - cstart),
					   to - from);
				c->stats.hits++;
				c->stats.bytes_read_from_cache += to - from;
				if (e)
					lru_touch(c, e);
				else
				{
					/* written by another process: adopt it */
					if (idx_put(c, s->hash, ch, DC_HDR + s->keylen + plen))
					{
						c->stats.adoptions++;
						make_room(c, 0, idx_find(c, s->hash, ch));
					}
				}
				hit = true;
			}
			else
			{
				if (lr == LOOKUP_CORRUPT)
				{
					char		path[DC_PATH_MAX];

					c->stats.corrupt_entries++;
					dc_path(c, s->hash, ch, path, sizeof(path));
					(void) unlink(path);
				}
				if (e)
					idx_remove(c, e);
				c->stats.misses++;
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
			rc = fetch_run(s, run_start, ch - 1, offset, len, buf, err);
			if (rc != FST_OK)
				return rc;
			in_run = false;
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
	s->keylen = keylen;
	s->hash = dc_hash_key(object_key, keylen);
	s->chunk_size = cache->opt.chunk_size ? cache->opt.chunk_size
		: Max(object_size, 1);
	s->nchunks = (object_size + s->chunk_size - 1) / s->chunk_size;
	s->bypass = DC_HDR + keylen + Min(s->chunk_size, object_size) > cache->capacity;
	*out = &s->base;
	return FST_OK;
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
	for (ch = 0; ch < n; ch++)
	{
		uint64		start = ch * cs;

		(void) write_entry(cache, key, keylen, hash, len, ch,
						   (const char *) data + start,
						   (size_t) Min(cs, len - start));
	}
	return FST_OK;
}

/* Parses "<16 hex>.<hex>"; false for any other name. */
static bool
parse_entry_name(const char *name, uint64 *hash, uint64 *chunk)
{
	char	   *end;
	int			i;

	for (i = 0; i < 16; i++)
		if (!isxdigit((unsigned char) name[i]) || isupper((unsigned char) name[i]))
			return false;
	if (name[16] != '.' || !isxdigit((unsigned char) name[17]))
		return false;
	*hash = strtoull(name, NULL, 16);
	errno = 0;
	*chunk = strtoull(name + 17, &end, 16);
	return *end == '\0' && errno == 0;
}

void
fst_diskcache_evict_key(FstDiskCache *cache, const char *key)
{
	size_t		keylen = key ? strlen(key) : 0;
	uint64		hash;
	char		sub[DC_PATH_MAX];
	char		path[DC_PATH_MAX + 300];
	char		prefix[20];
	DIR		   *d;
	struct dirent *de;
	size_t		b;

	if (keylen == 0)
		return;
	hash = dc_hash_key(key, keylen);
	/* this process's entries */
	for (b = 0; b < cache->nbuckets; b++)
	{
		DcEntry    *e = cache->buckets[b];

		while (e)
		{
			DcEntry    *next = e->hnext;

			if (e->hash == hash)
				drop_entry(cache, e);
			e = next;
		}
	}
	/* and those other processes wrote */
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

/* ---- open, scan, close -------------------------------------------------- */

typedef struct ScanItem
{
	uint64		hash;
	uint64		chunk;
	uint64		bytes;
	int64		mtime_ns;
} ScanItem;

static int
scan_item_cmp(const void *a, const void *b)
{
	const ScanItem *x = a,
			   *y = b;

	return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
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

/*
 * Scan one subdirectory: collect valid entries, delete garbage.  Returns
 * false only when out of memory.
 */
static bool
scan_subdir(FstDiskCache *c, const char *sub, ScanItem **items, size_t *n,
			size_t *cap)
{
	DIR		   *d = opendir(sub);
	struct dirent *de;
	char		path[DC_PATH_MAX + 300];
	bool		ok = true;

	if (d == NULL)
		return true;
	while ((de = readdir(d)) != NULL)
	{
		const char *name = de->d_name;
		struct stat st;
		uint64		hash,
					chunk;
		char		hk[DC_HDR + DC_KEY_MAX];
		int			fd;
		ssize_t		got;
		bool		valid = false;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", sub, name);
		if (lstat(path, &st) != 0)
			continue;
		if (strncmp(name, ".tmp.", 5) == 0)
		{
			if (c->opt.cleanup && S_ISREG(st.st_mode) && temp_is_dead(name, &st))
				(void) unlink(path);
			continue;
		}
		if (S_ISREG(st.st_mode) && parse_entry_name(name, &hash, &chunk) &&
			(hash >> 56) == (uint64) strtoul(sub + strlen(sub) - 2, NULL, 16) &&
			(fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
		{
			got = pread_all(fd, hk, sizeof(hk), 0);
			close(fd);
			if (got >= DC_HDR)
			{
				uint32		keylen = fst_get_fixed32(hk + 12);

				valid = keylen <= DC_KEY_MAX && (size_t) got >= DC_HDR + keylen &&
					header_valid(hk, hk + DC_HDR, c->opt.chunk_size) &&
					fst_get_fixed64(hk + 24) == chunk &&
					dc_hash_key(hk + DC_HDR, keylen) == hash &&
					(uint64) st.st_size == DC_HDR + keylen + fst_get_fixed32(hk + 36);
			}
		}
		if (!valid)
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
		(*items)[*n].bytes = (uint64) st.st_size;
		(*items)[*n].mtime_ns = (int64) st.st_mtim.tv_sec * 1000000000 +
			st.st_mtim.tv_nsec;
		(*n)++;
	}
	closedir(d);
	return ok;
}

static FstCode
prepare_dir(const char *dir, FstError *err)
{
	char		marker[DC_PATH_MAX];
	struct stat st;
	DIR		   *d;
	struct dirent *de;
	bool		empty = true;
	int			fd;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return fst_error(err, FST_IO_ERROR, "could not create cache directory \"%s\": %s",
						 dir, strerror(errno));
	snprintf(marker, sizeof(marker), "%s/%s", dir, FST_DISKCACHE_MARKER);
	if (stat(marker, &st) == 0)
		return FST_OK;
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
	if (!empty && stat(marker, &st) == 0)
		return FST_OK;
	if (!empty)
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
	return FST_OK;
}

void
fst_diskcache_options_default(FstDiskCacheOptions *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->chunk_size = FST_DISKCACHE_DEFAULT_CHUNK;
	opt->cleanup = true;
}

FstCode
fst_diskcache_open(const char *dir, uint64 capacity_bytes,
				   const FstDiskCacheOptions *opt, FstDiskCache **out,
				   FstError *err)
{
	FstDiskCache *c;
	ScanItem   *items = NULL;
	size_t		n = 0,
				cap = 0,
				i;
	char		sub[DC_PATH_MAX];
	FstCode		rc;
	int			b;

	*out = NULL;
	if (dir == NULL || dir[0] != '/' || strlen(dir) > DC_PATH_MAX - 64)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "cache directory must be an absolute path");
	c = fst_calloc(1, sizeof(FstDiskCache));
	if (c == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	if (opt)
		c->opt = *opt;
	else
		fst_diskcache_options_default(&c->opt);
	if (c->opt.chunk_size > FST_DISKCACHE_MAX_CHUNK)
	{
		fst_free(c);
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "cache chunk size %u is over the maximum %d",
						 c->opt.chunk_size, FST_DISKCACHE_MAX_CHUNK);
	}
	c->capacity = capacity_bytes;
	c->stats.capacity = capacity_bytes;
	c->nbuckets = 1024;
	c->dir = fst_strdup(dir);
	c->buckets = fst_calloc(c->nbuckets, sizeof(DcEntry *));
	if (c->dir == NULL || c->buckets == NULL)
	{
		fst_diskcache_close(c);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	rc = prepare_dir(dir, err);
	if (rc != FST_OK)
	{
		fst_diskcache_close(c);
		return rc;
	}
	for (b = 0; b < DC_NSUBDIRS; b++)
	{
		snprintf(sub, sizeof(sub), "%s/%02x", dir, b);
		if (mkdir(sub, 0700) != 0 && errno != EEXIST)
		{
			rc = fst_error(err, FST_IO_ERROR, "could not create \"%s\": %s",
						   sub, strerror(errno));
			break;
		}
		if (!scan_subdir(c, sub, &items, &n, &cap))
		{
			rc = fst_error(err, FST_NO_MEMORY, "out of memory");
			break;
		}
	}
	if (rc == FST_OK)
	{
		/* oldest first, so that the newest ends at the LRU head */
		qsort(items, n, sizeof(ScanItem), scan_item_cmp);
		for (i = 0; i < n && rc == FST_OK; i++)
			if (!idx_put(c, items[i].hash, items[i].chunk, items[i].bytes))
				rc = fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	fst_free(items);
	if (rc != FST_OK)
	{
		fst_diskcache_close(c);
		return rc;
	}
	make_room(c, 0, NULL);		/* the capacity may have shrunk */
	*out = c;
	return FST_OK;
}

void
fst_diskcache_close(FstDiskCache *cache)
{
	DcEntry    *e;

	if (cache == NULL)
		return;
	e = cache->lru_head;
	while (e)
	{
		DcEntry    *next = e->next;

		fst_free(e);
		e = next;
	}
	fst_free(cache->buckets);
	fst_free(cache->dir);
	fst_free(cache);
}

void
fst_diskcache_stats(const FstDiskCache *cache, FstDiskCacheStats *out)
{
	*out = cache->stats;
}

void
fst_diskcache_entry_path(const FstDiskCache *cache, const char *key,
						 uint64 chunk, char *path, size_t pathlen)
{
	dc_path(cache, dc_hash_key(key, strlen(key)), chunk, path, pathlen);
}
