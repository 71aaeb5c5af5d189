/*-------------------------------------------------------------------------
 *
 * flush.h
 *	  Flushing memtables to SST files (flush/flush.c) and the background
 *	  worker that does it (flush/flush_worker.c).
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

extern void forst_flush_worker_register(void);

#endif							/* FORST_FLUSH_H */
