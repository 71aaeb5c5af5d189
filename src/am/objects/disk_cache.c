/*-------------------------------------------------------------------------
 *
 * disk_cache.c
 *	  The server's disk cache: its index in shared memory under an LWLock,
 *	  per-process handles, admission and the start-up rebuild (see
 *	  objects/disk_cache.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/file_perm.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "am/forst.h"
#include "am/objects/disk_cache.h"
#include "am/objects/store.h"

/* Rounding of file sizes in the accounting: a file system block. */
#define FORST_CACHE_ACCOUNT_BLOCK 4096

typedef struct ForstCacheShared
{
	LWLock	   *lock;
	/* the index region (diskcache.h) follows, MAXALIGNed */
} ForstCacheShared;

static ForstCacheShared *cache_shared = NULL;
static FstDiskCache *cache_handle = NULL;
static bool cache_unusable = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * forst.cache_size, -1 resolved: 1GB in front of an s3:// store, none in
 * front of file://.  A file:// store is local files already, read through
 * the OS page cache; a cache in front of it would copy every range it
 * reads into a second local file and hold both in the page cache, which
 * halves what the machine's memory caches of the table (a server bounded
 * to 1 GB ran upserts 1.6-1.7x faster without it, docs/benchmarks.md).
 */
uint64
forst_cache_capacity(void)
{
	if (forst_cache_size_kb >= 0)
		return (uint64) forst_cache_size_kb * 1024;
	if (forst_remote_dir != NULL && strncmp(forst_remote_dir, "s3://", 5) == 0)
		return (uint64) 1024 * 1024 * 1024;
	return 0;
}

static Size
cache_shared_size(void)
{
	if (forst_cache_capacity() == 0)
		return 0;
	return add_size(MAXALIGN(sizeof(ForstCacheShared)),
					fst_diskcache_region_size(forst_cache_capacity()));
}

static void *
cache_region(void)
{
	return (char *) cache_shared + MAXALIGN(sizeof(ForstCacheShared));
}

static void
cache_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	if (forst_cache_capacity() > 0)
	{
		RequestAddinShmemSpace(cache_shared_size());
		RequestNamedLWLockTranche("forst_disk_cache", 1);
	}
}

static void
cache_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	if (forst_cache_capacity() == 0)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	cache_shared = ShmemInitStruct("forst disk cache", cache_shared_size(), &found);
	if (!found)
	{
		cache_shared->lock = &(GetNamedLWLockTranche("forst_disk_cache"))->lock;
		fst_diskcache_region_init(cache_region(), forst_cache_capacity());
	}
	LWLockRelease(AddinShmemInitLock);
}

void
forst_cache_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = cache_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = cache_shmem_startup;
}

static char *
forst_cache_dir_path(void)
{
	if (forst_cache_dir == NULL || forst_cache_dir[0] == '\0')
		return psprintf("%s/forst/cache", DataDir);
	return pstrdup(forst_cache_dir);
}

static void
cache_lock(void *arg, bool exclusive)
{
	LWLockAcquire((LWLock *) arg, exclusive ? LW_EXCLUSIVE : LW_SHARED);
}

static void
cache_unlock(void *arg)
{
	LWLockRelease((LWLock *) arg);
}

uint64
forst_cache_chunk_bytes(void)
{
	uint64		capacity = forst_cache_capacity();
	uint64		chunk = (uint64) forst_cache_chunk_size_kb * 1024;
	uint32		entries = fst_diskcache_max_entries(capacity);

	/* an entry's header and key take one more disk block */
	while (chunk < 1024 * 1024 &&
		   capacity / (chunk + FORST_CACHE_ACCOUNT_BLOCK) > entries)
		chunk *= 2;
	return chunk;
}

FstDiskCache *
forst_disk_cache(void)
{
	char	   *dir;
	char	   *parent;
	char	   *slash;
	FstDiskCacheOptions opt;
	FstError	err;
	FstCode		rc;

	if (cache_handle != NULL || cache_unusable || cache_shared == NULL)
		return cache_handle;

	dir = forst_cache_dir_path();
	/* the default lives in the data directory: create its parents */
	parent = pstrdup(dir);
	slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent)
	{
		*slash = '\0';
		(void) pg_mkdir_p(parent, pg_dir_create_mode);
	}
	pfree(parent);

	fst_diskcache_options_default(&opt);
	opt.account_block = FORST_CACHE_ACCOUNT_BLOCK;
	opt.chunk_size = forst_cache_chunk_bytes();
	/* chunks read once (scans, the cold tail) do not evict hot ones */
	opt.admit_on_second_miss = true;
	opt.lock = cache_lock;
	opt.unlock = cache_unlock;
	opt.lock_arg = cache_shared->lock;
	rc = fst_diskcache_attach(dir, cache_region(), &opt, &cache_handle, &err);
	if (rc != FST_OK)
	{
		cache_handle = NULL;
		cache_unusable = true;
		ereport(WARNING,
				(errcode(rc == FST_INVALID_ARGUMENT ? ERRCODE_INVALID_PARAMETER_VALUE
						 : ERRCODE_IO_ERROR),
				 errmsg("forst: disk cache \"%s\" cannot be used: %s", dir, err.msg),
				 errdetail("SST files are read from the object store without a local cache."),
				 errhint("Point forst.cache_dir at an empty or absent directory the server "
						 "can write, or set forst.cache_size to 0.")));
	}
	pfree(dir);
	return cache_handle;
}

void
forst_cache_admit(const char *key, const void *data, size_t len)
{
	FstDiskCache *c = forst_disk_cache();
	FstError	err;

	if (c != NULL)
		(void) fst_diskcache_admit(c, key, data, len, &err);
}

void
forst_cache_admit_source(const char *key, const FstPutSource *src)
{
	FstDiskCache *c = forst_disk_cache();
	FstError	err;

	if (c != NULL)
		(void) fst_diskcache_admit_source(c, key, src, &err);
}

void
forst_cache_rebuild(void)
{
	FstDiskCache *c = forst_disk_cache();
	FstDiskCacheStats st;
	FstError	err;
	FstCode		rc;

	if (c == NULL)
		return;
	fst_diskcache_stats(c, &st);
	if (st.ready)
		return;					/* a restarted worker: already done */
	rc = fst_diskcache_rebuild(c, &err);
	if (rc != FST_OK)
	{
		ereport(WARNING,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("forst: could not scan the disk cache: %s", err.msg),
				 errdetail("Reads are served without caching new data.")));
		return;
	}
	fst_diskcache_stats(c, &st);
	ereport(LOG,
			(errmsg("forst: disk cache holds " UINT64_FORMAT " entries, " UINT64_FORMAT
					" of " UINT64_FORMAT " bytes, in units of " UINT64_FORMAT " kB",
					st.entries, st.bytes_used, st.capacity,
					forst_cache_chunk_bytes() / 1024)));
}
