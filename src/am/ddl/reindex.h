/*-------------------------------------------------------------------------
 *
 * reindex.h
 *	  REINDEX ... CONCURRENTLY of forst tables.
 *
 * forst_check_reindex_stmt refuses (0A000, with a hint) REINDEX ...
 * CONCURRENTLY of the indexes of forst tables, before anything happens
 * (ddl/reindex.c says why).  Called by the utility hook (ddl/utility.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_REINDEX_H
#define FORST_REINDEX_H

#include "nodes/parsenodes.h"

extern void forst_check_reindex_stmt(ReindexStmt *stmt);

#endif							/* FORST_REINDEX_H */
