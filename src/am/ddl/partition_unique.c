/*-------------------------------------------------------------------------
 *
 * partition_unique.c
 *	  UNIQUE indexes of partitioned tables whose partitions are forst
 *	  tables.
 *
 * Each partition of such a table needs a forst_key copy of the index (a
 * unique secondary index of the partition, or the same again one level
 * down), and the partitioned index must be forst_key for PostgreSQL to
 * attach those copies to it and to clone it onto partitions created later.
 * But PostgreSQL 15 creates a partitioned unique index with btree only
 * (DefineIndex checks that the access method can match the partition key's
 * equality operators), as for the primary key (ddl/partition.c).  So
 * CREATE UNIQUE INDEX on such a table runs as pg_dump's form does: the
 * statement creates the index on the partitioned table alone (ONLY), as a
 * btree; when it ends the index is relabelled forst_key (forst's operator
 * classes for the same types, the same equality); then, unless the
 * statement said ONLY, each partition gets CREATE UNIQUE INDEX ... USING
 * forst_key with the same columns, and ALTER INDEX ... ATTACH PARTITION,
 * through SPI in the same transaction (a partitioned partition takes the
 * same way down).  PostgreSQL then marks the index valid once every
 * partition has its copy.  pg_dump's own CREATE UNIQUE INDEX ... ON ONLY,
 * the partitions' indexes and ATTACH PARTITION restore it.
 *
 * Uniqueness is per partition, which the partition key columns in the
 * index (PostgreSQL's rule) make table-wide, as on heap.  Refused: an
 * expression column (a unique constraint, which could be DEFERRABLE, never
 * gets here: ddl/utility.c refuses it on such a table).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/ddl/partition.h"

/* The statement between before and after, and what it needs after. */
static Node *pending_stmt = NULL;
static Oid	pending_parent = InvalidOid;
static List *pending_before = NIL;	/* in TopMemoryContext */
static bool pending_recurse = false;

/* relid's indexes, in TopMemoryContext. */
static List *
indexes_of(Oid relid)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	List	   *out = list_copy(RelationGetIndexList(rel));

	MemoryContextSwitchTo(old);
	relation_close(rel, AccessShareLock);
	return out;
}

/* The index of relid that is not in before (the one just created). */
static Oid
new_index(Oid relid, List *before)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, RelationGetIndexList(rel))
	{
		if (!list_member_oid(before, lfirst_oid(lc)))
			found = lfirst_oid(lc);
	}
	relation_close(rel, AccessShareLock);
	if (!OidIsValid(found))
		elog(ERROR, "forst: the unique index created on \"%s\" was not found",
			 get_rel_name(relid));
	return found;
}

static char *
qualified_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/*
 * What follows "USING forst_key " in the definition of partitioned index
 * indexoid of relid: its columns, INCLUDE, NULLS NOT DISTINCT and WHERE.
 */
static char *
definition_tail(Oid indexoid, Oid relid)
{
	char	   *def = text_to_cstring(DatumGetTextPP(DirectFunctionCall1(pg_get_indexdef,
																		 ObjectIdGetDatum(indexoid))));

	for (int only = 1; only >= 0; only--)
	{
		char	   *head = psprintf("CREATE UNIQUE INDEX %s ON %s%s USING forst_key ",
									quote_identifier(get_rel_name(indexoid)),
									only ? "ONLY " : "", qualified_name(relid));

		if (strncmp(def, head, strlen(head)) == 0)
			return def + strlen(head);
	}
	elog(ERROR, "forst: unexpected definition of index \"%s\": %s",
		 get_rel_name(indexoid), def);
	return NULL;				/* keep compiler quiet */
}

/* The unique forst_key indexes of relid other than its key. */
static List *
unique_secondaries(Oid relid)
{
	Oid			forst_key_am = get_index_am_oid("forst_key", false);
	Relation	rel = relation_open(relid, AccessShareLock);
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, RelationGetIndexList(rel))
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);

		if (index->rd_index->indisunique && !index->rd_index->indisprimary &&
			index->rd_rel->relam == forst_key_am)
			out = lappend_oid(out, RelationGetRelid(index));
		index_close(index, AccessShareLock);
	}
	relation_close(rel, AccessShareLock);
	return out;
}

void
forst_partition_unique_check_attach(Oid parent, Oid child)
{
	List	   *mine = unique_secondaries(parent);
	List	   *theirs;
	ListCell   *lc;

	if (mine == NIL)
		return;
	theirs = unique_secondaries(child);
	foreach(lc, mine)
	{
		char	   *tail = definition_tail(lfirst_oid(lc), parent);
		bool		found = false;
		ListCell   *lc2;

		foreach(lc2, theirs)
			found |= strcmp(definition_tail(lfirst_oid(lc2), child), tail) == 0;
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("partitioned table \"%s\" cannot be attached to \"%s\" without a copy of its unique index \"%s\"",
							get_rel_name(child), get_rel_name(parent),
							get_rel_name(lfirst_oid(lc))),
					 errdetail("PostgreSQL would create it on \"%s\" as an index of access method forst_key, which it cannot do for a partitioned table.",
							   get_rel_name(child)),
					 errhint("Create it first: CREATE UNIQUE INDEX ON %s USING forst_key %s",
							 qualified_name(child), tail)));
	}
}

static void
run_sql(const char *sql)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "forst: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
}

void
forst_partition_unique_before(IndexStmt *stmt, Oid relid)
{
	ListCell   *lc;

	/* left over from a statement that failed between before and after */
	pending_stmt = NULL;
	if (pending_before != NIL)
		list_free(pending_before);
	pending_before = NIL;

	foreach(lc, stmt->indexParams)
	{
		if (lfirst_node(IndexElem, lc)->expr != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a unique index of partitioned table \"%s\" with forst partitions cannot have an expression column",
							stmt->relation->relname),
					 errhint("Create the unique index on each partition.")));
	}
	if (stmt->concurrent)
		return;					/* PostgreSQL refuses it on a partitioned table */

	pending_stmt = (Node *) stmt;
	pending_parent = relid;
	pending_recurse = stmt->relation->inh;
	pending_before = indexes_of(relid);
	stmt->relation->inh = false;
	stmt->accessMethod = pstrdup("btree");
}

void
forst_partition_unique_after(Node *stmt)
{
	Oid			parent = pending_parent;
	List	   *before = pending_before;
	bool		recurse = pending_recurse;
	Oid			forst_key_am;
	Oid			index;
	Relation	rel;
	char	   *tail;
	List	   *children;
	ListCell   *lc;

	if (stmt == NULL || stmt != pending_stmt)
		return;
	pending_stmt = NULL;
	pending_before = NIL;
	pending_parent = InvalidOid;

	forst_key_am = get_index_am_oid("forst_key", false);
	index = new_index(parent, before);
	list_free(before);
	rel = relation_open(parent, AccessExclusiveLock);
	forst_relabel_partitioned_index(rel, index, forst_key_am);
	relation_close(rel, NoLock);
	if (!recurse)
		return;

	tail = definition_tail(index, parent);
	children = find_inheritance_children(parent, AccessExclusiveLock);
	SPI_connect();
	foreach(lc, children)
	{
		Oid			child = lfirst_oid(lc);
		List	   *child_before = indexes_of(child);
		Oid			copy;

		run_sql(psprintf("CREATE UNIQUE INDEX ON %s USING forst_key %s",
						 qualified_name(child), tail));
		copy = new_index(child, child_before);
		list_free(child_before);
		run_sql(psprintf("ALTER INDEX %s ATTACH PARTITION %s",
						 qualified_name(index), qualified_name(copy)));
	}
	SPI_finish();
}
