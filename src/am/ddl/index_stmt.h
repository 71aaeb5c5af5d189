/*-------------------------------------------------------------------------
 *
 * index_stmt.h
 *	  Index statements on forst tables (ddl/index_stmt.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_INDEX_STMT_H
#define FORST_INDEX_STMT_H

#include "nodes/parsenodes.h"

/*
 * CREATE INDEX: on a forst table, a secondary index (forst_key; a btree
 * operator class named stands for its forst twin), with refusals (0A000,
 * hints) for other access methods, deferrable unique, a primary key not
 * forst_key, concurrent builds forst cannot do; on a partitioned table whose
 * partitions are forst tables, a forst_key index (a unique one through
 * ddl/partition_unique.c); a forst_key index copied LIKE to another kind of
 * table, a btree without entry_id.
 */
extern void forst_check_index_stmt(IndexStmt *stmt);

/* ALTER INDEX ... SET/RESET of entry_id: refused (0A000). */
extern void forst_refuse_entry_id_change(AlterTableStmt *stmt, List *options);

#endif							/* FORST_INDEX_STMT_H */
