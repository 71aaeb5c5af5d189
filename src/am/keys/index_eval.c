/*-------------------------------------------------------------------------
 *
 * index_eval.c
 *	  The predicates of partial secondary indexes and the expressions of
 *	  expression indexes, evaluated on a forst row (keys/index_entry.h).
 *
 * An index's predicate and expressions are prepared once, where the index
 * is described for writers (the relation info cache, keys/rel.c), for a
 * scan or for a build, in a memory context of their own that goes with
 * the description.  They are evaluated without an executor: an index's
 * predicate and expressions are immutable and have no parameters or
 * subqueries, so a standalone expression context and a virtual slot over
 * the row's deformed columns are all they need.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_index.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "am/keys/index_entry.h"

typedef struct ForstIndexEval
{
	TupleTableSlot *slot;		/* the row, as the Vars see it */
	ExprState  *predicate;		/* the WHERE, or NULL */
	ExprContext *pred_econtext; /* reset after each evaluation */
	int			nexprs;
	ExprState **exprs;			/* the expression columns, in order */
	ExprContext *expr_econtext; /* reset before each row's evaluation */
} ForstIndexEval;

void
forst_secondary_prepare(Relation heap, Relation index, MemoryContext mcxt,
						ForstSecondary *s)
{
	bool		partial = !heap_attisnull(index->rd_indextuple,
										  Anum_pg_index_indpred, NULL);
	MemoryContext cxt;
	MemoryContext old;
	ForstIndexEval *e;

	if (!partial && !s->has_exprs)
		return;
	cxt = AllocSetContextCreate(mcxt, "forst index expressions",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	e = palloc0(sizeof(ForstIndexEval));

	/*
	 * A copy of the table's descriptor: a copy is not reference counted, so
	 * no resource owner tracks a slot that outlives the transaction.
	 */
	e->slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(heap)),
									   &TTSOpsVirtual);
	if (partial)
	{
		/* planned (constants folded, operators looked up) by the relcache */
		e->predicate = ExecInitQual(RelationGetIndexPredicate(index), NULL);
		e->pred_econtext = CreateStandaloneExprContext();
	}
	if (s->has_exprs)
	{
		List	   *exprs = RelationGetIndexExpressions(index);
		ListCell   *lc;
		int			i = 0;

		e->nexprs = list_length(exprs);
		e->exprs = palloc(sizeof(ExprState *) * e->nexprs);
		foreach(lc, exprs)
			e->exprs[i++] = ExecInitExpr((Expr *) lfirst(lc), NULL);
		e->expr_econtext = CreateStandaloneExprContext();
	}
	MemoryContextSwitchTo(old);
	s->eval = e;
	s->eval_cxt = cxt;
}

void
forst_secondary_release(ForstSecondary *s)
{
	if (s->eval_cxt)
		MemoryContextDelete(s->eval_cxt);
	s->eval = NULL;
	s->eval_cxt = NULL;
}

void
forst_secondaries_free(ForstSecondary *s, int n)
{
	if (s == NULL)
		return;
	for (int i = 0; i < n; i++)
		forst_secondary_release(&s[i]);
	pfree(s);
}

/* Puts the row into e's slot, for the Vars of its expressions. */
static void
store_row(ForstIndexEval *e, Datum *values, bool *isnull)
{
	TupleTableSlot *slot = e->slot;
	int			natts = slot->tts_tupleDescriptor->natts;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, isnull, sizeof(bool) * natts);
	ExecStoreVirtualTuple(slot);
}

bool
forst_secondary_holds(const ForstSecondary *s, Datum *values, bool *isnull)
{
	ForstIndexEval *e = s->eval;
	bool		holds;

	if (e == NULL || e->predicate == NULL)
		return true;
	store_row(e, values, isnull);
	e->pred_econtext->ecxt_scantuple = e->slot;
	holds = ExecQual(e->predicate, e->pred_econtext);
	ResetExprContext(e->pred_econtext);
	return holds;
}

void
forst_secondary_values(const ForstSecondary *s, Datum *values, bool *isnull,
					   Datum *out, bool *outnull)
{
	ForstIndexEval *e = s->eval;
	int			j = 0;

	if (s->has_exprs)
	{
		if (e == NULL || e->exprs == NULL)
			elog(ERROR, "forst: the expressions of index %u are not prepared",
				 s->indexoid);
		ResetExprContext(e->expr_econtext);
		store_row(e, values, isnull);
		e->expr_econtext->ecxt_scantuple = e->slot;
	}
	for (int i = 0; i < s->natts; i++)
	{
		if (s->attnums[i] != 0)
		{
			out[i] = values[s->attnums[i] - 1];
			outnull[i] = isnull[s->attnums[i] - 1];
			continue;
		}
		if (j >= e->nexprs)
			elog(ERROR, "forst: index %u has more expression columns than expressions",
				 s->indexoid);
		/* in the per-tuple memory, which the next row's call resets */
		{
			MemoryContext old = MemoryContextSwitchTo(e->expr_econtext->ecxt_per_tuple_memory);

			out[i] = ExecEvalExpr(e->exprs[j++], e->expr_econtext, &outnull[i]);
			MemoryContextSwitchTo(old);
		}
	}
}
