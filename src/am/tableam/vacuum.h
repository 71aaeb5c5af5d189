/*-------------------------------------------------------------------------
 *
 * vacuum.h
 *	  VACUUM of a forst table: keeping relfrozenxid honest (tableam/vacuum.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_VACUUM_H
#define FORST_VACUUM_H

#include "commands/vacuum.h"
#include "utils/rel.h"

/* The table AM's relation_vacuum. */
extern void forst_relation_vacuum(Relation rel, struct VacuumParams *params,
								  BufferAccessStrategy bstrategy);

/*
 * The table AM's relation_copy_for_cluster: VACUUM FULL's rewrite into the
 * new relfilenode (CLUSTER never reaches it: forst_key indexes are not
 * clusterable).
 */
extern void forst_relation_copy_for_cluster(Relation OldTable,
											Relation NewTable,
											Relation OldIndex, bool use_sort,
											TransactionId OldestXmin,
											TransactionId *xid_cutoff,
											MultiXactId *multi_cutoff,
											double *num_tuples,
											double *tups_vacuumed,
											double *tups_recently_dead);

/*
 * Whether this transaction's VACUUM FULL filled heap's storage with a copy
 * of the secondary index entries, so that the rebuild of its indexes that
 * follows (cluster.c's reindex_relation) need not write them again; *rows
 * is the number of rows it copied.
 */
extern bool forst_rewrite_copied_entries(Relation heap, double *rows);

#endif							/* FORST_VACUUM_H */
