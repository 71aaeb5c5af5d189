/*-------------------------------------------------------------------------
 *
 * utility.c
 *	  The ProcessUtility hook: DDL on forst tables.
 *
 * A forst table is stored in the order of its primary key, so the index
 * behind that key must be a forst_key index (which stores nothing), not a
 * btree.  For CREATE TABLE ... USING forst (or with
 * default_table_access_method = forst) and ALTER TABLE ... ADD PRIMARY KEY
 * on a forst table, this hook sets the constraint's access method to
 * forst_key.  Key columns of collatable types get COLLATE "C" unless the
 * statement says otherwise (forst keys compare bytes; another collation is
 * refused when the key is built).  Other indexes and UNIQUE constraints
 * become forst_key secondary indexes (keys/index_entry.h).  What forst
 * cannot honour is refused here with a clear error: deferrable and
 * exclusion constraints, and indexes of any other kind.  A foreign key
 * that references a forst table is prepared by ddl/foreign_keys.c (a
 * CREATE TABLE's foreign keys come here as an ALTER TABLE that PostgreSQL
 * runs after it).  ALTER TABLE ... SET ACCESS METHOD to or from forst is
 * ddl/migrate.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "commands/dbcommands.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodes.h"
#include "nodes/parsenodes.h"
#include "parser/parse_type.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/ddl/reindex.h"
#include "am/expiry/expiry.h"
#include "am/ddl/partition.h"
#include "am/ddl/index_drop.h"
#include "am/ddl/pending.h"
#include "am/ddl/publication.h"
#include "am/ddl/utility.h"
#include "am/keys/rel.h"
#include "am/ddl/foreign_keys.h"
#include "am/ddl/index_stmt.h"
#include "am/ddl/migrate.h"
#include "am/ddl/rekey.h"

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static bool
is_forst_am_name(const char *am)
{
	if (am == NULL)
		am = default_table_access_method;
	return am != NULL && strcmp(am, "forst") == 0;
}

bool
forst_relid_is_forst_table(Oid relid)
{
	Relation	rel;
	bool		result;

	if (!OidIsValid(relid))
		return false;
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		return false;
	result = rel->rd_rel->relkind == RELKIND_RELATION &&
		forst_is_forst_relation(rel);
	relation_close(rel, AccessShareLock);
	return result;
}

static bool
rangevar_is_forst(RangeVar *rv)
{
	return forst_relid_is_forst_table(RangeVarGetRelid(rv, NoLock, true));
}

/* forst enforces its key when a row is written (else duplicates stay) */
static void
refuse_deferrable_key(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("the primary key of a forst table cannot be DEFERRABLE"),
			 errdetail("forst checks a key when the row is written.")));
}

/*
 * Sets forst_key on a PRIMARY KEY constraint (not on a partitioned table's:
 * ddl/partition.c makes that one forst's after it is built); refuses other
 * unique ones.
 */
static void
rewrite_constraint(Constraint *con, List **keycols, bool partitioned)
{
	if (con->contype == CONSTR_UNIQUE)
	{
		/* a unique secondary index (write/index_entries.h) */
		if (partitioned)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a partitioned table keyed by forst supports no UNIQUE constraint besides its primary key"),
					 errhint("Create a unique index on the partitioned table instead: CREATE UNIQUE INDEX ... ON it (columns).")));
		if (con->indexname != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("ADD UNIQUE USING INDEX is not supported on forst tables"),
					 errhint("Declare the constraint with ADD UNIQUE (columns).")));
		if (con->access_method != NULL &&
			strcmp(con->access_method, "btree") != 0 &&
			strcmp(con->access_method, "forst_key") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a UNIQUE constraint of a forst table must use access method forst_key, not %s",
							con->access_method)));
		if (con->deferrable)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a UNIQUE constraint of a forst table cannot be DEFERRABLE"),
					 errdetail("forst checks a unique constraint when the row is written."),
					 errhint("Declare the constraint without DEFERRABLE.")));
		con->access_method = pstrdup("forst_key");
		return;
	}
	if (con->contype == CONSTR_EXCLUSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("forst tables do not support exclusion constraints")));
	if (con->contype != CONSTR_PRIMARY)
		return;
	if (con->indexname != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ADD PRIMARY KEY USING INDEX is not supported on forst tables"),
				 errhint("A forst table's primary key is its storage order; declare it with ADD PRIMARY KEY (columns).")));
	if (con->access_method != NULL && strcmp(con->access_method, "forst_key") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the primary key of a forst table must use access method forst_key, not %s",
						con->access_method)));
	if (con->deferrable)
		refuse_deferrable_key();
	/* INCLUDE columns are kept in the catalog only: forst_key stores nothing */
	if (!partitioned)
		con->access_method = pstrdup("forst_key");
	if (keycols)
		*keycols = list_concat(*keycols, con->keys);
}

/*
 * The integer type behind serial, bigserial and smallserial (not types:
 * CREATE TABLE turns them into a sequence and a default later), or
 * InvalidOid, as transformColumnDefinition recognizes them.
 */
static Oid
serial_type(const TypeName *tn)
{
	const char *name;

	if (list_length(tn->names) != 1 || tn->arrayBounds != NIL || tn->pct_type)
		return InvalidOid;
	name = strVal(linitial(tn->names));
	if (strcmp(name, "smallserial") == 0 || strcmp(name, "serial2") == 0)
		return INT2OID;
	if (strcmp(name, "serial") == 0 || strcmp(name, "serial4") == 0)
		return INT4OID;
	if (strcmp(name, "bigserial") == 0 || strcmp(name, "serial8") == 0)
		return INT8OID;
	return InvalidOid;
}

static void
rewrite_create(CreateStmt *stmt, bool partitioned)
{
	List	   *keycols = NIL;
	ListCell   *lc;
	ConstrType	prev;

	foreach(lc, stmt->constraints)
		rewrite_constraint(lfirst_node(Constraint, lc), &keycols, partitioned);
	foreach(lc, stmt->tableElts)
	{
		Node	   *elt = lfirst(lc);
		ListCell   *lc2;

		if (IsA(elt, Constraint))
		{
			/* table constraints come as elements of the table */
			rewrite_constraint((Constraint *) elt, &keycols, partitioned);
			continue;
		}
		if (!IsA(elt, ColumnDef))
			continue;
		prev = CONSTR_NULL;
		foreach(lc2, ((ColumnDef *) elt)->constraints)
		{
			Constraint *con = lfirst_node(Constraint, lc2);

			/* a column's DEFERRABLE is a node after the constraint's */
			if (con->contype == CONSTR_ATTR_DEFERRABLE && prev == CONSTR_PRIMARY)
				refuse_deferrable_key();
			if (con->contype == CONSTR_ATTR_DEFERRABLE && prev == CONSTR_UNIQUE)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("a UNIQUE constraint of a forst table cannot be DEFERRABLE"),
						 errdetail("forst checks a unique constraint when the row is written."),
						 errhint("Declare the constraint without DEFERRABLE.")));
			prev = con->contype;
			if (con->contype == CONSTR_PRIMARY)
			{
				rewrite_constraint(con, NULL, partitioned);
				keycols = lappend(keycols, makeString(((ColumnDef *) elt)->colname));
			}
			else
				rewrite_constraint(con, NULL, partitioned);
		}
	}

	/* key columns of collatable types default to COLLATE "C" */
	foreach(lc, stmt->tableElts)
	{
		ColumnDef  *col = (ColumnDef *) lfirst(lc);
		ListCell   *lc2;
		bool		is_key = false;
		Oid			typid;
		int32		typmod;

		if (!IsA(col, ColumnDef) || col->typeName == NULL)
			continue;
		foreach(lc2, keycols)
		{
			if (strcmp(strVal(lfirst(lc2)), col->colname) == 0)
				is_key = true;
		}
		if (!is_key)
			continue;
		typid = serial_type(col->typeName);
		if (!OidIsValid(typid))
			typenameTypeIdAndMod(NULL, col->typeName, &typid, &typmod);
		if (!forst_key_type_supported(typid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst: primary key column \"%s\" has type %s, which forst cannot use as a key",
							col->colname, format_type_be(typid)),
					 errhint("Key columns may be of types bool, smallint, integer, bigint, numeric, oid, "
							 "real, double precision, date, time, timestamp, timestamptz, uuid, text, "
							 "varchar, char, name, bytea and \"char\".")));
		if (type_is_collatable(typid) && col->collClause == NULL)
		{
			CollateClause *cc = makeNode(CollateClause);

			cc->arg = NULL;
			cc->collname = list_make1(makeString("C"));
			cc->location = -1;
			col->collClause = cc;
		}
	}
}

/* A PRIMARY KEY or UNIQUE constraint, or an index, that cmd adds. */
static bool
adds_unique_key(AlterTableCmd *cmd)
{
	ListCell   *lc;

	if (cmd->subtype == AT_AddIndex)
		return true;
	if (cmd->subtype == AT_AddConstraint && IsA(cmd->def, Constraint))
		return ((Constraint *) cmd->def)->contype == CONSTR_PRIMARY ||
			((Constraint *) cmd->def)->contype == CONSTR_UNIQUE;
	if (cmd->subtype == AT_AddColumn && IsA(cmd->def, ColumnDef))
		foreach(lc, ((ColumnDef *) cmd->def)->constraints)
		{
			Constraint *con = lfirst_node(Constraint, lc);

			if (con->contype == CONSTR_PRIMARY || con->contype == CONSTR_UNIQUE)
				return true;
		}
	return false;
}

/*
 * A foreign key that references a forst table (ddl/foreign_keys.c).  The
 * referenced key must exist before the statement: one that the same ALTER
 * TABLE adds to the table it alters is made after forst could prepare it.
 */
static void
prepare_referenced(AlterTableStmt *stmt, Constraint *con, bool adds_key)
{
	if (con->contype != CONSTR_FOREIGN || con->pktable == NULL)
		return;
	if (adds_key && rangevar_is_forst(stmt->relation) &&
		RangeVarGetRelid(con->pktable, NoLock, true) ==
		RangeVarGetRelid(stmt->relation, NoLock, true))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a foreign key cannot reference a key that the same ALTER TABLE adds to forst table \"%s\"",
						stmt->relation->relname),
				 errhint("Add the key in one ALTER TABLE and the foreign key in another.")));
	forst_prepare_referenced(con);
}

static void
rewrite_alter(AlterTableStmt *stmt)
{
	ListCell   *lc;
	bool		adds_key = false;

	foreach(lc, stmt->cmds)
		adds_key |= adds_unique_key(lfirst_node(AlterTableCmd, lc));
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_SetRelOptions || cmd->subtype == AT_ResetRelOptions ||
			cmd->subtype == AT_ReplaceRelOptions)
			forst_refuse_entry_id_change(stmt, (List *) cmd->def);
		if (cmd->subtype == AT_AddConstraint && IsA(cmd->def, Constraint))
			prepare_referenced(stmt, (Constraint *) cmd->def, adds_key);
		else if (cmd->subtype == AT_AddColumn && IsA(cmd->def, ColumnDef))
		{
			ListCell   *lc2;

			foreach(lc2, ((ColumnDef *) cmd->def)->constraints)
				prepare_referenced(stmt, lfirst_node(Constraint, lc2), adds_key);
		}
	}
	if (!rangevar_is_forst(stmt->relation))
	{
		/* PostgreSQL would build a btree on each forst partition */
		if (stmt->objtype == OBJECT_TABLE &&
			forst_partitioned_is_forst(RangeVarGetRelid(stmt->relation, NoLock, true)))
			foreach(lc, stmt->cmds)
			{
				AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

				if (cmd->subtype == AT_AddConstraint && IsA(cmd->def, Constraint) &&
					((Constraint *) cmd->def)->contype == CONSTR_UNIQUE)
					rewrite_constraint((Constraint *) cmd->def, NULL, true);
			}
		return;
	}
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_AddConstraint && IsA(cmd->def, Constraint))
			rewrite_constraint((Constraint *) cmd->def, NULL, false);
		else if (cmd->subtype == AT_AddColumn && IsA(cmd->def, ColumnDef))
		{
			ListCell   *lc2;

			/* ADD COLUMN ... PRIMARY KEY / UNIQUE */
			foreach(lc2, ((ColumnDef *) cmd->def)->constraints)
			{
				Constraint *con = lfirst_node(Constraint, lc2);

				if (con->contype == CONSTR_PRIMARY || con->contype == CONSTR_UNIQUE)
					rewrite_constraint(con, NULL, false);
			}
		}
		else if (cmd->subtype == AT_ClusterOn)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("CLUSTER is not supported on forst tables"),
					 errhint("forst tables are kept in key order and compacted in the background.")));
	}
}

static void
call_next(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
		  ProcessUtilityContext context, ParamListInfo params,
		  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
							queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

/*
 * An ALTER TABLE: ddl/rekey.c rewrites a table that got a key under it
 * when the statement ends; a statement that forst_migrate_begin()
 * prepared must end the migration.
 */
static void
call_next_altering(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc, bool migrating,
				   List *restore)
{
	forst_rekey_alter_begin();
	PG_TRY();
	{
		call_next(pstmt, queryString, readOnlyTree, context, params,
				  queryEnv, dest, qc);
	}
	PG_CATCH();
	{
		if (migrating)
			forst_migrate_end(false);
		forst_rekey_alter_end(false, NIL);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (migrating)
	{
		PG_TRY();
		{
			forst_migrate_end(true);
		}
		PG_CATCH();
		{
			forst_rekey_alter_end(false, NIL);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	forst_rekey_alter_end(true, restore);
}

/* Whether rv names a temporary table. */
static bool
rangevar_is_temp(const RangeVar *rv)
{
	Oid			ns;

	if (rv->relpersistence == RELPERSISTENCE_TEMP)
		return true;
	/* a table created in pg_temp is temporary (RangeVarAdjustRelationPersistence) */
	if (rv->schemaname == NULL)
		return false;
	if (strcmp(rv->schemaname, "pg_temp") == 0)
		return true;
	ns = get_namespace_oid(rv->schemaname, true);
	return OidIsValid(ns) && isTempNamespace(ns);
}

/*
 * Whether a statement creates a temporary table (CREATE TEMP TABLE, also
 * AS or SELECT INTO, or a table in pg_temp) without naming its access
 * method while default_table_access_method is forst.  forst tables cannot
 * be temporary (a temporary table lives in one session's local buffers,
 * forst's state in shared memory and the store), so such a table is made
 * a heap table, as PostgreSQL makes a partitioned table one without an
 * access method: the default applies to the tables it can apply to.
 * Named explicitly (USING forst), a temporary forst table is still
 * refused.
 */
static bool
default_am_as_heap(Node *parsetree)
{
	if (!is_forst_am_name(NULL))
		return false;
	if (IsA(parsetree, CreateStmt))
	{
		CreateStmt *c = (CreateStmt *) parsetree;

		return c->accessMethod == NULL && c->partspec == NULL &&
			rangevar_is_temp(c->relation);
	}
	if (IsA(parsetree, CreateTableAsStmt))
	{
		CreateTableAsStmt *c = (CreateTableAsStmt *) parsetree;

		return c->objtype == OBJECT_TABLE && c->into != NULL &&
			c->into->accessMethod == NULL &&
			rangevar_is_temp(c->into->rel);
	}
	return false;
}

static void
use_heap_instead(Node *parsetree)
{
	RangeVar   *rel;

	if (IsA(parsetree, CreateStmt))
	{
		rel = ((CreateStmt *) parsetree)->relation;
		((CreateStmt *) parsetree)->accessMethod = pstrdup(DEFAULT_TABLE_ACCESS_METHOD);
	}
	else
	{
		rel = ((CreateTableAsStmt *) parsetree)->into->rel;
		((CreateTableAsStmt *) parsetree)->into->accessMethod = pstrdup(DEFAULT_TABLE_ACCESS_METHOD);
	}
	ereport(NOTICE,
			(errmsg("temporary table \"%s\" uses access method heap", rel->relname),
			 errdetail("forst tables cannot be temporary; default_table_access_method = forst applies to the other tables.")));
}

static void
forst_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					 bool readOnlyTree, ProcessUtilityContext context,
					 ParamListInfo params, QueryEnvironment *queryEnv,
					 DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		rewrite = false;
	Oid			dropped_db = InvalidOid;
	Oid			migrating = InvalidOid;
	List	   *restore = NIL;
	bool		partitioned_forst = false;

	if (forst_preloaded && default_am_as_heap(parsetree))
	{
		/* a temporary table under default_table_access_method = forst */
		if (readOnlyTree)
		{
			pstmt = copyObject(pstmt);
			parsetree = pstmt->utilityStmt;
			readOnlyTree = false;
		}
		use_heap_instead(parsetree);
	}
	if (IsA(parsetree, CreateStmt) && forst_preloaded)
	{
		CreateStmt *cstmt;
		bool		is_forst;

		if (readOnlyTree)
		{
			pstmt = copyObject(pstmt);
			parsetree = pstmt->utilityStmt;
			readOnlyTree = false;
		}
		cstmt = (CreateStmt *) parsetree;
		is_forst = is_forst_am_name(cstmt->accessMethod);

		/*
		 * PostgreSQL gives a partitioned table no access method (it ignores
		 * default_table_access_method; USING is an error it raises itself):
		 * its partitions get one each.  Created while the default is forst,
		 * its partitions are to be forst tables, and its key forst's.
		 */
		if (cstmt->partspec != NULL)
		{
			if (is_forst && cstmt->accessMethod == NULL && cstmt->partbound == NULL)
				partitioned_forst = true;
			is_forst = false;
		}
		forst_partition_before_create(cstmt, &is_forst);
		forst_like_before_create(cstmt, &is_forst);
		rewrite = is_forst;
		if (partitioned_forst)
			rewrite_create(cstmt, true);
	}
	else if (IsA(parsetree, AlterTableStmt) || IsA(parsetree, IndexStmt))
		rewrite = true;

	if (rewrite && forst_preloaded)
	{
		if (readOnlyTree)
		{
			pstmt = copyObject(pstmt);
			parsetree = pstmt->utilityStmt;
			readOnlyTree = false;
		}
		if (IsA(parsetree, CreateStmt))
			rewrite_create((CreateStmt *) parsetree, false);
		else if (IsA(parsetree, AlterTableStmt))
		{
			restore = forst_rekey_plan_alter((AlterTableStmt *) parsetree);
			rewrite_alter((AlterTableStmt *) parsetree);
			migrating = forst_migrate_begin((AlterTableStmt *) parsetree);
		}
		else
			forst_check_index_stmt((IndexStmt *) parsetree);
	}

	/* DROP DATABASE: its forst tables' memtables go when it commits */
	if (IsA(parsetree, DropdbStmt) && forst_preloaded)
		dropped_db = get_database_oid(((DropdbStmt *) parsetree)->dbname, true);

	if (IsA(parsetree, ReindexStmt) && forst_preloaded)
		forst_check_reindex_stmt((ReindexStmt *) parsetree);
	if ((IsA(parsetree, CreatePublicationStmt) ||
		 IsA(parsetree, AlterPublicationStmt)) && forst_preloaded)
		forst_check_publication_stmt(parsetree);
	if (IsA(parsetree, AlterTableStmt) && forst_preloaded)
	{
		forst_check_attach_partition((AlterTableStmt *) parsetree);
		forst_partition_before_alter((AlterTableStmt *) parsetree);
	}

	if (IsA(parsetree, AlterTableStmt) && forst_preloaded)
	{
		call_next_altering(pstmt, queryString, readOnlyTree, context, params,
						   queryEnv, dest, qc, OidIsValid(migrating), restore);
		forst_partition_after_alter((AlterTableStmt *) parsetree);
	}
	else
		call_next(pstmt, queryString, readOnlyTree, context, params,
				  queryEnv, dest, qc);

	if (OidIsValid(dropped_db))
		forst_drop_database_at_commit(dropped_db);
	if (forst_preloaded)
		forst_dropped_indexes_apply();
	if (forst_preloaded && IsA(parsetree, IndexStmt))
		forst_partition_unique_after(parsetree);
	if (forst_preloaded && IsA(parsetree, CreateStmt))
		forst_partition_after_create((CreateStmt *) parsetree);

	/* a new forst table under a publication for all tables or its schema */
	if (forst_preloaded && IsA(parsetree, CreateStmt) && rewrite)
		forst_check_new_table_published(RangeVarGetRelid(((CreateStmt *) parsetree)->relation,
														 NoLock, true));
	else if (OidIsValid(migrating))
		forst_check_new_table_published(migrating);
}

void
forst_utility_init(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = forst_ProcessUtility;
}
