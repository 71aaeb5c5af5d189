/*-------------------------------------------------------------------------
 *
 * index_drop.c
 *	  Tombstones over the entries of a dropped secondary index of a forst
 *	  table (ddl/index_drop.h).
 *
 * A secondary index's entries live in its table's LSM, under the index's
 * entry id (keys/index_entry.h); the index's own relation file is empty.
 * So a drop must remove them: when the drop reaches the index (OAT_DROP,
 * ddl/pending.c) its table, OID and entry id are noted here, and the
 * entries get a tombstone each once the index's pg_class row is gone as
 * the transaction sees it, at the end of the statement that dropped it
 * (the utility hook calls forst_dropped_indexes_apply).
 *
 * A note is applied only when its index is gone.  A drop rolled back to a
 * savepoint (a statement that failed after the drop reached the index)
 * leaves its index, with its entries, and its note is never applied:
 * notes are forgotten when the top transaction ends.
 *
 * DROP INDEX CONCURRENTLY reaches the index in its first transaction and
 * commits twice before it removes the catalog rows (index_drop): the index
 * is made invalid (no new scans), then dead (indislive false: writers stop
 * writing its entries, keys/index_entry.c), each time waiting for every
 * transaction that could still use it.  Its note outlives those commits,
 * and the tombstones are written in the last transaction, under the
 * ShareUpdateExclusiveLock that the drop holds on the table, next to
 * writers: by then every entry of the index is committed and none is
 * written any more.  The note goes if that transaction aborts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "am/ddl/index_drop.h"
#include "am/keys/index_entry.h"
#include "am/keys/rel.h"
#include "am/write/index_entries.h"

typedef struct DroppedIndex
{
	Oid			heapid;
	Oid			indexid;
	uint32		entry_id;		/* what its entries carry */
	bool		concurrent;		/* DROP INDEX CONCURRENTLY: outlives commits */
} DroppedIndex;

static List *dropped_indexes = NIL;		/* in TopMemoryContext */

/* The notes become keep's (a list in the current context, freed here). */
static void
keep_only(List *keep)
{
	MemoryContext old;

	list_free(dropped_indexes);
	old = MemoryContextSwitchTo(TopMemoryContext);
	dropped_indexes = list_copy(keep);
	MemoryContextSwitchTo(old);
	list_free(keep);
}

void
forst_note_dropped_index(Relation index, int dropflags)
{
	Oid			heapid = index->rd_index->indrelid;
	Relation	heap = RelationIdGetRelation(heapid);
	MemoryContext old;
	DroppedIndex *d;

	if (!RelationIsValid(heap))
		return;
	if (heap->rd_rel->relkind == RELKIND_RELATION && forst_is_forst_relation(heap))
	{
		old = MemoryContextSwitchTo(TopMemoryContext);
		d = palloc(sizeof(DroppedIndex));
		d->heapid = heapid;
		d->indexid = RelationGetRelid(index);
		d->entry_id = forst_index_entry_id(index);
		d->concurrent = (dropflags & PERFORM_DELETION_CONCURRENTLY) != 0;
		dropped_indexes = lappend(dropped_indexes, d);
		MemoryContextSwitchTo(old);
	}
	RelationClose(heap);
}

void
forst_dropped_indexes_apply(void)
{
	List	   *todo = dropped_indexes;
	List	   *keep = NIL;
	ListCell   *lc;

	if (todo == NIL || !IsTransactionState())
		return;

	/*
	 * Off the list first: if a drop fails (a cancel while it writes the
	 * tombstones), the transaction aborts, and no note may be freed twice.
	 */
	dropped_indexes = NIL;
	foreach(lc, todo)
	{
		DroppedIndex *d = lfirst(lc);
		Relation	heap;

		/* still there: its drop is yet to come, or was rolled back */
		if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(d->indexid)))
		{
			keep = lappend(keep, d);
			continue;
		}
		/* DROP TABLE takes the table's storage, entries and all */
		if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(d->heapid)))
		{
			heap = table_open(d->heapid, d->concurrent ? ShareUpdateExclusiveLock :
							  AccessExclusiveLock);
			if (forst_is_forst_relation(heap))
				forst_index_entries_drop(heap, d->entry_id);
			table_close(heap, NoLock);
		}
		pfree(d);
	}
	list_free(todo);
	keep_only(keep);
}

/*
 * The end of a top transaction (or its PREPARE): notes are forgotten,
 * except, at a commit, those of a DROP INDEX CONCURRENTLY between its own
 * commits.
 */
static void
index_drop_xact_callback(XactEvent event, void *arg)
{
	List	   *keep = NIL;
	ListCell   *lc;
	bool		commit;

	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
		commit = true;
	else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
			 event == XACT_EVENT_PREPARE)
		commit = false;			/* a prepared one holds no concurrent drop */
	else
		return;
	foreach(lc, dropped_indexes)
	{
		DroppedIndex *d = lfirst(lc);

		if (commit && d->concurrent)
			keep = lappend(keep, d);
		else
			pfree(d);
	}
	keep_only(keep);
}

void
forst_index_drop_init(void)
{
	RegisterXactCallback(index_drop_xact_callback, NULL);
}
