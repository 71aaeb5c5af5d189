/*-------------------------------------------------------------------------
 *
 * dml.c
 *	  Writing row versions: insert, delete and update, with heap's
 *	  concurrency semantics (see write/key_locks.h for key locks; row locks are
 *	  in write/row_locks.c).
 *
 * Every write takes the key lock, looks at the key's newest non-aborted
 * version, and then either waits for that version's transaction, reports
 * a conflict the way heap does (TM_Updated, TM_Deleted, TM_SelfModified,
 * a unique violation), or appends a new version: a row, or a tombstone.
 * The key lock is released as soon as the version is in the memtable; the
 * new version's in-progress xid is what later writers wait on.
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
#include "storage/proc.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/keys/rel.h"
#include "am/keys/slot.h"
#include "am/keys/tid.h"
#include "am/read/mvcc.h"
#include "am/write/dml.h"
#include "am/write/key_locks.h"
#include "am/write/index_entries.h"
#include "am/objects/store.h"
#include "am/expiry/expiry.h"
#include "am/read/point.h"
#include "am/wal/unlogged.h"
#include "am/wal/wal.h"

/* The row of a slot as a minimal tuple without external TOAST pointers. */
static MinimalTuple
slot_to_row(Relation rel, TupleTableSlot *slot)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values;
	bool	   *isnull;
	MinimalTuple mtup;
	int			i;

	slot_getallattrs(slot);
	values = palloc(sizeof(Datum) * desc->natts);
	isnull = palloc(sizeof(bool) * desc->natts);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		values[i] = slot->tts_values[i];
		isnull[i] = slot->tts_isnull[i];
		if (!isnull[i] && att->attlen == -1 &&
			VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
			values[i] = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(values[i])));
	}
	mtup = heap_form_minimal_tuple(desc, values, isnull);
	if (mtup->t_len > (uint32) forst_max_row_size_kb * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row of %u bytes is too large for forst table \"%s\"",
						mtup->t_len, RelationGetRelationName(rel)),
				 errdetail("forst stores rows whole; the limit is forst.max_row_size (%d kB).",
						   forst_max_row_size_kb)));
	pfree(values);
	pfree(isnull);
	return mtup;
}

/*
 * Appends a version of user_part, whose value after the entry header is
 * payload (a row, nothing for a tombstone, the new key for a moved row's
 * tombstone); returns where it went.
 */
void
forst_put_entry(ForstTableShared *ts, StringInfo user_part, uint8 flags,
		  CommandId cid, const char *payload, Size payload_len, ForstLoc *loc)
{
	char		ikey_buf[128];
	char		value_buf[512];
	Size		ikey_len = user_part->len + FST_SEQ_BYTES;
	Size		value_len = FST_ENTRY_HEADER_SIZE + payload_len;
	char	   *ikey = ikey_len <= sizeof(ikey_buf) ? ikey_buf : palloc(ikey_len);
	char	   *value = value_len <= sizeof(value_buf) ? value_buf : palloc(value_len);
	XLogRecPtr	lsn;

	/* a version of ours: what forst_locked_newest noted may be older */
	forst_local_writes++;
	/* on the stack unless large: this runs once per row written */
	memcpy(ikey, user_part->data, user_part->len);
	fst_put_be64(ikey + user_part->len, forst_next_seq());
	fst_entry_header_encode(value, flags, GetCurrentTransactionId(), cid);
	if (payload_len > 0)
		memcpy(value + FST_ENTRY_HEADER_SIZE, payload, payload_len);

	memset(loc, 0, sizeof(*loc));

	if (ts->unlogged)
	{
		/*
		 * An unlogged table: no record.  The memtable notes the WAL insert
		 * position instead, which a checkpoint's cut compares as it does
		 * record positions: a transaction that committed before the cut
		 * wrote its rows before its commit record, so before the cut's
		 * position (checkpoint/checkpoint.c).
		 */
		forst_memtable_put(ts, fst_slice(ikey, ikey_len),
						   fst_slice(value, value_len), GetXLogInsertRecPtr(),
						   &loc->slab, &loc->ref);
	}
	else
	{
		/*
		 * WAL first (see wal/wal.h), still under the key lock.  Until the
		 * entry is in a memtable, this backend's in-flight mark (cleared by
		 * an abort if an error comes between, shmem/slab_pins.c) keeps the
		 * flush from advancing forst's slot past the record.
		 */
		forst_inflight_set(GetXLogInsertRecPtr());
		lsn = forst_wal_log_put(ts, fst_slice(ikey, ikey_len),
								fst_slice(value, value_len));
		forst_memtable_put(ts, fst_slice(ikey, ikey_len),
						   fst_slice(value, value_len), lsn, &loc->slab, &loc->ref);
		forst_inflight_clear();
	}
	if (ikey != ikey_buf)
		pfree(ikey);
	if (value != value_buf)
		pfree(value);
}

/*
 * The shared state of a table about to be written.  An UNLOGGED table's
 * rows are not logged (put_entry); its first write after a clean start
 * takes away the clean-shutdown mark (wal/unlogged.h).
 */
/* what the current transaction wrote: logged and unlogged forst tables */
static LocalTransactionId mixed_lxid = InvalidLocalTransactionId;
static bool mixed_wrote[2];
static bool mixed_said;

/*
 * forst.mixed_durability: a transaction that writes a logged and an
 * unlogged forst table is no longer one unit after a crash (the unlogged
 * one returns to its checkpoint).  Said once per transaction.
 */
static void
check_mixed(Relation rel, bool unlogged)
{
	if (forst_mixed_durability == FORST_MIXED_ALLOW)
		return;
	if (MyProc->lxid != mixed_lxid)
	{
		mixed_lxid = MyProc->lxid;
		mixed_wrote[0] = mixed_wrote[1] = false;
		mixed_said = false;
	}
	mixed_wrote[unlogged ? 1 : 0] = true;
	if (!mixed_wrote[0] || !mixed_wrote[1] || mixed_said)
		return;
	mixed_said = true;
	ereport(forst_mixed_durability == FORST_MIXED_ERROR ? ERROR : WARNING,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("transaction writes both logged and unlogged forst tables (\"%s\" is %s)",
					RelationGetRelationName(rel), unlogged ? "unlogged" : "logged"),
			 errdetail("After a crash the unlogged tables return to their last forst checkpoint, while the logged ones keep this transaction's writes."),
			 errhint("Keep what must stay consistent in tables of one kind; forst.mixed_durability = allow silences this.")));
}

ForstTableShared *
forst_table_for_write(Relation rel)
{
	ForstTableShared *ts = forst_table_shared(&rel->rd_node, true);
	bool		unlogged = rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED;

	if (unlogged)
	{
		if (!ts->unlogged)
			ts->unlogged = true;	/* never goes back for this relfilenode */
		forst_unlogged_dirty();
	}
	check_mixed(rel, unlogged);
	return ts;
}

/* Appends a row (or, with row NULL, a tombstone) of user_part. */
static void
put_version(ForstTableShared *ts, StringInfo user_part, uint8 flags,
			CommandId cid, MinimalTuple row, ForstLoc *loc)
{
	forst_put_entry(ts, user_part, flags, cid, (const char *) row,
			  row ? row->t_len : 0, loc);
}

static void
report_unique_violation(Relation rel, ForstRelInfo *info, StringInfo up)
{
	StringInfoData cols;
	int			i;

	initStringInfo(&cols);
	for (i = 0; i < info->nkeys; i++)
	{
		if (i > 0)
			appendStringInfoString(&cols, ", ");
		appendStringInfoString(&cols,
							   NameStr(TupleDescAttr(RelationGetDescr(rel),
													 info->keyattrs[i] - 1)->attname));
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates unique constraint \"%s\"",
					info->pkname),
			 errdetail("Key (%s)=%s already exists.", cols.data,
					   forst_user_part_to_text(info, up->data, up->len)),
			 errtableconstraint(rel, info->pkname)));
}

uint64		forst_local_writes = 0;

/*
 * Waits until no other transaction has an in-progress version of the key
 * newer than every committed one, with the key lock held on return, and
 * fills *newest.  Returns false (lock not held) if !wait and it would have
 * to wait.
 */
static bool
lock_key_settled(Relation rel, ForstTableShared *ts, StringInfo up,
				 LOCKMODE mode, bool wait, ForstNewest *newest,
				 XLTW_Oper oper)
{
	FstSlice	s = fst_slice(up->data, up->len);

	for (;;)
	{
		if (wait)
			forst_lock_key(rel, s, mode);
		else if (!forst_lock_key_try(rel, s, mode))
			return false;
		forst_find_newest(ts, s, newest);
		if (!newest->found || !newest->in_progress)
			return true;
		forst_unlock_key(rel, s, mode);
		if (!wait)
			return false;
		XactLockTableWait(newest->hdr.xid, rel, NULL, oper);
	}
}

/*
 * Whether a key's newest version holds a live row: not a tombstone and not
 * expired (an expired row counts as absent, so INSERT and ON CONFLICT write
 * a new row over it, see expiry/expiry.h).
 */
static bool
newest_is_live(Relation rel, const ForstExpiry *x, const ForstNewest *newest)
{
	ItemPointerData tid;
	ForstVersion v;
	bool		live;

	if (!newest->found || (newest->hdr.flags & FST_ENTRY_TOMBSTONE))
		return false;
	if (!x->active)
		return true;
	forst_tid_set(&tid, &newest->loc);
	if (!forst_fetch_version(rel, &tid, &v))
		return true;
	live = !forst_row_expired(x, v.entry.payload);
	forst_version_free(&v);
	return live;
}

/*
 * AFTER trigger events of a forst table (deferred ones until COMMIT) keep
 * TIDs of its rows: the memtable slabs they point into must stay.
 */
static inline void
pin_for_triggers(Relation rel)
{
	if (rel->trigdesc != NULL)
		forst_slab_pin_until_commit();
}

/*
 * Inserts a row.  If the key has a live row, a plain insert raises a unique
 * violation; a speculative one (ON CONFLICT) writes nothing, points the
 * slot's TID at the live row and returns false.
 */
static bool
insert_row(Relation rel, TupleTableSlot *slot, CommandId cid, bool speculative,
		   Oid *conflict_index)
{
	ForstRelInfo *info = forst_relinfo(rel);
	ForstTableShared *ts = forst_table_for_write(rel);
	MinimalTuple row = slot_to_row(rel, slot);
	StringInfoData up;
	ForstNewest newest;
	ForstLoc	loc;
	ForstExpiry x;
	ForstIndexRow nr = {0};
	ForstUniqueLocks ulocks;
	ForstUniqueConflict conflict;

	pin_for_triggers(rel);
	forst_expiry_get(rel, &x);
	initStringInfo(&up);
	forst_row_user_part(info, slot, ts, &up);
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);

	if (info->codec)
	{
		(void) lock_key_settled(rel, ts, &up, AccessExclusiveLock, true,
								&newest, XLTW_InsertIndex);
		if (newest_is_live(rel, &x, &newest))
		{
			forst_unlock_key(rel, fst_slice(up.data, up.len), AccessExclusiveLock);
			if (!speculative)
				report_unique_violation(rel, info, &up);
			forst_tid_set(&slot->tts_tid, &newest.loc);
			slot->tts_tableOid = RelationGetRelid(rel);
			*conflict_index = info->pkindex;
			pfree(row);
			pfree(up.data);
			return false;
		}
	}

	/* unique secondary indexes: checked, their values locked */
	memset(&ulocks, 0, sizeof(ulocks));
	if (info->nsecondary > 0)
		forst_index_row(rel, (const char *) row, row->t_len, &nr);
	if (forst_has_unique_secondary(info) &&
		!forst_index_unique_lock(rel, ts, info, NULL, NULL, &nr, &up,
								 !speculative, &ulocks, &conflict))
	{
		if (info->codec)
			forst_unlock_key(rel, fst_slice(up.data, up.len), AccessExclusiveLock);
		forst_index_unique_release(rel, &ulocks);
		forst_tid_set(&slot->tts_tid, &conflict.loc);
		slot->tts_tableOid = RelationGetRelid(rel);
		*conflict_index = conflict.indexoid;
		forst_index_row_free(&nr);
		pfree(row);
		pfree(up.data);
		return false;
	}

	put_version(ts, &up, 0, cid, row, &loc);
	if (info->nsecondary > 0)
	{
		forst_index_entries_write(rel, ts, info, cid, NULL, NULL, &nr, &up);
		forst_index_row_free(&nr);
	}
	forst_index_unique_release(rel, &ulocks);
	if (info->codec)
		forst_unlock_key(rel, fst_slice(up.data, up.len), AccessExclusiveLock);

	forst_tid_set(&slot->tts_tid, &loc);
	slot->tts_tableOid = RelationGetRelid(rel);
	forst_slot_set_system(slot, GetCurrentTransactionId(), cid);	/* RETURNING xmin */
	pg_atomic_fetch_add_u64(&ts->live_estimate, 1);
	pgstat_count_heap_insert(rel, 1);
	pfree(row);
	pfree(up.data);
	*conflict_index = InvalidOid;
	return true;
}

void
forst_insert_row(Relation rel, TupleTableSlot *slot, CommandId cid)
{
	Oid			conflict_index;

	(void) insert_row(rel, slot, cid, false, &conflict_index);
}

Oid
forst_insert_row_speculative(Relation rel, TupleTableSlot *slot, CommandId cid)
{
	Oid			conflict_index;

	(void) insert_row(rel, slot, cid, true, &conflict_index);
	return conflict_index;
}

static bool
xid_not_aborted(const ForstKeyVersion *kv)
{
	if (kv->hint & FST_MT_HINT_ABORTED)
		return false;
	return (kv->hdr.flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)) ||
		(kv->hint & FST_MT_HINT_COMMITTED) ||
		TransactionIdIsCurrentTransactionId(kv->hdr.xid) ||
		TransactionIdIsInProgress(kv->hdr.xid) ||
		TransactionIdDidCommit(kv->hdr.xid);
}

ForstChain
forst_chain_after(ForstTableShared *ts, FstSlice user_part, uint64 seq,
			ForstKeyVersion *moved)
{
	ForstKeyVersion *kv;
	int			n = forst_newer_versions(ts, user_part, seq, &kv);
	ForstChain	chain = FORST_CHAIN_HERE;
	int			i;

	/* oldest first: kv is newest first */
	for (i = n - 1; i >= 0; i--)
	{
		if (!(kv[i].hdr.flags & FST_ENTRY_TOMBSTONE) || !xid_not_aborted(&kv[i]))
			continue;
		if ((kv[i].hdr.flags & FST_ENTRY_MOVED) && kv[i].moved_to != NULL)
		{
			chain = FORST_CHAIN_MOVED;
			if (moved)
				*moved = kv[i];
		}
		else
			chain = FORST_CHAIN_DELETED;
		break;
	}
	pfree(kv);
	return chain;
}

typedef struct SeqCtx
{
	uint64		seq;
} SeqCtx;

static bool
accept_seq(void *arg, FstMemtable *mt, const FstEntryHeader *hdr, uint32 ref,
		   uint8 hint)
{
	return hdr->seq == ((SeqCtx *) arg)->seq;
}

/*
 * After this backend wrote a version over the row at *tid (version seq of
 * user_part), makes *tid name that row again if the write waited for
 * memtable memory and the row's memtable was reused meanwhile: the
 * executor fetches the old row by *tid afterwards (RETURNING of a DELETE,
 * AFTER ROW triggers).  The row is in an SST file by then.
 */
static void
relocate_row(Relation rel, ForstTableShared *ts, ItemPointer tid,
			 StringInfo user_part, uint64 seq)
{
	ForstLoc	loc;
	ForstTableView view;
	ForstPointHit hit;
	SeqCtx		ctx;

	if (forst_tid_get(tid, &loc))
		return;					/* still where it was */
	ctx.seq = seq;
	forst_table_view(ts, &rel->rd_node, &view);
	forst_point_get(&view, fst_slice(user_part->data, user_part->len),
					accept_seq, &ctx, false, &hit);
	if (hit.found)
		forst_tid_set(tid, &hit.loc);
}

/*
 * Decides what a writer may do with the version at tid, given the key's
 * newest version.  TM_Ok means the version at tid is the newest.
 */
static TM_Result
check_target(Relation rel, const ForstVersion *v, const ForstNewest *newest,
			 CommandId cid, Snapshot crosscheck, TM_FailureData *tmfd)
{
	tmfd->traversed = false;
	if (!newest->found)
	{
		/* every version was aborted: nothing left to modify */
		tmfd->xmax = InvalidTransactionId;
		tmfd->cmax = InvalidCommandId;
		return TM_Deleted;
	}
	if (newest->hdr.seq != v->entry.hdr.seq)
	{
		forst_tid_set(&tmfd->ctid, &newest->loc);
		tmfd->xmax = newest->hdr.xid;
		if (newest->mine)
		{
			tmfd->cmax = newest->hdr.cid;
			return TM_SelfModified;
		}
		tmfd->cmax = InvalidCommandId;
		if (forst_chain_after(forst_table_shared(&rel->rd_node, true),
						v->entry.user_part, v->entry.hdr.seq, NULL) ==
			FORST_CHAIN_DELETED)
			return TM_Deleted;	/* deleted, maybe inserted again */
		return TM_Updated;		/* updated, maybe moved to another key */
	}
	if (newest->hdr.flags & FST_ENTRY_TOMBSTONE)
	{
		tmfd->xmax = newest->hdr.xid;
		tmfd->cmax = InvalidCommandId;
		return TM_Deleted;
	}
	if (crosscheck != InvalidSnapshot &&
		!forst_version_visible_v(crosscheck, NULL, v))
	{
		tmfd->xmax = newest->hdr.xid;
		tmfd->cmax = InvalidCommandId;
		return TM_Updated;
	}
	return TM_Ok;
}

void
forst_version_user_part(const ForstVersion *v, StringInfo up)
{
	initStringInfo(up);
	appendBinaryStringInfo(up, v->entry.user_part.data, v->entry.user_part.len);
}

void
forst_fetch_or_error(Relation rel, ItemPointer tid, ForstVersion *v)
{
	if (!forst_fetch_version(rel, tid, v))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("forst: row version (%u,%u) of \"%s\" does not exist",
						ItemPointerGetBlockNumberNoCheck(tid),
						ItemPointerGetOffsetNumberNoCheck(tid),
						RelationGetRelationName(rel))));
}

TM_Result
forst_delete_row(Relation rel, ItemPointer tid, CommandId cid,
				 Snapshot crosscheck, bool wait, TM_FailureData *tmfd)
{
	ForstTableShared *ts = forst_table_for_write(rel);
	ForstVersion v;
	ForstNewest newest;
	StringInfoData up;
	TM_Result	result;
	ForstLoc	loc;
	uint64		old_seq;
	ForstRelInfo *info = forst_relinfo(rel);
	ForstIndexRow old = {0};

	pin_for_triggers(rel);
	forst_fetch_or_error(rel, tid, &v);
	forst_version_user_part(&v, &up);
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	if (!lock_key_settled(rel, ts, &up, AccessExclusiveLock, wait, &newest,
						  XLTW_Delete))
	{
		tmfd->ctid = *tid;
		tmfd->xmax = newest.hdr.xid;
		tmfd->cmax = InvalidCommandId;
		tmfd->traversed = false;
		forst_version_free(&v);
		pfree(up.data);
		return TM_BeingModified;
	}
	tmfd->ctid = *tid;
	result = check_target(rel, &v, &newest, cid, crosscheck, tmfd);
	/* and for FOR KEY SHARE lockers holding the key's bucket */
	if (result == TM_Ok)
		(void) forst_wait_key_sharers(rel, ts, fst_slice(up.data, up.len), true);
	old_seq = v.entry.hdr.seq;
	if (result == TM_Ok && info->nsecondary > 0)
		forst_index_row(rel, v.entry.payload.data, v.entry.payload.len, &old);
	forst_version_free(&v);
	if (result == TM_Ok)
	{
		put_version(ts, &up, FST_ENTRY_TOMBSTONE, cid, NULL, &loc);
		if (info->nsecondary > 0)
		{
			forst_index_entries_write(rel, ts, info, cid, &old, &up, NULL, NULL);
			forst_index_row_free(&old);
		}
		relocate_row(rel, ts, tid, &up, old_seq);
		pg_atomic_fetch_sub_u64(&ts->live_estimate, 1);
		pgstat_count_heap_delete(rel);
	}
	forst_unlock_key(rel, fst_slice(up.data, up.len), AccessExclusiveLock);
	if (result == TM_Ok)
		forst_release_kept(rel, fst_slice(up.data, up.len));
	pfree(up.data);
	return result;
}

TM_Result
forst_update_row(Relation rel, ItemPointer otid, TupleTableSlot *slot,
				 CommandId cid, Snapshot crosscheck, bool wait,
				 TM_FailureData *tmfd, LockTupleMode *lockmode)
{
	ForstRelInfo *info = forst_relinfo(rel);
	ForstTableShared *ts = forst_table_for_write(rel);
	ForstVersion v;
	ForstNewest newest;
	StringInfoData old_up;
	StringInfoData new_up;
	MinimalTuple row;
	bool		key_changed = false;
	LOCKMODE	mode;
	TM_Result	result;
	ForstLoc	loc;
	uint64		old_seq;
	ForstIndexRow old = {0};
	ForstIndexRow nr = {0};
	ForstUniqueLocks ulocks;

	pin_for_triggers(rel);
	forst_fetch_or_error(rel, otid, &v);
	forst_version_user_part(&v, &old_up);
	row = slot_to_row(rel, slot);
	initStringInfo(&new_up);
	if (info->codec)
	{
		forst_row_user_part(info, slot, ts, &new_up);
		key_changed = new_up.len != old_up.len ||
			memcmp(new_up.data, old_up.data, old_up.len) != 0;
	}
	else
		appendBinaryStringInfo(&new_up, old_up.data, old_up.len);
	*lockmode = key_changed ? LockTupleExclusive : LockTupleNoKeyExclusive;
	mode = forst_tuple_lock_mode(*lockmode);
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);

	if (wait && forst_locked_newest(rel, fst_slice(old_up.data, old_up.len), &newest))
	{
		/* locked by this transaction already (write/dml.h): take it again */
		forst_lock_key(rel, fst_slice(old_up.data, old_up.len), mode);
	}
	else if (!lock_key_settled(rel, ts, &old_up, mode, wait, &newest, XLTW_Update))
	{
		tmfd->ctid = *otid;
		tmfd->xmax = newest.hdr.xid;
		tmfd->cmax = InvalidCommandId;
		tmfd->traversed = false;
		forst_version_free(&v);
		pfree(row);
		pfree(old_up.data);
		pfree(new_up.data);
		return TM_BeingModified;
	}
	tmfd->ctid = *otid;
	result = check_target(rel, &v, &newest, cid, crosscheck, tmfd);
	/* a new key: wait for FOR KEY SHARE lockers holding the old's bucket */
	if (result == TM_Ok && key_changed)
		(void) forst_wait_key_sharers(rel, ts, fst_slice(old_up.data, old_up.len),
									  true);
	old_seq = v.entry.hdr.seq;
	if (result == TM_Ok && info->nsecondary > 0)
		forst_index_row(rel, v.entry.payload.data, v.entry.payload.len, &old);
	forst_version_free(&v);
	if (result != TM_Ok)
	{
		forst_unlock_key(rel, fst_slice(old_up.data, old_up.len), mode);
		pfree(row);
		pfree(old_up.data);
		pfree(new_up.data);
		return result;
	}

	if (key_changed)
	{
		ForstNewest other;
		ForstExpiry x;

		/* the new key must be free: a unique check, as for an insert */
		forst_expiry_get(rel, &x);
		(void) lock_key_settled(rel, ts, &new_up, AccessExclusiveLock, true,
								&other, XLTW_InsertIndex);
		if (newest_is_live(rel, &x, &other))
		{
			forst_unlock_key(rel, fst_slice(new_up.data, new_up.len), AccessExclusiveLock);
			forst_unlock_key(rel, fst_slice(old_up.data, old_up.len), mode);
			report_unique_violation(rel, info, &new_up);
		}
	}

	/*
	 * Unique secondary indexes whose value changes: checked and locked
	 * after the row's keys, as an insert does.
	 */
	memset(&ulocks, 0, sizeof(ulocks));
	if (info->nsecondary > 0)
		forst_index_row(rel, (const char *) row, row->t_len, &nr);
	if (forst_has_unique_secondary(info))
		(void) forst_index_unique_lock(rel, ts, info, &old, &old_up, &nr,
									   &new_up, true, &ulocks, NULL);

	if (key_changed)
	{
		forst_put_entry(ts, &old_up, FST_ENTRY_TOMBSTONE | FST_ENTRY_MOVED, cid,
				  new_up.data, new_up.len, &loc);
		put_version(ts, &new_up, 0, cid, row, &loc);
		forst_unlock_key(rel, fst_slice(new_up.data, new_up.len), AccessExclusiveLock);
	}
	else
		put_version(ts, &old_up, 0, cid, row, &loc);
	if (info->nsecondary > 0)
	{
		forst_index_entries_write(rel, ts, info, cid, &old, &old_up, &nr, &new_up);
		forst_index_row_free(&nr);
		forst_index_row_free(&old);
	}
	forst_index_unique_release(rel, &ulocks);
	relocate_row(rel, ts, otid, &old_up, old_seq);
	forst_unlock_key(rel, fst_slice(old_up.data, old_up.len), mode);
	/* the version written stands for any row lock this level kept */
	forst_release_kept(rel, fst_slice(old_up.data, old_up.len));

	forst_tid_set(&slot->tts_tid, &loc);
	slot->tts_tableOid = RelationGetRelid(rel);
	forst_slot_set_system(slot, GetCurrentTransactionId(), cid);
	pgstat_count_heap_update(rel, false);
	pfree(row);
	pfree(old_up.data);
	pfree(new_up.data);
	return TM_Ok;
}
