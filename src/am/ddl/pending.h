/*-------------------------------------------------------------------------
 *
 * pending.h
 *	  Dropping a table's forst state when its storage goes away (ddl/pending.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_DDL_PENDING_H
#define FORST_DDL_PENDING_H

#include "storage/relfilenode.h"

/* ddl/pending.c */
extern void forst_pending_init(void);
extern void forst_drop_storage_at(const RelFileNode *rnode, bool at_commit);
extern void forst_drop_database_at_commit(Oid dbid);

#endif							/* FORST_DDL_PENDING_H */
