/*-------------------------------------------------------------------------
 *
 * privileges.h
 *	  Who may call forst's SQL functions: the checks their C code makes.
 *
 * The extension script grants EXECUTE on each function to the roles of
 * docs/security.md and revokes it from PUBLIC where the function is not for
 * everyone.  The C functions check again, so that a forgotten REVOKE (or a
 * GRANT to PUBLIC by a DBA who did not read the matrix) is not a hole: the
 * checks below raise ERRCODE_INSUFFICIENT_PRIVILEGE (42501), naming the
 * function and who may call it.
 *
 * Three kinds of check:
 *	- table-level: the table's owner (as ALTER TABLE needs), or anyone who
 *	  may SELECT from it for functions that only read about it;
 *	- server-wide reads (checkpoint objects, other roles' operations): a
 *	  superuser or a member of pg_read_all_stats (pg_monitor is one);
 *	- server-wide acts (taking checkpoints: pg_checkpoint; grafting files,
 *	  deleting objects, savepoints, resetting counters: superusers only).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_PRIVILEGES_H
#define FORST_PRIVILEGES_H

#include "postgres.h"

/* Errors unless the current user owns relid (a superuser owns everything). */
extern void forst_require_table_owner(Oid relid, const char *funcname);

/*
 * Errors unless the current user may SELECT from relid or has the
 * privileges of pg_read_all_stats.
 */
extern void forst_require_table_read(Oid relid, const char *funcname);

/* Errors unless the current user is a superuser. */
extern void forst_require_superuser(const char *funcname, const char *what);

/*
 * Errors unless the current user is a superuser or has the privileges of
 * the predefined role roleid (named rolename in the message).
 */
extern void forst_require_role(Oid roleid, const char *rolename,
							   const char *funcname, const char *what);

/*
 * The table whose ownership forst.set_ttl or forst.advance_watermark has
 * checked, while its body runs (InvalidOid otherwise): the only table the
 * internal expiry functions act on.
 */
extern Oid	forst_expiry_checked_relid;

/* May the current user see rows about a backend of role roleid? */
extern bool forst_may_see_role(Oid roleid);

#endif							/* FORST_PRIVILEGES_H */
