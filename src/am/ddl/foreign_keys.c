/*-------------------------------------------------------------------------
 *
 * foreign_keys.c
 *	  Foreign keys that reference a forst table.
 *
 * PostgreSQL adds a foreign key (ATAddForeignKeyConstraint) through the
 * referenced table's primary key or a unique index on the referenced
 * columns, and takes the key's equality operators from that index's
 * operator classes, which must belong to btree ("only b-tree indexes are
 * supported for foreign keys").  A forst table's key and its unique
 * secondary indexes are forst_key indexes, created with forst_key's
 * operator classes (forst--1.0.sql), which hold btree's operators and
 * comparison functions.  So before a foreign key that references a forst
 * table is added, that table's primary key gets, in pg_index, the btree
 * operator classes with the same input types and comparison
 * functions: their twins, which order every value as forst's do.  The
 * index's access method stays forst_key, so every build, scan and insert
 * is forst's, and the planner is shown forst's operator families again
 * (tableam/secondary.c), so no plan changes.  A forst_key index may thus
 * have forst's class or its btree twin for a column.
 *
 * Only the primary key may be referenced: an UPDATE of a unique secondary
 * column is no key change to forst's row locks (write/row_locks.c), so it
 * would not wait for a FOR KEY SHARE locker as heap's does.  Nor a table
 * whose rows expire (TTL), which would leave referencing rows dangling;
 * expiry/expiry.c refuses a TTL on a referenced table likewise.
 *
 * The relabel happens in the ALTER TABLE's transaction (a CREATE TABLE's
 * foreign keys are added by an ALTER TABLE that PostgreSQL runs after it),
 * after a check that the role has REFERENCES on the table or a column
 * (else nothing is locked or changed), before PostgreSQL's own checks: a key
 * that is refused takes the relabel back with it.
 *
 * The rest is PostgreSQL's: the RI triggers' queries (SELECT 1 ... FOR KEY
 * SHARE on the referenced row when a referencing row is written, the
 * referencing rows' check when a referenced row is deleted or its key
 * updated) run on forst tables through the forst_key index and forst's row
 * locks (write/row_locks.c), with heap's semantics.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_opclass.h"
#include "commands/defrem.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "am/ddl/foreign_keys.h"
#include "am/expiry/expiry.h"
#include "am/ddl/migrate.h"
#include "am/keys/rel.h"
#include "am/ddl/partition.h"
#include "am/ddl/utility.h"

static bool
class_info(Oid opclass, Oid *am, Oid *family, Oid *intype)
{
	HeapTuple	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclass));
	Form_pg_opclass cla;

	if (!HeapTupleIsValid(tup))
		return false;
	cla = (Form_pg_opclass) GETSTRUCT(tup);
	*am = cla->opcmethod;
	*family = cla->opcfamily;
	*intype = cla->opcintype;
	ReleaseSysCache(tup);
	return true;
}

Oid
forst_btree_twin_class(Oid opclass)
{
	Oid			am,
				family,
				intype,
				twin,
				btam,
				btfamily,
				btintype;
	Oid			cmp;

	if (!class_info(opclass, &am, &family, &intype))
		return InvalidOid;
	if (am == BTREE_AM_OID)
		return opclass;
	twin = GetDefaultOpClass(intype, BTREE_AM_OID);
	if (!OidIsValid(twin) || !class_info(twin, &btam, &btfamily, &btintype) ||
		btintype != intype)
		return InvalidOid;
	cmp = get_opfamily_proc(family, intype, intype, BTORDER_PROC);
	if (!OidIsValid(cmp) ||
		cmp != get_opfamily_proc(btfamily, intype, intype, BTORDER_PROC))
		return InvalidOid;
	return twin;
}

void
forst_record_index_classes(Oid indexoid, Oid am, const Oid *opclasses, int nkeys)
{
	ObjectAddress myself;
	ObjectAddress referenced;
	ObjectAddresses *addrs;
	Oid			cam,
				family,
				intype;
	bool		foreign = false;

	deleteDependencyRecordsForClass(RelationRelationId, indexoid,
									OperatorClassRelationId, DEPENDENCY_NORMAL);
	deleteDependencyRecordsForClass(RelationRelationId, indexoid,
									AccessMethodRelationId, DEPENDENCY_NORMAL);
	ObjectAddressSet(myself, RelationRelationId, indexoid);
	addrs = new_object_addresses();
	for (int i = 0; i < nkeys; i++)
	{
		ObjectAddressSet(referenced, OperatorClassRelationId, opclasses[i]);
		add_exact_object_address(&referenced, addrs);
		if (class_info(opclasses[i], &cam, &family, &intype) && cam != am)
			foreign = true;
	}
	if (foreign)
	{
		ObjectAddressSet(referenced, AccessMethodRelationId, am);
		add_exact_object_address(&referenced, addrs);
	}
	record_object_address_dependencies(&myself, addrs, DEPENDENCY_NORMAL);
	free_object_addresses(addrs);
}

/*
 * Sets the operator classes of index indexoid's nkeys key columns in
 * pg_index, nothing else, with their dependencies.  No
 * CommandCounterIncrement.
 */
static void
set_index_classes(Oid indexoid, const Oid *classes, int nkeys)
{
	Relation	indrel;
	HeapTuple	tup;
	HeapTuple	newtup;
	Datum		values[Natts_pg_index];
	bool		nulls[Natts_pg_index];
	bool		replaces[Natts_pg_index];

	indrel = table_open(IndexRelationId, RowExclusiveLock);
	tup = SearchSysCacheCopy1(INDEXRELID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	memset(nulls, false, sizeof(nulls));
	memset(replaces, false, sizeof(replaces));
	values[Anum_pg_index_indclass - 1] =
		PointerGetDatum(buildoidvector(classes, nkeys));
	replaces[Anum_pg_index_indclass - 1] = true;
	newtup = heap_modify_tuple(tup, RelationGetDescr(indrel), values, nulls, replaces);
	CatalogTupleUpdate(indrel, &newtup->t_self, newtup);
	heap_freetuple(newtup);
	heap_freetuple(tup);
	table_close(indrel, RowExclusiveLock);
	forst_record_index_classes(indexoid, forst_index_am(indexoid), classes, nkeys);
}

/*
 * Index indexoid's key columns' operator classes as they are, each mapped
 * by map (NULL: kept); true if any changed.
 */
static bool
mapped_classes(Oid indexoid, Oid (*map) (Oid), Oid *classes, int *nkeys)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	oidvector  *old;
	bool		isnull;
	bool		changed = false;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	*nkeys = ((Form_pg_index) GETSTRUCT(tup))->indnkeyatts;
	old = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, tup,
														Anum_pg_index_indclass,
														&isnull));
	for (int i = 0; i < *nkeys; i++)
	{
		classes[i] = map(old->values[i]);
		if (classes[i] != old->values[i])
			changed = true;
	}
	ReleaseSysCache(tup);
	return changed;
}

/* forst_key's default class for a btree class's type; others stay */
static Oid
forst_class_back(Oid opclass)
{
	Oid			am,
				family,
				intype;
	Oid			fclass;

	if (!class_info(opclass, &am, &family, &intype) || am != BTREE_AM_OID)
		return opclass;
	fclass = GetDefaultOpClass(intype, get_index_am_oid("forst_key", false));
	return OidIsValid(fclass) ? fclass : opclass;
}

/* Gives index indexoid's key columns their btree twins (ERROR if none). */
static void
relabel_index(Oid indexoid, Relation rel)
{
	Oid			classes[INDEX_MAX_KEYS];
	int			nkeys;

	if (!mapped_classes(indexoid, forst_btree_twin_class, classes, &nkeys))
		return;
	for (int i = 0; i < nkeys; i++)
		if (!OidIsValid(classes[i]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index \"%s\" of forst table \"%s\" cannot back a foreign key",
							get_rel_name(indexoid), RelationGetRelationName(rel)),
					 errdetail("No btree operator class orders column %d of the index as its operator class does.",
							   i + 1)));
	set_index_classes(indexoid, classes, nkeys);
}

/* Whether the columns named by pk_attrs (NIL: the key) are rel's key's. */
static bool
references_primary_key(Relation rel, Oid pkindex, List *pk_attrs)
{
	HeapTuple	tup;
	Form_pg_index ind;
	ListCell   *lc;
	bool		ok = true;

	if (pk_attrs == NIL)
		return true;
	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(pkindex));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", pkindex);
	ind = (Form_pg_index) GETSTRUCT(tup);
	if (list_length(pk_attrs) != ind->indnkeyatts)
		ok = false;
	foreach(lc, pk_attrs)
	{
		AttrNumber	attnum = get_attnum(RelationGetRelid(rel), strVal(lfirst(lc)));
		bool		found = false;

		for (int i = 0; i < ind->indnkeyatts && ok; i++)
			if (ind->indkey.values[i] == attnum)
				found = true;
		if (!found)
			ok = false;
	}
	ReleaseSysCache(tup);
	return ok;
}

/*
 * Opens relid, which a foreign key (con) is to reference, with the lock
 * ATAddForeignKeyConstraint takes on it, and checks that it references the
 * primary key; NULL (nothing locked or changed) for a role without
 * REFERENCES on the table or a column, which PostgreSQL refuses anyway.
 * Only the primary key: an UPDATE of a unique secondary column is not a key
 * change to forst's row locks, so it would not wait for FOR KEY SHARE
 * lockers (a referencing row being inserted) as heap's does.
 */
static Relation
open_referenced(Oid relid, Constraint *con, bool partitioned)
{
	Relation	rel;
	Oid			pkindex;

	if (pg_class_aclcheck(relid, GetUserId(), ACL_REFERENCES) != ACLCHECK_OK &&
		pg_attribute_aclcheck_all(relid, GetUserId(), ACL_REFERENCES,
								  ACLMASK_ANY) != ACLCHECK_OK)
		return NULL;
	rel = table_open(relid, ShareRowExclusiveLock);
	pkindex = RelationGetPrimaryKeyIndex(rel);
	if (!OidIsValid(pkindex) || !references_primary_key(rel, pkindex, con->pk_attrs))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("foreign keys may reference only the primary key of %s \"%s\"",
						partitioned ? "partitioned table" : "forst table",
						RelationGetRelationName(rel)),
				 partitioned ?
				 errdetail("Its partitions are forst tables, and an update of another unique column of a forst table does not wait for the rows being inserted that reference it.") :
				 errdetail("An update of another unique column of a forst table does not wait for the rows being inserted that reference it."),
				 errhint("Reference the primary key.")));
	return rel;
}

/* Whether index indexoid's key columns have btree's twin classes. */
static bool
has_twin_classes(Oid indexoid)
{
	Oid			classes[INDEX_MAX_KEYS];
	int			nkeys;

	/* mapping to twins changes nothing when they are twins already */
	Oid			am,
				family,
				intype;

	return !mapped_classes(indexoid, forst_btree_twin_class, classes, &nkeys) &&
		nkeys > 0 && class_info(classes[0], &am, &family, &intype) &&
		am == BTREE_AM_OID;
}

/*
 * Gives the key of relid (a partitioned table keyed by forst, or a forst
 * partition) and the keys of all its partitions btree's twin classes.
 */
static void
relabel_tree(Oid relid)
{
	List	   *all = find_all_inheritors(relid, ShareRowExclusiveLock, NULL);
	ListCell   *lc;

	foreach(lc, all)
	{
		Relation	r = relation_open(lfirst_oid(lc), ShareRowExclusiveLock);
		Oid			pk = RelationGetPrimaryKeyIndex(r);

		if (OidIsValid(pk) && forst_index_am(pk) == get_index_am_oid("forst_key", false))
			relabel_index(pk, r);
		relation_close(r, NoLock);
	}
	CommandCounterIncrement();
}

bool
forst_partitioned_key_referenced(Oid relid)
{
	Oid			keyidx = forst_partitioned_key_index(relid);

	return OidIsValid(keyidx) && has_twin_classes(keyidx);
}

void
forst_partition_tree_twins(Oid relid)
{
	relabel_tree(relid);
}

/*
 * A foreign key referencing partitioned table relid, keyed by forst: its key
 * and the keys of all its partitions get btree's twin classes (PostgreSQL
 * takes the equality operators from the partitioned table's key, and a
 * partition's key must match it); partitions created or attached later get
 * them too (ddl/partition.c).  The RI queries run on the partitioned table,
 * pruned to one partition and its forst key.
 */
static void
prepare_referenced_partitioned(Oid relid, Constraint *con)
{
	Relation	rel;
	List	   *leaves;
	ListCell   *lc;

	rel = open_referenced(relid, con, true);
	if (rel == NULL)
		return;
	table_close(rel, NoLock);

	/* expired rows would leave the rows that reference them dangling */
	leaves = find_all_inheritors(relid, ShareRowExclusiveLock, NULL);
	foreach(lc, leaves)
	{
		Relation	leaf;
		ForstExpiry x;

		if (!forst_relid_is_forst_table(lfirst_oid(lc)))
			continue;
		leaf = table_open(lfirst_oid(lc), NoLock);
		forst_expiry_get(leaf, &x);
		if (x.active || x.attnum > 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("foreign keys cannot reference partitioned table \"%s\", whose partition \"%s\" has rows that expire",
							get_rel_name(relid), RelationGetRelationName(leaf)),
					 errdetail("Rows that expire would leave the rows referencing them dangling."),
					 errhint("Reference a table without a TTL column.")));
		table_close(leaf, NoLock);
	}
	relabel_tree(relid);
}

void
forst_prepare_referenced(Constraint *con)
{
	Oid			relid;
	Relation	rel;
	Oid			pkindex;
	ForstExpiry x;

	if (con->contype != CONSTR_FOREIGN || con->pktable == NULL)
		return;
	relid = RangeVarGetRelid(con->pktable, NoLock, true);
	if (!OidIsValid(relid))
		return;

	/*
	 * The indexes of a partition tree share operator classes: a partition
	 * with btree's would not match its parent's key.  A partitioned table
	 * keyed by forst is referenced through all of them (below).
	 */
	if (forst_relid_is_forst_table(relid) && get_rel_relispartition(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("foreign keys referencing \"%s\" are not supported",
						get_rel_name(relid)),
				 errdetail("It is a forst partition of a partitioned table."),
				 errhint("Reference the partitioned table.")));
	if (OidIsValid(forst_partitioned_key_index(relid)))
	{
		prepare_referenced_partitioned(relid, con);
		return;
	}
	if (!forst_relid_is_forst_table(relid))
		return;

	rel = open_referenced(relid, con, false);
	if (rel == NULL)
		return;
	pkindex = RelationGetPrimaryKeyIndex(rel);

	/* expired rows would leave the rows that reference them dangling */
	forst_expiry_get(rel, &x);
	if (x.active || x.attnum > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("foreign keys cannot reference forst table \"%s\", whose rows expire",
						RelationGetRelationName(rel)),
				 errdetail("Rows that expire would leave the rows referencing them dangling."),
				 errhint("Reference a table without a TTL column.")));

	relabel_index(pkindex, rel);
	table_close(rel, NoLock);
	CommandCounterIncrement();
}

void
forst_prepare_partition_of(Oid relid, Oid parent)
{
	if (OidIsValid(parent) && forst_partitioned_key_referenced(parent))
	{
		relabel_tree(relid);
		return;
	}
	forst_prepare_partition(relid);
}

void
forst_prepare_partition(Oid relid)
{
	Relation	rel;
	List	   *indexes;
	ListCell   *lc;
	Oid			forst_key_am = get_index_am_oid("forst_key", false);

	rel = table_open(relid, AccessExclusiveLock);
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		Oid			classes[INDEX_MAX_KEYS];
		int			nkeys;

		if (forst_index_am(indexoid) != forst_key_am ||
			!mapped_classes(indexoid, forst_class_back, classes, &nkeys))
			continue;
		if (forst_rel_is_referenced(relid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst table \"%s\" cannot become a partition while foreign keys reference it",
							RelationGetRelationName(rel)),
					 errhint("Drop the foreign keys that reference it first.")));
		set_index_classes(indexoid, classes, nkeys);
	}
	list_free(indexes);
	table_close(rel, NoLock);
	CommandCounterIncrement();
}
