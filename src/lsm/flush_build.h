/*-------------------------------------------------------------------------
 *
 * flush_build.h
 *	  Building the SST file of a flush from a memtable's entries: which
 *	  entries go in, with which flags, and the TTL range of the file.  The
 *	  caller (the table AM's flush/flush.c) supplies the transaction
 *	  status and expiry rules as callbacks, and keeps the locking, the
 *	  upload and the manifest.
 *
 * Every entry whose transaction did not abort goes into the SST, in the
 * memtable's order.  An entry already committed or frozen is written as
 * is.  Otherwise its hint bits say aborted (dropped) or committed (marked
 * committed), or fate() decides: committed (marked committed), still
 * running (written unmarked; its xid goes into the pending range), or
 * aborted (dropped).  A committed entry that frozen() says every snapshot
 * sees is frozen (xid and cid cleared), as compaction would.  With ttl(),
 * the TTL column value of every row that is not a tombstone is noted in
 * the file's properties (no value: never expires).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_FLUSH_BUILD_H
#define FST_FLUSH_BUILD_H

#include "memtable.h"
#include "sst.h"

typedef enum FstFlushFate
{
	FST_FLUSH_DROP = 0,			/* aborted, or crashed before committing */
	FST_FLUSH_COMMITTED,		/* mark committed */
	FST_FLUSH_PENDING			/* still running: write unmarked */
} FstFlushFate;

/* The fate of xid's entry, neither committed nor frozen nor hinted. */
typedef FstFlushFate (*FstFlushFateFn) (void *arg, uint32 xid);

/* Whether a committed entry of xid is seen by every snapshot (freeze it). */
typedef bool (*FstFlushFrozenFn) (void *arg, uint32 xid);

/* The TTL column value of a row's payload; false if it has none. */
typedef bool (*FstFlushTtlFn) (void *arg, FstSlice payload, int64 *ttl);

typedef struct FstFlushBuild
{
	FstSstOptions opt;			/* the level's block layout */
	FstFlushFateFn fate;
	FstFlushFrozenFn frozen;	/* NULL: freeze nothing */
	FstFlushTtlFn ttl;			/* NULL: no TTL column */
	void	   *arg;

	/* results */
	uint64		max_seq;		/* over every entry, written or not */
	uint32		pending_xid_min;	/* xids written unmarked */
	uint32		pending_xid_max;	/* (fst_xid_range_note); 0/0 if none */
	uint64		dropped;		/* entries left out */
} FstFlushBuild;

/* Options from fst_sst_options_default, no callbacks, results zero. */
extern void fst_flush_build_init(FstFlushBuild *fb);

/*
 * Writes mt's entries into an SST streamed to sink; props (optional) gets
 * the file's properties.  props->num_entries 0 means nothing was kept.
 */
extern FstCode fst_flush_build(FstMemtable *mt, FstFlushBuild *fb,
							   FstWriteSink *sink, FstSstProps *props,
							   FstError *err);

#endif							/* FST_FLUSH_BUILD_H */
