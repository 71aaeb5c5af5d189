/*-------------------------------------------------------------------------
 *
 * shared_blocks.h
 *	  The shared block cache: decoded SST data blocks in shared memory,
 *	  below each backend's own block cache (blockcache.h) and above the
 *	  local disk cache and the object store.
 *
 * A block that one backend read and decompressed is found by every other
 * backend for the cost of a copy, or of a search where it lies for a point
 * read (forst.shared_block_cache_size; 0 turns it off).  The engine asks it through FstSstReadOptions.shared_get and offers
 * it blocks through shared_put (sst.h); objects/store.c wires them up.
 *
 * Blocks are written one after another into a ring (a log): the oldest
 * are overwritten first (FIFO eviction; no pins, no per-block locks).  A
 * reader copies a block out and then checks that the ring's write position
 * has not overtaken it meanwhile, seqlock fashion, so a block is never
 * read half overwritten.  A hash table in shared memory, partitioned under
 * LWLocks, maps (cache id, offset) to a ring position.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_BLOCKSHARE_H
#define FORST_BLOCKSHARE_H

#include "lsm/fst_common.h"

/* Hooks shared memory (from _PG_init). */
extern void forst_blockshare_init(void);

/* Whether the cache exists (its size is not 0). */
extern bool forst_blockshare_enabled(void);

/* FstSstReadOptions.shared_get / shared_put (arg unused). */
extern bool forst_blockshare_get(void *arg, uint64 cache_id, uint64 offset,
								 char **data, size_t *len);
extern bool forst_blockshare_put(void *arg, uint64 cache_id, uint64 offset,
								 const char *data, size_t len);

/*
 * The files of these cache ids (FstSstReadOptions.cache_id) are gone: drops
 * their blocks and gives the ring's pages that held only those back to the
 * kernel.
 */
extern void forst_blockshare_forget_files(const uint64 *cache_ids, int n);

/*
 * FstSstReadOptions.shared_peek: fn reads a block where it lies in the
 * ring; the write position is checked after it, as for a copy.
 */
extern bool forst_blockshare_peek(void *arg, uint64 cache_id, uint64 offset,
								  bool (*fn) (void *fnarg, const char *data,
											  size_t len),
								  void *fnarg);

typedef struct ForstBlockshareStats
{
	uint64		capacity;		/* bytes of the ring */
	uint64		written;		/* bytes ever written into it */
	uint64		entries;		/* blocks it holds now */
	uint64		hits;
	uint64		misses;
	uint64		inserts;
} ForstBlockshareStats;

/* Adds this process's hits and misses to the shared counters (at xact end). */
extern void forst_blockshare_publish(void);

#endif							/* FORST_BLOCKSHARE_H */
