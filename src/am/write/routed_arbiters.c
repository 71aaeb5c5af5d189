/*-------------------------------------------------------------------------
 *
 * routed_arbiters.c
 *	  INSERT ... ON CONFLICT through a partitioned table keyed by forst.
 *
 * PostgreSQL routes a row to a partition in ExecFindPartition; the first
 * row that goes to a partition makes ExecInitPartitionInfo open the
 * partition's indexes with ExecOpenIndices(speculative = true), whose
 * BuildSpeculativeIndexInfo refuses every unique index whose access method
 * is not btree ("unexpected non-btree speculative unique index").  A forst
 * partition's key and its unique secondary indexes (copies of the
 * partitioned table's, ddl/partition_unique.c) are forst_key indexes; for
 * a table that is not a
 * partition, write/onconflict.c opens its indexes before the executor does,
 * but a routed partition's ResultRelInfo is made during execution, with no
 * hook in between.
 *
 * So for the length of such a statement, the unique indexes of the
 * partitioned table's forst partitions are held open and their relcache
 * entries say
 * btree in rd_rel->relam, the one field BuildSpeculativeIndexInfo looks at;
 * it then takes the equality operator of each column from the index's own
 * operator families (forst's, with btree's strategy numbers), as
 * write/onconflict.c does for an unpartitioned table.  Nothing else
 * changes: the catalog still says forst_key, the index's routine
 * (rd_indam) is forst_key's, so every scan and insertion is forst's, forst
 * finds a table's key by rd_pkindex and its secondary indexes by the
 * catalog's access method (keys/index_entry.c), not by the relcache's.
 *
 * What else reads rd_rel->relam during the statement is the planner, for a
 * query planned while it runs (in a trigger or a function) that reads such
 * a partition: it takes the index for a btree, whose height it reads from
 * the metapage, cached in rd_amcache (a cached metapage of an empty btree
 * is put there), and whose operator families it takes for sort orders.  A
 * get_relation_info_hook puts back what the planner makes of a forst_key
 * index: its access method, no height, and the btree operator families
 * that match its "<" operators.
 *
 * A relcache invalidation of an entry that is held open reloads its
 * pg_class row in place (RelationReloadIndexInfo), relam included, and
 * drops rd_amcache; a relcache callback, which runs right after, sets both
 * again.  The entries are restored and closed when the statement ends
 * (ExecutorEnd), and restored when its transaction or subtransaction
 * aborts (the resource owner closes them).  Locks: the statement takes
 * RowExclusiveLock on every forst partition and its key up front, as
 * routing a row to each would.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "optimizer/plancat.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/keys/rel.h"
#include "am/write/routed_arbiters.h"

typedef struct RoutedArbiter
{
	Relation	index;			/* a forst partition's key, held open */
	EState	   *estate;			/* the statement that opened it */
	SubTransactionId subid;		/* the subtransaction that opened it */
} RoutedArbiter;

static List *arbiters = NIL;	/* of RoutedArbiter *, in TopMemoryContext */
static Oid	forst_key_am = InvalidOid;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static get_relation_info_hook_type prev_get_relation_info = NULL;

/* rd_rel->relam says btree, and the btree's height is cached (0) */
static void
disguise(Relation index)
{
	index->rd_rel->relam = BTREE_AM_OID;
	if (index->rd_amcache == NULL)
	{
		BTMetaPageData *meta = MemoryContextAllocZero(index->rd_indexcxt,
													  sizeof(BTMetaPageData));

		meta->btm_magic = BTREE_MAGIC;
		meta->btm_version = BTREE_VERSION;
		meta->btm_root = P_NONE;
		meta->btm_fastroot = P_NONE;
		index->rd_amcache = meta;
	}
}

/* Restores the entry unless another statement still needs it disguised. */
static void
restore(RoutedArbiter *a)
{
	ListCell   *lc;

	foreach(lc, arbiters)
	{
		RoutedArbiter *other = lfirst(lc);

		if (other != NULL && other != a && other->index == a->index)
			return;
	}
	a->index->rd_rel->relam = forst_key_am;
	if (a->index->rd_amcache != NULL)
	{
		pfree(a->index->rd_amcache);
		a->index->rd_amcache = NULL;
	}
}

/*
 * Ends the entries for which "ends" holds: restores them and, with close,
 * closes them (at an abort the resource owner does).
 */
static void
end_arbiters(bool (*ends) (RoutedArbiter *a, void *arg), void *arg, bool close)
{
	List	   *keep = NIL;
	List	   *ended = NIL;
	ListCell   *lc;
	MemoryContext old;

	foreach(lc, arbiters)
	{
		RoutedArbiter *a = lfirst(lc);

		if (ends(a, arg))
		{
			restore(a);
			ended = lappend(ended, a);
			/* restore() must not see it again */
			lfirst(lc) = NULL;
		}
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	foreach(lc, arbiters)
	{
		if (lfirst(lc) != NULL)
			keep = lappend(keep, lfirst(lc));
	}
	MemoryContextSwitchTo(old);
	list_free(arbiters);
	arbiters = keep;
	foreach(lc, ended)
	{
		RoutedArbiter *a = lfirst(lc);

		if (close)
			index_close(a->index, NoLock);
		pfree(a);
	}
	list_free(ended);
}

static bool
of_estate(RoutedArbiter *a, void *arg)
{
	return a->estate == (EState *) arg;
}

static bool
any_arbiter(RoutedArbiter *a, void *arg)
{
	return true;
}

static bool
of_subxact(RoutedArbiter *a, void *arg)
{
	return a->subid >= *(SubTransactionId *) arg;
}

void
forst_routed_arbiters_open(EState *estate, Relation root)
{
	List	   *leaves;
	ListCell   *lc;

	if (!OidIsValid(forst_key_am))
		forst_key_am = get_index_am_oid("forst_key", false);
	leaves = find_all_inheritors(RelationGetRelid(root), RowExclusiveLock, NULL);
	foreach(lc, leaves)
	{
		Oid			leaf = lfirst_oid(lc);
		Relation	rel;
		List	   *indexes = NIL;
		ListCell   *lc2;

		if (get_rel_relkind(leaf) != RELKIND_RELATION)
			continue;
		rel = table_open(leaf, NoLock);
		if (forst_is_forst_relation(rel))
			indexes = RelationGetIndexList(rel);
		table_close(rel, NoLock);

		/* its key and its unique secondary indexes (ddl/partition_unique.c) */
		foreach(lc2, indexes)
		{
			Relation	index = index_open(lfirst_oid(lc2), RowExclusiveLock);
			RoutedArbiter *a;
			MemoryContext old;

			if (!index->rd_index->indisunique ||
				(index->rd_rel->relam != forst_key_am &&
				 index->rd_rel->relam != BTREE_AM_OID))
			{
				index_close(index, NoLock);
				continue;
			}
			old = MemoryContextSwitchTo(TopMemoryContext);
			a = palloc(sizeof(RoutedArbiter));
			a->index = index;
			a->estate = estate;
			a->subid = GetCurrentSubTransactionId();
			arbiters = lappend(arbiters, a);
			MemoryContextSwitchTo(old);
			disguise(index);
		}
	}
}

/* after an in-place reload of an entry held open */
static void
routed_relcache_callback(Datum arg, Oid relid)
{
	ListCell   *lc;

	foreach(lc, arbiters)
	{
		RoutedArbiter *a = lfirst(lc);

		if (!OidIsValid(relid) || RelationGetRelid(a->index) == relid)
			disguise(a->index);
	}
}

static void
routed_ExecutorEnd(QueryDesc *queryDesc)
{
	EState	   *estate = queryDesc->estate;

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	if (arbiters != NIL)
		end_arbiters(of_estate, estate, true);
}

static void
routed_xact_callback(XactEvent event, void *arg)
{
	if (arbiters == NIL)
		return;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		end_arbiters(any_arbiter, NULL, false);
	else if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE)
		end_arbiters(any_arbiter, NULL, true);
}

static void
routed_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	if (arbiters != NIL && event == SUBXACT_EVENT_ABORT_SUB)
		end_arbiters(of_subxact, &mySubid, false);
}

static bool
is_disguised(Oid indexoid)
{
	ListCell   *lc;

	foreach(lc, arbiters)
	{
		if (RelationGetRelid(((RoutedArbiter *) lfirst(lc))->index) == indexoid)
			return true;
	}
	return false;
}

/*
 * What get_relation_info makes of an ordered index that is not a btree:
 * the btree operator family of each column's "<" operator sorts it.
 */
static void
undisguise_index_info(IndexOptInfo *info)
{
	info->relam = forst_key_am;
	info->tree_height = -1;
	for (int i = 0; i < info->nkeycolumns; i++)
	{
		Oid			ltopr;
		Oid			btopfamily;
		Oid			btopcintype;
		int16		btstrategy;

		ltopr = get_opfamily_member(info->opfamily[i], info->opcintype[i],
									info->opcintype[i], BTLessStrategyNumber);
		if (OidIsValid(ltopr) &&
			get_ordering_op_properties(ltopr, &btopfamily, &btopcintype,
									   &btstrategy) &&
			btopcintype == info->opcintype[i] &&
			btstrategy == BTLessStrategyNumber)
			info->sortopfamily[i] = btopfamily;
		else
		{
			info->sortopfamily = NULL;
			info->reverse_sort = NULL;
			info->nulls_first = NULL;
			return;
		}
	}
}

static void
routed_get_relation_info(PlannerInfo *root, Oid relationObjectId,
						 bool inhparent, RelOptInfo *rel)
{
	ListCell   *lc;

	if (prev_get_relation_info)
		prev_get_relation_info(root, relationObjectId, inhparent, rel);
	if (arbiters == NIL)
		return;
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *info = lfirst(lc);

		if (info->relam == BTREE_AM_OID && is_disguised(info->indexoid))
		{
			/* sortopfamily was the opfamily array itself: a copy of its own */
			if (info->sortopfamily == info->opfamily)
				info->sortopfamily = (Oid *) palloc(sizeof(Oid) * info->nkeycolumns);
			undisguise_index_info(info);
		}
	}
}

void
forst_routed_arbiters_init(void)
{
	prev_get_relation_info = get_relation_info_hook;
	get_relation_info_hook = routed_get_relation_info;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = routed_ExecutorEnd;
	CacheRegisterRelcacheCallback(routed_relcache_callback, (Datum) 0);
	RegisterXactCallback(routed_xact_callback, NULL);
	RegisterSubXactCallback(routed_subxact_callback, NULL);
}
