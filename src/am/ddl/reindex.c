/*-------------------------------------------------------------------------
 *
 * reindex.c
 *	  REINDEX ... CONCURRENTLY of forst tables (ddl/reindex.h).
 *
 * PostgreSQL rebuilds an index concurrently by building a copy next to it
 * (CREATE INDEX CONCURRENTLY's three phases) and swapping the two.  That
 * works for a forst secondary index that is not UNIQUE: writers write the
 * copy's entries from the moment they see it, and the old index's entries
 * go when it is dropped.  Not for the rest:
 *
 *	- a UNIQUE index: writers check a unique index as soon as they see it,
 *	  ready or not, and the copy's build would hold them up (its entries
 *	  are the building transaction's, which they wait for);
 *	- the primary key: its copy would be built as a unique secondary index
 *	  (the copy is no primary key until the swap), whose entries nobody
 *	  would remove after the swap made it the key.
 *
 * These are refused before anything is built, so that no invalid copy is
 * left behind: the index itself, the table that has one, or a schema or
 * database with such a table.  A forst primary key holds nothing to
 * rebuild, and REINDEX without CONCURRENTLY rebuilds the others.
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
#include "commands/defrem.h"
#include "miscadmin.h"
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

/* Whether index indexoid is a primary key (primary) or UNIQUE. */
static bool
index_flag(Oid indexoid, bool primary)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index ind;
	bool		flag;

	if (!HeapTupleIsValid(tup))
		return false;
	ind = (Form_pg_index) GETSTRUCT(tup);
	flag = primary ? ind->indisprimary : ind->indisunique;
	ReleaseSysCache(tup);
	return flag;
}

static bool
is_unique_index(Oid indexoid)
{
	return index_flag(indexoid, false);
}

/* The first primary key or UNIQUE index of forst table relid, or InvalidOid. */
static Oid
unique_index_of(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		if (is_unique_index(lfirst_oid(lc)))
		{
			found = lfirst_oid(lc);
			break;
		}
	}
	list_free(indexes);
	table_close(rel, AccessShareLock);
	return found;
}

static void
refuse(const char *what, Oid relid, Oid indexoid)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot reindex %s concurrently: index \"%s\" of forst table \"%s\" is %s",
					what, get_rel_name(indexoid), get_rel_name(relid),
					index_flag(indexoid, true) ? "its primary key" : "UNIQUE"),
			 errdetail("A forst primary key holds no entries to rebuild, and writers would wait for the concurrent build of a unique index."),
			 errhint("Use REINDEX without CONCURRENTLY for this index, and REINDEX INDEX CONCURRENTLY for the table's other indexes.")));
}

/* Refuses a forst table of the given schema (or any, if InvalidOid). */
static void
check_tables_in(Oid nspid, const char *what)
{
	Relation	pg_class = table_open(RelationRelationId, AccessShareLock);
	TableScanDesc scan = table_beginscan_catalog(pg_class, 0, NULL);
	HeapTuple	tup;

	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);
		Oid			indexoid;

		if (c->relkind != RELKIND_RELATION ||
			(OidIsValid(nspid) && c->relnamespace != nspid) ||
			!is_forst_table(c->oid))
			continue;
		indexoid = unique_index_of(c->oid);
		if (OidIsValid(indexoid))
		{
			Oid			relid = c->oid;

			table_endscan(scan);
			table_close(pg_class, AccessShareLock);
			refuse(what, relid, indexoid);
		}
	}
	table_endscan(scan);
	table_close(pg_class, AccessShareLock);
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
			if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_INDEX)
				return;
			if (is_forst_table(IndexGetRelation(relid, false)) &&
				is_unique_index(relid))
				refuse("index", IndexGetRelation(relid, false), relid);
			break;
		case REINDEX_OBJECT_TABLE:
			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
			if (OidIsValid(relid) && is_forst_table(relid))
			{
				Oid			indexoid = unique_index_of(relid);

				if (OidIsValid(indexoid))
					refuse("table", relid, indexoid);
			}
			break;
		case REINDEX_OBJECT_SCHEMA:
			{
				Oid			nspid = get_namespace_oid(stmt->name, true);

				if (OidIsValid(nspid))
					check_tables_in(nspid, "schema");
			}
			break;
		case REINDEX_OBJECT_DATABASE:
			check_tables_in(InvalidOid, "database");
			break;
		case REINDEX_OBJECT_SYSTEM:
			break;				/* catalogs only */
	}
}
