/*-------------------------------------------------------------------------
 *
 * stage.h
 *	  The stage: byte ranges of SST files fetched ahead for one batch of
 *	  key lookups, or for one range scan, and held in this backend's memory
 *	  until the next such fetch, for when the local disk cache is too small
 *	  to hold them.
 *
 * A batch upsert into state far larger than the disk cache (write/
 * batch_lookup.c) knows which blocks its lookups will read; a range scan
 * bounded in every key group (tableam/keyindex.c) knows which byte range
 * of each file it will read through.  Fetched into the disk cache, such a
 * read-ahead may take no more than the cache keeps until it is used (an
 * eighth of it), so a small cache makes batches small, scans serial and
 * the requests many.  Staged, the bytes wait in memory
 * (forst.batch_lookup_memory) instead: the ranges are sorted by file and
 * offset, neighbours are fetched by one ranged GET across the smallest gaps
 * first as far as the memory allows, all GETs of a fetch run in parallel,
 * and an SST reader's read that lies
 * within a staged range is served from it (the stage sits above the
 * reader's read window and the disk cache: sst_readers.c).
 *
 * Correctness does not depend on it: SST objects never change once
 * written, so staged bytes are the object's bytes; a read the stage does
 * not cover goes on to the disk cache and the store, and the reader checks
 * every block's checksum as always.  A range that could not be fetched is
 * simply not staged (its read fetches it, and reports its error).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_STAGE_H
#define FORST_STAGE_H

#include "am/read/prefetch.h"
#include "lsm/rangesrc.h"

/* What forst_stage_fetch did. */
typedef struct ForstStageFetch
{
	uint64		bytes;			/* bytes staged (gaps included) */
	int			requests;		/* ranged GETs sent */
	uint64		generation;		/* names this fetch's stage (never 0) */
} ForstStageFetch;

/*
 * Drops what is staged and fetches ranges (of rnode's files) into the
 * stage, coalesced, in parallel; or keeps what is staged if it holds every
 * range already (a scan started again over the same range).  Errors of the
 * store are not raised (see above); a cancel is.
 */
extern void forst_stage_fetch(const RelFileNode *rnode,
							  const ForstPrefetchRange *ranges, int n,
							  ForstStageFetch *out);

/* Drops what is staged, giving its memory back. */
extern void forst_stage_reset(void);

/*
 * Drops what is staged if it is still what the fetch that returned
 * generation staged (a later fetch replaced it otherwise): for a scan
 * that ends before its transaction does.
 */
extern void forst_stage_release(uint64 generation);

/* Reads served from the stage since start-up. */
extern uint64 forst_stage_hits(void);

/*
 * A source over inner (which it owns and closes) for the object okey: a
 * read within a staged range of okey comes from the stage, any other from
 * inner.  NULL when out of memory (inner is closed then).
 */
extern FstRangeSource *forst_stage_source(FstRangeSource *inner,
										  const char *okey);

/* Registers the abort callback that drops the stage (from _PG_init). */
extern void forst_stage_init(void);

#endif							/* FORST_STAGE_H */
