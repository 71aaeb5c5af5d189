/*-------------------------------------------------------------------------
 *
 * tableam.h
 *	  The forst table access method (tableam/tableam.c builds its
 *	  TableAmRoutine; its DDL callbacks are tableam/tableam_ddl.c's).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_TABLEAM_TABLEAM_H
#define FORST_TABLEAM_TABLEAM_H

#include "access/tableam.h"

/* tableam/tableam.c */
extern const TableAmRoutine *forst_table_am_routine(void);

/*
 * Refuses what forst tables do not offer: "<what> is not supported on
 * forst tables" (for the callbacks of tableam/tableam_ddl.c too).
 */
extern void forst_not_supported(const char *what);

/*
 * tableam/tableam_ddl.c: the routine's DDL callbacks, which
 * tableam/tableam.c puts into the routine (see TableAmRoutine).
 */
extern void forst_relation_set_new_filenode(Relation rel,
											const RelFileNode *newrnode,
											char persistence,
											TransactionId *freezeXid,
											MultiXactId *minmulti);
extern void forst_relation_nontransactional_truncate(Relation rel);
extern void forst_relation_copy_data(Relation rel,
									 const RelFileNode *newrnode);
extern double forst_index_build_range_scan(Relation table_rel,
										   Relation index_rel,
										   struct IndexInfo *index_info,
										   bool allow_sync, bool anyvisible,
										   bool progress,
										   BlockNumber start_blockno,
										   BlockNumber numblocks,
										   IndexBuildCallback callback,
										   void *callback_state,
										   TableScanDesc scan);
extern void forst_index_validate_scan(Relation table_rel, Relation index_rel,
									  struct IndexInfo *index_info,
									  Snapshot snapshot,
									  struct ValidateIndexState *state);
extern bool forst_relation_needs_toast_table(Relation rel);
extern Oid	forst_relation_toast_am(Relation rel);

/*
 * Whether the table may have rows: anything flushed (even if deleted
 * since), or entries in its memtables (tableam/tableam_ddl.c).
 */
extern bool forst_relation_has_rows(Relation rel);

#endif							/* FORST_TABLEAM_TABLEAM_H */
