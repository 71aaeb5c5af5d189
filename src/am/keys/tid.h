/*-------------------------------------------------------------------------
 *
 * tid.h
 *	  Where a row version lives (ForstLoc), and its TID (keys/tid.c has the
 *	  bit layout): a memtable entry or an entry of an SST data block.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_KEYS_TID_H
#define FORST_KEYS_TID_H

#include "storage/itemptr.h"

/* Where a row version lives: a memtable entry or an SST entry. */
typedef struct ForstLoc
{
	bool		in_sst;
	int			slab;			/* memtable: slab and entry ref */
	uint32		ref;
	int			file_slot;		/* SST: per-transaction file slot, */
	uint32		block;			/* data block and entry in the block */
	uint32		entry;
} ForstLoc;

/*
 * keys/tid.c.  A TID addresses the first FORST_TID_SST_BLOCKS data blocks
 * of an SST file and the first FORST_TID_SST_ENTRIES entries of a block:
 * compaction cuts its outputs before the former (FORST_SST_MAX_BLOCKS
 * leaves room for the rest of the row at the cut), forst.block_size is
 * bounded so that a block holds fewer than the latter, and a flush writes
 * a memtable (at most 64 MB) into fewer blocks than that.
 */
#define FORST_TID_SST_BLOCKS	(1 << 14)
#define FORST_TID_SST_ENTRIES	(1 << 13)
#define FORST_SST_MAX_BLOCKS	(FORST_TID_SST_BLOCKS - 2048)
extern void forst_tid_set(ItemPointer tid, const ForstLoc *loc);
extern bool forst_tid_get(ItemPointer tid, ForstLoc *loc);

#endif							/* FORST_KEYS_TID_H */
