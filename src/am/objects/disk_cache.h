/*-------------------------------------------------------------------------
 *
 * disk_cache.h
 *	  The server's local disk cache of SST bytes (forst.cache_dir, bounded
 *	  by forst.cache_size): one index in shared memory for all backends and
 *	  workers (see src/store/diskcache.h), so that the bound holds for the
 *	  whole server.
 *
 * SST readers read through it (objects/store.c); flush and compaction admit
 * the files they write.  At start-up the flush worker rebuilds the index
 * from the files a previous run left; until it has, backends read hits
 * from the files on disk and fetch misses without caching them.
 * forst.cache_size = 0 turns the cache off.  A cache directory that
 * cannot be used (permissions, not a cache) is reported once per process
 * as a WARNING, and reads go to the object store directly.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_CACHE_H
#define FORST_CACHE_H

#include "store/diskcache.h"

/* Registers the shared memory (_PG_init). */
extern void forst_cache_init(void);

/* This process's handle, or NULL when the cache is off or unusable. */
extern FstDiskCache *forst_disk_cache(void);

/* The disk cache's bound in bytes (forst.cache_size resolved; 0: none). */
extern uint64 forst_cache_capacity(void);

/*
 * The disk cache's unit: forst.cache_chunk_size, doubled while a full
 * cache of forst.cache_size would need more entries than its index holds.
 */
extern uint64 forst_cache_chunk_bytes(void);

/* Write-through of a file just uploaded (never fails). */
extern void forst_cache_admit(const char *key, const void *data, size_t len);
/* The same for a body read in pieces (objects/spool.h). */
extern void forst_cache_admit_source(const char *key, const FstPutSource *src);

/* In the flush worker at start: fill the index from the directory. */
extern void forst_cache_rebuild(void);

#endif							/* FORST_CACHE_H */
