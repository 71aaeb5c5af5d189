/*-------------------------------------------------------------------------
 *
 * index_entries.h
 *	  Keeping a forst table's secondary index entries (keys/index_entry.h)
 *	  in step with its rows.
 *
 * The write path (write/dml.c) calls forst_index_entries_write for every
 * row it writes, under the row's key lock, in the same transaction and
 * command: an insert puts the new row's entries, a delete writes a
 * tombstone over the old row's, an update does both for the indexes whose
 * entry changed (a column of it, or the row's key), puts the entry again
 * if only the row's TTL value changed, and does nothing for the others.
 * An entry carries the row's TTL value (forst_index_entry_payload), so
 * that it expires with the row.  The entries' visibility is then the rows' (same xid and command
 * id), they go through the same WAL records and replay, and a rolled-back
 * row takes its entries with it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_INDEX_ENTRIES_H
#define FORST_INDEX_ENTRIES_H

#include "access/htup.h"
#include "lib/stringinfo.h"
#include "utils/rel.h"

#include "am/expiry/expiry.h"
#include "am/keys/rel.h"
#include "am/keys/tid.h"
#include "am/shmem/shmem.h"

/* A row's columns, deformed, as index entries need them. */
typedef struct ForstIndexRow
{
	Datum	   *values;			/* by attnum - 1 */
	bool	   *isnull;
	char	   *copy;			/* the aligned copy values point into */
} ForstIndexRow;

/* Deforms a stored row (a minimal tuple's bytes) into *out (palloc'd). */
extern void forst_index_row(Relation rel, const char *data, Size len,
							ForstIndexRow *out);
extern void forst_index_row_free(ForstIndexRow *r);

/*
 * An entry's payload: a minimal tuple of the row's columns with all but the
 * table's TTL column (expiry/expiry.h) NULL, so that the entry expires with
 * its row (compaction drops it, reads skip it); NULL (no payload) if the
 * table has no TTL column or the row's is NULL.  palloc'd.
 */
extern MinimalTuple forst_index_entry_payload(Relation rel, const ForstExpiry *x,
											  Datum *values, bool *isnull);

/*
 * Writes the entry changes of one row write: old (NULL for an insert) at
 * old_up, new (NULL for a delete) at new_up.
 */
extern void forst_index_entries_write(Relation rel, ForstTableShared *ts,
									  ForstRelInfo *info, CommandId cid,
									  ForstIndexRow *old, StringInfo old_up,
									  ForstIndexRow *new, StringInfo new_up);

/*
 * UNIQUE secondary indexes.  A writer checks them before it writes the row
 * (forst_index_unique_lock), for each unique index whose entry the write
 * adds (an insert, or an update that changes the entry; a NULL column
 * makes no conflict unless NULLS NOT DISTINCT), and holds what it checked
 * locked until the entries are written (forst_index_unique_release):
 *
 *	- the entry's columns, [FST_KG_INDEX][index OID][columns], are locked as
 *	  a key (write/key_locks.h): writers of one value serialize;
 *	- the entries with those columns are read, each at its newest version
 *	  that did not abort (a dirty snapshot), tombstones included.  One
 *	  written by a transaction still running, put or tombstone, is waited
 *	  for (the locks given up, XactLockTableWait, and the check starts
 *	  over), as btree waits for the inserter or deleter of a conflicting
 *	  heap tuple.  A committed (or our own) put whose row still has these
 *	  columns, is live and not expired, is a conflict; entries of the row
 *	  being written (its old and new key) are not.
 *
 * With raise, a conflict is a unique violation (23505) naming the index;
 * otherwise (a speculative insertion, write/onconflict.c) the locks are
 * given up and *conflict says which index, and the row that has the
 * value.  The caller holds the row's key lock throughout, zeroes *locks
 * before and calls forst_index_unique_release after (also when this
 * returned false or was not called).
 */
typedef struct ForstUniqueLocks
{
	int			n;
	StringInfoData *prefix;		/* n locked column prefixes (palloc'd, one
								 * slot per secondary index; NULL: none) */
	int			cap;			/* slots in prefix */
} ForstUniqueLocks;

typedef struct ForstUniqueConflict
{
	Oid			indexoid;
	ForstLoc	loc;			/* the row that has the value */
} ForstUniqueConflict;

/* Whether rel has a UNIQUE secondary index. */
extern bool forst_has_unique_secondary(ForstRelInfo *info);

extern bool forst_index_unique_lock(Relation rel, ForstTableShared *ts,
									ForstRelInfo *info,
									ForstIndexRow *old, StringInfo old_up,
									ForstIndexRow *new, StringInfo new_up,
									bool raise, ForstUniqueLocks *locks,
									ForstUniqueConflict *conflict);
extern void forst_index_unique_release(Relation rel, ForstUniqueLocks *locks);

/*
 * Raises a unique violation of index on heap (23505), as btree words it;
 * values and isnull in the index's column order, shown only to roles that
 * may read the columns.
 */
extern void forst_report_unique_violation(Relation heap, Relation index,
										  Datum *values, bool *isnull)
			pg_attribute_noreturn();

/*
 * Whether the row at user part row is live (its newest version that did
 * not abort is a row, not expired under x) and its columns for s encode to
 * cols; its location in *loc and, if r is not NULL, its columns in *r.
 */
extern bool forst_index_row_has(Relation rel, ForstTableShared *ts,
								const ForstSecondary *s,
								const ForstExpiry *x, FstSlice row,
								FstSlice cols, ForstLoc *loc,
								ForstIndexRow *r);

/*
 * Index indexoid of heap is being dropped: a tombstone over each of its
 * entries, in this transaction, so that compaction reclaims them (and a
 * rollback of the drop keeps them).  The caller holds a lock that keeps
 * writers of heap out.
 */
extern void forst_index_entries_drop(Relation heap, uint32 entry_id);

#endif							/* FORST_INDEX_ENTRIES_H */
