/*-------------------------------------------------------------------------
 *
 * batch_lookup.c
 *	  Batched key lookups for INSERT ... ON CONFLICT into a forst table
 *	  (see write/batch_lookup.h).
 *
 * ModifyTable takes its input one row at a time, and for ON CONFLICT looks
 * each row's key up before it inserts or updates (write/onconflict.c).  On
 * an s3:// store a key whose block is not cached costs one ranged GET,
 * waited for before the next row is even read: a batch of 5,000 upserts
 * into state far larger than the cache waits for thousands of requests
 * one after another.  Flink's ForSt answers the same problem with an
 * asynchronous state API, RocksDB with MultiGet: ask for many keys at once
 * and let the storage fetch in parallel.
 *
 * PostgreSQL's executor has no asynchronous lookups, but the keys of the
 * coming rows are known before ModifyTable asks for them: they are in the
 * rows of its input.  So a planner hook puts a plan node between an
 * INSERT ... ON CONFLICT's ModifyTable and its input (a CustomScan whose
 * outer plan is the input, shown by EXPLAIN as "Custom Scan
 * (ForstBatchLookup)").  The node reads up to forst.batch_lookup_rows rows
 * ahead (fewer if their bytes would pass work_mem, or if their keys'
 * blocks would not fit in an eighth of the disk cache: a batch's blocks
 * must still be cached when its lookups read them), encodes their keys,
 * and has read/prefetch.c fetch, in parallel into the disk cache, the
 * metadata of the files those keys may be in and then the block each key's
 * lookup will read first (the engine names them: lsm/lookup_plan.h).
 * Then it hands the rows to ModifyTable unchanged, one by one; the lookups
 * run exactly as without the node and find their blocks cached.  The
 * pipeline's SQL needs no change.
 *
 * Correctness does not depend on the node: it changes which reads are
 * cached when a lookup runs, never what a lookup answers (the same MVCC
 * rules, key locks and waits for concurrent writers apply, row by row).
 * What it does change is when the input is evaluated: up to a batch of
 * input rows are computed before the first of them is inserted, as a Sort
 * or an Agg below ModifyTable would.  A statement whose input could
 * observe its own inserts that way -- one calling a volatile function -- is
 * left unbatched.
 *
 * The node is planned only where prefetching can pay (s3:// with the disk
 * cache on; a file:// store reads its files through the page cache) and
 * only for inputs of more than one row (not INSERT ... VALUES of one row).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/keys/rel.h"
#include "am/read/prefetch.h"
#include "am/read/stage.h"
#include "am/write/batch_lookup.h"

#define BATCH_LOOKUP_NAME "ForstBatchLookup"

typedef struct BatchLookupState
{
	CustomScanState css;
	Relation	rel;			/* the ON CONFLICT target */
	ForstRelInfo *info;
	bool		active;			/* batching (else rows pass through) */
	MemoryContext batch_cxt;	/* the batch's rows and keys */
	MinimalTuple *rows;
	int			cap;			/* rows per batch, as set at the start */
	int			nrows;
	int			next;			/* next row to hand out */
	bool		input_done;
	TupleTableSlot *out;		/* the rows handed to ModifyTable */
	ForstPrefetchKeysStats stats;
	uint64		stage_hits0;	/* forst_stage_hits() at the start */
	uint64		stage_hits;		/* the node's, once it ended */
	bool		ended;
} BatchLookupState;

static planner_hook_type prev_planner = NULL;

static Node *batch_create_state(CustomScan *cscan);
static void batch_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *batch_exec(CustomScanState *node);
static void batch_end(CustomScanState *node);
static void batch_rescan(CustomScanState *node);
static void batch_explain(CustomScanState *node, List *ancestors,
						  ExplainState *es);

static const CustomScanMethods batch_plan_methods = {
	.CustomName = BATCH_LOOKUP_NAME,
	.CreateCustomScanState = batch_create_state,
};

static const CustomExecMethods batch_exec_methods = {
	.CustomName = BATCH_LOOKUP_NAME,
	.BeginCustomScan = batch_begin,
	.ExecCustomScan = batch_exec,
	.EndCustomScan = batch_end,
	.ReScanCustomScan = batch_rescan,
	.ExplainCustomScan = batch_explain,
};

/* ---------------------------------------------------------------------- */
/* Planning                                                               */

/*
 * Whether the INSERT's input (child) delivers rows whose key columns can be
 * read in place: one entry per attribute of rel, in attribute order (as
 * the planner makes an INSERT's target list), the key columns of their
 * attributes' types.
 */
static bool
input_has_keys(Relation rel, ForstRelInfo *info, Plan *child)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			n = 0;
	ListCell   *lc;

	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (tle->resjunk)
			return false;
		n++;
		if (tle->resno != n)
			return false;
	}
	if (n != desc->natts)
		return false;
	for (int i = 0; i < info->nkeys; i++)
	{
		AttrNumber	a = info->keyattrs[i];
		TargetEntry *tle = list_nth_node(TargetEntry, child->targetlist, a - 1);

		if (exprType((Node *) tle->expr) != TupleDescAttr(desc, a - 1)->atttypid)
			return false;
	}
	return true;
}

/* Whether mt is an INSERT ... ON CONFLICT into a keyed forst table. */
static bool
wants_batching(PlannedStmt *stmt, ModifyTable *mt)
{
	Plan	   *child = outerPlan(mt);
	RangeTblEntry *rte;
	Relation	rel;
	bool		ok = false;

	if (mt->operation != CMD_INSERT || mt->onConflictAction == ONCONFLICT_NONE ||
		list_length(mt->resultRelations) != 1 || mt->rootRelation != 0 ||
		child == NULL)
		return false;
	/* exactly one row (INSERT ... VALUES of one row): nothing to batch */
	if (IsA(child, Result) && outerPlan(child) == NULL)
		return false;
	rte = rt_fetch(linitial_int(mt->resultRelations), stmt->rtable);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION)
		return false;
	/* the planner holds a lock on the target */
	rel = table_open(rte->relid, NoLock);
	if (forst_is_forst_relation(rel))
	{
		ForstRelInfo *info = forst_relinfo(rel);

		ok = info->codec != NULL && input_has_keys(rel, info, child);
	}
	table_close(rel, NoLock);
	return ok;
}

/* mt's input, with the batching node put over it. */
static void
add_batch_node(ModifyTable *mt)
{
	Plan	   *child = outerPlan(mt);
	CustomScan *cscan = makeNode(CustomScan);
	List	   *tlist = NIL;
	ListCell   *lc;

	/*
	 * The node's output is its input's row: Vars of the outer plan (as a
	 * Material node's), constants as they are (ModifyTable insists on NULL
	 * constants for dropped columns).  The node never projects.
	 */
	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Expr	   *expr;

		if (IsA(tle->expr, Const))
			expr = (Expr *) copyObject(tle->expr);
		else
			expr = (Expr *) makeVarFromTargetEntry(OUTER_VAR, tle);
		tlist = lappend(tlist, makeTargetEntry(expr, tle->resno, tle->resname,
											   tle->resjunk));
	}
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.startup_cost = child->startup_cost;
	cscan->scan.plan.total_cost = child->total_cost;
	cscan->scan.plan.plan_rows = child->plan_rows;
	cscan->scan.plan.plan_width = child->plan_width;
	cscan->scan.plan.parallel_aware = false;
	cscan->scan.plan.parallel_safe = false;
	/* only parallel query uses plan_node_id, and an INSERT runs serially */
	cscan->scan.plan.plan_node_id = child->plan_node_id;
	cscan->scan.plan.extParam = bms_copy(child->extParam);
	cscan->scan.plan.allParam = bms_copy(child->allParam);
	cscan->scan.plan.lefttree = child;
	cscan->scan.scanrelid = 0;
	cscan->custom_private = list_make1_int(linitial_int(mt->resultRelations));
	cscan->methods = &batch_plan_methods;
	outerPlan(mt) = (Plan *) cscan;
}

static void
batch_plan(PlannedStmt *stmt, Plan *plan)
{
	if (plan != NULL && IsA(plan, ModifyTable) &&
		wants_batching(stmt, (ModifyTable *) plan))
		add_batch_node((ModifyTable *) plan);
}

static PlannedStmt *
batch_planner(Query *parse, const char *query_string, int cursorOptions,
			  ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	ListCell   *lc;

	if (prev_planner)
		stmt = prev_planner(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);

	if (!forst_batch_lookups ||
		(stmt->commandType == CMD_SELECT && !stmt->hasModifyingCTE) ||
		stmt->commandType == CMD_UTILITY || !forst_prefetch_possible() ||
		contain_volatile_functions((Node *) parse))
		return stmt;
	batch_plan(stmt, stmt->planTree);
	/* data-modifying CTEs */
	foreach(lc, stmt->subplans)
		batch_plan(stmt, (Plan *) lfirst(lc));
	return stmt;
}

/* ---------------------------------------------------------------------- */
/* Execution                                                              */

static Node *
batch_create_state(CustomScan *cscan)
{
	BatchLookupState *s = palloc0(sizeof(BatchLookupState));

	NodeSetTag(s, T_CustomScanState);
	s->css.methods = &batch_exec_methods;
	return (Node *) s;
}

static void
batch_begin(CustomScanState *node, EState *estate, int eflags)
{
	BatchLookupState *s = (BatchLookupState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *child;

	child = ExecInitNode(outerPlan(cscan), estate, eflags);
	outerPlanState(s) = child;
	s->rel = ExecGetRangeTableRelation(estate, linitial_int(cscan->custom_private));
	s->info = forst_relinfo(s->rel);
	s->active = forst_batch_lookups && forst_batch_lookup_rows > 1 &&
		s->info->codec != NULL && forst_prefetch_possible() &&
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0;
	if (!s->active)
		return;
	s->out = ExecInitExtraTupleSlot(estate, ExecGetResultType(child),
									&TTSOpsMinimalTuple);
	s->batch_cxt = AllocSetContextCreate(CurrentMemoryContext,
										 "forst batch lookup",
										 ALLOCSET_DEFAULT_SIZES);
	s->cap = forst_batch_lookup_rows;
	s->rows = palloc(sizeof(MinimalTuple) * s->cap);
	s->stage_hits0 = forst_stage_hits();
}

/*
 * Rows of the next batch: as many as forst_prefetch_budget() holds at the
 * bytes per key planned so far (at first a guess of 16 kB: a key's block
 * straddles two 8 kB units of the cache), at most forst.batch_lookup_rows.
 * With a small cache, batches are small rather than fetching blocks the
 * cache evicts before their lookups read them.
 */
static int
next_batch_rows(BatchLookupState *s)
{
	double		per_key = 16384.0;
	double		rows;

	if (s->stats.keys > 0 && s->stats.bytes_planned > 0)
		per_key = Max((double) s->stats.bytes_planned / s->stats.keys, 512.0);
	rows = (double) forst_prefetch_budget() / per_key;
	return (int) Max(1.0, Min((double) s->cap, rows));
}

/* Reads the next batch of input rows and prefetches their keys' blocks. */
static void
batch_fill(BatchLookupState *s)
{
	PlanState  *child = outerPlanState(s);
	Size		limit = (Size) work_mem * 1024;
	Size		bytes = 0;
	int			rows = next_batch_rows(s);
	FstSlice   *keys;
	int			nkeys = 0;
	StringInfoData buf;
	MemoryContext old;

	MemoryContextReset(s->batch_cxt);
	s->nrows = s->next = 0;
	keys = MemoryContextAlloc(s->batch_cxt, sizeof(FstSlice) * s->cap);
	old = MemoryContextSwitchTo(s->batch_cxt);
	initStringInfo(&buf);
	MemoryContextSwitchTo(old);

	while (s->nrows < rows && bytes < limit)
	{
		/* the input runs in the executor's context, as it would unbatched */
		TupleTableSlot *in = ExecProcNode(child);
		MinimalTuple row;
		bool		null_key = false;

		if (TupIsNull(in))
		{
			s->input_done = true;
			break;
		}
		old = MemoryContextSwitchTo(s->batch_cxt);
		row = ExecCopySlotMinimalTuple(in);
		s->rows[s->nrows++] = row;
		bytes += row->t_len;

		/* its key; a NULL key column is ModifyTable's error to raise */
		slot_getallattrs(in);
		for (int i = 0; i < s->info->nkeys; i++)
			null_key |= in->tts_isnull[s->info->keyattrs[i] - 1];
		if (!null_key)
		{
			char	   *k;

			/*
			 * no table state: a fenced table or a key group the table does
			 * not own is the insert's error to raise
			 */
			forst_row_user_part(s->info, in, NULL, &buf);
			k = palloc(buf.len);
			memcpy(k, buf.data, buf.len);
			keys[nkeys++] = fst_slice(k, buf.len);
		}
		MemoryContextSwitchTo(old);
	}
	forst_prefetch_keys(s->rel, keys, nkeys, &s->stats);
}

static TupleTableSlot *
batch_exec(CustomScanState *node)
{
	BatchLookupState *s = (BatchLookupState *) node;

	if (!s->active)
		return ExecProcNode(outerPlanState(s));
	if (s->next >= s->nrows)
	{
		if (s->input_done)
			return NULL;
		batch_fill(s);
		if (s->nrows == 0)
			return NULL;
	}
	ExecStoreMinimalTuple(s->rows[s->next++], s->out, false);
	return s->out;
}

static void
batch_end(CustomScanState *node)
{
	BatchLookupState *s = (BatchLookupState *) node;

	ExecEndNode(outerPlanState(s));
	if (s->batch_cxt)
		MemoryContextDelete(s->batch_cxt);
	if (s->active)
	{
		s->stage_hits = forst_stage_hits() - s->stage_hits0;
		s->ended = true;
		forst_stage_reset();
	}
}

static void
batch_rescan(CustomScanState *node)
{
	BatchLookupState *s = (BatchLookupState *) node;

	if (s->batch_cxt)
		MemoryContextReset(s->batch_cxt);
	s->nrows = s->next = 0;
	s->input_done = false;
	ExecReScan(outerPlanState(s));
}

static void
batch_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BatchLookupState *s = (BatchLookupState *) node;

	if (!s->active && es->analyze)
	{
		ExplainPropertyText("Batching", "off", es);
		return;
	}
	ExplainPropertyInteger("Batch Rows", NULL, s->active ? s->cap : forst_batch_lookup_rows, es);
	if (!es->analyze)
		return;
	ExplainPropertyInteger("Batches", NULL, (int64) s->stats.batches, es);
	ExplainPropertyInteger("Keys", NULL, (int64) s->stats.keys, es);
	ExplainPropertyInteger("Keys in Memtables", NULL, (int64) s->stats.keys_held, es);
	ExplainPropertyInteger("Keys in No File", NULL, (int64) s->stats.keys_absent, es);
	ExplainPropertyInteger("Files", NULL, (int64) s->stats.files, es);
	ExplainPropertyInteger("Blocks Planned", NULL, (int64) s->stats.blocks, es);
	ExplainPropertyInteger("Blocks Over Budget", NULL, (int64) s->stats.blocks_over_budget, es);
	ExplainPropertyInteger("Bytes Fetched Ahead", "kB", (int64) ((s->stats.bytes + 1023) / 1024), es);
	ExplainPropertyInteger("Batches Held in Memory", NULL, (int64) s->stats.staged_batches, es);
	ExplainPropertyInteger("Bytes Held in Memory", "kB", (int64) ((s->stats.staged_bytes + 1023) / 1024), es);
	ExplainPropertyInteger("Requests for Them", NULL, (int64) s->stats.staged_requests, es);
	/* EXPLAIN ANALYZE prints before the node ends */
	ExplainPropertyInteger("Reads from Memory", NULL,
						   (int64) (s->ended ? s->stage_hits :
									forst_stage_hits() - s->stage_hits0), es);
}

void
forst_batch_lookup_init(void)
{
	RegisterCustomScanMethods(&batch_plan_methods);
	prev_planner = planner_hook;
	planner_hook = batch_planner;
}
