/*-------------------------------------------------------------------------
 *
 * migrate.c
 *	  ALTER TABLE ... SET ACCESS METHOD forst (from heap or another table
 *	  access method) and SET ACCESS METHOD heap (or another) on a forst
 *	  table.
 *
 * The approach: PostgreSQL's own rewrite, with the primary key switched
 * in the catalogs first.
 *
 * PostgreSQL 15 changes a table's access method by rewriting it
 * (ATRewriteTables): make_new_heap() creates a transient table
 * "pg_temp_<oid>" with the new access method and no indexes,
 * ATRewriteTable() copies every row into it, and finish_heap_swap() swaps
 * the two tables' storage and access method (swap_relation_files), then
 * rebuilds every index of the table with the index's own access method
 * (reindex_relation) and drops the transient table, which now owns the old
 * storage.  The table keeps its OID and its pg_class row, so its columns,
 * defaults, constraints, triggers, privileges, comments, policies and
 * dependencies stay as they are.  Two things stop this from working with
 * forst as it is:
 *
 *	1. A forst table's primary key is a forst_key index, a heap table's a
 *	   btree, and neither can be built on the other kind of table.  So the
 *	   primary key's index switches to the target's access method in the
 *	   catalogs: the index's pg_class.relam, its pg_index.indclass (the
 *	   target's default operator class for each key column) and indoption,
 *	   and its pg_depend entries on operator classes.  The index keeps its
 *	   OID and name, so the constraint, its name and comments are
 *	   untouched; the rewrite then rebuilds it with the new access method
 *	   on the new storage.  The switch is planned (and anything that cannot
 *	   switch refused) before PostgreSQL runs the statement, and made when
 *	   swap_relation_files() gives the table its new storage and access
 *	   method, which it reports through the object-access hook: before
 *	   that, the index matches the table as it was, which anything reading
 *	   the table during the ALTER (a table_rewrite event trigger) may use;
 *	   after it, the table as it is.
 *
 *	2. A forst table stores each row at its key, which it takes from its
 *	   primary key index; the transient table has none and would store the
 *	   rows under hidden row ids.  While a migration to forst runs, the
 *	   transient table borrows the primary key of the table being migrated
 *	   (forst_migrate_borrowed_key, consulted by keys/rel.c), so the rows
 *	   are written in key order under the key that the swapped storage will
 *	   have.  And the forst_key build, which refuses a table with rows (a
 *	   key added later cannot re-key them), accepts the migrated table
 *	   (forst_migrate_building), whose rows were written under that key.
 *
 * Alternatives not taken: dropping and re-creating the primary key under
 * the same name would give the constraint and index new OIDs, lose their
 * comments and need foreign keys juggled; calling make_new_heap() and
 * finish_heap_swap() from here with a copy loop of our own would repeat
 * ATRewriteTable() and skip the event triggers ALTER TABLE fires
 * (table_rewrite, ddl_command_*).
 *
 * Transactions: everything here is catalog work of the ALTER's own
 * transaction, undone by a rollback.  The forst storage created for the
 * transient table is dropped if the transaction aborts, and the old forst
 * storage of a table leaving forst when it commits (ddl/pending.c: the
 * transient table owns it when it is dropped).
 *
 * The other indexes switch the same way: a table's plain btrees (UNIQUE
 * ones and UNIQUE constraints too) become forst secondary indexes
 * (tableam/secondary.h), a forst table's secondary indexes btrees; the
 * rewrite rebuilds them too.  A table that foreign keys reference gets
 * btree's twins of forst's operator classes on its unique indexes, as
 * ddl/foreign_keys.c gives them.
 *
 * What forst cannot hold is refused before anything changes, with SQLSTATE
 * 0A000 and a hint (ddl/migrate_checks.c): indexes other than plain
 * btrees (tableam/secondary.h says which: not deferrable, not on
 * expressions), exclusion constraints, key columns of types forst cannot encode or of collations other than "C" (the hint
 * says how to change the collation first: that changes how the column
 * sorts and compares, which the user should decide, and PostgreSQL's ALTER
 * COLUMN ... TYPE rebuilds what depends on it), deferrable or INCLUDE
 * primary keys, temporary, unlogged and partition tables.  The statement
 * must have no other subcommand, so that these checks see the table as it
 * will be rewritten.
 *
 * A table leaving forst gets a TOAST table first (give_toast_table).
 *
 * A forst table leaving forst loses its TTL and watermark (its row in
 * forst.expiry), once the rows are copied: rows they expired are not
 * visible and are not copied.
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
#include "am/ddl/foreign_keys.h"
#include "am/ddl/migrate.h"
#include "am/ddl/migrate_checks.h"
#include "am/keys/rel.h"
#include "am/keys/index_entry.h"

/* The migration this backend is running, if any. */
typedef struct Migration
{
	Oid			relid;			/* InvalidOid: none */
	Oid			nspid;
	bool		to_forst;
	Oid			pkindex;		/* InvalidOid: keyless table */
	/* the primary key's index after the swap */
	Oid			key_am;
	int			nkeys;
	Oid			opclasses[INDEX_MAX_KEYS];
	/* the other indexes: secondary indexes <-> btrees */
	int			nother;
	struct IndexSwitch *other;	/* in TopTransactionContext */
	bool		switched;		/* done (at the swap) */
} Migration;

/* What an index becomes at the swap. */
typedef struct IndexSwitch
{
	Oid			indexoid;
	Oid			am;
	int			nkeys;
	Oid			opclasses[INDEX_MAX_KEYS];
} IndexSwitch;

static Migration current;

/* The forst table getting a TOAST table (give_toast_table), if any. */
static Oid	toast_for = InvalidOid;

/* The one subcommand, if it is SET ACCESS METHOD; else NULL. */
static AlterTableCmd *
set_access_method_cmd(AlterTableStmt *stmt)
{
	ListCell   *lc;
	AlterTableCmd *found = NULL;

	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_SetAccessMethod)
			found = cmd;
	}
	return found;
}

/*
 * What the primary key's index becomes: access method am with its default
 * operator class for each key column's type.  Errors here, before anything
 * changed.
 */
static void
plan_index_switch(Relation rel, Oid indexoid, Oid am, IndexSwitch *sw)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index ind;
	int			i;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	ind = (Form_pg_index) GETSTRUCT(tup);
	sw->indexoid = indexoid;
	sw->am = am;
	sw->nkeys = ind->indnkeyatts;
	for (i = 0; i < sw->nkeys; i++)
	{
		AttrNumber	attnum = ind->indkey.values[i];

		/* an expression column: the index's attribute has its type */
		Oid			typid = attnum == 0 ? get_atttype(indexoid, i + 1) :
			TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid;

		sw->opclasses[i] = GetDefaultOpClass(typid, am);
		/* the key of a referenced table: btree's twins (ddl/foreign_keys.c) */
		if (am != BTREE_AM_OID && ind->indisunique && OidIsValid(sw->opclasses[i]) &&
			forst_rel_is_referenced(RelationGetRelid(rel)) &&
			OidIsValid(forst_btree_twin_class(sw->opclasses[i])))
			sw->opclasses[i] = forst_btree_twin_class(sw->opclasses[i]);
		if (!OidIsValid(sw->opclasses[i]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("access method \"%s\" has no default operator class for type %s of column %s of index \"%s\"",
							get_am_name(am), format_type_be(typid),
							attnum == 0 ? psprintf("%d (an expression)", i + 1) :
							quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attname)),
							get_rel_name(indexoid))));
	}
	ReleaseSysCache(tup);
}

static void
plan_key_switch(Relation rel, Oid indexoid, Oid am, Migration *m)
{
	IndexSwitch sw;

	plan_index_switch(rel, indexoid, am, &sw);
	m->key_am = am;
	m->nkeys = sw.nkeys;
	memcpy(m->opclasses, sw.opclasses, sizeof(Oid) * sw.nkeys);
}

/*
 * The other indexes: to forst, every one (check_to_forst let only plain
 * btrees through); from forst, the secondary indexes, which become btrees.
 */
static void
plan_other_switches(Relation rel, Migration *m)
{
	List	   *indexes = RelationGetIndexList(rel);
	Oid			forst_key_am = get_index_am_oid("forst_key", false);
	ListCell   *lc;

	m->nother = 0;
	m->other = MemoryContextAllocZero(TopTransactionContext,
									  sizeof(IndexSwitch) * Max(list_length(indexes), 1));
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);

		if (indexoid == m->pkindex)
			continue;
		if (!m->to_forst && forst_index_am(indexoid) != forst_key_am)
			continue;
		plan_index_switch(rel, indexoid, m->to_forst ? forst_key_am : BTREE_AM_OID,
						  &m->other[m->nother++]);
	}
	list_free(indexes);
}

/*
 * Sets index indexoid's access method to am and the operator classes of
 * its nkeys key columns to opclasses in pg_index, with no options and not
 * clustered, and its dependencies on operator classes (as index_create()
 * records them); a change of access method drops its storage parameters.
 * The collations stay.  No CommandCounterIncrement.
 */
void
forst_set_key_index_am(Oid indexoid, Oid am, const Oid *opclasses, int nkeys)
{
	Relation	indrel;
	Relation	classrel;
	HeapTuple	tup;
	HeapTuple	newtup;
	Datum		values[Natts_pg_index];
	bool		nulls[Natts_pg_index];
	bool		replaces[Natts_pg_index];
	int16		options[INDEX_MAX_KEYS];
	int			i;

	for (i = 0; i < nkeys; i++)
		options[i] = 0;

	indrel = table_open(IndexRelationId, RowExclusiveLock);
	tup = SearchSysCacheCopy1(INDEXRELID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	memset(nulls, false, sizeof(nulls));
	memset(replaces, false, sizeof(replaces));
	values[Anum_pg_index_indclass - 1] =
		PointerGetDatum(buildoidvector(opclasses, nkeys));
	replaces[Anum_pg_index_indclass - 1] = true;
	values[Anum_pg_index_indoption - 1] =
		PointerGetDatum(buildint2vector(options, nkeys));
	replaces[Anum_pg_index_indoption - 1] = true;
	/* forst tables cannot be clustered; a heap table starts unclustered */
	values[Anum_pg_index_indisclustered - 1] = BoolGetDatum(false);
	replaces[Anum_pg_index_indisclustered - 1] = true;
	newtup = heap_modify_tuple(tup, RelationGetDescr(indrel), values, nulls, replaces);
	CatalogTupleUpdate(indrel, &newtup->t_self, newtup);
	heap_freetuple(newtup);
	heap_freetuple(tup);
	table_close(indrel, RowExclusiveLock);

	/*
	 * The storage parameters go with the access method that took them (a
	 * btree's fillfactor, a forst index's entry_id): the other would refuse
	 * them when pg_dump's CREATE INDEX names them, and the rewrite that
	 * follows builds the index again anyway.
	 */
	classrel = table_open(RelationRelationId, RowExclusiveLock);
	tup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", indexoid);
	if (((Form_pg_class) GETSTRUCT(tup))->relam != am)
	{
		Datum		cvalues[Natts_pg_class];
		bool		cnulls[Natts_pg_class];
		bool		creplaces[Natts_pg_class];

		memset(cvalues, 0, sizeof(cvalues));
		memset(cnulls, false, sizeof(cnulls));
		memset(creplaces, false, sizeof(creplaces));
		cnulls[Anum_pg_class_reloptions - 1] = true;
		creplaces[Anum_pg_class_reloptions - 1] = true;
		newtup = heap_modify_tuple(tup, RelationGetDescr(classrel), cvalues, cnulls, creplaces);
		heap_freetuple(tup);
		tup = newtup;
	}
	((Form_pg_class) GETSTRUCT(tup))->relam = am;
	CatalogTupleUpdate(classrel, &tup->t_self, tup);
	heap_freetuple(tup);
	table_close(classrel, RowExclusiveLock);

	forst_record_index_classes(indexoid, am, opclasses, nkeys);
}

/*
 * Switches the primary key's index as m planned (forst_set_key_index_am).
 *
 * Runs inside swap_relation_files() (see forst_migrate_post_alter), which
 * must not see a CommandCounterIncrement: reindex_relation() makes these
 * changes visible with its own, before it rebuilds the index.
 */
static void
apply_key_switch(const Migration *m)
{
	if (OidIsValid(m->pkindex))
		forst_set_key_index_am(m->pkindex, m->key_am, m->opclasses, m->nkeys);
	for (int i = 0; i < m->nother; i++)
		forst_set_key_index_am(m->other[i].indexoid, m->other[i].am,
							   m->other[i].opclasses, m->other[i].nkeys);
	CacheInvalidateRelcacheByRelid(m->relid);
}

/*
 * A table leaving forst: its row in forst.expiry (TTL column, TTL,
 * watermark) goes, so that it cannot expire rows should the table become a
 * forst table again.  Deleted here rather than through SQL: the owner may
 * change the table, while forst.expiry grants no DELETE.
 */
static void
forget_expiry(Relation rel)
{
	Oid			nsp = get_namespace_oid("forst", true);
	Oid			expiry = OidIsValid(nsp) ? get_relname_relid("expiry", nsp) : InvalidOid;
	Relation	exprel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;

	if (!OidIsValid(expiry))
		return;
	exprel = table_open(expiry, RowExclusiveLock);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationGetRelid(rel)));
	scan = systable_beginscan(exprel, InvalidOid, false, NULL, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
		simple_heap_delete(exprel, &tup->t_self);
	systable_endscan(scan);
	table_close(exprel, RowExclusiveLock);
	CacheInvalidateRelcache(rel);
}

/*
 * A table leaving forst gets a TOAST table before the rewrite, which forst
 * itself never uses (it stores rows whole).  PostgreSQL gives the
 * transient table one only if the old table has one (make_new_heap): the
 * rows of a forst table wider than a heap page would not fit, and the heap
 * table would have no TOAST table afterwards.  The swap hands it to the
 * transient table, whose drop removes it.
 */
static void
give_toast_table(Oid relid)
{
	toast_for = relid;
	PG_TRY();
	{
		AlterTableCreateToastTable(relid, (Datum) 0, AccessExclusiveLock);
	}
	PG_CATCH();
	{
		toast_for = InvalidOid;
		PG_RE_THROW();
	}
	PG_END_TRY();
	toast_for = InvalidOid;
}

Oid
forst_migrate_begin(AlterTableStmt *stmt)
{
	AlterTableCmd *cmd = set_access_method_cmd(stmt);
	Oid			forst_am;
	Oid			target;
	Oid			relid;
	Relation	rel;
	bool		from_forst;
	bool		to_forst;
	Migration	m;

	if (cmd == NULL || cmd->name == NULL)
		return InvalidOid;
	/* a database without the extension has no forst tables */
	forst_am = get_table_am_oid("forst", true);
	if (!OidIsValid(forst_am))
		return InvalidOid;
	target = get_table_am_oid(cmd->name, false);
	to_forst = (target == forst_am);

	relid = RangeVarGetRelidExtended(stmt->relation, AccessExclusiveLock,
									 stmt->missing_ok ? RVR_MISSING_OK : 0,
									 RangeVarCallbackOwnsTable, NULL);
	if (!OidIsValid(relid))
		return InvalidOid;
	rel = table_open(relid, NoLock);
	from_forst = (rel->rd_rel->relam == forst_am);
	if (rel->rd_rel->relam == target || (!from_forst && !to_forst))
	{
		/* no change, or none that involves forst: PostgreSQL's business */
		table_close(rel, NoLock);
		return InvalidOid;
	}
	if (OidIsValid(current.relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the access method of table \"%s\" while that of table \"%s\" changes",
						RelationGetRelationName(rel), get_rel_name(current.relid)),
				 errhint("Change it after the other ALTER TABLE, not from its event triggers.")));
	if (list_length(stmt->cmds) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("SET ACCESS METHOD %s must be the only subcommand of ALTER TABLE \"%s\"",
						cmd->name, RelationGetRelationName(rel)),
				 errhint("Run the other changes in their own ALTER TABLE, before or after.")));
	if (IsSystemRelation(rel))
		forst_migrate_refuse(rel, cmd->name, "it is a system table");
	CheckTableNotInUse(rel, "ALTER TABLE");

	if (to_forst)
		forst_migrate_check_to_forst(rel);

	/* the key switches with the table, forst_key <-> btree, at the swap */
	memset(&m, 0, sizeof(m));
	m.relid = relid;
	m.nspid = RelationGetNamespace(rel);
	m.to_forst = to_forst;
	m.pkindex = forst_primary_key_index(rel);
	if (OidIsValid(m.pkindex))
		plan_key_switch(rel, m.pkindex,
						to_forst ? get_index_am_oid("forst_key", false) : BTREE_AM_OID,
						&m);
	plan_other_switches(rel, &m);
	if (from_forst && !OidIsValid(rel->rd_rel->reltoastrelid))
		give_toast_table(relid);
	table_close(rel, NoLock);	/* the lock stays until the end of the transaction */
	current = m;
	return relid;
}

void
forst_migrate_end(bool done)
{
	Migration	m = current;

	memset(&current, 0, sizeof(current));

	/* the rewrite did not swap through make_new_heap()'s transient table */
	if (done && (OidIsValid(m.pkindex) || m.nother > 0) && !m.switched)
		elog(ERROR, "forst: the primary key of table %u was not switched with its access method",
			 m.relid);

	/*
	 * After the copy, which saw rows as the TTL and watermark left them:
	 * what they expired stays gone.
	 */
	if (done && !m.to_forst && OidIsValid(m.relid))
	{
		Relation	rel = table_open(m.relid, NoLock);

		forget_expiry(rel);
		table_close(rel, NoLock);
	}
}

/* Whether relation relid, named name in nspid, is the rewrite's transient table. */
static bool
is_transient(Oid relid, const char *name, Oid nspid)
{
	char		expected[NAMEDATALEN];

	if (!OidIsValid(current.relid) || relid == current.relid ||
		nspid != current.nspid || name == NULL)
		return false;
	/* make_new_heap() names it so */
	snprintf(expected, sizeof(expected), "pg_temp_%u", current.relid);
	return strcmp(name, expected) == 0;
}

Oid
forst_migrate_borrowed_key(Relation rel)
{
	if (!current.to_forst ||
		!is_transient(RelationGetRelid(rel), RelationGetRelationName(rel),
					  RelationGetNamespace(rel)))
		return InvalidOid;
	return current.pkindex;
}

/*
 * swap_relation_files() has just given the table the transient table's
 * storage and access method (and reports it as an alteration of both);
 * reindex_relation() is next.  This is when the primary key's index
 * changes access method: before, it matches the table as it was (so that
 * anything reading the table during the ALTER, such as a table_rewrite
 * event trigger, finds a consistent index), after, the table as it is.
 */
void
forst_migrate_post_alter(Oid relid)
{
	if (!OidIsValid(current.relid) || current.switched ||
		(!OidIsValid(current.pkindex) && current.nother == 0))
		return;
	if (!is_transient(relid, get_rel_name(relid), get_rel_namespace(relid)))
		return;
	current.switched = true;
	apply_key_switch(&current);
}

bool
forst_migrate_wants_toast(Relation rel)
{
	return OidIsValid(toast_for) && RelationGetRelid(rel) == toast_for;
}

bool
forst_migrate_building(Relation rel)
{
	return OidIsValid(current.relid) && current.to_forst &&
		RelationGetRelid(rel) == current.relid;
}
