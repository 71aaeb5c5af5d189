/*-------------------------------------------------------------------------
 *
 * reindex.h
 *	  REINDEX ... CONCURRENTLY of forst tables.
 *
 * forst_check_reindex_stmt and forst_check_drop_index_stmt refuse (0A000,
 * with a hint) REINDEX ... CONCURRENTLY and DROP INDEX CONCURRENTLY of the
 * indexes of forst tables, before anything happens (ddl/reindex.c says
 * why).  Called by the utility hook (ddl/utility.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_REINDEX_H
#define FORST_REINDEX_H

#include "nodes/parsenodes.h"

extern void forst_check_reindex_stmt(ReindexStmt *stmt);
extern void forst_check_drop_index_stmt(DropStmt *stmt);

#endif							/* FORST_REINDEX_H */
