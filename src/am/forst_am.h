/*-------------------------------------------------------------------------
 *
 * forst_am.h
 *	  Internal contract between the files of forst's table access method,
 *	  key index and utility hook.
 *
 * Keys.  A forst table is keyed by its PRIMARY KEY (a forst_key index), or,
 * without one, by a hidden 64-bit row id.  The internal key of a row is
 * [key group][encoded key][sequence] (ikey.h); its "user part" is
 * [key group][encoded key].
 *
 * TIDs.  A TID names one row version for the life of a transaction.  Here
 * it is (memtable slab, entry ref) packed into 40 bits (kind bit 0, slab
 * 10 bits, ref/8 29 bits): block number = bits 39..8, offset = bits 7..0
 * plus one, so offsets stay within 1..256.  Kind bit 1 is reserved for
 * versions in SST files.
 *
 * Row locks and write serialization.  Writers of one key serialize on a
 * heavyweight tuple lock whose TID is derived from the key's hash
 * (forst_lock_key); they hold it only while they check and write, and
 * wait for the transaction of an in-progress newer version through
 * XactLockTableWait, as heap does through xmax.  SELECT FOR ... row locks
 * are the same tuple lock held to the end of the transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_AM_H
#define FORST_AM_H

#include "access/tableam.h"
#include "lib/stringinfo.h"
#include "nodes/lockoptions.h"
#include "storage/itemptr.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "am/shmem/shmem.h"
#include "lsm/ikey.h"
#include "am/keys/keycodec.h"

#define FORST_MAX_KEY_GROUPS_DEFAULT 128

/* Backend-local facts about one forst relation, rebuilt on invalidation. */
typedef struct ForstRelInfo
{
	Oid			relid;
	RelFileNode rnode;
	bool		valid;
	Oid			pkindex;		/* InvalidOid: keyed by hidden row id */
	char	   *pkname;
	int			nkeys;
	AttrNumber	keyattrs[INDEX_MAX_KEYS];
	ForstKeyCodec *codec;		/* NULL for row-id tables */
	uint16		max_key_groups;
} ForstRelInfo;

/* keys/rel.c */
extern ForstRelInfo *forst_relinfo(Relation rel);
extern void forst_relinfo_init(void);
/* user part of a row (slot must have all attributes deformed) */
extern void forst_row_user_part(ForstRelInfo *info, TupleTableSlot *slot,
								ForstTableShared *ts, StringInfo out);
extern char *forst_user_part_to_text(ForstRelInfo *info, const char *up, int len);

/* Where a row version lives: a memtable entry or an SST entry. */
typedef struct ForstLoc
{
	bool		in_sst;
	int			slab;			/* memtable: slab and entry ref */
	uint32		ref;
	int			file_slot;		/* SST: per-transaction file slot, */
	uint32		block;			/* data block and entry in the block */
	uint32		entry;
} ForstLoc;

/*
 * keys/tid.c.  A TID addresses the first FORST_TID_SST_BLOCKS data blocks
 * of an SST file and the first FORST_TID_SST_ENTRIES entries of a block:
 * compaction cuts its outputs before the former (FORST_SST_MAX_BLOCKS
 * leaves room for the rest of the row at the cut), forst.block_size is
 * bounded so that a block holds fewer than the latter, and a flush writes
 * a memtable (at most 64 MB) into fewer blocks than that.
 */
#define FORST_TID_SST_BLOCKS	(1 << 14)
#define FORST_TID_SST_ENTRIES	(1 << 13)
#define FORST_SST_MAX_BLOCKS	(FORST_TID_SST_BLOCKS - 2048)
extern void forst_tid_set(ItemPointer tid, const ForstLoc *loc);
extern bool forst_tid_get(ItemPointer tid, ForstLoc *loc);

/* read/mvcc.c */
extern bool forst_version_visible(Snapshot snapshot, Relation rel,
								  const FstEntryHeader *hdr,
								  FstMemtable *mt, uint32 ref, uint8 hint);

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

/* keys/slot.c: minimal-tuple slots that also answer xmin, cmin, cmax */
extern TupleTableSlotOps forst_slot_ops;
extern void forst_slot_init(void);
extern void forst_slot_store(TupleTableSlot *slot, MinimalTuple mtup,
							 TransactionId xmin, CommandId cid);
/* Sets the system columns of the row a forst slot holds (after a write). */
extern void forst_slot_set_system(TupleTableSlot *slot, TransactionId xmin,
								  CommandId cid);

/* write/key_locks.c */
extern void forst_lock_key(Relation rel, FstSlice user_part, LOCKMODE mode);
extern void forst_unlock_key(Relation rel, FstSlice user_part, LOCKMODE mode);
extern bool forst_lock_key_try(Relation rel, FstSlice user_part, LOCKMODE mode);
extern LOCKMODE forst_tuple_lock_mode(LockTupleMode mode);

/*
 * Row locks held to the end of the transaction: noted when taken, and
 * released once the same subtransaction wrote a version of the key, which
 * then stands for the lock (write/key_locks.c).
 */
extern void forst_lock_key_keep(Relation rel, FstSlice user_part, LOCKMODE mode);
extern void forst_release_kept(Relation rel, FstSlice user_part);

/* ddl/pending.c */
extern void forst_pending_init(void);
extern void forst_drop_storage_at(const RelFileNode *rnode, bool at_commit);
extern void forst_drop_database_at_commit(Oid dbid);

/* write/dml.c */
extern void forst_insert_row(Relation rel, TupleTableSlot *slot, CommandId cid);
extern bool forst_insert_row_speculative(Relation rel, TupleTableSlot *slot,
										 CommandId cid);
extern TM_Result forst_delete_row(Relation rel, ItemPointer tid, CommandId cid,
								  Snapshot crosscheck, bool wait,
								  TM_FailureData *tmfd);
extern TM_Result forst_update_row(Relation rel, ItemPointer otid,
								  TupleTableSlot *slot, CommandId cid,
								  Snapshot crosscheck, bool wait,
								  TM_FailureData *tmfd, LockTupleMode *lockmode);
/* write/row_locks.c */
extern TM_Result forst_lock_row(Relation rel, ItemPointer tid, Snapshot snapshot,
								TupleTableSlot *slot, CommandId cid,
								LockTupleMode mode, LockWaitPolicy wait_policy,
								uint8 flags, TM_FailureData *tmfd);

/* tableam/tableam.c */
extern const TableAmRoutine *forst_table_am_routine(void);
extern bool forst_is_forst_relation(Relation rel);
extern bool forst_relation_has_rows(Relation rel);

/* ddl/utility.c */
extern void forst_utility_init(void);
/* Whether relid is a plain forst table (false if it does not exist). */
extern bool forst_relid_is_forst_table(Oid relid);

/*
 * ddl/publication.c: publications cannot carry forst tables' changes.
 * Refuses CREATE/ALTER PUBLICATION naming a forst table and warns about
 * ones that cover forst tables (FOR ALL TABLES, TABLES IN SCHEMA); warns
 * when a new forst table (relid) falls under such a publication.
 */
extern void forst_check_publication_stmt(Node *parsetree);
extern void forst_check_new_table_published(Oid relid);
extern void forst_check_attach_partition(AlterTableStmt *stmt);
/* ... and SET ACCESS METHOD forst of a table in a publication */
extern void forst_refuse_migrating_published(Relation rel);

#endif							/* FORST_AM_H */
