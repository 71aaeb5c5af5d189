/*-------------------------------------------------------------------------
 *
 * blockcache.h
 *	  A bounded cache of decoded blocks, keyed by (file, offset), evicting
 *	  the least recently used unpinned block.
 *
 * This is the process-local cache used by stand-alone programs and by one
 * backend; blocks are reference counted (FstBlock.refcount) so a block in
 * use by an iterator is never freed under it, even when evicted.  The
 * charge of a block is its decoded size.  Not thread-safe.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_BLOCKCACHE_H
#define FST_BLOCKCACHE_H

#include "block.h"

typedef struct FstBlockCache FstBlockCache;

extern FstBlockCache *fst_block_cache_create(size_t capacity_bytes);
extern void fst_block_cache_destroy(FstBlockCache *c);

/* Returns the block with a new reference (caller releases), or NULL. */
extern FstBlock *fst_block_cache_lookup(FstBlockCache *c, uint64 file_id,
										uint64 offset);

/* Inserts b (the cache takes its own reference); replaces an older entry. */
extern void fst_block_cache_insert(FstBlockCache *c, uint64 file_id,
								   uint64 offset, FstBlock *b);

/* Drops every block of one file (after the file is deleted). */
extern void fst_block_cache_erase_file(FstBlockCache *c, uint64 file_id);

typedef struct FstBlockCacheStats
{
	uint64		hits;
	uint64		misses;
	uint64		inserts;
	uint64		evictions;
	size_t		charge;			/* bytes held now */
	size_t		capacity;
	size_t		entries;
} FstBlockCacheStats;

extern void fst_block_cache_stats(const FstBlockCache *c, FstBlockCacheStats *out);

#endif							/* FST_BLOCKCACHE_H */
