/*-------------------------------------------------------------------------
 *
 * lookup.h
 *	  Point lookups: the newest version of one user part that a predicate
 *	  accepts, across memtables and the SST files of a manifest's levels,
 *	  without a merging iterator.  The one read path of the server (the
 *	  table AM's read/point.c supplies the callbacks), the unit tests and
 *	  bench/engine.
 *
 * The versions of one user part are ordered by sequence number; the answer
 * is the accepted version with the highest one.  Every memtable is asked
 * (a flush can carry an in-progress version over into a newer memtable
 * than a later version of the same key, so memtable order is not sequence
 * order).  SST files that may hold the key (key range: every file of level
 * 0, by binary search one or two of each deeper level) are asked in order
 * of their highest sequence, newest first, and the lookup stops at the
 * first file whose highest sequence is below the best version found so
 * far: no file from there on can hold a newer one.  A file's reader is
 * asked for (the reader callback), and its bloom filter read, only when
 * the file is reached, so a key whose newest version is in a memtable
 * costs one skiplist search per memtable and nothing else.  Within a file
 * a data block already decoded in a cache answers without an iterator or
 * a copy (fst_sst_peek); otherwise an iterator reads it.
 *
 * accept() may record things about the version it is called on (a dirty
 * snapshot's xmin, a writer's "in progress" flag).  When the winner is not
 * the version accept() was last called on, accept() is called once more
 * on the winner, so that what it recorded describes the winner.
 *
 * Errors (a failing read, a corrupt block, a malformed entry) are returned
 * as an FstCode with the message in *err; the lookup then has released
 * everything it held.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_LOOKUP_H
#define FST_LOOKUP_H

#include "manifest.h"
#include "memtable.h"
#include "sst.h"

/*
 * Whether a version is visible (FstMtVisibleFn's shape): mt, ref and hint
 * locate a memtable version (accept may set its hint bits); for an SST
 * version mt is NULL and ref and hint are 0.
 */
typedef bool (*FstLookupAcceptFn) (void *arg, FstMemtable *mt,
								   const FstEntryHeader *hdr, uint32 ref,
								   uint8 hint);

/*
 * The open reader of file f in *r (borrowed: it must stay open until the
 * lookup returns), or an error.  *r NULL with FST_OK skips the file.
 */
typedef FstCode (*FstLookupReaderFn) (void *arg, const FstFileMeta *f,
									  FstSstReader **r, FstError *err);

/* Memory for the copy of an SST winner's entry (want_entry); never NULL. */
typedef void *(*FstLookupAllocFn) (void *arg, size_t n);

/* What the filters did, added to over every lookup with the same FstLookup. */
typedef struct FstLookupStats
{
	uint64		bloom_checks;
	uint64		bloom_negatives;	/* files the filter ruled out */
	uint64		bloom_false_positives;	/* filter said maybe, key absent */
} FstLookupStats;

/* Where to look and how; set up once, used for any number of lookups. */
typedef struct FstLookup
{
	FstMemtable *const *memtables;	/* any order */
	int			nmemtables;
	const FstManifest *manifest;	/* NULL: no files */
	FstLookupReaderFn reader;
	void	   *reader_arg;
	FstLookupAcceptFn accept;	/* NULL accepts every version */
	void	   *accept_arg;

	/*
	 * want_entry: the winner's internal key and value (entry header +
	 * payload) in the hit, borrowed from the memtable, or for an SST version
	 * copied (key then value, one piece) into memory from alloc.
	 */
	bool		want_entry;
	FstLookupAllocFn alloc;
	void	   *alloc_arg;

	/*
	 * expect_found: the key most likely exists (a row found through an
	 * index entry).  The bloom filter of the last file to search is then
	 * not read: a key that exists is found there if not before, so that
	 * filter would only say "maybe" (RocksDB's optimize_filters_for_hits,
	 * per lookup).  A key that does not exist costs that file's search.
	 */
	bool		expect_found;

	FstLookupStats stats;
} FstLookup;

typedef struct FstLookupHit
{
	bool		found;			/* an accepted version exists */
	FstEntryHeader hdr;
	bool		in_sst;
	/* memtable version: memtables[memtable], entry ref, hint bits */
	int			memtable;
	uint32		ref;
	uint8		hint;			/* 0 for SST versions */
	/* SST version: the file, and block and entry (fst_sst_iter_position) */
	const FstFileMeta *file;
	uint32		block;
	uint32		entry;
	/* with want_entry */
	FstSlice	ikey;
	FstSlice	value;
} FstLookupHit;

/* Sets up lk with no sources, accepting every version. */
extern void fst_lookup_init(FstLookup *lk);

/*
 * Looks user_part (key group + user key) up; out->found false when no
 * version is accepted.  Tombstones are versions like any other: the caller
 * looks at out->hdr.flags.
 */
extern FstCode fst_lookup_get(FstLookup *lk, FstSlice user_part,
							  FstLookupHit *out, FstError *err);

/*
 * The files of m whose key range holds user_part, in the order a lookup asks
 * them (newest first by highest sequence), into files (room for
 * fst_manifest_total_files(m)); returns how many.
 */
extern int	fst_lookup_candidates(const FstManifest *m, FstSlice user_part,
								  const FstFileMeta **files);

#endif							/* FST_LOOKUP_H */
