/*-------------------------------------------------------------------------
 *
 * reindex.c
 *	  REINDEX ... CONCURRENTLY on forst tables (ddl/reindex.h).
 *
 * It is refused before anything happens, with a hint, for the indexes of
 * forst tables (also reached through a partitioned table or index, a
 * schema or a database):
 *
 *	- the copy that it builds of a primary key is no primary key until the
 *	  swap, so it would be built as a unique secondary index with entries
 *	  (which nothing would remove once it is the key), and writers wait for
 *	  the concurrent build of a unique index (ddl/index_stmt.c refuses
 *	  CREATE UNIQUE INDEX CONCURRENTLY for that reason);
 *	- the copy of an index made by forst.attach inherits its entry_id
 *	  storage parameter, which two indexes of a table cannot share;
 *	- the drop of the old index commits inside the statement, after the
 *	  point where forst writes the tombstones of a dropped index's entries
 *	  (ddl/index_drop.c).
 *
 * REINDEX without CONCURRENTLY rebuilds a secondary index (a forst primary
 * key holds nothing to rebuild), and CREATE INDEX CONCURRENTLY of a new
 * index followed by DROP INDEX CONCURRENTLY of the old one does what
 * REINDEX CONCURRENTLY would, without blocking writers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "am/ddl/reindex.h"

static bool
concurrently(ReindexStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->params)
	{
		DefElem    *opt = lfirst(lc);

		if (strcmp(opt->defname, "concurrently") == 0)
			return defGetBoolean(opt);
	}
	return false;
}

/*
 * By its pg_class row, without opening the relation: a schema's or a
 * database's tables are looked at here, and forst_relid_is_forst_table
 * (ddl/utility.c) would lock each of them.
 */
static bool
is_forst_table(Oid relid)
{
	Oid			am;
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

	if (!HeapTupleIsValid(tup))
		return false;
	am = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
	return OidIsValid(am) && strcmp(get_am_name(am), "forst") == 0;
}

/* Whether relid, or a partition below it, is a forst table. */
static bool
has_forst_table(Oid relid)
{
	List	   *rels;
	ListCell   *lc;
	bool		found = false;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return is_forst_table(relid);
	rels = find_all_inheritors(relid, NoLock, NULL);
	foreach(lc, rels)
		found |= is_forst_table(lfirst_oid(lc));
	list_free(rels);
	return found;
}

/* Whether index indexoid, or an index partition below it, is a forst table's. */
static bool
has_forst_index(Oid indexoid)
{
	List	   *rels;
	ListCell   *lc;
	bool		found = false;

	if (get_rel_relkind(indexoid) != RELKIND_PARTITIONED_INDEX)
		return is_forst_table(IndexGetRelation(indexoid, false));
	rels = find_all_inheritors(indexoid, NoLock, NULL);
	foreach(lc, rels)
		found |= is_forst_table(IndexGetRelation(lfirst_oid(lc), false));
	list_free(rels);
	return found;
}

static void
refuse(const char *what, const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot reindex %s \"%s\" concurrently: it has indexes of forst tables", what, name),
			 errdetail("A concurrent rebuild would leave the old index's entries behind in the table."),
			 errhint("Use REINDEX without CONCURRENTLY, or CREATE INDEX CONCURRENTLY of a new index and DROP INDEX CONCURRENTLY of the old one.")));
}

/* Refuses a forst table of the given schema (or any, if InvalidOid). */
static void
check_tables_in(Oid nspid, const char *what, const char *name)
{
	Relation	pg_class = table_open(RelationRelationId, AccessShareLock);
	TableScanDesc scan = table_beginscan_catalog(pg_class, 0, NULL);
	HeapTuple	tup;
	bool		found = false;

	while (!found && (tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

		found = c->relkind == RELKIND_RELATION &&
			(!OidIsValid(nspid) || c->relnamespace == nspid) &&
			is_forst_table(c->oid);
	}
	table_endscan(scan);
	table_close(pg_class, AccessShareLock);
	if (found)
		refuse(what, name);
}

void
forst_check_reindex_stmt(ReindexStmt *stmt)
{
	Oid			relid;

	if (!concurrently(stmt))
		return;
	switch (stmt->kind)
	{
		case REINDEX_OBJECT_INDEX:
			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
			if (OidIsValid(relid) &&
				(get_rel_relkind(relid) == RELKIND_INDEX ||
				 get_rel_relkind(relid) == RELKIND_PARTITIONED_INDEX) &&
				has_forst_index(relid))
				refuse("index", stmt->relation->relname);
			break;
		case REINDEX_OBJECT_TABLE:
			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
			if (OidIsValid(relid) && has_forst_table(relid))
				refuse("table", stmt->relation->relname);
			break;
		case REINDEX_OBJECT_SCHEMA:
			{
				Oid			nspid = get_namespace_oid(stmt->name, true);

				if (OidIsValid(nspid))
					check_tables_in(nspid, "schema", stmt->name);
			}
			break;
		case REINDEX_OBJECT_DATABASE:
			check_tables_in(InvalidOid, "database", stmt->name ? stmt->name : get_database_name(MyDatabaseId));
			break;
		case REINDEX_OBJECT_SYSTEM:
			break;				/* catalogs only */
	}
}
