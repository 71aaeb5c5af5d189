/*-------------------------------------------------------------------------
 *
 * key_locks.h
 *	  Key locks and row locks (write/key_locks.c).
 *
 * Writers of one key serialize on a heavyweight tuple lock whose TID is
 * derived from the key's hash (forst_lock_key); they hold it only while
 * they check and write, and wait for the transaction of an in-progress
 * newer version through XactLockTableWait, as heap does through xmax.
 * SELECT FOR ... row locks are the same tuple lock held to the end of the
 * transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_WRITE_KEY_LOCKS_H
#define FORST_WRITE_KEY_LOCKS_H

#include "nodes/lockoptions.h"
#include "storage/lockdefs.h"
#include "utils/rel.h"
#include "lsm/fst_common.h"

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

#endif							/* FORST_WRITE_KEY_LOCKS_H */
