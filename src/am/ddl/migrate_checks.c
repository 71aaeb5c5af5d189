/*-------------------------------------------------------------------------
 *
 * migrate_checks.c
 *	  What keeps a table from changing to forst (ddl/migrate_checks.h):
 *	  the refusals of ALTER TABLE ... SET ACCESS METHOD forst, made before
 *	  anything changes, with SQLSTATE 0A000 and a hint (docs/migration.md).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_index.h"
#include "catalog/pg_opclass.h"
#include "catalog/toasting.h"
#include "commands/defrem.h"
#include "commands/tablecmds.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "am/ddl/publication.h"
#include "am/keys/keycodec.h"
#include "am/ddl/migrate.h"
#include "am/ddl/migrate_checks.h"
#include "am/keys/index_entry.h"

void
forst_migrate_refuse(Relation rel, const char *target, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot change the access method of table \"%s\" to %s: %s",
					RelationGetRelationName(rel), target, what)));
}

static const char *
opclass_name(Oid opclass)
{
	HeapTuple	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclass));
	char	   *name;

	if (!HeapTupleIsValid(tup))
		return "?";
	name = pstrdup(NameStr(((Form_pg_opclass) GETSTRUCT(tup))->opcname));
	ReleaseSysCache(tup);
	return name;
}

/*
 * Foreign keys may reference a forst table's primary key only
 * (ddl/foreign_keys.c): refuses one that references another unique index
 * of rel.
 */
static void
check_referenced_by_key(Relation rel)
{
	Relation	conrel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	Oid			pkindex = RelationGetPrimaryKeyIndex(rel);

	conrel = table_open(ConstraintRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_constraint_confrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(RelationGetRelid(rel)));
	scan = systable_beginscan(conrel, InvalidOid, false, NULL, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		Form_pg_constraint con = (Form_pg_constraint) GETSTRUCT(tup);

		if (con->contype != CONSTRAINT_FOREIGN || con->conindid == pkindex)
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: foreign key \"%s\" of table \"%s\" references a unique index other than its primary key",
						RelationGetRelationName(rel), NameStr(con->conname),
						get_rel_name(con->conrelid)),
				 errdetail("Foreign keys may reference only the primary key of a forst table."),
				 errhint("Drop the foreign key first (ALTER TABLE %s DROP CONSTRAINT %s), or keep the table on heap.",
						 quote_identifier(get_rel_name(con->conrelid)),
						 quote_identifier(NameStr(con->conname)))));
	}
	systable_endscan(scan);
	table_close(conrel, AccessShareLock);
}

static bool
forst_index_is_primary(Oid indexoid)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	bool		result;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	result = ((Form_pg_index) GETSTRUCT(tup))->indisprimary;
	ReleaseSysCache(tup);
	return result;
}

/* The index of rel's primary key, deferrable or not, or InvalidOid. */
Oid
forst_primary_key_index(Relation rel)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			result = InvalidOid;

	foreach(lc, indexes)
	{
		if (forst_index_is_primary(lfirst_oid(lc)))
			result = lfirst_oid(lc);
	}
	list_free(indexes);
	return result;
}

/* Refuses an index other than the primary key, naming what it is. */
static void
refuse_other_index(Relation rel, Oid indexoid)
{
	Oid			conoid = get_index_constraint(indexoid);
	char	   *idxname = get_rel_name(indexoid);
	char		contype = 0;

	if (OidIsValid(conoid))
	{
		HeapTuple	tup = SearchSysCache1(CONSTROID, ObjectIdGetDatum(conoid));

		if (HeapTupleIsValid(tup))
		{
			contype = ((Form_pg_constraint) GETSTRUCT(tup))->contype;
			ReleaseSysCache(tup);
		}
	}
	if (contype == CONSTRAINT_EXCLUSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: it has exclusion constraint \"%s\"",
						RelationGetRelationName(rel),
						get_constraint_name(conoid)),
				 errdetail("forst tables support no exclusion constraints."),
				 errhint("Drop the constraint first (ALTER TABLE %s DROP CONSTRAINT %s), or make its columns the primary key.",
						 quote_identifier(RelationGetRelationName(rel)),
						 quote_identifier(get_constraint_name(conoid)))));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot change the access method of table \"%s\" to forst: it has index \"%s\"",
					RelationGetRelationName(rel), idxname),
			 errdetail("Besides its primary key, a forst table can have btree indexes on plain columns, without WHERE, and immediate UNIQUE constraints: they become forst indexes."),
			 errhint("Drop the index first (DROP INDEX %s), then change the access method.",
					 quote_identifier(idxname))));
}

static void
migration_context(void *arg)
{
	errcontext("changing the access method of table \"%s\" to forst",
			   RelationGetRelationName((Relation) arg));
}

/*
 * An index other than the primary key of a table going to forst: a plain
 * btree becomes a secondary index (tableam/secondary.h) if forst can hold
 * it; anything else is refused.
 */
static void
check_other_index(Relation rel, Oid indexoid)
{
	Relation	idx;
	ErrorContextCallback cb;

	Oid			conoid = get_index_constraint(indexoid);

	/* a UNIQUE constraint's index becomes a unique secondary index */
	if (OidIsValid(conoid))
	{
		HeapTuple	tup = SearchSysCache1(CONSTROID, ObjectIdGetDatum(conoid));
		char		contype = 0;

		if (HeapTupleIsValid(tup))
		{
			contype = ((Form_pg_constraint) GETSTRUCT(tup))->contype;
			ReleaseSysCache(tup);
		}
		if (contype != CONSTRAINT_UNIQUE)
			refuse_other_index(rel, indexoid);
	}
	idx = index_open(indexoid, AccessShareLock);
	if (idx->rd_rel->relam != BTREE_AM_OID)
	{
		index_close(idx, AccessShareLock);
		refuse_other_index(rel, indexoid);
	}
	cb.callback = migration_context;
	cb.arg = rel;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	forst_check_index_columns(rel, idx);
	error_context_stack = cb.previous;
	index_close(idx, AccessShareLock);
}

/*
 * The primary key of a table going to forst: a plain, immediate btree
 * with the default operator classes on columns forst can use as a key.
 */
static void
check_primary_key(Relation rel, Oid indexoid)
{
	Relation	idx = index_open(indexoid, AccessShareLock);
	Form_pg_index ind = idx->rd_index;
	TupleDesc	desc = RelationGetDescr(rel);
	const char *name = RelationGetRelationName(idx);
	oidvector  *indclass;
	Datum		d;
	bool		isnull;
	int			i;

	d = SysCacheGetAttr(INDEXRELID, idx->rd_indextuple,
						Anum_pg_index_indclass, &isnull);
	Assert(!isnull);
	indclass = (oidvector *) DatumGetPointer(d);

	if (idx->rd_rel->relam != BTREE_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: its primary key \"%s\" is not a btree index",
						RelationGetRelationName(rel), name)));
	if (!ind->indimmediate)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: its primary key \"%s\" is deferrable",
						RelationGetRelationName(rel), name),
				 errdetail("forst checks a key when the row is written."),
				 errhint("Make the primary key NOT DEFERRABLE first (drop and re-add it).")));
	if (!ind->indisvalid || !ind->indisready)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot change the access method of table \"%s\" to forst: its primary key index \"%s\" is not valid",
						RelationGetRelationName(rel), name),
				 errhint("REINDEX the index first.")));
	if (ind->indnatts != ind->indnkeyatts)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: its primary key \"%s\" has INCLUDE columns",
						RelationGetRelationName(rel), name),
				 errhint("Re-create the primary key without INCLUDE first.")));
	if (idx->rd_options != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: its primary key index \"%s\" has storage parameters",
						RelationGetRelationName(rel), name),
				 errhint("Reset them first: ALTER INDEX %s RESET (...).",
						 quote_identifier(name))));

	for (i = 0; i < ind->indnkeyatts; i++)
	{
		AttrNumber	attnum = ind->indkey.values[i];
		Form_pg_attribute att;

		if (attnum <= 0)
			forst_migrate_refuse(rel, "forst", "its primary key has an expression column");
		att = TupleDescAttr(desc, attnum - 1);
		if (idx->rd_indcollation[i] != att->attcollation)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot change the access method of table \"%s\" to forst: its primary key \"%s\" uses another collation than column \"%s\"",
							RelationGetRelationName(rel), name, NameStr(att->attname))));
		if (!forst_key_type_supported(att->atttypid))
			forst_check_key_columns(desc, 1, &attnum);	/* raises the error */
		if (OidIsValid(att->attcollation) &&
			!forst_collation_is_bytewise(att->attcollation))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot change the access method of table \"%s\" to forst: key column \"%s\" has collation \"%s\"",
							RelationGetRelationName(rel), NameStr(att->attname),
							get_collation_name(att->attcollation)),
					 errdetail("forst keys compare bytes: key columns of collatable types must use collation \"C\" or \"POSIX\"."),
					 errhint("Change the column's collation first, which changes how it sorts and compares: "
							 "ALTER TABLE %s ALTER COLUMN %s TYPE %s COLLATE \"C\".",
							 quote_identifier(RelationGetRelationName(rel)),
							 quote_identifier(NameStr(att->attname)),
							 format_type_with_typemod(att->atttypid, att->atttypmod))));
		if (indclass->values[i] != GetDefaultOpClass(att->atttypid, BTREE_AM_OID))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot change the access method of table \"%s\" to forst: its primary key \"%s\" uses operator class %s",
							RelationGetRelationName(rel), name,
							opclass_name(indclass->values[i])),
					 errdetail("forst keys are equal when their bytes are, as with the default operator class."),
					 errhint("Re-create the primary key with the default operator class first.")));
	}
	/* every rule of CREATE TABLE ... USING forst, as the key is built */
	forst_check_key_columns(desc, ind->indnkeyatts, ind->indkey.values);
	index_close(idx, AccessShareLock);
}

void
forst_migrate_check_to_forst(Relation rel)
{
	List	   *indexes;
	ListCell   *lc;

	forst_refuse_migrating_published(rel);

	if (rel->rd_rel->relkind != RELKIND_RELATION)
		forst_migrate_refuse(rel, "forst", "only tables can use access method forst");
	/* an unlogged table becomes a checkpoint-durable forst table */
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: forst tables cannot be temporary",
						RelationGetRelationName(rel))));
	if (rel->rd_rel->relispartition)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: it is a partition",
						RelationGetRelationName(rel)),
				 errdetail("A partition's indexes belong to the partitioned table's indexes, which are btrees."),
				 errhint("Detach the partition first, or create a forst table and copy the rows.")));
	check_referenced_by_key(rel);

	/* a deferrable primary key is no rd_pkindex: look at indisprimary */
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);

		if (forst_index_is_primary(indexoid))
			check_primary_key(rel, indexoid);
		else
			check_other_index(rel, indexoid);
	}
	list_free(indexes);
}
