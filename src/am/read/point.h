/*-------------------------------------------------------------------------
 *
 * point.h
 *	  Point lookups: the newest version of one user part that a predicate
 *	  accepts, across a table view's memtables and SST files, without a
 *	  merging cursor.
 *
 * The versions of one user part are ordered by sequence number; the answer
 * is the accepted version with the highest one.  Every memtable of the
 * view is asked (a flush can carry an in-progress version over into a
 * newer memtable than a later version of the same key, so memtable order
 * is not sequence order).  SST files that may hold the key (key range,
 * then bloom filter) are asked in order of their highest sequence, newest
 * first, and the lookup stops at the first file whose highest sequence is
 * below the best version found so far: no file from there on can hold a
 * newer one.  A file is opened, and its filter read, only when reached, so
 * a key whose newest version is in a memtable costs one skiplist search
 * per memtable and nothing else.
 *
 * accept() may record things about the version it is called on (a dirty
 * snapshot's xmin, a writer's "in progress" flag).  When the winner is not
 * the version accept() was last called on, accept() is called once more on
 * the winner, so that what it recorded describes the winner.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_POINT_H
#define FORST_POINT_H

#include "am/keys/tid.h"
#include "am/read/mvcc.h"
#include "am/objects/store.h"
#include "lsm/lookup.h"

/* Like FstMtVisibleFn; mt is NULL (and ref, hint 0) for an SST version. */
typedef bool (*ForstPointAcceptFn) (void *arg, FstMemtable *mt,
									const FstEntryHeader *hdr, uint32 ref,
									uint8 hint);

typedef struct ForstPointHit
{
	bool		found;			/* an accepted version exists */
	FstEntryHeader hdr;
	ForstLoc	loc;			/* where it is (a TID's contents) */
	uint8		hint;			/* memtable hint bits; 0 for SST files */

	/*
	 * With want_entry: the internal key and the value (entry header +
	 * payload); borrowed from the memtable, or palloc'd for an SST version.
	 */
	FstSlice	ikey;
	FstSlice	value;
} ForstPointHit;

/*
 * Looks user_part (key group + user key) up in view.  Errors (a corrupt
 * file, an unreachable object store) are reported with ereport.
 */
/*
 * An FstLookupReaderFn over a ForstTableView (arg): the view's reader of a
 * file, opened and cached by read/sst_readers.c.
 */
extern FstCode forst_view_reader(void *arg, const FstFileMeta *f,
								 FstSstReader **r, FstError *err);

extern void forst_point_get(const ForstTableView *view, FstSlice user_part,
							ForstPointAcceptFn accept, void *arg,
							bool want_entry, ForstPointHit *out);

/*
 * The same for a key that most likely exists (a row's key read from one of
 * its index entries): the last file's bloom filter is not read
 * (FstLookup.expect_found).
 */
extern void forst_point_get_expected(const ForstTableView *view,
									 FstSlice user_part,
									 ForstPointAcceptFn accept, void *arg,
									 bool want_entry, ForstPointHit *out);

#endif							/* FORST_POINT_H */
