/*-------------------------------------------------------------------------
 *
 * dml.h
 *	  What write/dml.c (inserts, deletes, updates) shares with
 *	  write/row_locks.c (row locks): following a row's update chain and
 *	  fetching the version a TID names.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_DML_H
#define FORST_DML_H

#include "access/tableam.h"
#include "nodes/lockoptions.h"

#include "am/keys/rel.h"
#include "am/read/mvcc.h"
#include "am/objects/store.h"

/*
 * What became of the row at a version of user_part with sequence seq (heap:
 * where its update chain leads).  A DELETE writes a tombstone, and a later
 * INSERT of the same key a new row on top of it; that new row is not an
 * update of the old one (not on its update chain), so a writer or locker
 * that read the old row must see it deleted.  A key-changing UPDATE writes
 * a tombstone marked FST_ENTRY_MOVED whose payload is the new key: the
 * chain continues there.  The first tombstone of a transaction that did
 * not abort, among the versions newer than seq, decides; without one, the
 * newest version is the row's (FORST_CHAIN_HERE).
 */
typedef enum ForstChain
{
	FORST_CHAIN_HERE,
	FORST_CHAIN_DELETED,
	FORST_CHAIN_MOVED
} ForstChain;

/*
 * How the row of the version at seq goes on (above), and with
 * FORST_CHAIN_MOVED the tombstone that moved it in *moved (if not NULL).
 */
extern ForstChain forst_chain_after(ForstTableShared *ts, FstSlice user_part,
									uint64 seq, ForstKeyVersion *moved);

/* A copy of v's user part (key group + key) in up (palloc'd). */
extern void forst_version_user_part(const ForstVersion *v, StringInfo up);

/* forst_fetch_version, with an internal error if tid names no version. */
extern void forst_fetch_or_error(Relation rel, ItemPointer tid, ForstVersion *v);

/*
 * Appends a version of user_part (key group + key) to the table, whose
 * value after the entry header is payload: WAL-logged unless the table is
 * unlogged, then into a memtable; where it went in *loc.  The caller holds
 * the key's lock.
 */
extern void forst_put_entry(ForstTableShared *ts, StringInfo user_part,
							uint8 flags, CommandId cid, const char *payload,
							Size payload_len, ForstLoc *loc);

/*
 * The shared state of rel about to be written (an unlogged table's first
 * write after a clean start takes away the clean-shutdown mark).
 */
extern ForstTableShared *forst_table_for_write(Relation rel);

/* Versions this backend has written (forst_put_entry counts them). */
extern uint64 forst_local_writes;

extern bool forst_locked_newest(Relation rel, FstSlice user_part,
								ForstNewest *out);

/* write/dml.c */
extern void forst_insert_row(Relation rel, TupleTableSlot *slot, CommandId cid);
/*
 * An INSERT ... ON CONFLICT's row: written if its key and the values of its
 * unique secondary indexes are free (returns InvalidOid), else nothing is
 * written and the slot's TID names the row that holds what is taken, in
 * the index returned (the primary key's or a unique secondary's).
 */
extern Oid	forst_insert_row_speculative(Relation rel, TupleTableSlot *slot,
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

#endif							/* FORST_DML_H */
