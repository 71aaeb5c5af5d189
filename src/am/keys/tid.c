/*-------------------------------------------------------------------------
 *
 * tid.c
 *	  Packing row-version locations into TIDs.
 *
 * 40 bits are used: block number = bits 39..8, offset number = bits 7..0
 * plus one (so offsets stay within 1..256).  Bit 39 says where:
 *
 *	memtable:	0 | slab (10 bits) | slab generation mod 64 (6 bits) |
 *				entry ref / 8 (23 bits: memtables up to 64 MB)
 *	SST:		1 | file slot (12 bits) | data block (14 bits) | entry (13 bits)
 *
 * A memtable slab is not reused while a transaction that may hold its
 * TIDs runs (the flush worker waits for them), except when that
 * transaction itself waits for memtable memory; the generation bits then
 * make a TID into a reused slab fail to resolve instead of naming another
 * row.  A file slot indexes the
 * transaction's table of SST files it has read (objects/store.c); SST files
 * are immutable, so (block, entry) names one version for good.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/keys/tid.h"
#include "am/read/mvcc.h"

#define TID_KIND_SST		(UINT64CONST(1) << 39)
#define MT_SLAB_SHIFT		29
#define MT_GEN_SHIFT		23
#define MT_GEN_MASK			63
#define MT_REF_MASK			((UINT64CONST(1) << MT_GEN_SHIFT) - 1)
#define SST_SLOT_SHIFT		27
#define SST_BLOCK_SHIFT		13
#define SST_MAX_SLOT		((1 << 12) - 1)
#define SST_MAX_BLOCK		(FORST_TID_SST_BLOCKS - 1)
#define SST_MAX_ENTRY		(FORST_TID_SST_ENTRIES - 1)

void
forst_tid_set(ItemPointer tid, const ForstLoc *loc)
{
	uint64		v;

	if (loc->in_sst)
	{
		if (loc->file_slot > SST_MAX_SLOT || loc->block > SST_MAX_BLOCK ||
			loc->entry > SST_MAX_ENTRY)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("forst: row version at SST block %u entry %u cannot be addressed",
							loc->block, loc->entry)));
		v = TID_KIND_SST | ((uint64) loc->file_slot << SST_SLOT_SHIFT) |
			((uint64) loc->block << SST_BLOCK_SHIFT) | loc->entry;
	}
	else
	{
		Assert(loc->slab >= 0 && loc->slab < FORST_MAX_SLABS && (loc->ref & 7) == 0);
		Assert((loc->ref >> 3) <= MT_REF_MASK);
		v = ((uint64) loc->slab << MT_SLAB_SHIFT) |
			((uint64) (forst_shared->slabs[loc->slab].generation & MT_GEN_MASK) << MT_GEN_SHIFT) |
			(loc->ref >> 3);
	}
	ItemPointerSet(tid, (BlockNumber) (v >> 8), (OffsetNumber) ((v & 0xFF) + 1));
}

bool
forst_tid_get(ItemPointer tid, ForstLoc *loc)
{
	uint64		v;
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);

	memset(loc, 0, sizeof(*loc));
	if (off < 1 || off > 256)
		return false;
	v = ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 8) | (uint64) (off - 1);
	if (v >> 40)
		return false;
	if (v & TID_KIND_SST)
	{
		loc->in_sst = true;
		loc->file_slot = (int) ((v >> SST_SLOT_SHIFT) & SST_MAX_SLOT);
		loc->block = (uint32) ((v >> SST_BLOCK_SHIFT) & SST_MAX_BLOCK);
		loc->entry = (uint32) (v & SST_MAX_ENTRY);
		return true;
	}
	loc->slab = (int) (v >> MT_SLAB_SHIFT);
	loc->ref = (uint32) ((v & MT_REF_MASK) << 3);
	if (loc->slab >= forst_shared->nslabs)
		return false;
	/* a slab reused since the TID was made: the version is not there */
	return ((v >> MT_GEN_SHIFT) & MT_GEN_MASK) ==
		(forst_shared->slabs[loc->slab].generation & MT_GEN_MASK);
}
