/*-------------------------------------------------------------------------
 *
 * migrate_checks.h
 *	  The checks of a migration to forst (ddl/migrate_checks.c), for
 *	  ddl/migrate.c.
 *
 * forst_migrate_check_to_forst raises an error (0A000, with a hint) when
 * table rel cannot become a forst table as it is: not a plain table, a
 * temporary table, a partition, referenced by a foreign key, a primary key
 * forst cannot use, an index or constraint a forst table cannot hold.  It
 * changes nothing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_MIGRATE_CHECKS_H
#define FORST_MIGRATE_CHECKS_H

#include "utils/relcache.h"

extern void forst_migrate_check_to_forst(Relation rel);

/* Refuses changing rel's access method to target, saying why (0A000). */
extern void forst_migrate_refuse(Relation rel, const char *target,
								 const char *what) pg_attribute_noreturn();

#endif							/* FORST_MIGRATE_CHECKS_H */
