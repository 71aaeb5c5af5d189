/*-------------------------------------------------------------------------
 *
 * lookup_plan.h
 *	  The reads a batch of point lookups will make, named before any of
 *	  them runs (the idea of RocksDB's MultiGet and of the batched state
 *	  access of Flink's ForSt): a caller whose reads are remote fetches them
 *	  all at once, in parallel, and then runs the lookups one by one
 *	  (fst_lookup_get), which find what they read cached.
 *
 * Two phases, because the second needs what the first names:
 *
 *	 1. fst_lookup_plan_files: the distinct files whose key range holds a
 *		key of the batch that no memtable holds.  Only the manifest and the
 *		memtables are read; no reader is opened.  The caller fetches these
 *		files' metadata (their tails), so that phase 2 opens them locally.
 *	 2. fst_lookup_plan_blocks: for each such key, the data block its lookup
 *		will read first: in the newest candidate file whose bloom filter
 *		admits the key, the block a seek to it lands in.  Opens readers
 *		through lk->reader.  The blocks are distinct, sorted by file and
 *		offset.
 *
 * A plan is a guess that is almost always right, never a promise: a key
 * whose newest version a memtable holds needs no block (a memtable version
 * that the lookup's accept() will refuse sends that lookup to the files
 * anyway); a bloom filter's false positive (about 1%) names a block the
 * lookup reads and then goes on to an older file for.  A wrong guess costs
 * one read made later, one by one, as without a plan; the lookup's answer
 * never depends on the plan.
 *
 * Memory is malloc'ed (fst_malloc) and freed by fst_lookup_plan_free.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_LOOKUP_PLAN_H
#define FST_LOOKUP_PLAN_H

#include "lookup.h"

/* A byte range of a file that a lookup of the batch will read. */
typedef struct FstLookupBlock
{
	const FstFileMeta *file;	/* in the lookup's manifest */
	uint64		offset;
	uint64		len;
} FstLookupBlock;

typedef struct FstLookupPlan
{
	int			nkeys;
	bool	   *held;			/* per key: a memtable holds a version */

	/* phase 1: distinct files, newest first by highest sequence */
	const FstFileMeta **files;
	int			nfiles;

	/* phase 2 */
	FstLookupBlock *blocks;
	int			nblocks;

	/* what the plan found, for EXPLAIN and statistics */
	uint64		keys_held;		/* a memtable holds a version */
	uint64		keys_absent;	/* no file's range or filter admits it */
	uint64		bloom_checks;
	uint64		bloom_negatives;
} FstLookupPlan;

/*
 * Phase 1 over keys (user parts: key group + user key) with lk's
 * memtables and manifest.  Fails only when memory runs out or a memtable
 * read fails.
 */
extern FstCode fst_lookup_plan_files(FstLookup *lk, const FstSlice *keys,
									 int nkeys, FstLookupPlan *plan,
									 FstError *err);

/*
 * Phase 2 with the same lk and keys.  A reader or filter that cannot be
 * read fails the plan (its error in *err); the caller may ignore that,
 * since the lookup itself will report it.
 */
extern FstCode fst_lookup_plan_blocks(FstLookup *lk, const FstSlice *keys,
									  FstLookupPlan *plan, FstError *err);

extern void fst_lookup_plan_free(FstLookupPlan *plan);

#endif							/* FST_LOOKUP_PLAN_H */
