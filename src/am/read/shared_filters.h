/*-------------------------------------------------------------------------
 *
 * shared_filters.h
 *	  The shared filter store: the bloom filters of SST files in shared
 *	  memory, one copy for all processes instead of one in every backend
 *	  that reads the file (forst.shared_filter_memory; 0 turns it off).
 *
 * A reader of a file asks the store for the file's filter when it needs it
 * (FstSstReadOptions.filter_get, sst.h); if no process put it there yet, it
 * reads the filter from the file and offers it (filter_put).  Either way it
 * gets a pointer into shared memory and a pin: a pinned filter neither
 * moves nor changes, and lookups probe it without a lock.  The reader gives
 * the pin back when it closes (filter_release), and a process gives back
 * whatever pins it still holds when it exits.
 *
 * When the store is full, the least recently used filters that no reader
 * pins make room; when only pinned ones are left, the filter stays the
 * reader's own copy (as without the store).  Filters of files that
 * compaction replaced go when their last pin does.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_FILTERSHARE_H
#define FORST_FILTERSHARE_H

#include "lsm/fst_common.h"

/* Hooks shared memory (from _PG_init). */
extern void forst_filtershare_init(void);

/* Whether the store exists (its size is not 0). */
extern bool forst_filtershare_enabled(void);

/* FstSstReadOptions.filter_get / filter_put / filter_release (arg unused). */
extern const char *forst_filtershare_get(void *arg, uint64 cache_id,
										 uint64 offset, size_t len,
										 uint64 *handle);
extern const char *forst_filtershare_put(void *arg, uint64 cache_id,
										 uint64 offset, const char *data,
										 size_t len, uint64 *handle);
extern void forst_filtershare_release(void *arg, uint64 handle);

/*
 * The files of these cache ids are gone: their filters are found no more,
 * and go when no reader pins them.
 */
extern void forst_filtershare_forget_files(const uint64 *cache_ids, int n);

typedef struct ForstFiltershareStats
{
	uint64		capacity;		/* bytes of the store */
	uint64		bytes;			/* bytes its filters take */
	uint64		filters;		/* filters it holds */
	uint64		pinned;			/* of those, pinned by a reader */
	uint64		hits;			/* filters a reader found there */
	uint64		puts;			/* filters it took */
	uint64		refused;		/* filters it had no room for */
	uint64		evictions;		/* unpinned filters that made room */
} ForstFiltershareStats;

extern void forst_filtershare_stats(ForstFiltershareStats *s);

#endif							/* FORST_FILTERSHARE_H */
