/*-------------------------------------------------------------------------
 *
 * cursor.h
 *	  A cursor over the rows of one forst table visible to a snapshot,
 *	  in key order or backward, within an optional range of user parts.
 *
 * It merges the table's memtables (newest first) and its SST files (level
 * 0 newest first, then one level iterator per deeper level, which opens
 * one file of the level at a time: level_iter.h), walks each key's versions
 * newest first and stops at the first one the snapshot can see (backward:
 * oldest first, keeping the last one it can see), skipping the key when
 * that is a tombstone or an expired row (expiry/expiry.h).
 * Its iterators are malloc'ed by the engine; the cursor frees them when
 * closed or, after an error, when the memory context it was opened in is
 * reset.
 *
 * A cursor stays valid across writes of its own backend: when one of them
 * waited for memtable memory and a memtable of the cursor's view was
 * reused meanwhile (shmem/slab_pins.c), the cursor moves to a new view of the
 * table at the same position (the reused memtable's entries are in an SST
 * file by then).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_CURSOR_H
#define FORST_CURSOR_H

#include "am/keys/rel.h"
#include "am/read/mvcc.h"
#include "am/expiry/expiry.h"
#include "am/objects/store.h"
#include "lsm/iter.h"
#include "utils/memutils.h"

/* A level >= 1 of a cursor's merge: its files in the cursor's range. */
typedef struct ForstCursorLevel
{
	Relation	rel;
	const FstFileMeta **files;	/* sorted, disjoint */
	int			nfiles;
} ForstCursorLevel;

typedef struct ForstCursor
{
	Relation	rel;
	Snapshot	snapshot;
	ForstTableShared *ts;
	bool		point;			/* the range is one user part */
	bool		prefix;			/* the range is the user parts with the
								 * prefix range_lo under the filters' prefix
								 * rule (forst_cursor_open_prefix) */
	bool		point_done;		/* point: looked up since the last seek */
	StringInfoData range_lo;	/* the range it was opened for */
	StringInfoData range_hi;
	StringInfoData seek_lo;		/* where the last seek went */
	ForstTableView view;
	int			nchildren;
	const FstFileMeta **files;	/* child i >= view.nslabs: its level 0 file */
	int			nl0;			/* children that are level 0 files */
	ForstCursorLevel *levels;	/* child i >= view.nslabs + nl0: a level
								 * iterator over levels[i - nslabs - nl0] */
	FstIter    *merge;			/* NULL once closed */
	StringInfoData decided;		/* user part whose version was chosen */
	bool		have_decided;
	int			skipped;		/* older versions of decided stepped over */
	uint64		waits_seen;		/* forst_memory_waits when last checked */
	StringInfoData hi;			/* exclusive upper bound (len 0: none) */
	bool		valid;
	bool		pending_next;	/* advance past cur before reading on */
	ForstVersion cur;			/* the row the cursor is at */
	ForstExpiry expiry;			/* expired rows are skipped (expiry/expiry.h) */
	bool		backward;		/* reading backward (forst_cursor_seek_back,
								 * or forst_cursor_prev turned it around) */
	bool		exhausted;		/* the last read found no row */
	bool		with_tombstones;	/* forst_cursor_next returns a key whose
									 * chosen version is a tombstone too (set
									 * after opening; forward reads only) */
	StringInfoData back_key;	/* backward: the chosen version of the row */
	StringInfoData back_val;	/* being read, copied (see cursor.c) */
	MemoryContext mcxt;			/* holds the cursor; deleted by close */
	MemoryContextCallback cb;
} ForstCursor;

/*
 * Opens over the table's current memtables and those of its SST files that
 * may hold rows with user parts in [lo, hi) (hi of length 0: no bound; lo
 * of length 0: from the start), in a new memory context under
 * CurrentMemoryContext (ts may be NULL: a table that never wrote).  With
 * point, the range stands for exactly one user part, lo: the cursor is
 * then no merge but a point lookup (read/point.h) when it is read, over a
 * view of the table taken then.  The caller must seek
 * within [lo, hi): rows outside it may be missing.
 */
extern ForstCursor *forst_cursor_open(Relation rel, Snapshot snapshot,
									  ForstTableShared *ts, FstSlice lo,
									  FstSlice hi, bool point);

/*
 * The same for a range [prefix, hi) that holds exactly the user parts
 * whose prefix under the SST filters' prefix rule
 * (FORST_PREFIX_RULE_INDEX_COLUMNS, keys/index_entry.h) is prefix: the
 * entries of one value of every column of a secondary index.  The files
 * whose filters say the prefix is absent are left out, as a point cursor
 * leaves out the files without its key.
 */
extern ForstCursor *forst_cursor_open_prefix(Relation rel, Snapshot snapshot,
											 ForstTableShared *ts,
											 FstSlice prefix, FstSlice hi);

/* Positions before the first row with user part >= lo (empty: the start). */
extern void forst_cursor_seek(ForstCursor *c, FstSlice lo, FstSlice hi);

/*
 * Advances to the next visible row; false at the end of the range.  For a
 * row from an SST file, cur.entry points into the cursor's current block:
 * valid until the next call.
 */
extern bool forst_cursor_next(ForstCursor *c);

/*
 * Backward: positions after the last row with user part < hi (hi empty:
 * the end of the range); forst_cursor_prev then reads rows in descending
 * key order down to the first with user part >= lo (lo empty: the start).
 * Memory stays bounded: a row's versions are walked oldest first and the
 * newest the snapshot sees is kept (copied into the cursor); nothing is
 * collected across rows.  For a point cursor it is forst_cursor_seek.
 */
extern void forst_cursor_seek_back(ForstCursor *c, FstSlice lo, FstSlice hi);

/*
 * Moves to the previous visible row; false at the start of the range.
 * cur.entry points into the cursor: valid until the next call.
 *
 * A cursor turns around as a SCROLL cursor does: forst_cursor_prev after
 * forst_cursor_next returns the row before the one returned last, and the
 * other way round; after a read that found no row (or before any), it
 * starts again from that end of the range (the last row, or the first).
 */
extern bool forst_cursor_prev(ForstCursor *c);

/*
 * Makes sure the row the cursor is at (cur) is still where cur says: when
 * this backend waited for memtable memory since it was read and its
 * memtable was reused, reads it again from a new view (where it is in an
 * SST file).  For callers that hold the current row across writes of their
 * own (an index scan reads one row ahead).  Returns whether the cursor is
 * at a row.
 */
extern bool forst_cursor_revalidate(ForstCursor *c);

/*
 * The cursor is at a row the caller returns as a TID that the executor
 * fetches next: for a row in an SST file, its bytes are noted for that
 * fetch (forst_note_sst_version), which then reads no block.
 */
extern void forst_cursor_note_current(ForstCursor *c);

extern void forst_cursor_close(ForstCursor *c);

/*
 * For read/cursor.c alone (read/cursor_build.c builds cursors): replaces
 * the cursor's merge by an unpositioned one over a new view of the table.
 */
extern void forst_cursor_rebuild(ForstCursor *c);

#endif							/* FORST_CURSOR_H */
