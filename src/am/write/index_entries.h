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
 * entry changed (a column of it, or the row's key) and nothing for the
 * others.  The entries' visibility is then the rows' (same xid and command
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

#include "am/keys/rel.h"
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
 * Writes the entry changes of one row write: old (NULL for an insert) at
 * old_up, new (NULL for a delete) at new_up.
 */
extern void forst_index_entries_write(Relation rel, ForstTableShared *ts,
									  ForstRelInfo *info, CommandId cid,
									  ForstIndexRow *old, StringInfo old_up,
									  ForstIndexRow *new, StringInfo new_up);

/*
 * Index indexoid of heap is being dropped: a tombstone over each of its
 * entries, in this transaction, so that compaction reclaims them (and a
 * rollback of the drop keeps them).  The caller holds a lock that keeps
 * writers of heap out.
 */
extern void forst_index_entries_drop(Relation heap, Oid indexoid);

#endif							/* FORST_INDEX_ENTRIES_H */
