/*-------------------------------------------------------------------------
 *
 * onconflict.h
 *	  INSERT ... ON CONFLICT on forst tables (see write/onconflict.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_ONCONFLICT_H
#define FORST_ONCONFLICT_H

#include "storage/itemptr.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

extern void forst_onconflict_init(void);

/*
 * The outcome of the last speculative insertion, for fkey_insert: the
 * index whose value was taken (InvalidOid: the row was written), and
 * whether index has a conflict for the row at tid.
 */
extern void forst_spec_begin(Relation rel, ItemPointer tid, Oid conflict_index);
extern bool forst_spec_conflicts(Relation index, Relation heap, ItemPointer tid);
extern void forst_spec_end(Relation rel);

extern void forst_onconflict_check_lock(Relation rel, ItemPointer tid,
										CommandId cid);
extern bool forst_onconflict_satisfies_snapshot(Snapshot snapshot,
												TransactionId xid,
												bool visible);

#endif							/* FORST_ONCONFLICT_H */
