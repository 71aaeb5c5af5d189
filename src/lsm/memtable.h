/*-------------------------------------------------------------------------
 *
 * memtable.h
 *	  The memtable: a skiplist of (internal key, value) entries laid out
 *	  entirely inside one caller-provided contiguous region, so that it can
 *	  live in shared memory and be read by many processes at once.
 *
 * Region.  fst_memtable_init formats a region (from a bounded pool of
 * fixed-size slabs in the server; any 8-byte aligned buffer in tests) and
 * fst_memtable_attach validates one formatted elsewhere.  Everything lives
 * inside the region and every internal link is an offset from the region's
 * start, never a pointer, so the region works at any address in any
 * process: the FstMemtable handle *is* the region's start address, and
 * there is no per-process state to create or destroy.  Space is bump
 * allocated, 8-byte aligned; nothing is ever freed or moved.  When an entry
 * does not fit, insert returns FST_FULL and changes nothing: the memtable
 * never grows and never calls malloc.  Regions are limited to 4 GiB (links
 * are 32-bit offsets).
 *
 *		[header: 2 cache lines][head node][node-start bitmap][nodes ...]
 *
 * Nodes.  A node is
 *
 *		height (1 byte) | hint (1 byte) | key length (2 bytes) |
 *		value length (4 bytes) | next offsets (4 bytes x height) |
 *		internal key | value | padding to 8 bytes
 *
 * ordered by fst_ikey_cmp (user part ascending, then sequence descending,
 * so a key's versions come newest first).  Heights are drawn with
 * branching factor 4 up to FST_MT_MAX_HEIGHT from a PRNG whose state is in
 * the region.  Overhead per entry: 8 bytes of node header, 4 x 1.33 = 5.3
 * bytes of links on average, 3.5 bytes of alignment padding on average,
 * plus 1 bit per 8 bytes of region for the node-start bitmap (1/64 of the
 * region, about 1.6 bytes for a 100-byte entry): about 18 bytes.  Internal
 * keys are limited to FST_MT_MAX_KEY_LEN bytes.  A hash from user part to
 * its newest version's node takes 4 bytes per 64 of region (1/16) and
 * answers point lookups of the newest version without a skiplist search
 * (memtable.c).
 *
 * Concurrency.  One writer at a time -- the caller serializes insert and
 * freeze (an LWLock in the server) -- and any number of lock-free readers in
 * any process or thread, concurrently with the writer.  The writer builds a
 * node completely, then links it bottom-up with release stores; readers
 * load links with acquire loads, so a reader that reaches a node sees all
 * of it, and a reader sees a node at level 0 either not yet or entirely,
 * never torn.  A reader may or may not see entries inserted while it
 * reads.  The entry count is published (release) after the node is linked,
 * so a reader that reads count n with fst_memtable_stats and then scans sees
 * at least n entries (and at most one more than the count read after the
 * scan: the entry being inserted may be linked but not yet counted).  The
 * other counters are updated by the writer with relaxed stores: a stats
 * snapshot taken during an insert may mix values from before and after it.  Keys and values returned by every function
 * point into the region and stay valid (and unchanged) as long as the
 * region does.
 *
 * Refs.  Every inserted entry has a ref: its node's offset in the region,
 * a nonzero multiple of 8 below the region size, stable for the
 * memtable's life.  It names one entry version (the table AM encodes it in
 * TIDs).  fst_memtable_entry and fst_memtable_set_hint validate a ref
 * exactly: it must be 8-byte aligned, within the used area, and marked in
 * the node-start bitmap that insert maintains -- so a forged or stale ref
 * is refused with FST_INVALID_ARGUMENT, never resolved to bytes in the
 * middle of another entry.
 *
 * Hint bits.  Each node has a hint byte, the only mutable part of an entry
 * once it is linked.  Any reader may set bits concurrently (an atomic
 * compare-and-swap), also in a frozen memtable; bits are never cleared.
 * They cache facts learned elsewhere, as heap tuples' hint bits do: they
 * never change the key order or the entry's contents, and losing one only
 * costs a recheck.  They are not WAL-logged and are lost when the entry is
 * flushed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_MEMTABLE_H
#define FST_MEMTABLE_H

#include "iter.h"
#include "sst.h"

#define FST_MT_MAGIC			0x464D5431	/* "FMT1" */
#define FST_MT_VERSION			2
#define FST_MT_MAX_HEIGHT		12
#define FST_MT_MAX_KEY_LEN		PG_UINT16_MAX
/* Smallest region init accepts (header, head node, bitmap, some nodes). */
#define FST_MT_MIN_REGION_SIZE	1024

/*
 * Hint bits.  COMMITTED and ABORTED cache the fate of the entry's
 * transaction (from clog); they exclude each other.  SUPERSEDED says that a
 * newer committed version of the same key is visible to every snapshot
 * that can still exist, so readers may skip this version without looking
 * at its transaction (what LP_DEAD is to heap index entries).
 */
#define FST_MT_HINT_COMMITTED	0x01
#define FST_MT_HINT_ABORTED		0x02
#define FST_MT_HINT_SUPERSEDED	0x04
#define FST_MT_HINT_KNOWN		0x07

typedef struct FstMemtable FstMemtable;

typedef struct FstMemtableStats
{
	uint64		entries;
	uint64		tombstones;
	uint64		bytes_used;		/* header, head node and bitmap included */
	uint64		capacity;		/* the region's size as formatted */
	uint64		key_bytes;		/* sum of internal key lengths */
	uint64		value_bytes;	/* sum of value lengths (headers included) */
	uint64		seq_min;		/* 0/0 if empty */
	uint64		seq_max;
	uint32		xid_min;		/* over entries not frozen, modulo 2^32
								 * (fst_xid_range_note); 0/0 if none */
	uint32		xid_max;
	int			height;			/* current height of the skiplist */
	bool		frozen;
} FstMemtableStats;

/*
 * Formats region (size bytes, 8-byte aligned) as an empty memtable; *out
 * is the handle (the region's address).  seed seeds the height PRNG
 * (0 picks a fixed default).  FST_INVALID_ARGUMENT if the region is
 * misaligned, smaller than FST_MT_MIN_REGION_SIZE or larger than 4 GiB.
 */
extern FstCode fst_memtable_init(void *region, size_t size, uint64 seed,
								 FstMemtable **out, FstError *err);

/*
 * Validates a region formatted by fst_memtable_init, possibly in another
 * process and at another address (magic, version, and the consistency of
 * its header).  FST_CORRUPT if it is not a memtable, FST_NOT_SUPPORTED for
 * another format version.  The caller must have the whole region mapped
 * (fst_memtable_capacity bytes), as every process using a shared pool does.
 */
extern FstCode fst_memtable_attach(void *region, FstMemtable **out,
								   FstError *err);

/*
 * Adds an entry; writers must be serialized by the caller.  *ref_out (may
 * be NULL) receives its ref.  FST_INVALID_ARGUMENT if the memtable is
 * frozen, the entry is malformed (fst_entry_decode refuses it), its key is
 * longer than FST_MT_MAX_KEY_LEN, it could not fit even an empty memtable of
 * this size, or an entry with the same internal key (same user part and
 * same sequence) is already present.  FST_FULL if the region has no room
 * left; the memtable is then unchanged.
 */
extern FstCode fst_memtable_insert(FstMemtable *mt, FstSlice ikey,
								   FstSlice value, uint32 *ref_out,
								   FstError *err);

/*
 * Where an entry goes, searched for before the writer serializes with the
 * other writers, so that they hold their lock for the link alone.
 * fst_memtable_find_splice only reads, under the readers' rules: it may run
 * while one writer inserts.  fst_memtable_insert_at, called as
 * fst_memtable_insert is (serialized), uses the splice if no insert has
 * come between its nodes since the search, and searches again otherwise;
 * the result is the same as fst_memtable_insert's either way.  A splice is
 * only good for the memtable it was searched in, in that incarnation: a
 * caller that reformats regions (fst_memtable_init on a reused slab) must
 * not pass a splice searched before the reformat (sp NULL then).
 */
typedef struct FstMemtableSplice
{
	const FstMemtable *mt;		/* where it was searched; NULL: no splice */
	uint32		height;			/* the list's height then */
	int			cmp;			/* succ[0] against the key (1 if none) */
	uint32		prev[FST_MT_MAX_HEIGHT];	/* last node before the key */
	uint32		succ[FST_MT_MAX_HEIGHT];	/* the node that followed it */
} FstMemtableSplice;

extern void fst_memtable_find_splice(const FstMemtable *mt, FstSlice ikey,
									 FstMemtableSplice *sp);
extern FstCode fst_memtable_insert_at(FstMemtable *mt, FstSlice ikey,
									  FstSlice value,
									  const FstMemtableSplice *sp,
									  uint32 *ref_out, FstError *err);

/*
 * The entry named by ref: internal key, value (entry header + payload) and
 * current hint bits; each output may be NULL.  FST_INVALID_ARGUMENT if ref
 * is not the ref of an entry of this memtable (see "Refs" above).
 */
extern FstCode fst_memtable_entry(const FstMemtable *mt, uint32 ref,
								  FstSlice *ikey, FstSlice *value,
								  uint8 *hint, FstError *err);

/* Hint bits of an entry.  ref must be valid as for fst_memtable_entry. */
extern FstCode fst_memtable_get_hint(const FstMemtable *mt, uint32 ref,
									 uint8 *hint, FstError *err);

/*
 * ORs bits (FST_MT_HINT_*) into the entry's hint byte, atomically; safe from
 * any process while others read and one inserts.  FST_INVALID_ARGUMENT for
 * an invalid ref, unknown bits, or COMMITTED and ABORTED together (also when
 * one is asked and the other is already set: the byte is left unchanged).
 */
extern FstCode fst_memtable_set_hint(FstMemtable *mt, uint32 ref, uint8 bits,
									 FstError *err);

/*
 * Visibility callback of point lookups.  Besides the entry header it gets
 * the memtable, the entry's ref and the hint bits read just before the
 * call, so that it can use a cached transaction fate and record a newly
 * learned one with fst_memtable_set_hint without another lookup.  Returns
 * true if the version is visible.
 */
typedef bool (*FstMtVisibleFn) (void *arg, FstMemtable *mt,
								const FstEntryHeader *hdr, uint32 ref,
								uint8 hint);

/*
 * Point lookup with the semantics of fst_sst_get: the newest version of
 * user_part (key group + user key) with seq <= max_seq that visible()
 * accepts (NULL accepts every version).  FST_GET_FOUND: hdr, value (entry
 * header + payload, borrowed from the region, no copy) and ref are set;
 * FST_GET_DELETED: the visible version is a tombstone (hdr and ref set,
 * value empty); FST_GET_NONE: no visible version here, ask older sources.
 * hdr, value and ref may be NULL.
 */
extern FstCode fst_memtable_get(FstMemtable *mt, FstSlice user_part,
								uint64 max_seq, FstMtVisibleFn visible,
								void *arg, FstGetResult *result,
								FstEntryHeader *hdr, FstSlice *value,
								uint32 *ref, FstError *err);

/*
 * An iterator over all entries in fst_ikey_cmp order (iter.h contract).
 * It is the only thing a reader allocates (malloc; NULL when out of
 * memory).  It may run while a writer inserts: it may or may not see
 * entries inserted after it was positioned, never a torn one.  Keys and
 * values it returns stay valid as long as the region does, beyond what
 * iter.h promises.  status() is always FST_OK except after a seek to a
 * target too short to be an internal key (FST_INVALID_ARGUMENT).
 */
extern FstIter *fst_memtable_iter_create(FstMemtable *mt);

/* Ref and current hint bits of the entry a memtable iterator is at. */
extern uint32 fst_memtable_iter_ref(FstIter *it);
extern uint8 fst_memtable_iter_hint(FstIter *it);

/*
 * Marks the memtable immutable: later inserts fail with
 * FST_INVALID_ARGUMENT.  Call it under the writers' lock.  Reads and hint
 * bits are unaffected.
 */
extern void fst_memtable_freeze(FstMemtable *mt);
extern bool fst_memtable_is_frozen(const FstMemtable *mt);

extern void fst_memtable_stats(const FstMemtable *mt, FstMemtableStats *st);

/* Number of entries (an acquire load; see "Concurrency"). */
extern uint64 fst_memtable_num_entries(const FstMemtable *mt);

/* The region's address (the handle) and its size as formatted. */
extern void *fst_memtable_region(FstMemtable *mt);
extern size_t fst_memtable_capacity(const FstMemtable *mt);

#endif							/* FST_MEMTABLE_H */
