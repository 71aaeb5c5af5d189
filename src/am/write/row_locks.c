/*-------------------------------------------------------------------------
 *
 * row_locks.c
 *	  Row locks (SELECT ... FOR UPDATE / SHARE, and the executor's locks
 *	  for EvalPlanQual and ON CONFLICT DO UPDATE), with heap's semantics:
 *	  a lock is a key lock plus a wait on the writers of newer versions,
 *	  following the row's update chain (write/dml.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/keys/rel.h"
#include "am/keys/tid.h"
#include "am/read/mvcc.h"
#include "am/write/dml.h"
#include "am/write/key_locks.h"
#include "am/write/dml.h"
#include "am/objects/store.h"
#include "am/expiry/expiry.h"
#include "am/read/point.h"
#include "am/wal/wal.h"

/*
 * The newest version of a key that forst_lock_row found and locked with a
 * lock that no other transaction's writer can share (FOR NO KEY UPDATE or
 * FOR UPDATE), kept until the transaction ends: until this backend writes
 * a version of its own or leaves the subtransaction, no version of the key
 * can appear, so an UPDATE of the row it locked (ON CONFLICT DO UPDATE's
 * lock then update, or SELECT FOR UPDATE then UPDATE) need not look the
 * key up again (write/row_locks.c).
 */
static void forst_note_locked_newest(Relation rel, FstSlice user_part,
									 LOCKMODE mode, const ForstNewest *newest);

/*
 * FOR KEY SHARE and an update that keeps the key do not conflict (heap:
 * "even if there is an update, we can still continue if the key hasn't
 * been modified"), so a KEY SHARE locker need not wait for such an
 * updater; it locks the version it has, v.  True if every version of the
 * key newer than v is a row (no tombstone: no DELETE, no key-changing
 * UPDATE) of a transaction still in progress or aborted.
 */
static bool
key_kept_since(ForstTableShared *ts, FstSlice user_part, const ForstVersion *v)
{
	ForstKeyVersion *kv;
	int			n = forst_newer_versions(ts, user_part, v->entry.hdr.seq, &kv);
	bool		kept = true;
	int			i;

	for (i = 0; i < n && kept; i++)
	{
		const FstEntryHeader *hdr = &kv[i].hdr;

		if (kv[i].hint & FST_MT_HINT_ABORTED)
			continue;
		if ((hdr->flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)) ||
			(kv[i].hint & FST_MT_HINT_COMMITTED) ||
			TransactionIdIsCurrentTransactionId(hdr->xid))
			kept = false;		/* not a concurrent writer's version */
		else if (TransactionIdIsInProgress(hdr->xid))
		{
			if (hdr->flags & FST_ENTRY_TOMBSTONE)
				kept = false;	/* deleted or moved to another key */
		}
		else if (TransactionIdDidCommit(hdr->xid))
			kept = false;
		/* else aborted: look at the next older version */
	}
	pfree(kv);
	return kept;
}

/* The error of NOWAIT when a row lock is not available at once. */
static void
report_lock_not_available(Relation rel)
{
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("could not obtain lock on row in relation \"%s\"",
					RelationGetRelationName(rel))));
}

/*
 * Locks a key that a moved row's chain leads to, waiting as wait_policy
 * says for a writer of it still in progress; false for SKIP LOCKED when it
 * would wait.  On true, *newest is the key's settled newest version.
 */
static bool
lock_key_for_row(Relation rel, ForstTableShared *ts, FstSlice s,
				 LOCKMODE lmode, LockWaitPolicy wait_policy,
				 ForstNewest *newest)
{
	for (;;)
	{
		if (wait_policy == LockWaitBlock)
			forst_lock_key(rel, s, lmode);
		else if (!forst_lock_key_try(rel, s, lmode))
		{
			if (wait_policy == LockWaitSkip)
				return false;
			report_lock_not_available(rel);
		}
		forst_find_newest(ts, s, newest);
		if (!newest->found || !newest->in_progress)
			return true;
		forst_unlock_key(rel, s, lmode);
		if (wait_policy == LockWaitSkip)
			return false;
		if (wait_policy == LockWaitError)
			report_lock_not_available(rel);
		XactLockTableWait(newest->hdr.xid, rel, NULL, XLTW_Lock);
	}
}

/*
 * Follows a row that a key-changing UPDATE moved (the tombstone "moved")
 * to its newest version, possibly across several moves, and locks it
 * there (heap follows the update chain to another page the same way).
 * The keys passed on the way stay locked, like the first one.
 */
static TM_Result
follow_moved_row(Relation rel, ForstTableShared *ts, ForstKeyVersion moved,
				 LOCKMODE lmode, LockWaitPolicy wait_policy, ItemPointer tid,
				 TupleTableSlot *slot, TM_FailureData *tmfd)
{
	int			hops;

	for (hops = 0; hops < 1000; hops++)
	{
		FstSlice	s = fst_slice(moved.moved_to, moved.moved_len);
		ForstNewest newest;
		ForstKeyVersion next;
		ForstVersion v;

		CHECK_FOR_INTERRUPTS();
		if (!lock_key_for_row(rel, ts, s, lmode, wait_policy, &newest))
			return TM_WouldBlock;
		switch (newest.found ? forst_chain_after(ts, s, moved.hdr.seq, &next) :
				FORST_CHAIN_DELETED)
		{
			case FORST_CHAIN_DELETED:
				tmfd->xmax = newest.found ? newest.hdr.xid : InvalidTransactionId;
				tmfd->cmax = InvalidCommandId;
				return TM_Deleted;
			case FORST_CHAIN_MOVED:
				moved = next;
				continue;
			case FORST_CHAIN_HERE:
				if (lmode == AccessExclusiveLock &&
					!forst_wait_key_sharers(rel, ts, s, wait_policy == LockWaitBlock))
				{
					if (wait_policy == LockWaitSkip)
						return TM_WouldBlock;
					report_lock_not_available(rel);
				}
				tmfd->traversed = true;
				forst_tid_set(tid, &newest.loc);
				forst_fetch_or_error(rel, tid, &v);
				forst_store_version(slot, &v, RelationGetRelid(rel));
				forst_version_free(&v);
				return TM_Ok;
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("forst: a row of \"%s\" was moved to another key too many times",
					RelationGetRelationName(rel))));
	return TM_Deleted;			/* keep compiler quiet */
}

/* forst_note_locked_newest's one entry (write/dml.h) */
static struct
{
	bool		valid;
	Oid			relid;
	LocalTransactionId lxid;
	SubTransactionId subxid;
	uint64		writes;			/* forst_local_writes when noted */
	int			len;
	char		user_part[128];
	ForstNewest newest;
}			locked;

static void
forst_note_locked_newest(Relation rel, FstSlice user_part, LOCKMODE mode,
						 const ForstNewest *newest)
{
	locked.valid = false;
	if (mode < ExclusiveLock || user_part.len > sizeof(locked.user_part) ||
		!newest->found || newest->in_progress || MyProc == NULL)
		return;
	locked.relid = RelationGetRelid(rel);
	locked.lxid = MyProc->lxid;
	locked.subxid = GetCurrentSubTransactionId();
	locked.writes = forst_local_writes;
	locked.len = (int) user_part.len;
	memcpy(locked.user_part, user_part.data, user_part.len);
	locked.newest = *newest;
	locked.valid = true;
}

bool
forst_locked_newest(Relation rel, FstSlice user_part, ForstNewest *out)
{
	if (!locked.valid || MyProc == NULL ||
		locked.relid != RelationGetRelid(rel) || locked.lxid != MyProc->lxid ||
		locked.subxid != GetCurrentSubTransactionId() ||
		locked.writes != forst_local_writes ||
		locked.len != (int) user_part.len ||
		memcmp(locked.user_part, user_part.data, user_part.len) != 0)
		return false;
	*out = locked.newest;
	return true;
}

TM_Result
forst_lock_row(Relation rel, ItemPointer tid, Snapshot snapshot,
			   TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
			   LockWaitPolicy wait_policy, uint8 flags, TM_FailureData *tmfd)
{
	ForstTableShared *ts = forst_table_shared(&rel->rd_node, true);
	LOCKMODE	lmode = forst_tuple_lock_mode(mode);
	ForstVersion v;
	ForstNewest newest;
	StringInfoData up;
	FstSlice	s;

	forst_fetch_or_error(rel, tid, &v);
	forst_version_user_part(&v, &up);
	s = fst_slice(up.data, up.len);
	tmfd->traversed = false;
	tmfd->ctid = *tid;

	for (;;)
	{
		if (wait_policy == LockWaitBlock)
			forst_lock_key(rel, s, lmode);
		else if (!forst_lock_key_try(rel, s, lmode))
		{
			if (wait_policy == LockWaitSkip)
			{
				forst_version_free(&v);
				pfree(up.data);
				return TM_WouldBlock;
			}
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not obtain lock on row in relation \"%s\"",
							RelationGetRelationName(rel))));
		}
		forst_find_newest(ts, s, &newest);
		if (!newest.found || !newest.in_progress)
			break;
		if (mode == LockTupleKeyShare && key_kept_since(ts, s, &v))
		{
			/* the key lock stays held until the end of the transaction */
			forst_keep_key_share(rel, ts, s);
			forst_store_version(slot, &v, RelationGetRelid(rel));
			forst_version_free(&v);
			pfree(up.data);
			return TM_Ok;
		}
		forst_unlock_key(rel, s, lmode);
		if (wait_policy == LockWaitSkip)
		{
			forst_version_free(&v);
			pfree(up.data);
			return TM_WouldBlock;
		}
		if (wait_policy == LockWaitError)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not obtain lock on row in relation \"%s\"",
							RelationGetRelationName(rel))));
		XactLockTableWait(newest.hdr.xid, rel, NULL, XLTW_Lock);
	}

	if (!newest.found ||
		((newest.hdr.flags & FST_ENTRY_TOMBSTONE) &&
		 (newest.mine || !(newest.hdr.flags & FST_ENTRY_MOVED))))
	{
		forst_unlock_key(rel, s, lmode);
		tmfd->xmax = newest.found ? newest.hdr.xid : InvalidTransactionId;
		tmfd->cmax = InvalidCommandId;
		forst_version_free(&v);
		pfree(up.data);
		return TM_Deleted;
	}
	if (newest.hdr.seq != v.entry.hdr.seq && !newest.mine)
	{
		ForstKeyVersion moved;
		ForstChain	chain = forst_chain_after(ts, s, v.entry.hdr.seq, &moved);

		if (chain == FORST_CHAIN_DELETED)
		{
			/* deleted and inserted again: a new row, not v's newest version */
			forst_unlock_key(rel, s, lmode);
			tmfd->xmax = newest.hdr.xid;
			tmfd->cmax = InvalidCommandId;
			forst_version_free(&v);
			pfree(up.data);
			return TM_Deleted;
		}
		if (!(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
		{
			forst_unlock_key(rel, s, lmode);
			forst_tid_set(&tmfd->ctid, &newest.loc);
			tmfd->xmax = newest.hdr.xid;
			tmfd->cmax = InvalidCommandId;
			forst_version_free(&v);
			pfree(up.data);
			return TM_Updated;
		}
		if (chain == FORST_CHAIN_MOVED)
		{
			/* the row moved to another key: lock it there */
			forst_version_free(&v);
			pfree(up.data);
			return follow_moved_row(rel, ts, moved, lmode, wait_policy, tid,
									slot, tmfd);
		}
	}
	if (newest.hdr.seq != v.entry.hdr.seq)
	{
		/* follow the row to its newest version */
		tmfd->traversed = !newest.mine;
		forst_tid_set(tid, &newest.loc);
		forst_version_free(&v);
		forst_fetch_or_error(rel, tid, &v);
	}
	/* FOR UPDATE waits for FOR KEY SHARE lockers holding the key's bucket */
	if (lmode == AccessExclusiveLock &&
		!forst_wait_key_sharers(rel, ts, s, wait_policy == LockWaitBlock))
	{
		forst_unlock_key(rel, s, lmode);
		forst_version_free(&v);
		pfree(up.data);
		if (wait_policy == LockWaitSkip)
			return TM_WouldBlock;
		report_lock_not_available(rel);
	}
	/* the key lock stays held until the end of the transaction */
	if (lmode == AccessShareLock)
		forst_keep_key_share(rel, ts, s);
	else
		forst_lock_key_keep(rel, s, lmode);
	forst_note_locked_newest(rel, s, lmode, &newest);
	forst_store_version(slot, &v, RelationGetRelid(rel));
	forst_version_free(&v);
	pfree(up.data);
	return TM_Ok;
}
