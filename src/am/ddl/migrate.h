/*-------------------------------------------------------------------------
 *
 * migrate.h
 *	  ALTER TABLE ... SET ACCESS METHOD between heap (or another table AM)
 *	  and forst.
 *
 * Contract.  The ProcessUtility hook calls forst_migrate_begin() with
 * every ALTER TABLE statement before PostgreSQL runs it.  It returns
 * InvalidOid when the statement changes no table to or from forst, and
 * then did nothing.  Otherwise it has checked that the table can change
 * (or raised an error with SQLSTATE 0A000 and a hint), locked it, planned
 * the switch of its primary-key index to the target's index access method
 * (made when PostgreSQL swaps the table's storage, which calls
 * forst_migrate_post_alter()), and returns the table's OID; the hook then
 * runs the statement
 * and must call forst_migrate_end() however the statement ends: with done
 * true after it succeeded (the last steps are taken then), false from an
 * error handler (nothing but forgetting the migration).
 * Everything it does is catalog work of the current transaction: a
 * rollback undoes it with the rest of the ALTER.
 *
 * While a migration to forst runs, forst_migrate_borrowed_key() gives the
 * transient table that PostgreSQL's rewrite fills the primary key of the
 * table being migrated, and forst_migrate_building() lets the forst_key
 * index build accept a table that already has rows.  While it prepares a
 * migration away from forst, forst_migrate_wants_toast() lets the forst
 * table get a TOAST table (see ddl/migrate.c).
 *
 * docs/migration.md describes what users see.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_MIGRATE_H
#define FORST_MIGRATE_H

#include "nodes/parsenodes.h"
#include "utils/relcache.h"

extern Oid	forst_migrate_begin(AlterTableStmt *stmt);
extern void forst_migrate_end(bool done);

/* The PK index whose key a transient rewrite target uses, or InvalidOid. */
extern Oid	forst_migrate_borrowed_key(Relation rel);

/* An OAT_POST_ALTER of relation relid (ddl/pending.c's hook). */
extern void forst_migrate_post_alter(Oid relid);

/* Whether rel is the table a migration to forst is rebuilding indexes of. */
extern bool forst_migrate_building(Relation rel);

/* Whether forst table rel, about to leave forst, is to get a TOAST table. */
extern bool forst_migrate_wants_toast(Relation rel);

/* The index of rel's primary key (deferrable or not), or InvalidOid. */
extern Oid	forst_primary_key_index(Relation rel);

/*
 * Sets an index's access method and its key columns' operator classes in
 * the catalog, with the dependencies that go with them (ddl/migrate.c's
 * switch of a key between btree and forst_key, ddl/partition.c's
 * relabelling of a partitioned table's key).  No CommandCounterIncrement.
 */
extern void forst_set_key_index_am(Oid indexoid, Oid am, const Oid *opclasses,
								   int nkeys);

#endif							/* FORST_MIGRATE_H */
