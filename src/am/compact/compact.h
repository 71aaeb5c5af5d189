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
#include "lsm/compaction.h"

/*
 * Runs one leveled compaction of the table's SST files if one is due, or
 * (freeze_xid valid) a rewrite of a file holding unfrozen xids older than
 * freeze_xid; false if there was none.  Must run in a transaction (for its
 * snapshot); ereports on failure.
 */
extern bool forst_compact_one(ForstTableShared *ts, TransactionId freeze_xid);

/* What forst_compact_into did. */
typedef struct ForstCompactIntoResult
{
	int			files_in;
	int			files_out;
	int			output_level;
	FstCompactionStats stats;	/* entries in and out, what was dropped */
	uint32		xid_min;		/* oldest unfrozen xid of the outputs */
	uint32		xid_max;		/* (fst_xid_range_note); 0/0: all frozen */
} ForstCompactIntoResult;

/*
 * VACUUM FULL's rewrite: every file of table from merged into new files of
 * the new, empty table to, by the rules of a compaction (compact.c says
 * which); from's memtables flushed and its compaction held by the caller.
 * ereports on failure.
 */
extern void forst_compact_into(ForstTableShared *from, ForstTableShared *to,
							   ForstCompactIntoResult *res);

/* The compaction workers (forst.compaction_workers). */
extern void forst_compaction_workers_register(void);
extern void forst_wake_compaction_workers(void);

#endif							/* FORST_COMPACT_COMPACT_H */
