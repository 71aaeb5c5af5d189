/*-------------------------------------------------------------------------
 *
 * onconflict.c
 *	  INSERT ... ON CONFLICT on forst tables.
 *
 * PostgreSQL's executor does ON CONFLICT with "speculative insertion"
 * (nodeModifyTable.c, ExecInsert):
 *
 *	 1. ExecCheckIndexConstraints scans each arbiter index with a dirty
 *		snapshot for a row with the same key; if one is in progress it
 *		waits for its transaction and looks again; if one exists the
 *		statement takes the DO NOTHING / DO UPDATE path.
 *	 2. Otherwise it inserts the row with table_tuple_insert_speculative,
 *		then the index entries with ExecInsertIndexTuples(noDupErr), where
 *		a unique index asked for UNIQUE_CHECK_PARTIAL returns false on a
 *		conflict (a row that appeared since step 1): "specConflict".
 *	 3. table_tuple_complete_speculative(succeeded = !specConflict); on a
 *		conflict the executor starts over at step 1.
 *
 * Three things stand in the way for forst, and this file deals with them.
 *
 * (a) Opening the arbiter indexes.  Step 1 needs IndexInfo.ii_UniqueOps,
 *	   ii_UniqueProcs and ii_UniqueStrats, which ExecOpenIndices(rri,
 *	   speculative = true) fills through BuildSpeculativeIndexInfo, and that
 *	   function refuses every index AM but btree ("unexpected non-btree
 *	   speculative unique index").  Since PostgreSQL 14 the executor opens a
 *	   result relation's indexes lazily, in ExecInsert, and only if
 *	   ri_IndexRelationDescs is still NULL.  So an ExecutorStart_hook lets
 *	   the standard ExecutorStart run unchanged, then finds every
 *	   ModifyTableState with ON CONFLICT whose result relation is a forst
 *	   table and opens its indexes first: ExecOpenIndices(rri, false), then
 *	   the same three arrays BuildSpeculativeIndexInfo would compute, from
 *	   the forst_key opfamilies (they use btree's strategy numbers, so "="
 *	   is strategy 3).  ExecInsert then finds the indexes open and uses
 *	   them; nothing else of the executor changes.  Forst partitions
 *	   reached through their partitioned table, whose key is forst's
 *	   (ddl/partition.c), are opened by PostgreSQL itself when the first
 *	   row is routed to each: write/routed_arbiters.c prepares them.
 *
 * (b) Speculative insertion in the table AM.  forst decides whether a key
 *	   is free and writes the row in one step under the key lock
 *	   (write/dml.c): after waiting for any in-progress writer of the key,
 *	   it either appends the row or, if a live row is there, appends
 *	   nothing.  forst_tuple_insert_speculative records which of the two
 *	   happened (forst_spec_*), fkey_insert answers UNIQUE_CHECK_PARTIAL
 *	   from that record (false: conflict), and complete_speculative only
 *	   forgets it.  No "super-delete" is ever needed: a row is appended
 *	   only when its key and the values of its unique secondary indexes
 *	   are free (write/index_entries.h), all checked under their locks
 *	   before anything is written, so no later index insertion can find
 *	   a conflict for a row that was appended.  A conflict in an index
 *	   that is not an arbiter (UNIQUE_CHECK_YES) is a unique violation,
 *	   raised by fkey_insert as btree would.  Other backends never see a
 *	   half-decided row: they see an ordinary in-progress insert, whose
 *	   transaction they wait for (no speculative token is needed).
 *
 * (c) The executor reads xmin from the conflicting row's slot in two
 *	   places (ExecCheckTupleVisible, and the "cannot affect row a second
 *	   time" case of ExecOnConflictUpdate), which a minimal-tuple slot
 *	   cannot provide.  forst_onconflict_check_lock and
 *	   forst_onconflict_satisfies_snapshot raise what PostgreSQL would
 *	   raise there, before the executor gets that far.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/index.h"
#include "catalog/pg_index.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "am/keys/rel.h"
#include "am/read/mvcc.h"
#include "am/write/onconflict.h"
#include "am/write/routed_arbiters.h"

static ExecutorStart_hook_type prev_ExecutorStart = NULL;

/* ---------------------------------------------------------------------- */
/* (a) Opening the arbiter indexes                                         */

/* What BuildSpeculativeIndexInfo does, for any AM with btree strategies. */
static void
fill_speculative_info(Relation index, IndexInfo *ii)
{
	int			n = IndexRelationGetNumberOfKeyAttributes(index);
	int			i;

	ii->ii_UniqueOps = (Oid *) palloc(sizeof(Oid) * n);
	ii->ii_UniqueProcs = (Oid *) palloc(sizeof(Oid) * n);
	ii->ii_UniqueStrats = (uint16 *) palloc(sizeof(uint16) * n);
	for (i = 0; i < n; i++)
	{
		ii->ii_UniqueStrats[i] = BTEqualStrategyNumber;
		ii->ii_UniqueOps[i] = get_opfamily_member(index->rd_opfamily[i],
												  index->rd_opcintype[i],
												  index->rd_opcintype[i],
												  BTEqualStrategyNumber);
		if (!OidIsValid(ii->ii_UniqueOps[i]))
			elog(ERROR, "missing operator %d(%u,%u) in opfamily %u",
				 BTEqualStrategyNumber, index->rd_opcintype[i],
				 index->rd_opcintype[i], index->rd_opfamily[i]);
		ii->ii_UniqueProcs[i] = get_opcode(ii->ii_UniqueOps[i]);
	}
}

/* Opens the indexes of a forst result relation for speculative insertion. */
static void
open_arbiter_indexes(ResultRelInfo *rri)
{
	int			i;

	ExecOpenIndices(rri, false);
	for (i = 0; i < rri->ri_NumIndices; i++)
	{
		Relation	index = rri->ri_IndexRelationDescs[i];
		IndexInfo  *ii = rri->ri_IndexRelationInfo[i];

		if (!ii->ii_Unique)
			continue;
		if (index->rd_rel->relam == BTREE_AM_OID)
			BuildSpeculativeIndexInfo(index, ii);
		else
			fill_speculative_info(index, ii);
	}
}

/*
 * Whether partitioned table rel has a unique forst_key index (its key, or
 * one that ddl/partition_unique.c made): its forst partitions have copies.
 */
static bool
has_forst_unique(Relation rel)
{
	Oid			forst_key_am = get_index_am_oid("forst_key", false);
	ListCell   *lc;

	foreach(lc, RelationGetIndexList(rel))
	{
		Oid			indexoid = lfirst_oid(lc);
		HeapTuple	tup;
		bool		unique;

		tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
		if (!HeapTupleIsValid(tup))
			continue;
		unique = ((Form_pg_index) GETSTRUCT(tup))->indisunique;
		ReleaseSysCache(tup);
		if (unique && forst_index_am(indexoid) == forst_key_am)
			return true;
	}
	return false;
}

static bool
prepare_planstate(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, ModifyTableState))
	{
		ModifyTableState *mts = (ModifyTableState *) ps;
		ModifyTable *node = (ModifyTable *) ps->plan;
		int			i;

		if (node->onConflictAction != ONCONFLICT_NONE)
		{
			for (i = 0; i < mts->mt_nrels; i++)
			{
				ResultRelInfo *rri = &mts->resultRelInfo[i];
				Relation	rel = rri->ri_RelationDesc;

				if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE &&
					has_forst_unique(rel))
					forst_routed_arbiters_open(ps->state, rel);
				if (rel->rd_rel->relkind == RELKIND_RELATION &&
					forst_is_forst_relation(rel) &&
					rel->rd_rel->relhasindex &&
					rri->ri_IndexRelationDescs == NULL)
					open_arbiter_indexes(rri);
			}
		}
	}
	return planstate_tree_walker(ps, prepare_planstate, context);
}

static void
forst_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	ListCell   *lc;

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) ||
		(queryDesc->operation != CMD_INSERT &&
		 !queryDesc->plannedstmt->hasModifyingCTE))
		return;
	(void) prepare_planstate(queryDesc->planstate, NULL);
	/* data-modifying CTEs */
	foreach(lc, queryDesc->estate->es_subplanstates)
		(void) prepare_planstate((PlanState *) lfirst(lc), NULL);
}

void
forst_onconflict_init(void)
{
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = forst_ExecutorStart;
	forst_routed_arbiters_init();
}

/* ---------------------------------------------------------------------- */
/* (b) The outcome of the last speculative insertion                       */

static struct
{
	bool		active;
	Oid			conflict_index; /* InvalidOid: the row was written */
	Oid			relid;
	ItemPointerData tid;
} spec;

void
forst_spec_begin(Relation rel, ItemPointer tid, Oid conflict_index)
{
	spec.active = true;
	spec.conflict_index = conflict_index;
	spec.relid = RelationGetRelid(rel);
	spec.tid = *tid;
}

bool
forst_spec_conflicts(Relation index, Relation heap, ItemPointer tid)
{
	return spec.active && heap != NULL &&
		spec.relid == RelationGetRelid(heap) &&
		ItemPointerEquals(&spec.tid, tid) &&
		spec.conflict_index == RelationGetRelid(index);
}

void
forst_spec_end(Relation rel)
{
	spec.active = false;
}

/* ---------------------------------------------------------------------- */
/* (c) Where the executor would read xmin                                  */

/*
 * Before table_tuple_lock: a version this command wrote is "invisible" to
 * heap_lock_tuple (TM_Invisible), which ExecOnConflictUpdate reports as
 * the row being affected a second time.  Elsewhere (ExecLockRows, EPQ) a
 * scan cannot return such a version.
 */
void
forst_onconflict_check_lock(Relation rel, ItemPointer tid, CommandId cid)
{
	ForstVersion v;

	FstEntryHeader hdr;

	if (!forst_fetch_version(rel, tid, &v))
		return;
	hdr = v.entry.hdr;
	forst_version_free(&v);
	if (hdr.flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED))
		return;
	if (TransactionIdIsCurrentTransactionId(hdr.xid) &&
		hdr.cid >= cid)
		ereport(ERROR,
				(errcode(ERRCODE_CARDINALITY_VIOLATION),
		/* translator: %s is a SQL command name */
				 errmsg("%s command cannot affect row a second time",
						"ON CONFLICT DO UPDATE"),
				 errhint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")));
}

/*
 * table_tuple_satisfies_snapshot with an MVCC snapshot is only called by
 * ExecCheckTupleVisible (REPEATABLE READ and SERIALIZABLE ON CONFLICT),
 * which raises a serialization failure if the conflicting row is invisible
 * and not our own transaction's.  Given visible = false, this raises that
 * error itself, or says "visible" for our own rows (which the executor
 * accepts), so that the executor never asks the slot for xmin.
 */
bool
forst_onconflict_satisfies_snapshot(Snapshot snapshot, TransactionId xid,
									bool visible)
{
	if (visible || snapshot->snapshot_type != SNAPSHOT_MVCC)
		return visible;
	if (TransactionIdIsCurrentTransactionId(xid))
		return true;
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent update")));
	return false;
}
