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
#include "am/shmem/shmem.h"

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

/*
 * FOR KEY SHARE locks beyond forst.key_share_locks_per_table in one
 * transaction on one table (a bulk insert into a table whose foreign key
 * references it) are held by bucket: the key is one of 128 buckets of the
 * table's keys, the bucket's lock is held to the end of the transaction
 * instead of the key's, and whoever deletes a key, changes it or locks it
 * FOR UPDATE waits for the holders of its bucket (forst_wait_key_sharers)
 * once any transaction held a bucket of the table (always where prepared
 * transactions are possible: they keep their buckets across a restart,
 * which forgets that flag).  So a transaction holds
 * at most that many key locks plus 128 buckets per table, and a writer may
 * wait for a transaction that locked another key of the same bucket (as a
 * key whose hash collides).
 *
 * forst_keep_key_share: the caller holds key user_part's lock in
 * AccessShareLock (FOR KEY SHARE); it is kept, or replaced by its bucket's.
 * forst_wait_key_sharers: the caller holds the key's lock in
 * AccessExclusiveLock; waits (with wait) for the bucket's holders, or
 * returns false if it would have to.
 */
extern void forst_keep_key_share(Relation rel, ForstTableShared *ts,
								 FstSlice user_part);
extern bool forst_wait_key_sharers(Relation rel, ForstTableShared *ts,
								   FstSlice user_part, bool wait);

#endif							/* FORST_WRITE_KEY_LOCKS_H */
