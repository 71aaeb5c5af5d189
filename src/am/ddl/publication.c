/*-------------------------------------------------------------------------
 *
 * publication.c
 *	  Logical replication and forst tables: refused where PostgreSQL would
 *	  otherwise publish nothing without saying so.
 *
 * Logical decoding turns WAL into row changes only for the resource
 * managers that have a decode callback.  forst writes its rows as its own
 * WAL records (wal/wal.h), and forst's resource manager has no decode
 * callback, so a publication that contains a forst table sends none of its
 * changes: a subscriber would quietly fall behind.  So:
 *
 *	- naming a forst table in CREATE/ALTER PUBLICATION ... TABLE is an
 *	  error (0A000, with a hint), and so is naming a partitioned table
 *	  with a forst partition, or creating a forst partition of a
 *	  partitioned table that is published;
 *	- a publication FOR ALL TABLES or FOR TABLES IN SCHEMA that covers
 *	  forst tables, and a forst table created where such a publication
 *	  covers it, get a WARNING that names what will not be published.
 *
 * Physical replication is unaffected: streaming standbys replay forst's
 * records (wal/replay.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_publication.h"
#include "commands/defrem.h"
#include "nodes/parsenodes.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/ddl/publication.h"
#include "am/ddl/utility.h"

#define NOT_DECODED_DETAIL \
	"Logical decoding does not see the changes of forst tables: forst writes them as WAL records of its own, which it does not decode."
#define NOT_DECODED_HINT \
	"Publish heap tables only, or replicate the whole server with a streaming standby, which replays forst tables."

/*
 * How many forst tables there are in namespace nspid (InvalidOid: in the
 * whole database).
 */
static int
count_forst_tables(Oid nspid)
{
	Relation	classrel = table_open(RelationRelationId, AccessShareLock);
	TableScanDesc scan = table_beginscan_catalog(classrel, 0, NULL);
	HeapTuple	tup;
	int			n = 0;
	Oid			forst_am = get_table_am_oid("forst", true);

	if (!OidIsValid(forst_am))
	{
		table_endscan(scan);
		table_close(classrel, AccessShareLock);
		return 0;
	}
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

		if (c->relkind == RELKIND_RELATION && c->relam == forst_am &&
			c->relpersistence == RELPERSISTENCE_PERMANENT &&
			(!OidIsValid(nspid) || c->relnamespace == nspid))
			n++;
	}
	table_endscan(scan);
	table_close(classrel, AccessShareLock);
	return n;
}

/* Refuses publishing relid: a forst table, or a forst partition of it. */
static void
refuse_published(Oid relid, const char *pubname)
{
	List	   *rels;
	ListCell   *lc;

	if (!OidIsValid(relid))
		return;					/* PostgreSQL reports the missing table */
	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		rels = find_all_inheritors(relid, AccessShareLock, NULL);
	else
		rels = list_make1_oid(relid);
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		if (forst_relid_is_forst_table(r))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 r == relid ?
					 errmsg("forst table \"%s\" cannot be added to publication \"%s\"",
							get_rel_name(r), pubname) :
					 errmsg("table \"%s\" cannot be added to publication \"%s\": its partition \"%s\" is a forst table",
							get_rel_name(relid), pubname, get_rel_name(r)),
					 errdetail(NOT_DECODED_DETAIL),
					 errhint(NOT_DECODED_HINT)));
	}
}

static void
warn_covered(const char *pubname, int n, const char *where)
{
	if (n > 0)
		ereport(WARNING,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("publication \"%s\" will not publish the changes of %d forst table%s %s",
						pubname, n, n == 1 ? "" : "s", where),
				 errdetail(NOT_DECODED_DETAIL),
				 errhint(NOT_DECODED_HINT)));
}

/* The checks for CREATE/ALTER PUBLICATION's objects. */
static void
check_pubobjects(const char *pubname, List *pubobjects, bool for_all_tables,
				 bool adding)
{
	ListCell   *lc;

	if (for_all_tables)
		warn_covered(pubname, count_forst_tables(InvalidOid), "in this database");
	if (!adding)
		return;
	foreach(lc, pubobjects)
	{
		PublicationObjSpec *obj = lfirst(lc);

		if (obj->pubobjtype == PUBLICATIONOBJ_TABLE && obj->pubtable != NULL)
			refuse_published(RangeVarGetRelid(obj->pubtable->relation, NoLock, true),
							 pubname);
		else if (obj->pubobjtype == PUBLICATIONOBJ_TABLES_IN_SCHEMA ||
				 obj->pubobjtype == PUBLICATIONOBJ_TABLES_IN_CUR_SCHEMA)
		{
			Oid			nspid;
			char	   *where;

			if (obj->pubobjtype == PUBLICATIONOBJ_TABLES_IN_SCHEMA)
				nspid = get_namespace_oid(obj->name, true);
			else
			{
				List	   *path = fetch_search_path(false);

				nspid = path != NIL ? linitial_oid(path) : InvalidOid;
			}
			if (!OidIsValid(nspid))
				continue;		/* PostgreSQL reports the missing schema */
			where = psprintf("in schema \"%s\"", get_namespace_name(nspid));
			warn_covered(pubname, count_forst_tables(nspid), where);
		}
	}
}

void
forst_check_publication_stmt(Node *parsetree)
{
	if (IsA(parsetree, CreatePublicationStmt))
	{
		CreatePublicationStmt *stmt = (CreatePublicationStmt *) parsetree;

		check_pubobjects(stmt->pubname, stmt->pubobjects, stmt->for_all_tables,
						 true);
	}
	else if (IsA(parsetree, AlterPublicationStmt))
	{
		AlterPublicationStmt *stmt = (AlterPublicationStmt *) parsetree;

		check_pubobjects(stmt->pubname, stmt->pubobjects, stmt->for_all_tables,
						 stmt->action != AP_DropObjects);
	}
}

/* Refuses a forst partition under a published parent (or its ancestors). */
static void
refuse_published_parent(Oid parent)
{
	List	   *parents = list_concat(list_make1_oid(parent),
									  get_partition_ancestors(parent));
	ListCell   *lc;

	foreach(lc, parents)
	{
		List	   *pubs = GetRelationPublications(lfirst_oid(lc));

		if (pubs != NIL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a forst table cannot be a partition of \"%s\", which is in publication \"%s\"",
							get_rel_name(lfirst_oid(lc)),
							get_publication_name(linitial_oid(pubs), false)),
					 errdetail(NOT_DECODED_DETAIL),
					 errhint(NOT_DECODED_HINT)));
	}
}

void
forst_refuse_migrating_published(Relation rel)
{
	List	   *pubs = GetRelationPublications(RelationGetRelid(rel));

	if (pubs != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" to forst: it is in publication \"%s\"",
						RelationGetRelationName(rel),
						get_publication_name(linitial_oid(pubs), false)),
				 errdetail("Logical decoding does not see the changes of forst tables."),
				 errhint("Drop the table from the publication first (ALTER PUBLICATION ... DROP TABLE).")));
}

void
forst_check_attach_partition(AlterTableStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);
		PartitionCmd *pc;

		if (cmd->subtype != AT_AttachPartition || !IsA(cmd->def, PartitionCmd))
			continue;
		pc = (PartitionCmd *) cmd->def;
		if (forst_relid_is_forst_table(RangeVarGetRelid(pc->name, NoLock, true)))
			refuse_published_parent(RangeVarGetRelid(stmt->relation, NoLock, true));
	}
}

void
forst_check_new_table_published(Oid relid)
{
	List	   *pubs;
	ListCell   *lc;

	if (!forst_relid_is_forst_table(relid))
		return;

	/* a partition: a publication of an ancestor would carry its changes */
	if (get_rel_relispartition(relid))
		refuse_published_parent(get_partition_parent(relid, false));

	pubs = list_concat(GetAllTablesPublications(),
					   GetSchemaPublications(get_rel_namespace(relid)));
	foreach(lc, pubs)
	{
		char	   *pubname = get_publication_name(lfirst_oid(lc), true);

		if (pubname != NULL)
			ereport(WARNING,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("publication \"%s\" will not publish the changes of forst table \"%s\"",
							pubname, get_rel_name(relid)),
					 errdetail(NOT_DECODED_DETAIL),
					 errhint(NOT_DECODED_HINT)));
	}
}
