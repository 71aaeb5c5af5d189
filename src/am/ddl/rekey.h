/*-------------------------------------------------------------------------
 *
 * rekey.h
 *	  Rewriting a forst table under its primary key: ALTER TABLE ... ADD
 *	  PRIMARY KEY on a table that has rows (as pg_dump's output does), and
 *	  PostgreSQL's own rewrites of keyed forst tables (ALTER COLUMN ...
 *	  TYPE, ADD COLUMN with a volatile default).
 *
 * Contract.  The ProcessUtility hook passes every ALTER TABLE statement
 * to forst_rekey_plan_alter() before its own changes to the statement (it
 * may add subcommands: ALTER COLUMN ... TYPE of a key column drops and
 * re-adds the key), calls forst_rekey_alter_begin() before PostgreSQL runs
 * it, and forst_rekey_alter_end() however it ends: with done true after
 * it succeeded, which puts back the comments plan_alter returned and
 * rewrites the tables whose new key needs it (an error there fails the
 * statement), false from an error handler.  In between:
 *
 *	- forst_rekey_borrowed_key() gives the transient table of a rewrite of
 *	  a forst table ("pg_temp_<oid>", filled by PostgreSQL or by this
 *	  module) the primary key of the table it replaces, so that its rows
 *	  are written in the order of that key;
 *	- forst_rekey_build_ok() tells the forst_key build whether a table
 *	  that has rows may get that key: if the key existed before (REINDEX,
 *	  or the rebuild after a rewrite, which borrowed it), or if it is new
 *	  in this ALTER TABLE, in which case the table is rewritten under it
 *	  when the statement ends.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_REKEY_H
#define FORST_REKEY_H

#include "nodes/parsenodes.h"
#include "utils/relcache.h"

extern List *forst_rekey_plan_alter(AlterTableStmt *stmt);
extern void forst_rekey_alter_begin(void);
extern void forst_rekey_alter_end(bool done, List *restore);

extern Oid	forst_rekey_borrowed_key(Relation rel);

/*
 * A rewrite (ALTER TABLE's, VACUUM FULL's) gives the table new storage,
 * whose manifest owns every key group and is not fenced: refused (with
 * hint) for a table that owns only some key groups (attached from a part
 * of a table) or that another server claimed, which would lose what makes
 * it a part or keeps it read-only here.
 */
extern void forst_check_rewrite_whole(Relation rel, const char *hint);
extern bool forst_rekey_build_ok(Relation heap, Relation index);

#endif							/* FORST_REKEY_H */
