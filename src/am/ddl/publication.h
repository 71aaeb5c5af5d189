/*-------------------------------------------------------------------------
 *
 * publication.h
 *	  Logical replication and forst tables (ddl/publication.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_DDL_PUBLICATION_H
#define FORST_DDL_PUBLICATION_H

#include "nodes/parsenodes.h"
#include "utils/rel.h"

/*
 * ddl/publication.c: publications cannot carry forst tables' changes.
 * Refuses CREATE/ALTER PUBLICATION naming a forst table and warns about
 * ones that cover forst tables (FOR ALL TABLES, TABLES IN SCHEMA); warns
 * when a new forst table (relid) falls under such a publication.
 */
extern void forst_check_publication_stmt(Node *parsetree);
extern void forst_check_new_table_published(Oid relid);
extern void forst_check_attach_partition(AlterTableStmt *stmt);
/* ... and SET ACCESS METHOD forst of a table in a publication */
extern void forst_refuse_migrating_published(Relation rel);

#endif							/* FORST_DDL_PUBLICATION_H */
