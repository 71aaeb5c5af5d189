/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Cluster-wide counters of forst (the forst.stats view): object store
 *	  requests, the disk cache, the block cache, bloom filters, flushes,
 *	  compactions and write stalls.
 *
 * The counters are pg_atomic_uint64s in shared memory.  Work that happens
 * rarely (a flush, a stall) adds to them directly.  Work that happens per
 * row (block cache and bloom lookups) and the object store handle's own
 * per-process counters are accumulated by each process and published as
 * deltas -- at transaction end, after each flush worker round and before
 * forst.stats is read -- so that a hot path costs no atomic.  The disk
 * cache keeps its counters in its own shared index (diskcache.h) and the
 * view reads them from there.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_STATS_H
#define FORST_STATS_H

#include "utils/timestamp.h"

typedef enum ForstStat
{
	/* object store requests by kind (FstObjOp order), published */
	FS_STORE_PUT = 0,
	FS_STORE_PUT_IF_ABSENT,
	FS_STORE_GET,
	FS_STORE_GET_RANGE,
	FS_STORE_HEAD,
	FS_STORE_LIST,
	FS_STORE_DELETE,
	FS_STORE_ERRORS,
	FS_STORE_NOT_FOUND,
	FS_STORE_BYTES_READ,
	FS_STORE_BYTES_WRITTEN,
	FS_STORE_RETRIES,
	FS_STORE_REQUEST_US,		/* wall time in requests, all kinds */
	/* block cache and bloom filters, published */
	FS_BLOCK_CACHE_HITS,
	FS_BLOCK_CACHE_MISSES,
	FS_BLOOM_CHECKS,
	FS_BLOOM_NEGATIVES,
	FS_BLOOM_FALSE_POSITIVES,
	/* added directly */
	FS_FLUSHES,
	FS_FLUSH_BYTES,
	FS_COMPACTIONS,
	FS_COMPACTION_BYTES_WRITTEN,
	FS_WRITE_STALLS,
	FS_WRITE_STALL_US,
	FS_NUM_STATS
} ForstStat;

/* Registers the shared memory and the publishing callbacks (_PG_init). */
extern void forst_stats_init(void);

/* Adds to a shared counter at once (rare events). */
extern void forst_stats_add(ForstStat which, uint64 n);

/* A shared counter's value (what is published so far). */
extern uint64 forst_stats_get(ForstStat which);

/* Per-process counts, published as deltas (see above). */
extern uint64 forst_local_bloom_checks;
extern uint64 forst_local_bloom_negatives;
extern uint64 forst_local_bloom_false_positives;

/* For functions/stats_view.c. */
extern void forst_stats_view_init(void);
extern bool forst_stats_loaded(void);
/* Adds cur minus what this process published of it so far. */
extern void forst_stats_publish_count(ForstStat which, uint64 cur);
extern void forst_stats_zero(void);
extern TimestampTz forst_stats_reset_time(void);

#endif							/* FORST_STATS_H */
