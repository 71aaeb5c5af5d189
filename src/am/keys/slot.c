/*-------------------------------------------------------------------------
 *
 * slot.c
 *	  The tuple slot type of forst tables: a minimal-tuple slot that also
 *	  answers the system columns xmin, cmin and cmax.
 *
 * forst stores rows as minimal tuples (no heap tuple header), so the
 * executor's own minimal-tuple slot would do for every column but the
 * system ones: it refuses them ("cannot retrieve a system column in this
 * context").  PostgreSQL itself reads xmin from a table's slot in places
 * a user cannot avoid: the foreign-key triggers skip the re-check of an
 * updated referencing row only if its old version was not inserted by
 * the current transaction (RI_FKey_fk_upd_check_required), and users may
 * SELECT xmin.  So forst's slot type is the minimal-tuple slot with a few
 * extra fields and its own getsysattr; every other callback is the
 * executor's own, copied at load time from TTSOpsMinimalTuple (whose
 * functions are static), which works because ForstTupleTableSlot begins
 * with a MinimalTupleTableSlot.
 *
 * Values: xmin is the inserting transaction of the version (the frozen
 * xid for versions frozen by compaction or restored from elsewhere), cmin
 * and cmax its command id (as heap, which keeps one combo field), xmax is
 * always invalid: forst does not keep a deleter on the version itself, a
 * newer version or tombstone plays that part.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/transam.h"
#include "executor/tuptable.h"

#include "am/keys/slot.h"

typedef struct ForstTupleTableSlot
{
	MinimalTupleTableSlot base;
	TransactionId xmin;
	CommandId	cid;
} ForstTupleTableSlot;

TupleTableSlotOps forst_slot_ops;

static Datum
forst_slot_getsysattr(TupleTableSlot *slot, int attnum, bool *isnull)
{
	ForstTupleTableSlot *fslot = (ForstTupleTableSlot *) slot;

	Assert(!TTS_EMPTY(slot));
	*isnull = false;
	switch (attnum)
	{
		case MinTransactionIdAttributeNumber:
			return TransactionIdGetDatum(fslot->xmin);
		case MaxTransactionIdAttributeNumber:
			return TransactionIdGetDatum(InvalidTransactionId);
		case MinCommandIdAttributeNumber:
		case MaxCommandIdAttributeNumber:
			return CommandIdGetDatum(fslot->cid);
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("system column %d is not available in forst tables",
							attnum)));
	}
	return (Datum) 0;			/* keep compiler quiet */
}

/* The executor's own copyslot stores through ExecStoreMinimalTuple. */
static void
forst_slot_copyslot(TupleTableSlot *dstslot, TupleTableSlot *srcslot)
{
	MemoryContext oldcontext;
	MinimalTuple mtup;
	TransactionId xmin = InvalidTransactionId;
	CommandId	cid = InvalidCommandId;

	if (srcslot->tts_ops == &forst_slot_ops)
	{
		xmin = ((ForstTupleTableSlot *) srcslot)->xmin;
		cid = ((ForstTupleTableSlot *) srcslot)->cid;
	}
	oldcontext = MemoryContextSwitchTo(dstslot->tts_mcxt);
	mtup = ExecCopySlotMinimalTuple(srcslot);
	MemoryContextSwitchTo(oldcontext);
	forst_slot_store(dstslot, mtup, xmin, cid);
}

void
forst_slot_set_system(TupleTableSlot *slot, TransactionId xmin, CommandId cid)
{
	if (slot->tts_ops == &forst_slot_ops)
	{
		((ForstTupleTableSlot *) slot)->xmin = xmin;
		((ForstTupleTableSlot *) slot)->cid = cid;
	}
}

void
forst_slot_init(void)
{
	forst_slot_ops = TTSOpsMinimalTuple;
	forst_slot_ops.base_slot_size = sizeof(ForstTupleTableSlot);
	forst_slot_ops.getsysattr = forst_slot_getsysattr;
	forst_slot_ops.copyslot = forst_slot_copyslot;
}

/*
 * Stores a row version (a minimal tuple allocated in the slot's memory
 * context, which the slot then owns) with its system columns.
 *
 * Mirrors what the executor's minimal-tuple store does (it refuses any
 * slot whose ops are not TTSOpsMinimalTuple itself).  Slots of other types
 * (callers may hand us any slot) get the tuple through the executor's
 * general path, without system columns.
 */
void
forst_slot_store(TupleTableSlot *slot, MinimalTuple mtup,
				 TransactionId xmin, CommandId cid)
{
	if (slot->tts_ops == &forst_slot_ops)
	{
		ForstTupleTableSlot *fslot = (ForstTupleTableSlot *) slot;
		MinimalTupleTableSlot *mslot = &fslot->base;

		ExecClearTuple(slot);
		slot->tts_flags &= ~TTS_FLAG_EMPTY;
		slot->tts_nvalid = 0;
		mslot->off = 0;
		mslot->mintuple = mtup;
		Assert(mslot->tuple == &mslot->minhdr);
		mslot->minhdr.t_len = mtup->t_len + MINIMAL_TUPLE_OFFSET;
		mslot->minhdr.t_data = (HeapTupleHeader) ((char *) mtup - MINIMAL_TUPLE_OFFSET);
		slot->tts_flags |= TTS_FLAG_SHOULDFREE;
		fslot->xmin = xmin;
		fslot->cid = cid;
	}
	else if (TTS_IS_MINIMALTUPLE(slot))
		ExecStoreMinimalTuple(mtup, slot, true);
	else
	{
		ExecForceStoreMinimalTuple(mtup, slot, false);
		pfree(mtup);
	}
}
