/*-------------------------------------------------------------------------
 *
 * index_stmt.c
 *	  CREATE INDEX and ALTER INDEX on forst tables and on partitioned tables
 *	  whose partitions are forst tables (ddl/index_stmt.h), for the
 *	  ProcessUtility hook (ddl/utility.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "nodes/parsenodes.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "am/ddl/foreign_keys.h"
#include "am/ddl/index_stmt.h"
#include "am/ddl/partition.h"
#include "am/ddl/utility.h"
#include "am/expiry/expiry.h"

/*
 * An index column that names a btree operator class, as in "(a int4_ops)",
 * gets forst_key's default class for its type when that class orders as
 * the named one does (its btree twin, ddl/foreign_keys.h).  Other classes
 * (text_pattern_ops, ...) are left for PostgreSQL to refuse: forst_key has
 * none of that name.
 */
static void
map_btree_classes(IndexStmt *stmt)
{
	ListCell   *lc;
	Oid			forst_key_am = get_index_am_oid("forst_key", false);
	Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);

	foreach(lc, stmt->indexParams)
	{
		IndexElem  *e = lfirst_node(IndexElem, lc);
		Oid			btclass;
		Oid			fclass;

		AttrNumber	attnum;

		if (e->opclass == NIL || e->opclassopts != NIL || e->name == NULL ||
			!OidIsValid(relid))
			continue;
		btclass = get_opclass_oid(BTREE_AM_OID, e->opclass, true);
		attnum = get_attnum(relid, e->name);
		/* btree's default class for the column (else PostgreSQL refuses) */
		if (!OidIsValid(btclass) || attnum == InvalidAttrNumber ||
			GetDefaultOpClass(get_atttype(relid, attnum), BTREE_AM_OID) != btclass)
			continue;
		fclass = GetDefaultOpClass(get_opclass_input_type(btclass), forst_key_am);
		if (OidIsValid(fclass) && forst_btree_twin_class(fclass) == btclass)
			e->opclass = NIL;
	}
}

/*
 * CREATE INDEX on a forst table: a secondary index, whose entries forst
 * keeps in the table's LSM tree (tableam/secondary.h), is a forst_key index
 * that is not the primary key.  An index of another access method would
 * store row locations, which forst rows do not have.
 */
void
forst_check_index_stmt(IndexStmt *stmt)
{
	const char *am = stmt->accessMethod;

	if (!forst_relid_is_forst_table(RangeVarGetRelid(stmt->relation, NoLock, true)))
	{
		Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);

		/*
		 * A partitioned table whose partitions are (or will be) forst
		 * tables: PostgreSQL gives each partition a copy of the index, of
		 * the same access method, so it must be forst_key.  The partitioned
		 * index itself stores nothing.
		 */
		if (forst_partitioned_index_is_forst(relid))
		{
			bool		other_am = am != NULL && strcmp(am, "btree") != 0 &&
				strcmp(am, "forst_key") != 0;
			bool		is_forst = forst_partitioned_is_forst(relid);

			if (stmt->primary && am && strcmp(am, "forst_key") == 0)
				return;
			if (other_am && is_forst)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("partitioned table \"%s\" with forst partitions supports no indexes of access method \"%s\"",
								stmt->relation->relname, am),
						 errdetail("Each partition gets a copy of the index, and forst tables have no row locations to store in one."),
						 errhint("Create the index without USING: forst keeps its entries in the partitions.")));
			if (stmt->unique && !stmt->primary && !other_am)
			{
				forst_partition_unique_before(stmt, relid);
				return;
			}
			if (stmt->primary && is_forst)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("the primary key of a partitioned table with forst partitions must use access method forst_key")));
			if (other_am || stmt->unique || stmt->primary)
				return;
			map_btree_classes(stmt);
			stmt->accessMethod = pstrdup("forst_key");
			return;
		}

		/*
		 * An index copied from a forst table (CREATE TABLE ... LIKE ...
		 * INCLUDING INDEXES) to a table of another kind: a btree, without
		 * a forst index's entry_id.
		 */
		if (am && strcmp(am, "forst_key") == 0 && OidIsValid(relid) &&
			get_rel_relkind(relid) == RELKIND_RELATION)
		{
			List	   *options = NIL;
			ListCell   *lc;

			stmt->accessMethod = pstrdup("btree");
			foreach(lc, stmt->options)
			{
				DefElem    *d = lfirst_node(DefElem, lc);

				if (d->defnamespace != NULL || strcmp(d->defname, "entry_id") != 0)
					options = lappend(options, d);
			}
			stmt->options = options;
		}
		return;
	}
	if (stmt->primary && am && strcmp(am, "forst_key") == 0)
		return;
	if (am != NULL && strcmp(am, "btree") != 0 && strcmp(am, "forst_key") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("forst tables support no indexes of access method \"%s\"", am),
				 errdetail("Indexes of other access methods would store row locations, which forst rows do not have."),
				 errhint("Create the index without USING: forst keeps its entries in the table.")));
	/*
	 * Concurrently: writers write the entries of an index being built from
	 * the moment they see it (tableam/tableam_ddl.c,
	 * forst_index_validate_scan).  Not a UNIQUE one: writers check a unique
	 * index they see, ready or not, and would wait for the building
	 * transaction's entries.
	 */
	if (stmt->concurrent && stmt->unique)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("CREATE UNIQUE INDEX CONCURRENTLY is not supported on forst tables"),
				 errdetail("Writers check a unique index as soon as they see it, and would wait for the build to end."),
				 errhint("Use CREATE UNIQUE INDEX, which blocks writes to the table (not reads) while it runs.")));

	/*
	 * Nor on a table whose rows expire: an entry carries its row's TTL
	 * value, and the build's entry, put after a writer's entry for a newer
	 * TTL value of the same row, would expire the row from the index early.
	 */
	if (stmt->concurrent)
	{
		Relation	rel = table_openrv(stmt->relation, AccessShareLock);
		ForstExpiry x;

		forst_expiry_get(rel, &x);
		table_close(rel, AccessShareLock);
		if (x.active)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("CREATE INDEX CONCURRENTLY is not supported on forst table \"%s\", whose rows expire",
							stmt->relation->relname),
					 errdetail("Its index entries carry the rows' TTL values, which writers may change while the index is built."),
					 errhint("Use CREATE INDEX, which blocks writes to the table (not reads) while it runs.")));
	}
	if (stmt->primary)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the primary key of a forst table must use access method forst_key")));
	if (stmt->deferrable)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a UNIQUE constraint of a forst table cannot be DEFERRABLE"),
				 errdetail("forst checks a unique constraint when the row is written."),
				 errhint("Declare the constraint without DEFERRABLE.")));
	map_btree_classes(stmt);
	stmt->accessMethod = pstrdup("forst_key");
}

/*
 * A forst index's entry_id names the entries it reads and writes: changing
 * it would lose them (keys/index_entry.h).
 */
void
forst_refuse_entry_id_change(AlterTableStmt *stmt, List *options)
{
	ListCell   *lc;

	if (stmt->objtype != OBJECT_INDEX)
		return;
	foreach(lc, options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (d->defnamespace == NULL && strcmp(d->defname, "entry_id") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the entry_id of a forst index cannot be changed"),
					 errdetail("It names the entries the index has in its table."),
					 errhint("Create another index instead.")));
	}
}
