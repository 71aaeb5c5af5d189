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

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "access/reloptions.h"
#include "commands/defrem.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/relcache.h"

#include "am/keys/index_entry.h"
#include "am/keys/rel.h"
#include "lsm/coding.h"
#include "lsm/ikey.h"
#include "lsm/sst.h"

void
forst_secondary_describe(Relation heap, Relation index, ForstSecondary *s)
{
	s->indexoid = RelationGetRelid(index);
	namestrcpy(&s->name, RelationGetRelationName(index));
	s->valid = index->rd_index->indisvalid;
	s->ready = index->rd_index->indisready;
	s->entry_id = forst_index_entry_id(index);
	s->natts = index->rd_index->indnkeyatts;
	s->unique = index->rd_index->indisunique;
	s->nulls_not_distinct = index->rd_index->indnullsnotdistinct;
	/* forst_secondary_prepare makes its WHERE and expressions ready */
	s->eval = NULL;
	s->eval_cxt = NULL;
	s->has_exprs = false;
	for (int i = 0; i < s->natts; i++)
	{
		AttrNumber	attnum = index->rd_index->indkey.values[i];

		if (attnum < 0 || attnum > RelationGetDescr(heap)->natts)
			elog(ERROR, "forst: index \"%s\" has a column that is not a table column",
				 RelationGetRelationName(index));
		s->attnums[i] = attnum;
		s->has_exprs |= (attnum == 0);
		/* an expression's type is the index column's */
		s->typids[i] = getBaseType(attnum == 0 ?
								   TupleDescAttr(RelationGetDescr(index), i)->atttypid :
								   TupleDescAttr(RelationGetDescr(heap), attnum - 1)->atttypid);
		s->encode[i] = forst_key_encoder(s->typids[i]);
		s->bytewise[i] = !OidIsValid(index->rd_indcollation[i]) ||
			forst_collation_is_bytewise(index->rd_indcollation[i]);
		if (s->encode[i] == NULL)
			elog(ERROR, "forst: index \"%s\" has a column forst cannot encode",
				 RelationGetRelationName(index));
	}
}

/*
 * The secondary indexes of rel.  An index being built is among them, as in
 * the executor's list: rows written from here on get its entries.  An
 * index that DROP INDEX CONCURRENTLY has made dead (not indislive) is not:
 * nothing reads it any more, and its entries are about to get tombstones
 * (ddl/index_drop.c).
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

		/*
		 * By the catalog's access method: while an INSERT ... ON CONFLICT
		 * routes rows through a partitioned table, the relcache entry of a
		 * partition's unique index says btree (write/routed_arbiters.c).
		 */
		if (forst_index_am(indexoid) != forst_key_am || idx->rd_index->indisprimary ||
			!idx->rd_index->indislive)
		{
			index_close(idx, AccessShareLock);
			continue;
		}
		s = &res[n++];
		forst_secondary_describe(rel, idx, s);
		forst_secondary_prepare(rel, idx, mcxt, s);
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
		Oid			coll = index->rd_indcollation[i];
		Oid			typid;
		char	   *colname;

		if (attnum == 0)
		{
			/* an expression: the index column has its type */
			typid = TupleDescAttr(RelationGetDescr(index), i)->atttypid;
			colname = psprintf("%d of the index (an expression)", i + 1);
		}
		else
		{
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(heap), attnum - 1);

			typid = att->atttypid;
			colname = psprintf("\"%s\"", NameStr(att->attname));
		}
		if (forst_key_encoder(typid) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index \"%s\" on table \"%s\" cannot be a forst index: column %s has type %s",
							name, RelationGetRelationName(heap),
							colname, format_type_be(typid)),
					 errhint("Index columns may be of the types a forst primary key may have.")));
		if (OidIsValid(coll) && !get_collation_isdeterministic(coll))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index \"%s\" on table \"%s\" cannot be a forst index: column %s has nondeterministic collation \"%s\"",
							name, RelationGetRelationName(heap),
							colname, get_collation_name(coll)),
					 errdetail("forst indexes compare bytes: strings that are equal must have equal bytes."),
					 attnum == 0 ?
					 errhint("Create the index with the expression COLLATE \"C\".") :
					 errhint("Create the index with %s COLLATE \"C\".",
							 quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(heap), attnum - 1)->attname)))));
		pfree(colname);
	}
}

void
forst_index_entry_head(StringInfo out, uint32 entry_id)
{
	char		b[FORST_INDEX_ENTRY_HEAD];

	fst_put_be16(b, FST_KG_INDEX);
	b[2] = (char) ((entry_id >> 24) & 0xFF);
	b[3] = (char) ((entry_id >> 16) & 0xFF);
	b[4] = (char) ((entry_id >> 8) & 0xFF);
	b[5] = (char) (entry_id & 0xFF);
	appendBinaryStringInfo(out, b, sizeof(b));
}

static relopt_kind index_relopt_kind;

void
forst_index_options_init(void)
{
	index_relopt_kind = add_reloption_kind();
	add_real_reloption(index_relopt_kind, "entry_id",
					   "the id the entries of this forst index carry (set by forst.attach)",
					   0, 0, (double) PG_UINT32_MAX, AccessExclusiveLock);
	add_int_reloption(index_relopt_kind, "fillfactor",
					  "accepted for btree's sake; forst indexes have no pages to fill",
					  90, 10, 100, ShareUpdateExclusiveLock);
	add_bool_reloption(index_relopt_kind, "deduplicate_items",
					   "accepted for btree's sake; each forst index entry is one row's",
					   true, ShareUpdateExclusiveLock);
}

bytea *
forst_index_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"entry_id", RELOPT_TYPE_REAL, offsetof(ForstIndexOptions, entry_id)},
		{"fillfactor", RELOPT_TYPE_INT, offsetof(ForstIndexOptions, fillfactor)},
		{"deduplicate_items", RELOPT_TYPE_BOOL, offsetof(ForstIndexOptions, deduplicate_items)}
	};
	ForstIndexOptions *opts;

	opts = (ForstIndexOptions *) build_reloptions(reloptions, validate,
												  index_relopt_kind,
												  sizeof(ForstIndexOptions),
												  tab, lengthof(tab));
	if (validate && opts != NULL && opts->entry_id != floor(opts->entry_id))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("entry_id must be a whole number")));
	return (bytea *) opts;
}

uint32
forst_index_entry_id(Relation index)
{
	ForstIndexOptions *opts = (ForstIndexOptions *) index->rd_options;

	if (opts != NULL && opts->entry_id >= 1)
		return (uint32) opts->entry_id;
	return (uint32) RelationGetRelid(index);
}

uint32
forst_index_entry_id_of(Oid indexoid)
{
	Relation	index = index_open(indexoid, AccessShareLock);
	uint32		id = forst_index_entry_id(index);

	index_close(index, AccessShareLock);
	return id;
}

void
forst_index_entry_columns(const ForstSecondary *s, Datum *values, bool *isnull,
						  StringInfo out)
{
	Datum		v[INDEX_MAX_KEYS];
	bool		n[INDEX_MAX_KEYS];

	forst_secondary_values(s, values, isnull, v, n);
	for (int i = 0; i < s->natts; i++)
	{
		if (n[i])
			appendStringInfoChar(out, FORST_INDEX_NULL);
		else
		{
			appendStringInfoChar(out, FORST_INDEX_NOTNULL);
			s->encode[i] (out, v[i]);
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
	forst_index_entry_head(out, s->entry_id);
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

size_t
forst_index_entry_prefix_len(FstSlice user_part)
{
	FstSlice	columns,
				row;

	if (user_part.len < FORST_INDEX_ENTRY_HEAD ||
		fst_get_be16(user_part.data) != FST_KG_INDEX ||
		!forst_index_entry_split(fst_slice(user_part.data + FST_KG_BYTES,
										   user_part.len - FST_KG_BYTES),
								 &columns, &row))
		return 0;
	return (size_t) (columns.data + columns.len - user_part.data);
}

void
forst_index_prefix_options(FstSstOptions *opt)
{
	opt->prefix_of = forst_index_entry_prefix_len;
	opt->prefix_id = FORST_PREFIX_RULE_INDEX_COLUMNS;
}

void
forst_check_entry_id(Relation heap, Relation index)
{
	uint32		mine = forst_index_entry_id(index);
	List	   *indexes = RelationGetIndexList(heap);
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Oid			other = lfirst_oid(lc);
		Relation	o;
		bool		same;

		if (other == RelationGetRelid(index))
			continue;
		o = index_open(other, AccessShareLock);
		same = o->rd_rel->relam == index->rd_rel->relam &&
			!o->rd_index->indisprimary && forst_index_entry_id(o) == mine;
		if (same)
		{
			bool		set = forst_index_entry_id(index) != RelationGetRelid(index);

			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("index \"%s\" of forst table \"%s\" would share its entries with index \"%s\"",
							RelationGetRelationName(index), RelationGetRelationName(heap),
							RelationGetRelationName(o)),
					 errdetail("Both would carry entry id %u.", mine),
					 set ? errhint("Give it another entry_id, or none.") :
					 errhint("Create the index again: it gets another OID.")));
		}
		index_close(o, AccessShareLock);
	}
	list_free(indexes);
}
