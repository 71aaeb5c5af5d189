/*-------------------------------------------------------------------------
 *
 * key_locks.c
 *	  Key locks: heavyweight tuple locks named by a key's hash.
 *
 * A forst row has no fixed place to record a locker, so the lock manager
 * keeps it: the lock tag is a tuple lock on the relation at a pseudo TID
 * made of the 48 low bits of a hash of the row's user part.  Two keys whose
 * hashes collide only wait for each other needlessly.  The tuple lock modes
 * follow heap's mapping (LockTupleKeyShare -> AccessShareLock, ...), so
 * FOR KEY SHARE and FOR NO KEY UPDATE do not conflict, as in heap.
 *
 * A row lock (forst_lock_row) is held until the end of the transaction,
 * in the lock manager's table, which holds a few thousand locks in all.
 * When the same subtransaction then writes a version of the key (the
 * UPDATE of INSERT ... ON CONFLICT DO UPDATE, an UPDATE or DELETE after
 * SELECT ... FOR UPDATE), that version -- in progress, so every other
 * writer and locker waits for its transaction -- takes the lock's place,
 * and the lock is released (forst_release_kept), as heap releases its
 * tuple lock once xmax is set.  Without that, one statement upserting
 * more keys than the lock table holds failed with "out of shared memory".
 * Locks kept by an outer (sub)transaction level stay.  Many FOR KEY SHARE
 * locks on one table are kept by bucket instead (forst_keep_key_share).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"

#include "access/xact.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "am/forst.h"
#include "am/write/dml.h"
#include "am/write/key_locks.h"

typedef struct KeptKey
{
	LOCKTAG		tag;
	LOCKMODE	mode;
} KeptKey;

typedef struct KeptLock
{
	KeptKey		key;
	SubTransactionId subxid;	/* of the latest acquisition */
	int			count;			/* acquisitions in that subtransaction */
} KeptLock;

static HTAB *kept = NULL;
static LocalTransactionId kept_lxid = InvalidLocalTransactionId;

/* FOR KEY SHARE locks kept per table in this transaction */
typedef struct ShareCount
{
	Oid			relid;
	int			nkept;
} ShareCount;

static HTAB *share_counts = NULL;
static LocalTransactionId share_lxid = InvalidLocalTransactionId;

#define FORST_SHARE_BUCKETS 128

static inline uint64
key_hash(FstSlice user_part)
{
	return hash_bytes_extended((const unsigned char *) user_part.data,
							   (int) user_part.len, 0x466f727374ULL);
}

static void
key_tag(Relation rel, FstSlice user_part, LOCKTAG *tag)
{
	uint64		h = key_hash(user_part);

	SET_LOCKTAG_TUPLE(*tag, MyDatabaseId, RelationGetRelid(rel),
					  (BlockNumber) (h >> 16), (OffsetNumber) (h & 0xFFFF));
}

/*
 * A bucket's lock: a tuple lock on the table's last block number, which
 * no key's tag has unless its hash says so (then it only waits needlessly,
 * as colliding keys do).
 */
static void
bucket_tag(Relation rel, FstSlice user_part, LOCKTAG *tag)
{
	uint64		h = key_hash(user_part);

	SET_LOCKTAG_TUPLE(*tag, MyDatabaseId, RelationGetRelid(rel),
					  InvalidBlockNumber,
					  (OffsetNumber) (1 + (h >> 57) % FORST_SHARE_BUCKETS));
}

void
forst_lock_key(Relation rel, FstSlice user_part, LOCKMODE mode)
{
	LOCKTAG		tag;

	key_tag(rel, user_part, &tag);
	(void) LockAcquire(&tag, mode, false, false);
}

bool
forst_lock_key_try(Relation rel, FstSlice user_part, LOCKMODE mode)
{
	LOCKTAG		tag;

	key_tag(rel, user_part, &tag);
	return LockAcquire(&tag, mode, false, true) != LOCKACQUIRE_NOT_AVAIL;
}

void
forst_unlock_key(Relation rel, FstSlice user_part, LOCKMODE mode)
{
	LOCKTAG		tag;

	key_tag(rel, user_part, &tag);
	LockRelease(&tag, mode, false);
}

LOCKMODE
forst_tuple_lock_mode(LockTupleMode mode)
{
	switch (mode)
	{
		case LockTupleKeyShare:
			return AccessShareLock;
		case LockTupleShare:
			return RowShareLock;
		case LockTupleNoKeyExclusive:
			return ExclusiveLock;
		case LockTupleExclusive:
			return AccessExclusiveLock;
	}
	return AccessExclusiveLock;
}

/*
 * *table as this transaction's (made empty at its first use in each
 * transaction), in TopMemoryContext.
 */
static HTAB *
xact_table(HTAB **table, LocalTransactionId *lxid, const char *name,
		   Size keysize, Size entrysize)
{
	if (*table == NULL || *lxid != MyProc->lxid)
	{
		HASHCTL		ctl;

		if (*table != NULL)
			hash_destroy(*table);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = keysize;
		ctl.entrysize = entrysize;
		ctl.hcxt = TopMemoryContext;
		*table = hash_create(name, 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		*lxid = MyProc->lxid;
	}
	return *table;
}

/* The kept-locks table of this transaction. */
static HTAB *
kept_table(void)
{
	return xact_table(&kept, &kept_lxid, "forst kept row locks",
					  sizeof(KeptKey), sizeof(KeptLock));
}

/* Takes lock tag for the (sub)transaction, not for the statement. */
static void
acquire_for_transaction(const LOCKTAG *tag, LOCKMODE mode)
{
	ResourceOwner save = CurrentResourceOwner;

	CurrentResourceOwner = CurTransactionResourceOwner;
	(void) LockAcquire(tag, mode, false, false);
	CurrentResourceOwner = save;
}

void
forst_lock_key_keep(Relation rel, FstSlice user_part, LOCKMODE mode)
{
	KeptKey		k;
	KeptLock   *e;
	bool		found;
	SubTransactionId sub = GetCurrentSubTransactionId();

	memset(&k, 0, sizeof(k));
	key_tag(rel, user_part, &k.tag);
	k.mode = mode;
	e = hash_search(kept_table(), &k, HASH_ENTER, &found);
	if (!found || e->subxid != sub)
	{
		e->subxid = sub;
		e->count = 0;
	}
	e->count++;

	/*
	 * Hand the lock from the statement's resource owner to the
	 * subtransaction's, so that a later statement can release it.
	 */
	if (CurrentResourceOwner != CurTransactionResourceOwner)
	{
		acquire_for_transaction(&k.tag, mode);
		LockRelease(&k.tag, mode, false);
	}
}

void
forst_release_kept(Relation rel, FstSlice user_part)
{
	static const LOCKMODE modes[] = {AccessShareLock, RowShareLock, ExclusiveLock,
	AccessExclusiveLock};
	SubTransactionId sub = GetCurrentSubTransactionId();
	int			i;

	if (kept == NULL || kept_lxid != MyProc->lxid || hash_get_num_entries(kept) == 0)
		return;
	for (i = 0; i < (int) lengthof(modes); i++)
	{
		KeptKey		k;
		KeptLock   *e;

		memset(&k, 0, sizeof(k));
		key_tag(rel, user_part, &k.tag);
		k.mode = modes[i];
		e = hash_search(kept, &k, HASH_FIND, NULL);
		if (e == NULL)
			continue;
		if (e->subxid == sub)
		{
			ResourceOwner save = CurrentResourceOwner;

			CurrentResourceOwner = CurTransactionResourceOwner;
			while (e->count-- > 0)
				LockRelease(&k.tag, k.mode, false);
			CurrentResourceOwner = save;
		}
		hash_search(kept, &k, HASH_REMOVE, NULL);
	}
}

void
forst_keep_key_share(Relation rel, ForstTableShared *ts, FstSlice user_part)
{
	Oid			relid = RelationGetRelid(rel);
	ShareCount *e;
	bool		found;
	LOCKTAG		tag;

	e = hash_search(xact_table(&share_counts, &share_lxid, "forst key share counts",
							   sizeof(Oid), sizeof(ShareCount)),
					&relid, HASH_ENTER, &found);
	if (!found)
		e->nkept = 0;
	if (e->nkept < forst_key_share_locks_per_table)
	{
		e->nkept++;
		forst_lock_key_keep(rel, user_part, AccessShareLock);
		return;
	}

	/*
	 * Writers that conflict look for bucket holders once the flag is set;
	 * it is set before the bucket is taken and the key's lock let go (a
	 * writer that takes the key's lock after that sees it).
	 */
	if (pg_atomic_read_u32(&ts->key_share_spread) == 0)
	{
		pg_atomic_write_u32(&ts->key_share_spread, 1);
		pg_memory_barrier();
	}
	bucket_tag(rel, user_part, &tag);
	acquire_for_transaction(&tag, AccessShareLock);
	forst_unlock_key(rel, user_part, AccessShareLock);
}

bool
forst_wait_key_sharers(Relation rel, ForstTableShared *ts, FstSlice user_part,
					   bool wait)
{
	LOCKTAG		tag;

	pg_memory_barrier();
	if (pg_atomic_read_u32(&ts->key_share_spread) == 0)
		return true;
	bucket_tag(rel, user_part, &tag);
	if (LockAcquire(&tag, AccessExclusiveLock, false, !wait) == LOCKACQUIRE_NOT_AVAIL)
		return false;
	LockRelease(&tag, AccessExclusiveLock, false);
	return true;
}
