/*-------------------------------------------------------------------------
 *
 * rekey.c
 *	  Rewriting a forst table under its primary key (see ddl/rekey.h).
 *
 * A forst table stores each row at its key: the primary key's columns,
 * encoded, after a key group, or a hidden row id in a keyless table.  A
 * key added to a table that has rows therefore needs every row written
 * again under it.  pg_dump and pg_restore do exactly that (CREATE TABLE,
 * COPY, then ALTER TABLE ... ADD CONSTRAINT ... PRIMARY KEY, for
 * pg_restore -j in another session), and so does a user who adds the key
 * last.
 *
 * The approach: the rewrite PostgreSQL uses for ALTER TABLE and CLUSTER.
 * make_new_heap() creates a transient forst table "pg_temp_<oid>", the
 * visible rows are copied into it, and finish_heap_swap() swaps the two
 * tables' storage, rebuilds the indexes (the forst_key build, which
 * stores nothing) and drops the transient table with the old storage.
 * The transient table borrows the primary key of the table it replaces
 * (forst_rekey_borrowed_key, consulted by keys/rel.c), so its rows are
 * written under that key: a duplicate raises the unique violation (23505)
 * an insert would, and the storage ends up in key order.  Every write is
 * an ordinary forst write, WAL-logged and replayed by standbys; the new
 * storage is dropped if the transaction aborts, the old one when it
 * commits (ddl/pending.c), so a ROLLBACK or a crash leaves the table as
 * it was.  Memory is bounded as for any load: rows go through memtables,
 * which are flushed as they fill, and the copy reads through a cursor.
 *
 * When: the forst_key build accepts a table with rows if the key is new in
 * the running ALTER TABLE, and the table is rewritten when the statement
 * has succeeded, after PostgreSQL has checked the key columns for NULLs
 * (23502, SET NOT NULL is part of ADD PRIMARY KEY).  Until then the key's
 * index exists but the rows are still stored under the old key; nothing
 * but the statement itself and its event triggers can see the table in
 * between (it holds an AccessExclusiveLock).
 *
 * PostgreSQL's own rewrites of forst tables (ALTER COLUMN ... TYPE, ADD
 * COLUMN with a volatile default) go through the same transient table,
 * which borrows the key too.  ALTER COLUMN ... TYPE of a key column would
 * re-create the primary key as a btree: forst_rekey_plan_alter() has the
 * statement drop it and add it again as forst_key instead.
 *
 * Alternatives not taken: re-keying inside the forst_key build, in the
 * middle of index_create() and before PostgreSQL's NULL check, would
 * change the table's storage under a statement that has it open; forcing
 * PostgreSQL's own phase-3 rewrite needs a subcommand that rewrites
 * without changing anything, which ALTER TABLE does not have (SET ACCESS
 * METHOD to the same method is a no-op).  A rewrite of our own does not
 * fire table_rewrite event triggers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/multixact.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_index.h"
#include "commands/cluster.h"
#include "commands/comment.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/pg_list.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "am/ddl/utility.h"
#include "am/keys/rel.h"
#include "am/read/mvcc.h"
#include "am/ddl/migrate.h"
#include "am/ddl/rekey.h"
#include "am/shmem/shmem.h"
#include "am/objects/store.h"

/* A table to rewrite under its new key when ALTER TABLE level "depth" ends. */
typedef struct Pending
{
	Oid			relid;
	int			depth;
} Pending;

/* The comments of a primary key that ALTER TABLE drops and adds again. */
typedef struct KeyComments
{
	Oid			relid;
	char	   *conname;
	char	   *concomment;		/* on the constraint; NULL: none */
	char	   *idxcomment;		/* on its index */
} KeyComments;

static int	alter_depth = 0;	/* nesting of ALTER TABLE statements */
static List *pending = NIL;		/* Pending *, in TopMemoryContext */

void
forst_rekey_alter_begin(void)
{
	if (alter_depth == 0)
	{
		list_free_deep(pending);
		pending = NIL;
	}
	alter_depth++;
}

/*
 * The OID of the table whose transient rewrite target rel is, or
 * InvalidOid: make_new_heap() names it "pg_temp_<oid>", in the table's
 * schema, and it is new in this transaction.
 */
static Oid
transient_of(Relation rel)
{
	unsigned int oid;
	char		tail;

	if (rel->rd_createSubid == InvalidSubTransactionId)
		return InvalidOid;
	if (sscanf(RelationGetRelationName(rel), "pg_temp_%u%c", &oid, &tail) != 1)
		return InvalidOid;
	if (!OidIsValid(oid) || oid == RelationGetRelid(rel) ||
		get_rel_namespace((Oid) oid) != RelationGetNamespace(rel))
		return InvalidOid;
	return (Oid) oid;
}

void
forst_check_rewrite_whole(Relation rel, const char *hint)
{
	ForstTableShared *ts = forst_table_shared(&rel->rd_node, true);

	if (!ts->loaded)
		forst_table_load(ts);
	if (ts->fenced)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot rewrite forst table \"%s\": it was claimed by another server",
						RelationGetRelationName(rel)),
				 errhint("Change the table on the server that attached it with mode => 'claim'.")));
	if (ts->kg_lo > 0 || ts->kg_hi < FORST_MAX_KEY_GROUPS_DEFAULT - 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rewrite forst table \"%s\": it owns only key groups %u..%u",
						RelationGetRelationName(rel), ts->kg_lo, ts->kg_hi),
				 errdetail("A rewrite gives the table new storage, which would own every key group."),
				 errhint("%s", hint)));
}

Oid
forst_rekey_borrowed_key(Relation rel)
{
	Oid			relid;
	Relation	orig;
	Oid			pk = InvalidOid;

	if (alter_depth == 0)
		return InvalidOid;
	relid = transient_of(rel);
	if (!OidIsValid(relid))
		return InvalidOid;
	/* the rewrite holds an AccessExclusiveLock on the table */
	orig = try_relation_open(relid, AccessShareLock);
	if (orig == NULL)
		return InvalidOid;
	if (orig->rd_rel->relkind == RELKIND_RELATION && forst_is_forst_relation(orig))
	{
		pk = forst_primary_key_index(orig);
		if (OidIsValid(pk))
		{
			/* relinfo_build() calls this in CacheMemoryContext */
			MemoryContext old = MemoryContextSwitchTo(CurTransactionContext);

			forst_check_rewrite_whole(orig,
									  "Copy the rows into a new table with the new definition.");
			MemoryContextSwitchTo(old);
		}
	}
	relation_close(orig, AccessShareLock);

	return pk;
}

bool
forst_rekey_build_ok(Relation heap, Relation index)
{
	ListCell   *lc;
	Pending    *p;
	MemoryContext old;

	/*
	 * A rebuild of a key that existed before (REINDEX, or after a rewrite,
	 * which gets a new relfilenode for it): every row since it was built
	 * went in under it, as every rewrite since borrowed it.
	 */
	if (index->rd_createSubid == InvalidSubTransactionId ||
		index->rd_newRelfilenodeSubid != InvalidSubTransactionId)
		return true;

	/* a key that this ALTER TABLE adds: rewrite the table when it ends */
	if (alter_depth == 0)
		return false;
	foreach(lc, pending)
	{
		p = lfirst(lc);
		if (p->relid == RelationGetRelid(heap))
			return true;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	p = palloc(sizeof(Pending));
	p->relid = RelationGetRelid(heap);
	p->depth = alter_depth;
	pending = lappend(pending, p);
	MemoryContextSwitchTo(old);
	return true;
}

/* Copies the rows of oldrel visible now into newrel (the transient table). */
static void
copy_rows(Relation oldrel, Relation newrel)
{
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	TupleTableSlot *slot = table_slot_create(oldrel, NULL);
	TableScanDesc scan = table_beginscan(oldrel, snapshot, 0, NULL);
	CommandId	cid = GetCurrentCommandId(true);
	MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext,
												 "forst re-key row",
												 ALLOCSET_DEFAULT_SIZES);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		MemoryContext old = MemoryContextSwitchTo(rowcxt);

		table_tuple_insert(newrel, slot, cid, 0, NULL);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
		CHECK_FOR_INTERRUPTS();
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	MemoryContextDelete(rowcxt);
}

/* Rewrites forst table relid under its (new) primary key. */
static void
rekey_table(Oid relid)
{
	Relation	rel = table_open(relid, AccessExclusiveLock);
	Oid			tablespace = rel->rd_rel->reltablespace;
	Oid			am = rel->rd_rel->relam;
	char		persistence = rel->rd_rel->relpersistence;
	bool		keyed_table = forst_is_forst_relation(rel) &&
		OidIsValid(forst_primary_key_index(rel));
	Oid			newrelid;
	Relation	newrel;

	table_close(rel, NoLock);
	/* a later subcommand may have dropped the key again: nothing to do */
	if (!keyed_table)
		return;

	CommandCounterIncrement();
	newrelid = make_new_heap(relid, tablespace, am, persistence,
							 AccessExclusiveLock);
	rel = table_open(relid, NoLock);
	newrel = table_open(newrelid, NoLock);
	copy_rows(rel, newrel);
	table_close(newrel, NoLock);
	table_close(rel, NoLock);
	CommandCounterIncrement();

	/* as ALTER TABLE's rewrites do (ATRewriteTables) */
	finish_heap_swap(relid, newrelid, false, false, true, true,
					 RecentXmin, ReadNextMultiXactId(), persistence);
}

/* Rewrites the tables whose key ALTER TABLE level depth (or deeper) added. */
static void
rekey_pending(int depth)
{
	for (;;)
	{
		ListCell   *lc;
		Oid			relid = InvalidOid;

		foreach(lc, pending)
		{
			Pending    *p = lfirst(lc);

			if (p->depth >= depth)
			{
				relid = p->relid;
				pending = foreach_delete_current(pending, lc);
				pfree(p);
				break;
			}
		}
		if (!OidIsValid(relid))
			return;
		rekey_table(relid);
	}
}

static void
leave_level(void)
{
	alter_depth--;
	if (alter_depth == 0)
	{
		list_free_deep(pending);
		pending = NIL;
	}
}

/* Puts the comments of re-added primary keys back. */
static void
restore_comments(List *restore)
{
	ListCell   *lc;

	if (restore == NIL)
		return;
	CommandCounterIncrement();
	foreach(lc, restore)
	{
		KeyComments *c = lfirst(lc);
		Oid			conoid = get_relation_constraint_oid(c->relid, c->conname, true);

		if (!OidIsValid(conoid))
			continue;
		if (c->concomment)
			CreateComments(conoid, ConstraintRelationId, 0, c->concomment);
		if (c->idxcomment)
			CreateComments(get_constraint_index(conoid), RelationRelationId, 0,
						   c->idxcomment);
	}
}

void
forst_rekey_alter_end(bool done, List *restore)
{
	if (done)
	{
		PG_TRY();
		{
			restore_comments(restore);
			rekey_pending(alter_depth);
		}
		PG_CATCH();
		{
			leave_level();
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	leave_level();
}

/* Whether attnum is one of the key columns of index idx. */
static bool
is_key_column(Relation idx, AttrNumber attnum)
{
	int			i;

	for (i = 0; i < idx->rd_index->indnkeyatts; i++)
		if (idx->rd_index->indkey.values[i] == attnum)
			return true;
	return false;
}

/*
 * ALTER COLUMN ... TYPE of a key column of a forst table.  PostgreSQL
 * re-creates the primary key from the constraint's definition, which names
 * no access method: as a btree, which a forst table cannot build.  (Its
 * relcache entry, new in this transaction, keeps the btree routines even
 * if the catalogs switch it to forst_key later.)  So the statement drops
 * the key first and adds it again last, under the same name, as forst_key
 * (rewrite_constraint in ddl/utility.c): the table is then written under
 * the new key, by PostgreSQL's rewrite if the type change needs one, else
 * when the statement ends.  Returns the key's comments, which
 * forst_rekey_alter_end() puts back.
 */
List *
forst_rekey_plan_alter(AlterTableStmt *stmt)
{
	Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	Relation	rel;
	Relation	idx;
	Oid			pk;
	Oid			conoid;
	ListCell   *lc;
	bool		retyped = false;
	List	   *keys = NIL;
	AlterTableCmd *drop;
	AlterTableCmd *add;
	Constraint *con;
	KeyComments *c;
	int			i;

	if (!forst_relid_is_forst_table(relid))
		return NIL;
	rel = relation_open(relid, AccessShareLock);
	pk = forst_primary_key_index(rel);
	conoid = OidIsValid(pk) ? get_index_constraint(pk) : InvalidOid;
	if (!OidIsValid(conoid))
	{
		relation_close(rel, AccessShareLock);
		return NIL;
	}
	idx = index_open(pk, AccessShareLock);
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_AlterColumnType && cmd->name &&
			is_key_column(idx, get_attnum(relid, cmd->name)))
			retyped = true;
		/* a statement that drops the key itself needs nothing of this */
		if (cmd->subtype == AT_DropConstraint && cmd->name &&
			strcmp(cmd->name, get_constraint_name(conoid)) == 0)
		{
			retyped = false;
			break;
		}
	}
	if (retyped)
		for (i = 0; i < idx->rd_index->indnkeyatts; i++)
			keys = lappend(keys,
						   makeString(get_attname(relid, idx->rd_index->indkey.values[i],
												  false)));
	index_close(idx, AccessShareLock);
	relation_close(rel, AccessShareLock);
	if (!retyped)
		return NIL;

	drop = makeNode(AlterTableCmd);
	drop->subtype = AT_DropConstraint;
	drop->name = get_constraint_name(conoid);
	drop->behavior = DROP_RESTRICT;

	con = makeNode(Constraint);
	con->contype = CONSTR_PRIMARY;
	con->conname = get_constraint_name(conoid);
	con->keys = keys;
	con->initially_valid = true;
	con->location = -1;
	add = makeNode(AlterTableCmd);
	add->subtype = AT_AddConstraint;
	add->def = (Node *) con;

	stmt->cmds = lcons(drop, lappend(stmt->cmds, add));

	c = palloc(sizeof(KeyComments));
	c->relid = relid;
	c->conname = con->conname;
	c->concomment = GetComment(conoid, ConstraintRelationId, 0);
	c->idxcomment = GetComment(pk, RelationRelationId, 0);
	return list_make1(c);
}
