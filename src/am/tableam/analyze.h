/*-------------------------------------------------------------------------
 *
 * analyze.h
 *	  ANALYZE's sample of a forst table, read at a cost set by the sample
 *	  and not by the size of the table.
 *
 * ANALYZE picks pseudo-blocks at random among the RelationGetNumberOfBlocks
 * the table AM reports, takes the rows the AM returns for each into its
 * reservoir and extrapolates the table's row count from the live rows per
 * block.  A forst table has no blocks; its data blocks are in SST files.
 *
 * The pseudo-blocks are mapped onto the data blocks of the table's largest
 * level of 1 or more (whose files are disjoint and in key order):
 * pseudo-block b stands for a point drawn at random between b / nblocks
 * and (b + 1) / nblocks of the way through that level's bytes, which lies
 * in one data block of one file.
 * That block's cell is the range of user parts after the last key of the
 * level's block before it up to its own last key; the level's first block
 * has no lower bound, its last no upper one.  So the cells partition every
 * key, and the rows the cursor (every memtable and every level merged, as
 * the snapshot sees them) yields in a cell are the table's rows there,
 * wherever they are stored.  A pseudo-block that maps to the cell just read
 * yields nothing more.
 *
 * A cell is sampled with a probability in proportion to its block's share
 * of the level's bytes, so the row count is estimated as the mean over the
 * pseudo-blocks of (rows in the cell / that share) (Horvitz-Thompson).
 *
 * Cost: one SST reader (index) per file a pseudo-block falls in and one
 * seek of the merge per cell -- at most as many as ANALYZE asks for, a
 * number set by its statistics target.  A table without files below level
 * 0 is bounded by the memtable pool and level 0's compaction trigger, and
 * is read whole instead (forst_analyze_begin returns NULL).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_ANALYZE_H
#define FORST_ANALYZE_H

#include "am/read/cursor.h"
#include "storage/block.h"

typedef struct ForstAnalyze ForstAnalyze;

/*
 * A sampler over cursor (opened over the whole table, which it seeks) for
 * ANALYZE's nblocks pseudo-blocks, in CurrentMemoryContext; NULL when the
 * table has no files below level 0 (read it whole).
 */
extern ForstAnalyze *forst_analyze_begin(ForstCursor *cursor,
										 BlockNumber nblocks);

/*
 * Positions the cursor on the cell of pseudo-block blockno; false when it
 * has no rows to read (the cell is the one just read).
 */
extern bool forst_analyze_block(ForstAnalyze *a, BlockNumber blockno);

/* Counts one row the cursor yielded in the current cell. */
extern void forst_analyze_row(ForstAnalyze *a);

/* The table's estimated live rows from the pseudo-blocks so far. */
extern double forst_analyze_estimate(const ForstAnalyze *a);

/* Frees the sampler (not the cursor). */
extern void forst_analyze_end(ForstAnalyze *a);

#endif							/* FORST_ANALYZE_H */
