/*-------------------------------------------------------------------------
 *
 * index_entry.c
 *	  Secondary index entries of forst tables: which indexes a table has,
 *	  which columns they may use, and the encoding of an entry's key
 *	  (keys/index_entry.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "catalog/pg_index.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "am/keys/index_entry.h"
#include "lsm/coding.h"
#include "lsm/ikey.h"

void
forst_secondary_describe(Relation heap, Relation index, ForstSecondary *s)
{
	s->indexoid = RelationGetRelid(index);
	s->natts = index->rd_index->indnkeyatts;
	s->unique = index->rd_index->indisunique;
	s->nulls_not_distinct = index->rd_index->indnullsnotdistinct;
	/* forst_secondaries_of prepares a predicate for writers */
	s->predicate = NULL;
	s->predicate_cxt = NULL;
	for (int i = 0; i < s->natts; i++)
	{
		AttrNumber	attnum = index->rd_index->indkey.values[i];

		if (attnum <= 0 || attnum > RelationGetDescr(heap)->natts)
			elog(ERROR, "forst: index \"%s\" has a column that is not a table column",
				 RelationGetRelationName(index));
		s->attnums[i] = attnum;
		s->typids[i] = getBaseType(TupleDescAttr(RelationGetDescr(heap),
												 attnum - 1)->atttypid);
		s->encode[i] = forst_key_encoder(s->typids[i]);
		s->bytewise[i] = !OidIsValid(index->rd_indcollation[i]) ||
			forst_collation_is_bytewise(index->rd_indcollation[i]);
		if (s->encode[i] == NULL)
			elog(ERROR, "forst: index \"%s\" has a column forst cannot encode",
				 RelationGetRelationName(index));
	}
}

/* A partial index's predicate, ready to be evaluated on a row. */
typedef struct ForstIndexPredicate
{
	ExprState  *qual;
	ExprContext *econtext;
	TupleTableSlot *slot;		/* the row, as the predicate's Vars see it */
} ForstIndexPredicate;

/*
 * In a context of its own, long-lived like the array it belongs to: the
 * expression state, a standalone expression context (no executor state:
 * an index predicate has no parameters or subqueries) and a virtual slot
 * of a copy of the table's descriptor (a copy is not reference counted, so
 * no resource owner tracks the slot).
 */
static void
predicate_prepare(Relation heap, Relation index, MemoryContext mcxt,
				  ForstSecondary *s)
{
	MemoryContext cxt = AllocSetContextCreate(mcxt, "forst index predicate",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	ForstIndexPredicate *p = palloc0(sizeof(ForstIndexPredicate));
	List	   *pred = RelationGetIndexPredicate(index);

	p->qual = ExecInitQual(pred, NULL);
	p->econtext = CreateStandaloneExprContext();
	p->slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(heap)),
									   &TTSOpsVirtual);
	MemoryContextSwitchTo(old);
	s->predicate = p;
	s->predicate_cxt = cxt;
}

bool
forst_secondary_holds(const ForstSecondary *s, Datum *values, bool *isnull)
{
	ForstIndexPredicate *p = s->predicate;
	TupleTableSlot *slot;
	bool		holds;
	int			natts;

	if (p == NULL)
		return true;
	slot = p->slot;
	natts = slot->tts_tupleDescriptor->natts;
	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, isnull, sizeof(bool) * natts);
	ExecStoreVirtualTuple(slot);
	p->econtext->ecxt_scantuple = slot;
	holds = ExecQual(p->qual, p->econtext);
	ResetExprContext(p->econtext);
	ExecClearTuple(slot);
	return holds;
}

void
forst_secondaries_free(ForstSecondary *s, int n)
{
	if (s == NULL)
		return;
	for (int i = 0; i < n; i++)
		if (s[i].predicate_cxt)
			MemoryContextDelete(s[i].predicate_cxt);
	pfree(s);
}

/*
 * The secondary indexes of rel.  An index being built is among them, as in
 * the executor's list: rows written from here on get its entries.
 */
int
forst_secondaries_of(Relation rel, Oid pkindex, MemoryContext mcxt,
					 ForstSecondary **out)
{
	List	   *indexes = RelationGetIndexList(rel);
	Oid			forst_key_am = get_index_am_oid("forst_key", true);
	ForstSecondary *res;
	ListCell   *lc;
	int			n = 0;

	*out = NULL;
	if (indexes == NIL || !OidIsValid(forst_key_am))
		return 0;
	res = MemoryContextAllocZero(mcxt, sizeof(ForstSecondary) * list_length(indexes));
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		Relation	idx;
		ForstSecondary *s;

		if (indexoid == pkindex)
			continue;
		idx = index_open(indexoid, AccessShareLock);
		if (idx->rd_rel->relam != forst_key_am || idx->rd_index->indisprimary)
		{
			index_close(idx, AccessShareLock);
			continue;
		}
		s = &res[n++];
		forst_secondary_describe(rel, idx, s);
		if (!heap_attisnull(idx->rd_indextuple, Anum_pg_index_indpred, NULL))
			predicate_prepare(rel, idx, mcxt, s);
		index_close(idx, AccessShareLock);
	}
	list_free(indexes);
	if (n == 0)
	{
		pfree(res);
		return 0;
	}
	*out = res;
	return n;
}

void
forst_check_index_columns(Relation heap, Relation index)
{
	Form_pg_index ix = index->rd_index;
	const char *name = RelationGetRelationName(index);

	if (ix->indisexclusion)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" on table \"%s\" cannot be a forst index: it is an exclusion constraint",
						name, RelationGetRelationName(heap)),
				 errhint("Use a heap table for exclusion constraints.")));
	if (ix->indisunique && !ix->indimmediate)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" on table \"%s\" cannot be a forst index: its unique constraint is deferrable",
						name, RelationGetRelationName(heap)),
				 errdetail("A forst table checks a unique constraint on its secondary index when it writes the row."),
				 errhint("Declare the constraint without DEFERRABLE.")));
	for (int i = 0; i < ix->indnkeyatts; i++)
	{
		AttrNumber	attnum = ix->indkey.values[i];
		Form_pg_attribute att;
		Oid			coll = index->rd_indcollation[i];

		if (attnum <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index \"%s\" on table \"%s\" cannot be a forst index: it is on an expression",
							name, RelationGetRelationName(heap)),
					 errdetail("Column %d of the index is an expression.", i + 1),
					 errhint("Store the expression in a generated column and index that column.")));
		att = TupleDescAttr(RelationGetDescr(heap), attnum - 1);
		if (forst_key_encoder(att->atttypid) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index \"%s\" on table \"%s\" cannot be a forst index: column \"%s\" has type %s",
							name, RelationGetRelationName(heap),
							NameStr(att->attname), format_type_be(att->atttypid)),
					 errhint("Index columns may be of the types a forst primary key may have.")));
		if (OidIsValid(coll) && !get_collation_isdeterministic(coll))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index \"%s\" on table \"%s\" cannot be a forst index: column \"%s\" has nondeterministic collation \"%s\"",
							name, RelationGetRelationName(heap),
							NameStr(att->attname), get_collation_name(coll)),
					 errdetail("forst indexes compare bytes: strings that are equal must have equal bytes."),
					 errhint("Create the index with %s COLLATE \"C\".",
							 quote_identifier(NameStr(att->attname)))));
	}
}

void
forst_index_entry_head(StringInfo out, Oid indexoid)
{
	char		b[FORST_INDEX_ENTRY_HEAD];

	fst_put_be16(b, FST_KG_INDEX);
	b[2] = (char) ((indexoid >> 24) & 0xFF);
	b[3] = (char) ((indexoid >> 16) & 0xFF);
	b[4] = (char) ((indexoid >> 8) & 0xFF);
	b[5] = (char) (indexoid & 0xFF);
	appendBinaryStringInfo(out, b, sizeof(b));
}

void
forst_index_entry_columns(const ForstSecondary *s, Datum *values, bool *isnull,
						  StringInfo out)
{
	for (int i = 0; i < s->natts; i++)
	{
		int			a = s->attnums[i] - 1;

		if (isnull[a])
			appendStringInfoChar(out, FORST_INDEX_NULL);
		else
		{
			appendStringInfoChar(out, FORST_INDEX_NOTNULL);
			s->encode[i] (out, values[a]);
		}
	}
}

void
forst_index_entry_build(const ForstSecondary *s, Datum *values, bool *isnull,
						FstSlice row, StringInfo out)
{
	char		len[2];

	if (row.len > PG_UINT16_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("forst: a primary key of %zu bytes is too long for an index entry",
						row.len)));
	forst_index_entry_head(out, s->indexoid);
	forst_index_entry_columns(s, values, isnull, out);
	appendBinaryStringInfo(out, row.data, row.len);
	fst_put_be16(len, (uint16) row.len);
	appendBinaryStringInfo(out, len, 2);
}

bool
forst_index_entry_split(FstSlice user_key, FstSlice *columns, FstSlice *row)
{
	const unsigned char *p = (const unsigned char *) user_key.data;
	const size_t head = FORST_INDEX_ENTRY_HEAD - FST_KG_BYTES;
	size_t		rowlen;

	if (user_key.len < head + FST_KG_BYTES + 2)
		return false;
	rowlen = ((size_t) p[user_key.len - 2] << 8) | p[user_key.len - 1];
	if (rowlen < FST_KG_BYTES || head + rowlen + 2 > user_key.len)
		return false;
	*row = fst_slice(user_key.data + user_key.len - 2 - rowlen, rowlen);
	*columns = fst_slice(user_key.data + head, user_key.len - 2 - rowlen - head);
	return true;
}
