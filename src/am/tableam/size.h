/*-------------------------------------------------------------------------
 *
 * size.h
 *	  A forst table's size as PostgreSQL sees it (tableam/size.c).
 *
 * relation_size reports the bytes of the table's memtables and SST files,
 * at most FORST_REPORTED_BLOCKS_MAX blocks (see there); the planner's
 * estimates use the true size and ANALYZE's row density.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_SIZE_H
#define FORST_SIZE_H

#include "utils/rel.h"

/* The table AM's relation_size and relation_estimate_size. */
extern uint64 forst_relation_size(Relation rel, ForkNumber forkNumber);
extern void forst_relation_estimate_size(Relation rel, int32 *attr_widths,
										 BlockNumber *pages, double *tuples,
										 double *allvisfrac);

/*
 * The size in blocks relation_size last reported for rel in this backend
 * (what ANALYZE extrapolates with), or else rel's size now.
 */
extern BlockNumber forst_reported_blocks(Relation rel);

#endif							/* FORST_SIZE_H */
