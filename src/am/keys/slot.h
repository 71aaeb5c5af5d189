/*-------------------------------------------------------------------------
 *
 * slot.h
 *	  The tuple slot type of forst tables (keys/slot.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_KEYS_SLOT_H
#define FORST_KEYS_SLOT_H

#include "executor/tuptable.h"

/* keys/slot.c: minimal-tuple slots that also answer xmin, cmin, cmax */
extern TupleTableSlotOps forst_slot_ops;
extern void forst_slot_init(void);
extern void forst_slot_store(TupleTableSlot *slot, MinimalTuple mtup,
							 TransactionId xmin, CommandId cid);
/* Sets the system columns of the row a forst slot holds (after a write). */
extern void forst_slot_set_system(TupleTableSlot *slot, TransactionId xmin,
								  CommandId cid);

#endif							/* FORST_KEYS_SLOT_H */
