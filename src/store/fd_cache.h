/*-------------------------------------------------------------------------
 *
 * fd_cache.h
 *	  A small LRU of read-only file descriptors of immutable files, by
 *	  path, so that a reader of many small ranges of one file opens and
 *	  stats it once (the file:// object store keeps SST files open).
 *
 * Only for files that never change once written (replacing one with
 * rename() would leave the cache reading the old inode).  A lookup checks,
 * at most once a second per file, whether the file was deleted, and then
 * closes it, so that deleted files do not keep their disk space for long
 * (a process that stops reading keeps up to capacity of them open until
 * it reads again or exits, as PostgreSQL's backends keep dropped
 * relations' files).  Not thread-safe: one per process and store.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_FD_CACHE_H
#define FST_FD_CACHE_H

#include "fst_common.h"

typedef struct FstFdCache FstFdCache;

/* A cache of up to capacity descriptors (NULL on out-of-memory). */
extern FstFdCache *fst_fd_cache_create(int capacity);

/* Closes every descriptor and frees the cache (NULL is fine). */
extern void fst_fd_cache_destroy(FstFdCache *c);

/* The descriptor and size of path if cached (and marks it recently used). */
extern bool fst_fd_cache_lookup(FstFdCache *c, const char *path, int *fd,
								uint64 *size);

/*
 * Hands an open descriptor to the cache, which closes it when it evicts it
 * (at once if memory is short).
 */
extern void fst_fd_cache_insert(FstFdCache *c, const char *path, int fd,
								uint64 size);

/* Closes and forgets path's descriptor, if cached (after a read error). */
extern void fst_fd_cache_forget(FstFdCache *c, const char *path);

#endif							/* FST_FD_CACHE_H */
