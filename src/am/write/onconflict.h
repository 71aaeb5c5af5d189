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

/* the outcome of the last speculative insertion, for fkey_insert */
extern void forst_spec_begin(Relation rel, ItemPointer tid, bool conflict);
extern bool forst_spec_index_ok(Relation heap, ItemPointer tid);
extern void forst_spec_end(Relation rel);

extern void forst_onconflict_check_lock(Relation rel, ItemPointer tid,
										CommandId cid);
extern bool forst_onconflict_satisfies_snapshot(Snapshot snapshot,
												TransactionId xid,
												bool visible);

#endif							/* FORST_ONCONFLICT_H */
