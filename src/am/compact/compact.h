/*-------------------------------------------------------------------------
 *
 * compact.h
 *	  Leveled compaction of a table's SST files (compact/compact.c) and the
 *	  compaction workers that run it (compact/compaction_worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_COMPACT_COMPACT_H
#define FORST_COMPACT_COMPACT_H

#include "am/shmem/shmem.h"

/*
 * Runs one leveled compaction of the table's SST files if one is due, or
 * (freeze_xid valid) a rewrite of a file holding unfrozen xids older than
 * freeze_xid; false if there was none.  Must run in a transaction (for its
 * snapshot); ereports on failure.
 */
extern bool forst_compact_one(ForstTableShared *ts, TransactionId freeze_xid);

/* The compaction workers (forst.compaction_workers). */
extern void forst_compaction_workers_register(void);
extern void forst_wake_compaction_workers(void);

#endif							/* FORST_COMPACT_COMPACT_H */
