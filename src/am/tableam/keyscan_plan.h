/*-------------------------------------------------------------------------
 *
 * keyscan_plan.h
 *	  From a forst_key scan's keys to the key ranges it reads.
 *
 * A forst table is stored in key order, so a scan of its primary key
 * (tableam/keyindex.c) is a range of encoded user keys (keys/keycodec.h,
 * without the key group): equality on leading key columns gives a prefix
 * (and, on the first column, the one key group to read); the first column
 * without equality may add bounds, on the first key column only.  A range
 * over a table whose TTL column leads its key starts at the expiry cutoff.
 *
 * "col = ANY(array)" and IN-lists (the AM sets amsearcharray) on leading
 * key columns give a list of prefixes instead: every combination of the
 * arrays' elements with the other equalities, encoded, sorted in key order
 * and without duplicates.  NULL elements, and integers no value of the
 * column's type can equal, are left out; an array with nothing left
 * matches nothing.  The combinations are at most 65,536, or as many as
 * the largest array has elements: the key columns past that are not used.
 *
 * The range may be wider than the quals (keys this code cannot encode, or
 * does not use, are left out): the executor rechecks every qual.
 *
 * Memory: lo and hi are allocated by init, the prefixes in a context of
 * their own (made at the first array, reset at each plan); free releases
 * both.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_KEYSCAN_PLAN_H
#define FORST_KEYSCAN_PLAN_H

#include "access/genam.h"
#include "access/relscan.h"
#include "lib/stringinfo.h"

#include "am/keys/rel.h"

/* One range of an array scan: an encoded prefix of key columns. */
typedef struct ForstKeyPrefix
{
	char	   *data;
	int			len;
	uint16		kg;				/* its key group */
} ForstKeyPrefix;

typedef struct ForstKeyRange
{
	StringInfoData lo;			/* encoded key range without key group */
	StringInfoData hi;			/* exclusive; len 0: none */
	bool		empty;			/* the quals can match nothing */
	int			kg;				/* the one key group, or -1 for all */
	bool		point;			/* equality on every key column */

	/* an array scan: the prefixes to read in turn (else nprefixes = 0) */
	MemoryContext prefix_cxt;
	ForstKeyPrefix *prefixes;
	int			nprefixes;
	int			curprefix;		/* the one lo/hi/kg are set to */
} ForstKeyRange;

extern void forst_keyrange_init(ForstKeyRange *r);
extern void forst_keyrange_free(ForstKeyRange *r);

/*
 * Plans the range of scan's keys (the heap relation's, with info); for an
 * array scan, lo/hi/kg are set to its first prefix.
 */
extern void forst_keyrange_plan(IndexScanDesc scan, ForstRelInfo *info,
								ForstKeyRange *r);

/* Points lo/hi/kg at an array scan's prefix i. */
extern void forst_keyrange_use_prefix(ForstKeyRange *r, int i);

#endif							/* FORST_KEYSCAN_PLAN_H */
