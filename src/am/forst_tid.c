/*-------------------------------------------------------------------------
 *
 * forst_tid.c
 *	  Packing row-version locations into TIDs (layout in forst_am.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "forst_am.h"

#define TID_KIND_SST		(UINT64CONST(1) << 39)
#define TID_SLAB_SHIFT		29
#define TID_REF_MASK		((UINT64CONST(1) << TID_SLAB_SHIFT) - 1)

void
forst_tid_set_memtable(ItemPointer tid, int slab, uint32 ref)
{
	uint64		v;

	Assert(slab >= 0 && slab < FORST_MAX_SLABS && (ref & 7) == 0);
	v = ((uint64) slab << TID_SLAB_SHIFT) | (ref >> 3);
	ItemPointerSet(tid, (BlockNumber) (v >> 8), (OffsetNumber) ((v & 0xFF) + 1));
}

bool
forst_tid_get_memtable(ItemPointer tid, int *slab, uint32 *ref)
{
	uint64		v;
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);

	if (off < 1 || off > 256)
		return false;
	v = ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 8) | (uint64) (off - 1);
	if (v & TID_KIND_SST)
		return false;
	*slab = (int) (v >> TID_SLAB_SHIFT);
	*ref = (uint32) ((v & TID_REF_MASK) << 3);
	return *slab < forst_shared->nslabs;
}
