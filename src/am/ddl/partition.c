/*-------------------------------------------------------------------------
 *
 * partition.c
 *	  forst partitions under a partitioned table with a primary key.
 *
 * PostgreSQL gives every partition a copy of its partitioned table's
 * indexes, of the same access method, and attaches each copy to the
 * partitioned index; INSERT ... ON CONFLICT through the partitioned table
 * finds its arbiter in a partition by that attachment.  A forst table's
 * key must be a forst_key index, so a partitioned table whose partitions
 * are forst tables needs a forst_key primary key.  PostgreSQL 15 creates a
 * partitioned unique index only with btree (DefineIndex checks the access
 * method to match the partition key's equality operators), but the
 * partitioned index itself stores nothing and is never scanned: it is the
 * template of its partitions' indexes and the arbiter's name.  So the
 * index is created as a btree and then relabelled (ddl/partition_key.c),
 * before any partition has an index attached to it: its access method becomes
 * forst_key and its operator classes forst's defaults for the same types
 * (the same operators and comparison functions as btree's, see
 * forst--1.0.sql), with the dependencies that go with them.  From then on
 * PostgreSQL's own machinery does the rest: a partition created or
 * attached gets a forst_key primary key (an empty one, or the key it
 * already has if it matches), and pg_dump's ALTER INDEX ... ATTACH
 * PARTITION matches forst_key to forst_key.
 *
 * When a partitioned table's key is forst's:
 *	- CREATE TABLE ... PARTITION BY ... PRIMARY KEY while
 *	  default_table_access_method = forst;
 *	- ALTER TABLE [ONLY] ... ADD PRIMARY KEY on a partitioned table whose
 *	  partitions are all forst tables (pg_dump's order: partitions first),
 *	  or that has none while default_table_access_method = forst;
 *	- the first forst partition created or attached under a partitioned
 *	  table whose only index is a btree primary key with no partitions.
 * Then a partition created without USING is a forst table, as PostgreSQL
 * 17 has partitions inherit their parent's access method, and so is a
 * table created LIKE it INCLUDING INDEXES (pg_partman makes partitions so).
 * ALTER TABLE ... ADD PRIMARY KEY (recursive) on a table whose partitions
 * are forst tables is run as PostgreSQL runs pg_dump's form: the key is
 * added to the partitioned table alone (its partitions' key columns set
 * NOT NULL first), made forst's, then added to each partition (written
 * again under it by ddl/rekey.c) and attached, through SPI, in the same
 * transaction.  A partitioned partition gets the key as a btree, with the
 * parent's relabelled btree for the statement (PostgreSQL clones a unique
 * index onto a partitioned table only so), and both are forst's again when
 * it ends.
 *
 * Other (non-unique) indexes of a partitioned table whose partitions are
 * forst tables are forst_key indexes (ddl/utility.c makes them so): the
 * partitioned index stores nothing, and PostgreSQL gives every partition a
 * forst_key copy, a secondary index of that partition.  A partitioned
 * table with such an index takes forst partitions only, as one keyed by
 * forst does.  Unique ones are made as ddl/partition_unique.c says; a
 * partitioned partition created under a table with unique forst_key
 * indexes gets them as btrees for the statement, as for the key.  Refused,
 * with hints: partitions of other access methods, partitioned tables
 * attached without a forst key, and forst partitions of a parent with
 * indexes of other access methods.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "utils/relcache.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "am/ddl/foreign_keys.h"
#include "am/ddl/migrate.h"
#include "am/ddl/partition.h"
#include "am/ddl/utility.h"
#include "am/keys/keycodec.h"
#include "am/keys/rel.h"

/*
 * A recursive ALTER TABLE ... ADD PRIMARY KEY on a partitioned table whose
 * partitions are forst tables, made ONLY by forst_partition_before_alter
 * and finished by forst_partition_after_alter (the same statement).
 */
static Oid	key_for_children = InvalidOid;
static Constraint *key_constraint = NULL;

/*
 * A partitioned partition being created under partitioned table
 * sub_parent, whose key is a btree for the statement (PostgreSQL clones a
 * unique index onto a partitioned table only as a btree) and forst's again
 * after it, with the new table's.
 */
static Oid	sub_parent = InvalidOid;

/*
 * A partition being created under partitioned table ref_parent, which
 * foreign keys reference: its key has forst's classes for the statement
 * (PostgreSQL copies the parent's classes by name onto the new partition's
 * forst_key index, and forst_key has no btree classes), the twins again
 * after it, the new partition's too (ddl/foreign_keys.c).
 */
static Oid	ref_parent = InvalidOid;

static bool children_all_leaves(Oid relid);
static bool finish_sub_parent(CreateStmt *stmt);
static void set_not_null(Oid relid, List *cols);

static void
refuse_indexes(const char *parent, const char *partition)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("a forst table cannot be a partition of \"%s\", which has indexes", parent),
			 errdetail("Each partition gets a copy of the partitioned table's indexes; "
					   "a forst partition can only have a primary key, which must be forst's."),
			 errhint("Create the partitioned table with default_table_access_method = forst and its primary key only, "
					 "or make \"%s\" a heap table.", partition)));
}

/*
 * Makes partitioned table relid's primary key forst's if it is a btree that
 * no partition's index is attached to yet and its other indexes are
 * forst_key indexes; otherwise, with "partition" (the forst table that is
 * to join it), refuses.  Returns whether the key is forst's now.
 */
static bool
make_key_forst(Oid relid, const char *partition)
{
	Oid			forst_key_am = get_index_am_oid("forst_key", false);
	Relation	rel;
	List	   *indexes;
	ListCell   *lc;
	Oid			keyidx;
	bool		ok;

	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(RELKIND_PARTITIONED_TABLE),
					   get_rel_name(relid));
	rel = relation_open(relid, AccessExclusiveLock);
	indexes = RelationGetIndexList(rel);
	keyidx = forst_primary_key_index(rel);
	ok = OidIsValid(keyidx) && forst_index_am(keyidx) == BTREE_AM_OID &&
		find_inheritance_children(keyidx, NoLock) == NIL;
	foreach(lc, indexes)
	{
		if (lfirst_oid(lc) != keyidx && forst_index_am(lfirst_oid(lc)) != forst_key_am)
			ok = false;
	}
	if (ok)
		forst_relabel_partitioned_index(rel, keyidx, get_index_am_oid("forst_key", false));
	else if (partition != NULL)
		refuse_indexes(RelationGetRelationName(rel), partition);
	relation_close(rel, NoLock);
	return ok;
}

/*
 * A forst table is to become a partition of "parent", whose key is not
 * forst's: fine if it has no indexes; its key becomes forst's if it can.
 */
static void
forst_partition_joins(Oid parent, const char *partition)
{
	Relation	rel = relation_open(parent, AccessShareLock);
	bool		has_indexes = RelationGetIndexList(rel) != NIL;
	bool		keyless = !OidIsValid(forst_primary_key_index(rel));
	bool		any;

	relation_close(rel, AccessShareLock);
	if (!has_indexes)
		return;
	if (!forst_partition_leaves_all_forst(parent, &any))
		refuse_indexes(get_rel_name(parent), partition);
	/* a table without a key whose indexes are all forst_key ones */
	if (keyless && forst_partitioned_is_forst(parent))
	{
		Oid			forst_key_am = get_index_am_oid("forst_key", false);
		ListCell   *lc;

		rel = relation_open(parent, AccessShareLock);
		foreach(lc, RelationGetIndexList(rel))
		{
			if (forst_index_am(lfirst_oid(lc)) != forst_key_am)
				refuse_indexes(get_rel_name(parent), partition);
		}
		relation_close(rel, AccessShareLock);
		return;
	}
	(void) make_key_forst(parent, partition);
}

static void
refuse_partitioned_partition(const char *partition, const char *parent)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("partitioned table \"%s\" cannot be attached to \"%s\" without a forst primary key",
					partition, parent),
			 errdetail("The primary key of \"%s\" is forst's, and PostgreSQL would give \"%s\" a copy of it that forst's cannot be.",
					   parent, partition),
			 errhint("Create it with CREATE TABLE ... PARTITION OF \"%s\" ... PARTITION BY, or give it the same primary key "
					 "while default_table_access_method = forst before attaching it.", parent)));
}

static void
refuse_other_am(const char *partition, const char *parent, bool keyed)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("partition \"%s\" of \"%s\" must be a forst table", partition, parent),
			 keyed ?
			 errdetail("The primary key of \"%s\" is forst's, and every partition gets a copy of it.", parent) :
			 errdetail("The indexes of \"%s\" are forst's, and every partition gets a copy of them.", parent),
			 errhint("Create partitions USING forst or while default_table_access_method = forst "
					 "(for pg_partman, set it for the role that runs it), "
					 "or change this one's access method with ALTER TABLE ... SET ACCESS METHOD forst.")));
}

void
forst_partition_before_create(CreateStmt *stmt, bool *is_forst)
{
	Oid			parent;

	/* left over from a statement that failed between before and after */
	sub_parent = InvalidOid;
	ref_parent = InvalidOid;

	if (stmt->partbound == NULL || list_length(stmt->inhRelations) != 1)
		return;
	parent = RangeVarGetRelid(linitial_node(RangeVar, stmt->inhRelations),
							  NoLock, true);
	if (!OidIsValid(parent) || get_rel_relkind(parent) != RELKIND_PARTITIONED_TABLE)
		return;

	if (forst_partitioned_key_referenced(parent))
	{
		Relation	rel;

		if (!pg_class_ownercheck(parent, GetUserId()))
			aclcheck_error(ACLCHECK_NOT_OWNER,
						   get_relkind_objtype(RELKIND_PARTITIONED_TABLE),
						   get_rel_name(parent));
		rel = relation_open(parent, AccessExclusiveLock);
		forst_relabel_partitioned_index(rel, forst_primary_key_index(rel),
						  get_index_am_oid("forst_key", false));
		relation_close(rel, NoLock);
		ref_parent = parent;
	}

	if (forst_partitioned_is_forst(parent))
	{
		if (stmt->partspec != NULL)
		{
			Relation	rel;
			List	   *uniques;
			ListCell   *lc;

			/* its copies of the parent's other indexes are forst_key ones */
			rel = relation_open(parent, AccessShareLock);
			uniques = forst_partitioned_unique_indexes(rel, get_index_am_oid("forst_key", false));
			relation_close(rel, AccessShareLock);
			if (uniques == NIL)
				return;

			if (!pg_class_ownercheck(parent, GetUserId()))
				aclcheck_error(ACLCHECK_NOT_OWNER,
							   get_relkind_objtype(RELKIND_PARTITIONED_TABLE),
							   get_rel_name(parent));
			rel = relation_open(parent, AccessExclusiveLock);
			foreach(lc, uniques)
				forst_relabel_partitioned_index(rel, lfirst_oid(lc), BTREE_AM_OID);
			relation_close(rel, NoLock);
			sub_parent = parent;
			return;
		}
		if (stmt->accessMethod == NULL)
		{
			stmt->accessMethod = pstrdup("forst");
			*is_forst = true;
		}
		else if (!*is_forst)
			refuse_other_am(stmt->relation->relname, get_rel_name(parent),
							OidIsValid(forst_partitioned_key_index(parent)));
		return;
	}
	if (*is_forst && stmt->partspec == NULL)
		forst_partition_joins(parent, stmt->relation->relname);
}

void
forst_like_before_create(CreateStmt *stmt, bool *is_forst)
{
	ListCell   *lc;

	if (stmt->accessMethod != NULL || stmt->partspec != NULL || *is_forst)
		return;
	foreach(lc, stmt->tableElts)
	{
		TableLikeClause *like = (TableLikeClause *) lfirst(lc);
		Oid			source;

		if (!IsA(like, TableLikeClause) ||
			!(like->options & CREATE_TABLE_LIKE_INDEXES))
			continue;
		source = RangeVarGetRelid(like->relation, NoLock, true);
		if (forst_relid_is_forst_table(source) ||
			OidIsValid(forst_partitioned_key_index(source)))
		{
			stmt->accessMethod = pstrdup("forst");
			*is_forst = true;
			return;
		}
	}
}

void
forst_partition_after_create(CreateStmt *stmt)
{
	Oid			relid;

	if (OidIsValid(ref_parent))
	{
		Oid			parent = ref_parent;

		ref_parent = InvalidOid;
		(void) finish_sub_parent(stmt);
		forst_partition_tree_twins(parent);
		return;
	}
	if (finish_sub_parent(stmt))
		return;

	if (stmt->partspec == NULL || stmt->partbound != NULL ||
		stmt->accessMethod != NULL || !forst_default_am_is_forst())
		return;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		return;
	(void) make_key_forst(relid, NULL);
}

/*
 * After a partitioned partition is created under sub_parent (see above);
 * whether there was one.
 */
static bool
finish_sub_parent(CreateStmt *stmt)
{
	Oid			relid;

	if (OidIsValid(sub_parent))
	{
		Oid			forst_key_am = get_index_am_oid("forst_key", false);
		Relation	rel;

		ListCell   *lc;
		List	   *uniques;

		/* the parent's unique indexes, and their copies in the new table */
		rel = relation_open(sub_parent, AccessExclusiveLock);
		uniques = forst_partitioned_unique_indexes(rel, BTREE_AM_OID);
		foreach(lc, uniques)
			forst_relabel_partitioned_index(rel, lfirst_oid(lc), forst_key_am);
		relation_close(rel, NoLock);
		relid = RangeVarGetRelid(stmt->relation, NoLock, false);
		rel = relation_open(relid, AccessExclusiveLock);
		uniques = forst_partitioned_unique_indexes(rel, BTREE_AM_OID);
		foreach(lc, uniques)
			forst_relabel_partitioned_index(rel, lfirst_oid(lc), forst_key_am);
		relation_close(rel, NoLock);
		sub_parent = InvalidOid;
		return true;
	}
	return false;
}

static bool
adds_primary_key(AlterTableCmd *cmd)
{
	return cmd->subtype == AT_AddConstraint && IsA(cmd->def, Constraint) &&
		((Constraint *) cmd->def)->contype == CONSTR_PRIMARY;
}

void
forst_partition_before_alter(AlterTableStmt *stmt)
{
	Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	ListCell   *lc;

	/* left over from a statement that failed between before and after */
	key_for_children = InvalidOid;
	key_constraint = NULL;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return;
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_AttachPartition && IsA(cmd->def, PartitionCmd))
		{
			RangeVar   *name = ((PartitionCmd *) cmd->def)->name;
			Oid			child = RangeVarGetRelid(name, NoLock, true);

			if (!OidIsValid(child))
				continue;
			if (forst_partitioned_is_forst(relid))
			{
				if (get_rel_relkind(child) == RELKIND_PARTITIONED_TABLE)
				{
					if (OidIsValid(forst_partitioned_key_index(relid)) &&
						!OidIsValid(forst_partitioned_key_index(child)))
						refuse_partitioned_partition(name->relname, get_rel_name(relid));
					forst_partition_unique_check_attach(relid, child);
					if (forst_partitioned_key_referenced(relid))
						forst_partition_tree_twins(child);
				}
				else if (!forst_relid_is_forst_table(child))
					refuse_other_am(name->relname, get_rel_name(relid),
									OidIsValid(forst_partitioned_key_index(relid)));
				else
					forst_prepare_partition_of(child, relid);
			}
			else if (forst_relid_is_forst_table(child))
			{
				forst_prepare_partition(child);
				forst_partition_joins(relid, name->relname);
			}
		}
		else if (adds_primary_key(cmd) && stmt->relation->inh)
		{
			bool		any;

			if (!forst_partition_leaves_all_forst(relid, &any) || !any)
				continue;
			if (list_length(stmt->cmds) != 1 || !children_all_leaves(relid))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot add a primary key to \"%s\" and its forst partitions in this statement",
								stmt->relation->relname),
						 errdetail("forst adds it to a partitioned table whose partitions are all forst tables only alone in its ALTER TABLE."),
						 errhint("Add the primary key in an ALTER TABLE of its own.")));

			/*
			 * PostgreSQL would build a btree on each partition: the key is
			 * added to the partitioned table only, made forst's, and then
			 * added to each partition and attached (after the statement).
			 */
			set_not_null(relid, ((Constraint *) cmd->def)->keys);
			stmt->relation->inh = false;
			key_for_children = relid;
			key_constraint = (Constraint *) cmd->def;
		}
	}
}

/* Whether every partition of relid is a plain table (one level). */
static bool
children_all_leaves(Oid relid)
{
	List	   *children = find_inheritance_children(relid, NoLock);
	ListCell   *lc;

	foreach(lc, children)
	{
		if (get_rel_relkind(lfirst_oid(lc)) != RELKIND_RELATION)
			return false;
	}
	return true;
}

static void
append_columns(StringInfo buf, List *cols)
{
	ListCell   *lc;

	appendStringInfoChar(buf, '(');
	foreach(lc, cols)
	{
		if (lc != list_head(cols))
			appendStringInfoString(buf, ", ");
		appendStringInfoString(buf, quote_identifier(strVal(lfirst(lc))));
	}
	appendStringInfoChar(buf, ')');
}

static char *
qualified_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

static void
run_sql(const char *sql)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "forst: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
}

/*
 * ADD PRIMARY KEY on a partitioned table alone needs its partitions' key
 * columns NOT NULL already (the recursive form would set them): set here.
 */
static void
set_not_null(Oid relid, List *cols)
{
	ListCell   *lc;

	SPI_connect();
	foreach(lc, cols)
	{
		StringInfoData sql;

		initStringInfo(&sql);
		appendStringInfo(&sql, "ALTER TABLE %s ALTER COLUMN %s SET NOT NULL",
						 qualified_name(relid), quote_identifier(strVal(lfirst(lc))));
		run_sql(sql.data);
	}
	SPI_finish();
}

/*
 * The key that ALTER TABLE added to partitioned table relid alone (see
 * forst_partition_before_alter): each partition gets it (its rows are
 * written again under it by ddl/rekey.c) or keeps the one it has, and it is
 * attached to the partitioned table's.
 */
static void
add_key_to_children(Oid relid, Constraint *con)
{
	Relation	rel = relation_open(relid, AccessExclusiveLock);
	Oid			keyidx = forst_primary_key_index(rel);
	List	   *children = find_inheritance_children(relid, AccessExclusiveLock);
	ListCell   *lc;

	relation_close(rel, NoLock);
	if (!OidIsValid(keyidx))
		elog(ERROR, "forst: partitioned table %u has no primary key", relid);
	SPI_connect();
	foreach(lc, children)
	{
		Oid			child = lfirst_oid(lc);
		Relation	crel;
		Oid			cpk;
		StringInfoData sql;

		crel = relation_open(child, AccessExclusiveLock);
		(void) RelationGetIndexList(crel);
		cpk = crel->rd_pkindex;
		relation_close(crel, NoLock);
		if (!OidIsValid(cpk))
		{
			initStringInfo(&sql);
			appendStringInfo(&sql, "ALTER TABLE ONLY %s ADD PRIMARY KEY ", qualified_name(child));
			append_columns(&sql, con->keys);
			if (con->including != NIL)
			{
				appendStringInfoString(&sql, " INCLUDE ");
				append_columns(&sql, con->including);
			}
			run_sql(sql.data);
			crel = relation_open(child, NoLock);
			(void) RelationGetIndexList(crel);
			cpk = crel->rd_pkindex;
			relation_close(crel, NoLock);
		}
		initStringInfo(&sql);
		appendStringInfo(&sql, "ALTER INDEX %s ATTACH PARTITION %s",
						 qualified_name(keyidx), qualified_name(cpk));
		run_sql(sql.data);
	}
	SPI_finish();
}

void
forst_partition_after_alter(AlterTableStmt *stmt)
{
	Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	ListCell   *lc;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return;
	if (relid == key_for_children)
	{
		Constraint *con = key_constraint;

		key_for_children = InvalidOid;
		key_constraint = NULL;
		if (!make_key_forst(relid, NULL))
			elog(ERROR, "forst: the primary key of partitioned table %u could not be made forst's", relid);
		add_key_to_children(relid, con);
		return;
	}
	foreach(lc, stmt->cmds)
	{
		bool		any;

		if (!adds_primary_key(lfirst_node(AlterTableCmd, lc)))
			continue;
		if (forst_partition_leaves_all_forst(relid, &any) && (any || forst_default_am_is_forst()))
			(void) make_key_forst(relid, NULL);
		return;
	}
}
