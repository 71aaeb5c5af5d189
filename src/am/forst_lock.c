/*-------------------------------------------------------------------------
 *
 * forst_lock.c
 *	  Key locks: heavyweight tuple locks named by a key's hash.
 *
 * A forst row has no fixed place to record a locker, so the lock manager
 * keeps it: the lock tag is a tuple lock on the relation at a pseudo TID
 * made of the 48 low bits of a hash of the row's user part.  Two keys whose
 * hashes collide only wait for each other needlessly.  The tuple lock modes
 * follow heap's mapping (LockTupleKeyShare -> AccessShareLock, ...), so
 * FOR KEY SHARE and FOR NO KEY UPDATE do not conflict, as in heap.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"

#include "forst_am.h"

static void
key_tag(Relation rel, FstSlice user_part, LOCKTAG *tag)
{
	uint64		h = hash_bytes_extended((const unsigned char *) user_part.data,
										(int) user_part.len, 0x466f727374ULL);

	SET_LOCKTAG_TUPLE(*tag, MyDatabaseId, RelationGetRelid(rel),
					  (BlockNumber) (h >> 16), (OffsetNumber) (h & 0xFFFF));
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
