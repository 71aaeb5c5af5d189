/*-------------------------------------------------------------------------
 *
 * prefetch.h
 *	  Parallel fetch-ahead into the disk cache for reads that would
 *	  otherwise go to the object store one request at a time: the metadata
 *	  of SST files about to be opened, what range scans will read, the
 *	  blocks of a batch of key lookups, and byte ranges of files
 *	  (forst.prewarm).
 *
 * Active only where it pays: an object store with parallel reads (s3://)
 * and the disk cache on.  Prefetching is a hint: what could not be fetched
 * is read (and its error reported) by the read that needs it.  A cancel
 * or statement_timeout during a prefetch is raised at once.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_PREFETCH_H
#define FORST_PREFETCH_H

#include "storage/relfilenode.h"
#include "utils/relcache.h"

#include "lsm/manifest.h"

/* Whether prefetching applies in this process (store and cache). */
extern bool forst_prefetch_possible(void);

/* Byte range [offset, offset + len) of a table's file. */
typedef struct ForstPrefetchRange
{
	const FstManifestFile *file;
	uint64		offset;
	uint64		len;
} ForstPrefetchRange;

/* Fetches the ranges into the disk cache (no-op when not possible). */
extern void forst_prefetch_ranges(const RelFileNode *rnode,
								  const ForstPrefetchRange *ranges, int n);

/*
 * Fetches the metadata (the tail) of those files whose reader this backend
 * has not opened yet.
 */
extern void forst_prefetch_metadata(const RelFileNode *rnode,
									const FstManifestFile *const *files,
									int n);

/*
 * Before a scan of key groups [kg_first, kg_last], each from kg|lo to
 * kg|hi (hi empty: to the end of the key group), of the files of the
 * table's current view: the metadata of the files involved, then the bytes
 * the scan will read in each file that overlaps a key group's range, from
 * the block its start lands in to the block its end lands in.  All of them
 * go into the disk cache if they fit in an eighth of it, else into the
 * stage if they fit in forst.batch_lookup_memory; otherwise only the block
 * each range starts in is fetched (into the disk cache), and the scan
 * reads on from the store.  Returns the stage's generation when it staged
 * (for forst_stage_release at the scan's end), else 0.
 */
extern uint64 forst_prefetch_scan(Relation rel, int kg_first, int kg_last,
								  FstSlice lo, FstSlice hi);

/* What forst_prefetch_keys found and did, added to by each call. */
typedef struct ForstPrefetchKeysStats
{
	uint64		batches;		/* calls that planned (prefetch possible) */
	uint64		keys;
	uint64		keys_held;		/* a memtable holds a version: no read */
	uint64		keys_absent;	/* no file's range or filter admits the key */
	uint64		files;			/* files whose metadata was asked for */
	uint64		blocks;			/* distinct blocks asked for */
	uint64		bytes_planned;	/* their bytes */
	uint64		bytes;			/* the bytes of those fetched */
	uint64		blocks_over_budget; /* planned, not fetched: see below */
	uint64		staged_batches; /* batches held in memory (read/stage.h) */
	uint64		staged_bytes;	/* their bytes, gaps included */
	uint64		staged_requests;	/* the ranged GETs that fetched them */
} ForstPrefetchKeysStats;

/*
 * Bytes one batch may fetch ahead: an eighth of the disk cache, so that
 * what a batch fetches is still cached when its lookups read it, with room
 * for the other backends' batches; or forst.batch_lookup_memory if that is
 * more: a batch whose blocks pass the disk cache's share is held in memory
 * instead (read/stage.h).  0 when prefetching is not possible.
 */
extern uint64 forst_prefetch_budget(void);

/*
 * Before the point lookups of a batch of keys (user parts: key group + user
 * key) in rel: the metadata of the files they will open, then the data
 * block each will read first, fetched together in parallel into the disk
 * cache (src/lsm/lookup_plan.h) -- or, when they are more than an eighth of
 * it, into the stage (read/stage.h), which holds them until the next batch.
 * A hint like every prefetch: the lookups then run as before and find the
 * blocks cached or staged.  Blocks past
 * forst_prefetch_budget() are not fetched (their lookups read them one by
 * one): the caller sizes its batches to fit.  st may be NULL.
 */
extern void forst_prefetch_keys(Relation rel, const FstSlice *keys, int n,
								ForstPrefetchKeysStats *st);

#endif							/* FORST_PREFETCH_H */
