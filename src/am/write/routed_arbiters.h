/*-------------------------------------------------------------------------
 *
 * routed_arbiters.h
 *	  INSERT ... ON CONFLICT through a partitioned table keyed by forst
 *	  (write/routed_arbiters.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_ROUTED_ARBITERS_H
#define FORST_ROUTED_ARBITERS_H

#include "nodes/execnodes.h"
#include "utils/rel.h"

extern void forst_routed_arbiters_init(void);

/*
 * For a statement of estate that inserts with ON CONFLICT into partitioned
 * table root: opens the keys of its forst partitions so that PostgreSQL can
 * open them as arbiters when it routes the first row to each.  They are
 * closed when the statement ends (ExecutorEnd) or its transaction or
 * subtransaction aborts.
 */
extern void forst_routed_arbiters_open(EState *estate, Relation root);

#endif							/* FORST_ROUTED_ARBITERS_H */
