/*-------------------------------------------------------------------------
 *
 * mvcc.h
 *	  Visibility of row versions to snapshots, the newest version of a key
 *	  for writers, and fetching versions by TID (read/mvcc.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_READ_MVCC_H
#define FORST_READ_MVCC_H

#include "access/transam.h"
#include "executor/tuptable.h"
#include "utils/rel.h"
#include "utils/snapshot.h"
#include "lsm/ikey.h"
#include "am/keys/tid.h"
#include "am/shmem/shmem.h"

/* read/mvcc.c */
extern bool forst_version_visible(Snapshot snapshot, Relation rel,
								  const FstEntryHeader *hdr,
								  FstMemtable *mt, uint32 ref, uint8 hint);

/* forst_version_visible as a lookup's visibility callback, arg a ForstVisArg */
typedef struct ForstVisArg
{
	Snapshot	snapshot;
	Relation	rel;
} ForstVisArg;

extern bool forst_version_visible_cb(void *arg, FstMemtable *mt,
									 const FstEntryHeader *hdr, uint32 ref,
									 uint8 hint);

/* Newest non-aborted version of a key, for writers. */
typedef struct ForstNewest
{
	bool		found;			/* any non-aborted version */
	FstEntryHeader hdr;
	ForstLoc	loc;
	bool		mine;			/* written by my (sub)transaction */
	bool		in_progress;	/* by another transaction still running */
} ForstNewest;

extern void forst_find_newest(ForstTableShared *ts, FstSlice user_part,
							  ForstNewest *out);

/* A version of a key as writers' conflict checks see it. */
typedef struct ForstKeyVersion
{
	FstEntryHeader hdr;
	uint8		hint;			/* memtable hint bits (0 from SST files) */
	char	   *moved_to;		/* FST_ENTRY_MOVED: the new user part
								 * (palloc'd), else NULL */
	int			moved_len;
} ForstKeyVersion;

/*
 * The versions of user_part newer than above_seq, newest first, from the
 * table's memtables and SST files (palloc'd array; returns the count).
 */
extern int	forst_newer_versions(ForstTableShared *ts, FstSlice user_part,
								 uint64 above_seq, ForstKeyVersion **out);

/* A row version fetched by TID. */
typedef struct ForstVersion
{
	ForstLoc	loc;
	FstEntry	entry;			/* in shared memory, or in owned */
	uint8		hint;
	char	   *owned;			/* an SST version's palloc'd copy, or NULL */
} ForstVersion;

/*
 * Frees what forst_fetch_version allocated (an SST version's copy).  Call
 * it once v is no longer needed: the executor fetches rows in the
 * statement's memory context, once per row of an UPDATE or an upsert.
 */
static inline void
forst_version_free(ForstVersion *v)
{
	if (v->owned)
		pfree(v->owned);
	v->owned = NULL;
}

extern bool forst_fetch_version(Relation rel, ItemPointer tid, ForstVersion *v);

/*
 * Tells forst_fetch_version that an SST version of rel at loc, with these
 * bytes, was just read (a point lookup that the executor's fetch by TID
 * follows): fetches of that TID in this transaction copy them instead of
 * finding the block and the entry again, until another version is noted.
 * Rows over a few kilobytes are not kept.
 */
extern void forst_note_sst_version(Relation rel, const ForstLoc *loc,
								   FstSlice ikey, FstSlice value);
extern bool forst_version_visible_v(Snapshot snapshot, Relation rel,
									const ForstVersion *v);
extern void forst_store_version(TupleTableSlot *slot, const ForstVersion *v,
								Oid relid);

/*
 * Did xid commit (clog)?  Callers that take "not committed and not in
 * progress" for an abort must ask TransactionIdIsInProgress first, or ask
 * this again afterwards: clog is written before a committing transaction
 * leaves the proc array, so asking clog first and the proc array second
 * can see neither a commit nor a running transaction, for a commit.
 */
static inline bool
forst_xid_committed(TransactionId xid)
{
	return TransactionIdDidCommit(xid);
}

#endif							/* FORST_READ_MVCC_H */
