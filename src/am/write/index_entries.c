/*-------------------------------------------------------------------------
 *
 * index_entries.c
 *	  Secondary index entries written with the rows (write/index_entries.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/keys/index_entry.h"
#include "am/keys/tid.h"
#include "am/read/point.h"
#include "am/read/cursor.h"
#include "am/write/dml.h"
#include "am/write/index_entries.h"
#include "am/write/key_locks.h"
#include "lsm/ikey.h"

void
forst_index_row(Relation rel, const char *data, Size len, ForstIndexRow *out)
{
	TupleDesc	desc = RelationGetDescr(rel);
	HeapTupleData tup;
	MinimalTuple mt;

	if (len < SizeofMinimalTupleHeader)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: row version of %zu bytes is too short", len)));
	/* a stored row may sit anywhere in a block: deform an aligned copy */
	out->copy = palloc(len);
	memcpy(out->copy, data, len);
	mt = (MinimalTuple) out->copy;
	tup.t_len = len + MINIMAL_TUPLE_OFFSET;
	tup.t_data = (HeapTupleHeader) ((char *) mt - MINIMAL_TUPLE_OFFSET);
	ItemPointerSetInvalid(&tup.t_self);
	tup.t_tableOid = InvalidOid;
	out->values = palloc(sizeof(Datum) * desc->natts);
	out->isnull = palloc(sizeof(bool) * desc->natts);
	heap_deform_tuple(&tup, desc, out->values, out->isnull);
}

void
forst_index_row_free(ForstIndexRow *r)
{
	if (r->copy)
		pfree(r->copy);
	if (r->values)
		pfree(r->values);
	if (r->isnull)
		pfree(r->isnull);
	r->copy = NULL;
	r->values = NULL;
	r->isnull = NULL;
}

MinimalTuple
forst_index_entry_payload(Relation rel, const ForstExpiry *x, Datum *values,
						  bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *v;
	bool	   *n;
	MinimalTuple mt;
	int			a = x->attnum - 1;

	if (x->attnum <= 0 || x->attnum > desc->natts || isnull[a])
		return NULL;
	v = palloc0(sizeof(Datum) * desc->natts);
	n = palloc(sizeof(bool) * desc->natts);
	memset(n, true, sizeof(bool) * desc->natts);
	v[a] = values[a];
	n[a] = false;
	mt = heap_form_minimal_tuple(desc, v, n);
	pfree(v);
	pfree(n);
	return mt;
}

static inline bool
same_payload(MinimalTuple a, MinimalTuple b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return a->t_len == b->t_len && memcmp(a, b, a->t_len) == 0;
}

/*
 * Whether rel's indexes that are not ready for inserts were left behind
 * (by a failed CREATE INDEX CONCURRENTLY, or DROP INDEX CONCURRENTLY)
 * rather than being built now.  Writers write the entries of an index
 * being built from the moment they see it, since its build has no third
 * phase to add them (tableam/tableam_ddl.c); one left behind has no one to
 * finish it, and heap's writers skip such an index.  Either command holds
 * a ShareUpdateExclusiveLock on the table, as a session lock, from before
 * the index is in the catalog until it ends; so if that lock can be taken
 * now, what is not ready is left over.  The lock is let go at once, and
 * only tried: another holder of it (VACUUM, ANALYZE) makes this answer no.
 * Asked once per statement and table.
 */
static bool
unready_left_over(Relation rel)
{
	static Oid	rel_seen = InvalidOid;
	static LocalTransactionId lxid_seen = InvalidLocalTransactionId;
	static CommandId cid_seen = InvalidCommandId;
	static bool left_over = false;
	CommandId	cid = GetCurrentCommandId(false);

	if (RelationGetRelid(rel) == rel_seen && MyProc->lxid == lxid_seen &&
		cid == cid_seen)
		return left_over;
	left_over = ConditionalLockRelation(rel, ShareUpdateExclusiveLock);
	if (left_over)
		UnlockRelation(rel, ShareUpdateExclusiveLock);
	rel_seen = RelationGetRelid(rel);
	lxid_seen = MyProc->lxid;
	cid_seen = cid;
	return left_over;
}

/* errcontext of an entry's computation: the index whose expression failed */
static void
entry_error_context(void *arg)
{
	const ForstSecondary *s = arg;

	errcontext("computing the entry of index \"%s\" for the row%s", NameStr(s->name),
			   s->valid ? "" : " (an index not valid: being built, or left by a failed CREATE INDEX CONCURRENTLY until dropped or rebuilt)");
}

/*
 * The entry of s for row r (at user part up) in out; false if s does not
 * hold the row (its predicate is false).
 */
static bool
row_entry(const ForstSecondary *s, ForstIndexRow *r, StringInfo up, StringInfo out)
{
	ErrorContextCallback cb;
	bool		in;

	if (s->eval == NULL)
	{
		forst_index_entry_build(s, r->values, r->isnull, fst_slice(up->data, up->len), out);
		return true;
	}
	cb.callback = entry_error_context;
	cb.arg = (void *) s;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	in = forst_secondary_holds(s, r->values, r->isnull);
	if (in)
		forst_index_entry_build(s, r->values, r->isnull, fst_slice(up->data, up->len), out);
	error_context_stack = cb.previous;
	return in;
}

/*
 * The old row's entry of s, for its tombstone.  An index that is not valid
 * (left by a failed CREATE INDEX CONCURRENTLY, or being built) may have no
 * entry for the row, and its expression or predicate may fail for it: that
 * is how such a build fails.  Then there is nothing to remove, and the
 * failure must not fail the DELETE or UPDATE, as it does not on heap, which
 * removes no index entries at all.  An entry left without its tombstone is
 * stale, not wrong: a scan returns a row only if the row still matches its
 * entry.  The evaluation runs in a subtransaction, only for such indexes.
 */
static bool
old_entry(const ForstSecondary *s, ForstIndexRow *old, StringInfo old_up,
		  StringInfo out)
{
	MemoryContext mcxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool in = false;

	if (s->valid || s->eval == NULL)
		return row_entry(s, old, old_up, out);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(mcxt);
	PG_TRY();
	{
		in = row_entry(s, old, old_up, out);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(mcxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(mcxt);
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(mcxt);
		CurrentResourceOwner = owner;
		resetStringInfo(out);
		in = false;
	}
	PG_END_TRY();
	return in;
}

void
forst_index_entries_write(Relation rel, ForstTableShared *ts,
						  ForstRelInfo *info, CommandId cid,
						  ForstIndexRow *old, StringInfo old_up,
						  ForstIndexRow *new, StringInfo new_up)
{
	StringInfoData a;
	StringInfoData b;
	ForstLoc	loc;
	ForstExpiry x;
	MinimalTuple pa = NULL;
	MinimalTuple pb = NULL;
	bool		same_ttl;

	/* as the list was when the write began (keys/rel.c keeps it alive) */
	ForstSecondary *secondary = info->secondary;
	int			nsecondary = info->nsecondary;

	forst_expiry_get(rel, &x);
	if (old)
		pa = forst_index_entry_payload(rel, &x, old->values, old->isnull);
	if (new)
		pb = forst_index_entry_payload(rel, &x, new->values, new->isnull);
	same_ttl = same_payload(pa, pb);
	initStringInfo(&a);
	initStringInfo(&b);
	for (int i = 0; i < nsecondary; i++)
	{
		const ForstSecondary *s = &secondary[i];
		bool		in_old;
		bool		in_new;
		bool		same_key;

		/* as heap's writers, none for an index left unfinished */
		if (!s->ready && unready_left_over(rel))
			continue;

		/* the rows this index holds (all, unless it is partial) */
		resetStringInfo(&a);
		resetStringInfo(&b);
		in_old = old && old_entry(s, old, old_up, &a);
		in_new = new && row_entry(s, new, new_up, &b);
		same_key = in_old && in_new && a.len == b.len &&
			memcmp(a.data, b.data, a.len) == 0;
		/* an update that leaves this index's entry as it was */
		if (same_key && same_ttl)
			continue;
		/* same entry, new TTL value: the new version replaces it */
		if (in_old && !same_key)
			forst_put_entry(ts, &a, FST_ENTRY_TOMBSTONE, cid, NULL, 0, &loc);
		if (in_new)
			forst_put_entry(ts, &b, 0, cid, (const char *) pb,
							pb ? pb->t_len : 0, &loc);
	}
	pfree(a.data);
	pfree(b.data);
	if (pa)
		pfree(pa);
	if (pb)
		pfree(pb);
}

/* ---------------------------------------------------------------------- */
/* UNIQUE secondary indexes                                                */

bool
forst_has_unique_secondary(ForstRelInfo *info)
{
	for (int i = 0; i < info->nsecondary; i++)
		if (info->secondary[i].unique)
			return true;
	return false;
}

static inline bool
slice_is(FstSlice a, StringInfo b)
{
	return b != NULL && a.len == (size_t) b->len &&
		memcmp(a.data, b->data, a.len) == 0;
}

bool
forst_index_row_has(Relation rel, ForstTableShared *ts,
					const ForstSecondary *s, const ForstExpiry *x,
					FstSlice row, FstSlice cols, ForstLoc *loc,
					ForstIndexRow *r)
{
	ForstNewest newest;
	ItemPointerData tid;
	ForstVersion v;
	ForstIndexRow mine = {0};
	StringInfoData enc;
	bool		has;

	forst_find_newest(ts, row, &newest);
	if (!newest.found || (newest.hdr.flags & FST_ENTRY_TOMBSTONE))
		return false;
	forst_tid_set(&tid, &newest.loc);
	if (!forst_fetch_version(rel, &tid, &v))
		return false;
	if (x->active && forst_row_expired(x, v.entry.payload))
	{
		forst_version_free(&v);
		return false;
	}
	if (r == NULL)
		r = &mine;
	forst_index_row(rel, v.entry.payload.data, v.entry.payload.len, r);
	forst_version_free(&v);
	initStringInfo(&enc);
	forst_index_entry_columns(s, r->values, r->isnull, &enc);
	has = (size_t) enc.len == cols.len && memcmp(enc.data, cols.data, cols.len) == 0 &&
		forst_secondary_holds(s, r->values, r->isnull);
	pfree(enc.data);
	forst_index_row_free(&mine);
	*loc = newest.loc;
	return has;
}

typedef enum UniqueState
{
	UNIQUE_FREE,				/* no other live row has the value */
	UNIQUE_WAIT,				/* wait for *xwait (if valid), then again */
	UNIQUE_TAKEN				/* another row has it: *taken */
} UniqueState;

/*
 * The entries of s whose columns are prefix's (see index_entries.h), the
 * rows at old_up and new_up aside.
 */
static UniqueState
unique_scan(Relation rel, ForstTableShared *ts, const ForstSecondary *s,
			const ForstExpiry *x, StringInfo prefix, StringInfo old_up,
			StringInfo new_up, TransactionId *xwait, ForstLoc *taken)
{
	SnapshotData dirty;
	StringInfoData hi;
	ForstCursor *c;
	FstSlice	lo = fst_slice(prefix->data, prefix->len);
	size_t		ncols = prefix->len - FORST_INDEX_ENTRY_HEAD;
	UniqueState st = UNIQUE_FREE;

	InitDirtySnapshot(dirty);
	initStringInfo(&hi);
	appendBinaryStringInfo(&hi, prefix->data, prefix->len);
	if (!forst_key_successor_prefix(&hi))
		elog(ERROR, "forst: no range for the entries of index %u", s->indexoid);
	c = forst_cursor_open(rel, &dirty, ts, lo, fst_slice(hi.data, hi.len), false);
	c->with_tombstones = true;
	forst_cursor_seek(c, lo, fst_slice(hi.data, hi.len));
	while (forst_cursor_next(c))
	{
		const FstEntry *e = &c->cur.entry;
		TransactionId xid = e->hdr.xid;
		FstSlice	cols,
					row;

		if (!forst_index_entry_split(e->user_key, &cols, &row))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry of index %u in table \"%s\"",
							s->indexoid, RelationGetRelationName(rel))));
		if (cols.len != ncols || slice_is(row, old_up) || slice_is(row, new_up))
			continue;
		if (!(e->hdr.flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)) &&
			!TransactionIdIsCurrentTransactionId(xid))
		{
			if (TransactionIdIsInProgress(xid))
			{
				*xwait = xid;
				st = UNIQUE_WAIT;
				break;
			}
			if (!TransactionIdDidCommit(xid))
			{
				/* aborted since the cursor chose it: read again */
				*xwait = InvalidTransactionId;
				st = UNIQUE_WAIT;
				break;
			}
		}
		if (e->hdr.flags & FST_ENTRY_TOMBSTONE)
			continue;
		if (forst_index_row_has(rel, ts, s, x, row, cols, taken, NULL))
		{
			st = UNIQUE_TAKEN;
			break;
		}
		CHECK_FOR_INTERRUPTS();
	}
	forst_cursor_close(c);
	pfree(hi.data);
	return st;
}

/* Gives up the locks taken, keeping the array for another round. */
static void
unlock_all(Relation rel, ForstUniqueLocks *locks)
{
	for (int i = 0; i < locks->n; i++)
	{
		forst_unlock_key(rel, fst_slice(locks->prefix[i].data,
										locks->prefix[i].len),
						 AccessExclusiveLock);
		pfree(locks->prefix[i].data);
	}
	locks->n = 0;
}

void
forst_index_unique_release(Relation rel, ForstUniqueLocks *locks)
{
	unlock_all(rel, locks);
	if (locks->prefix)
		pfree(locks->prefix);
	locks->prefix = NULL;
}

void
forst_report_unique_violation(Relation heap, Relation index, Datum *values,
							  bool *isnull)
{
	char	   *desc = BuildIndexValueDescription(index, values, isnull);

	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates unique constraint \"%s\"",
					RelationGetRelationName(index)),
			 desc ? errdetail("Key %s already exists.", desc) : 0,
			 errtableconstraint(heap, RelationGetRelationName(index))));
}

static void
report_violation(Relation rel, const ForstSecondary *s, ForstIndexRow *r)
{
	Relation	index = index_open(s->indexoid, AccessShareLock);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	forst_secondary_values(s, r->values, r->isnull, values, isnull);
	forst_report_unique_violation(rel, index, values, isnull);
}

bool
forst_index_unique_lock(Relation rel, ForstTableShared *ts, ForstRelInfo *info,
						ForstIndexRow *old, StringInfo old_up,
						ForstIndexRow *new, StringInfo new_up, bool raise,
						ForstUniqueLocks *locks, ForstUniqueConflict *conflict)
{
	ForstSecondary *secondary;
	int			nsecondary;
	ForstExpiry x;
	StringInfoData a;

	/* ON CONFLICT retries until its check and this one agree */
	CHECK_FOR_INTERRUPTS();
	locks->n = 0;
	/* the list as it is now (keys/rel.c keeps it alive until commit) */
	secondary = info->secondary;
	nsecondary = info->nsecondary;
	if (locks->prefix == NULL || locks->cap < nsecondary)
	{
		if (locks->prefix)
			pfree(locks->prefix);
		locks->prefix = palloc(sizeof(StringInfoData) * Max(nsecondary, 1));
		locks->cap = nsecondary;
	}
	forst_expiry_get(rel, &x);
	initStringInfo(&a);
	for (;;)
	{
		bool		again = false;

		for (int i = 0; i < nsecondary && !again; i++)
		{
			const ForstSecondary *s = &secondary[i];
			StringInfo	prefix;
			TransactionId xwait = InvalidTransactionId;
			ForstLoc	taken;
			bool		null = false;

			if (!s->unique || (!s->ready && unready_left_over(rel)) ||
				!forst_secondary_holds(s, new->values, new->isnull))
				continue;
			{
				Datum		v[INDEX_MAX_KEYS];
				bool		n[INDEX_MAX_KEYS];

				forst_secondary_values(s, new->values, new->isnull, v, n);
				for (int k = 0; k < s->natts; k++)
					null |= n[k];
			}
			if (null && !s->nulls_not_distinct)
				continue;
			prefix = &locks->prefix[locks->n];
			initStringInfo(prefix);
			forst_index_entry_head(prefix, s->entry_id);
			forst_index_entry_columns(s, new->values, new->isnull, prefix);
			if (old && forst_secondary_holds(s, old->values, old->isnull))
			{
				/* an update that keeps the value: nothing new to check */
				resetStringInfo(&a);
				forst_index_entry_head(&a, s->entry_id);
				forst_index_entry_columns(s, old->values, old->isnull, &a);
				if (a.len == prefix->len &&
					memcmp(a.data, prefix->data, a.len) == 0)
				{
					pfree(prefix->data);
					continue;
				}
			}
			forst_lock_key(rel, fst_slice(prefix->data, prefix->len),
						   AccessExclusiveLock);
			locks->n++;
			switch (unique_scan(rel, ts, s, &x, prefix, old_up, new_up,
								&xwait, &taken))
			{
				case UNIQUE_FREE:
					break;
				case UNIQUE_WAIT:
					unlock_all(rel, locks);
					if (TransactionIdIsValid(xwait))
						XactLockTableWait(xwait, rel, NULL, XLTW_InsertIndex);
					again = true;
					break;
				case UNIQUE_TAKEN:
					unlock_all(rel, locks);
					if (raise)
						report_violation(rel, s, new);
					conflict->indexoid = s->indexoid;
					conflict->loc = taken;
					pfree(a.data);
					return false;
			}
		}
		if (!again)
			break;
	}
	pfree(a.data);
	return true;
}

void
forst_index_entries_drop(Relation heap, uint32 entry_id)
{
	ForstTableShared *ts = forst_table_for_write(heap);
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	CommandId	cid = GetCurrentCommandId(true);
	StringInfoData lo;
	StringInfoData hi;
	StringInfoData up;
	ForstCursor *c;
	ForstLoc	loc;
	char		kg[FST_KG_BYTES];

	initStringInfo(&lo);
	initStringInfo(&hi);
	initStringInfo(&up);
	forst_index_entry_head(&lo, entry_id);
	appendBinaryStringInfo(&hi, lo.data, lo.len);
	if (!forst_key_successor_prefix(&hi))
		elog(ERROR, "forst: no range for index entries %u", entry_id);
	fst_put_be16(kg, FST_KG_INDEX);

	/*
	 * The tombstones have this command's id: the snapshot, taken in it,
	 * does not see them, so the cursor reads the entries as they were.
	 */
	c = forst_cursor_open(heap, snap, ts, fst_slice(lo.data, lo.len),
						  fst_slice(hi.data, hi.len), false);
	forst_cursor_seek(c, fst_slice(lo.data, lo.len), fst_slice(hi.data, hi.len));
	while (forst_cursor_next(c))
	{
		resetStringInfo(&up);
		appendBinaryStringInfo(&up, kg, FST_KG_BYTES);
		appendBinaryStringInfo(&up, c->cur.entry.user_key.data,
							   c->cur.entry.user_key.len);
		forst_put_entry(ts, &up, FST_ENTRY_TOMBSTONE, cid, NULL, 0, &loc);
		CHECK_FOR_INTERRUPTS();
	}
	forst_cursor_close(c);
	UnregisterSnapshot(snap);
	pfree(lo.data);
	pfree(hi.data);
	pfree(up.data);
}
