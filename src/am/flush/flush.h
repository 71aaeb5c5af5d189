/*-------------------------------------------------------------------------
 *
 * flush.h
 *	  Flushing memtables to SST files (flush/flush.c) and the background
 *	  worker that does it (src/am/flush/flush_worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_FLUSH_H
#define FORST_FLUSH_H

#include "am/shmem/shmem.h"

/*
 * Flushes the table's oldest immutable memtable; returns false if it had
 * none.  *retired_slab is the slab that readers no longer see (to be freed
 * once the transactions that may hold its TIDs have ended).  Must run in a
 * transaction (for its snapshot).  ereports on failure.
 */
extern bool forst_flush_one(ForstTableShared *ts, int *retired_slab);

/*
 * Runs one leveled compaction of the table's SST files if one is due, or
 * (freeze_xid valid) a rewrite of a file holding unfrozen xids older than
 * freeze_xid; false if there was none.  Same context as forst_flush_one.
 */
extern bool forst_compact_one(ForstTableShared *ts, TransactionId freeze_xid);

extern void forst_flush_worker_register(void);

/* src/am/compact/compaction_worker.c: the compaction workers */
extern void forst_compaction_workers_register(void);
extern void forst_wake_compaction_workers(void);

#endif							/* FORST_FLUSH_H */
