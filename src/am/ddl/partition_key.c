/*-------------------------------------------------------------------------
 *
 * partition_key.c
 *	  Which partitioned tables are forst's, and the relabelling of their
 *	  unique indexes between btree and forst_key (ddl/partition.h).
 *
 * A partitioned table's index stores nothing; it is the template of its
 * partitions' indexes, which PostgreSQL creates with the same access
 * method and attaches to it.  A forst partition's indexes are forst_key
 * indexes, so a partitioned table whose partitions are forst tables needs
 * forst_key indexes.  PostgreSQL 15 creates a partitioned unique index
 * (the primary key too) only as a btree, so such an index is created as a
 * btree and relabelled here: its access method becomes forst_key and its
 * key columns' operator classes forst's defaults for the same types (the
 * same operators and comparison functions as btree's, forst--1.0.sql), with
 * the dependencies that go with them; or back, for a statement that needs
 * PostgreSQL to see a btree (ddl/partition.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"
#include "access/xact.h"

#include "am/ddl/foreign_keys.h"
#include "am/ddl/migrate.h"
#include "am/ddl/partition.h"
#include "am/ddl/utility.h"
#include "am/keys/keycodec.h"
#include "am/keys/rel.h"

bool
forst_default_am_is_forst(void)
{
	return default_table_access_method != NULL &&
		strcmp(default_table_access_method, "forst") == 0;
}

Oid
forst_partitioned_key_index(Oid relid)
{
	Relation	rel;
	Oid			keyidx;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return InvalidOid;
	rel = relation_open(relid, AccessShareLock);
	keyidx = forst_partitioned_key(rel);
	relation_close(rel, AccessShareLock);
	return keyidx;
}

/* Whether partitioned table rel has a forst_key index besides its key. */
static bool
has_forst_secondary(Relation rel)
{
	Oid			forst_key_am = get_index_am_oid("forst_key", false);
	Oid			keyidx = forst_primary_key_index(rel);
	ListCell   *lc;

	foreach(lc, RelationGetIndexList(rel))
	{
		Oid			idx = lfirst_oid(lc);

		if (idx != keyidx && forst_index_am(idx) == forst_key_am)
			return true;
	}
	return false;
}

bool
forst_partitioned_is_forst(Oid relid)
{
	Relation	rel;
	bool		result;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	rel = relation_open(relid, AccessShareLock);
	result = OidIsValid(forst_partitioned_key(rel)) || has_forst_secondary(rel);
	relation_close(rel, AccessShareLock);
	return result;
}

bool
forst_partitioned_index_is_forst(Oid relid)
{
	bool		any;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	if (forst_partitioned_is_forst(relid))
		return true;
	return forst_partition_leaves_all_forst(relid, &any) && (any || forst_default_am_is_forst());
}

/*
 * Whether every leaf partition of rel is a forst table (true with none)
 * and whether it has any partition at all.
 */
bool
forst_partition_leaves_all_forst(Oid relid, bool *any)
{
	List	   *all = find_all_inheritors(relid, NoLock, NULL);
	ListCell   *lc;
	bool		result = true;

	*any = false;
	foreach(lc, all)
	{
		Oid			child = lfirst_oid(lc);

		if (child == relid)
			continue;
		*any = true;
		if (get_rel_relkind(child) == RELKIND_RELATION &&
			!forst_relid_is_forst_table(child))
			result = false;
	}
	return result;
}

/*
 * The relabelling: the index's access method becomes to_am (forst_key, or
 * btree for a moment, see forst_partition_before_create) and its key
 * columns' operator classes to_am's defaults, in place of the defaults of
 * the access method it has.
 */
void
forst_relabel_partitioned_index(Relation parent, Oid indexoid, Oid to_am)
{
	Oid			from_am = forst_index_am(indexoid);
	TupleDesc	desc = RelationGetDescr(parent);
	HeapTuple	tup;
	Form_pg_index idx;
	oidvector  *oldclass;
	Oid		   *classes;
	int			nkeys;
	bool		isnull;

	const char *what;

	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	idx = (Form_pg_index) GETSTRUCT(tup);
	nkeys = idx->indnkeyatts;
	what = idx->indisprimary ? "primary key" : "unique index";
	for (int i = 0; i < nkeys; i++)
		if (idx->indkey.values[i] == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s \"%s\" of partitioned table \"%s\" has an expression column",
							what, get_rel_name(indexoid), RelationGetRelationName(parent)),
					 errhint("Create the unique index on each partition.")));

	/*
	 * A key's columns must be ones a forst key can hold (a unique index's
	 * are checked when each partition builds its copy)
	 */
	if (idx->indisprimary)
		forst_check_key_columns(desc, nkeys, idx->indkey.values);

	/* indclass has one entry per key column (INCLUDE columns have none) */
	oldclass = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, tup,
															 Anum_pg_index_indclass,
															 &isnull));
	classes = palloc(sizeof(Oid) * nkeys);
	for (int i = 0; i < nkeys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, idx->indkey.values[i] - 1);
		Oid			defclass = GetDefaultOpClass(att->atttypid, from_am);

		/* a key that foreign keys reference has btree's twin classes */
		if (oldclass->values[i] != defclass &&
			(from_am == BTREE_AM_OID ||
			 oldclass->values[i] != forst_btree_twin_class(defclass)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s \"%s\" of partitioned table \"%s\" uses a non-default operator class on column \"%s\"",
							what, get_rel_name(indexoid), RelationGetRelationName(parent),
							NameStr(att->attname)),
					 errdetail("The partitions of this table are forst tables, whose keys use the default ordering of their types.")));
		classes[i] = GetDefaultOpClass(att->atttypid, to_am);
		if (!OidIsValid(classes[i]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst: %s column \"%s\" has type %s, which forst cannot index",
							what, NameStr(att->attname), format_type_be(att->atttypid))));
	}
	ReleaseSysCache(tup);

	forst_set_key_index_am(indexoid, to_am, classes, nkeys);

	CacheInvalidateRelcache(parent);
	CommandCounterIncrement();

	/*
	 * An index created in this transaction keeps its relcache entry, of
	 * which an invalidation reloads pg_class and pg_index's flags only: its
	 * access method routine and operator families are loaded again here
	 * (as index_create loads them), or ALTER INDEX ... ATTACH PARTITION
	 * later in the transaction would compare a partition's key with btree's
	 * operator families.
	 */
	{
		Relation	index = index_open(indexoid, AccessExclusiveLock);

		if (index->rd_createSubid != InvalidSubTransactionId)
			RelationInitIndexAccessInfo(index);
		index_close(index, NoLock);
	}
}

List *
forst_partitioned_unique_indexes(Relation rel, Oid am)
{
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, RelationGetIndexList(rel))
	{
		Oid			idx = lfirst_oid(lc);
		HeapTuple	tup;
		bool		unique;

		if (forst_index_am(idx) != am)
			continue;
		tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(idx));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for index %u", idx);
		unique = ((Form_pg_index) GETSTRUCT(tup))->indisunique;
		ReleaseSysCache(tup);
		if (unique)
			out = lappend_oid(out, idx);
	}
	return out;
}
