/*-------------------------------------------------------------------------
 *
 * memtable_internal.h
 *	  The memtable region's layout, shared by memtable.c (formatting,
 *	  inserts, lookups, hints), memtable_index.c (finding nodes: the
 *	  skiplist search and the point-lookup hash) and memtable_iter.c (the
 *	  iterator).  Not for use outside src/lsm/memtable*.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_MEMTABLE_INTERNAL_H
#define FST_MEMTABLE_INTERNAL_H

#include "memtable.h"

#include "port/pg_bswap.h"

/*
 * The header, at offset 0 of the region.  Line 0 is read-mostly (written at
 * init, then the height and the frozen flag rarely); the writer's hot
 * counters live on lines 1-2 so that its stores do not keep invalidating the
 * line every reader needs.
 */
struct FstMemtable
{
	/* cache line 0 */
	uint32		magic;
	uint32		version;
	uint32		capacity;		/* region size, multiple of 8 */
	uint32		head;			/* offset of the head node */
	uint32		bitmap;			/* offset of the node-start bitmap */
	uint32		first_node;		/* offset of the first node allocated */
	uint32		height;			/* current list height, 1..MAX (atomic) */
	uint32		frozen;			/* atomic */
	uint32		hash;			/* offset of the point-lookup buckets */
	uint32		hash_mask;		/* bucket count - 1 (a power of two) */
	uint32		hash_full;		/* atomic: user parts no longer added */
	char		pad0[20];
	/* cache lines 1-2: the writer's */
	uint32		used;			/* first free offset (atomic) */
	uint32		hash_used;		/* buckets taken */
	uint64		rng;			/* height PRNG state */
	uint64		entries;		/* atomic, published last */
	uint64		tombstones;
	uint64		key_bytes;
	uint64		value_bytes;
	uint64		seq_min;		/* PG_UINT64_MAX while empty */
	uint64		seq_max;
	uint32		xid_min;		/* fst_xid_range_note; 0/0 while none */
	uint32		xid_max;
};

#define MT_HEADER_SIZE	192

StaticAssertDecl(sizeof(struct FstMemtable) <= MT_HEADER_SIZE,
				 "memtable header outgrew its reserved space");
StaticAssertDecl(offsetof(struct FstMemtable, used) == 64,
				 "writer counters must start on their own cache line");

/* A node; the key and value follow next[height]. */
typedef struct MtNode
{
	uint8		height;
	uint8		hint;
	uint16		key_len;
	uint32		value_len;
	uint32		next[FLEXIBLE_ARRAY_MEMBER];
} MtNode;

#define MT_NODE_HDR		offsetof(MtNode, next)
#define MT_ALIGN(n)		(((n) + 7) & ~((uint64) 7))

StaticAssertDecl(offsetof(MtNode, next) == 8, "node header must be 8 bytes");

#define mt_load_acq(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define mt_load_rlx(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define mt_store_rel(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define mt_store_rlx(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

static inline MtNode *
mt_node(const FstMemtable *mt, uint32 off)
{
	return (MtNode *) ((char *) mt + off);
}

static inline const char *
node_key(const MtNode *n)
{
	return (const char *) n + MT_NODE_HDR + (size_t) n->height * sizeof(uint32);
}

static inline const char *
node_value(const MtNode *n)
{
	return node_key(n) + n->key_len;
}

static inline uint64
node_size(int height, size_t key_len, size_t value_len)
{
	return MT_ALIGN(MT_NODE_HDR + (uint64) height * sizeof(uint32) +
					(uint64) key_len + (uint64) value_len);
}

static inline uint64 *
mt_bitmap(const FstMemtable *mt)
{
	return (uint64 *) ((char *) mt + mt->bitmap);
}

static inline uint32 *
mt_buckets(const FstMemtable *mt)
{
	return (uint32 *) ((char *) mt + mt->hash);
}

static inline bool
node_has_user_part(const MtNode *n, const char *up, size_t uplen)
{
	return (size_t) n->key_len - FST_SEQ_BYTES == uplen &&
		memcmp(node_key(n), up, uplen) == 0;
}

/*
 * Compares node n's internal key with (user part up, sequence seq) in
 * fst_ikey_cmp order, without building the target key.
 */
static inline int
node_cmp(const MtNode *n, const char *up, size_t uplen, uint64 seq)
{
	const char *k = node_key(n);
	size_t		nlen = (size_t) n->key_len - FST_SEQ_BYTES;
	size_t		m = Min(nlen, uplen);
	uint64		nseq;
	int			r;

	/* most keys differ in their first 8 bytes: compare those inline */
	if (m >= 8)
	{
		uint64		a,
					b;

		memcpy(&a, k, 8);
		memcpy(&b, up, 8);
		if (a != b)
			return pg_ntoh64(a) < pg_ntoh64(b) ? -1 : 1;
	}
	r = memcmp(k, up, m);
	if (r != 0)
		return r;
	if (nlen != uplen)
		return nlen < uplen ? -1 : 1;
	nseq = fst_get_be64(k + nlen);
	return (nseq > seq) ? -1 : (nseq < seq) ? 1 : 0;
}

/* Decodes the entry header of a node (validated when it was inserted). */
static inline void
node_header(const MtNode *n, FstEntryHeader *h)
{
	const char *v = node_value(n);

	h->seq = fst_get_be64(node_key(n) + n->key_len - FST_SEQ_BYTES);
	h->flags = (uint8) v[0];
	h->xid = fst_get_fixed32(v + 1);
	h->cid = fst_get_fixed32(v + 5);
}

/*
 * The first node >= (up, seq): its offset (0 if none), and in *cmp its
 * comparison with the target (1 if none).  With prev not NULL, prev[l]
 * receives the last node < target at every level l below the height the
 * search began at (the writer's splice points), and succ[l], if succ is not
 * NULL, the node that followed prev[l] at level l when the search passed
 * (0 if none).
 */
extern uint32 fst_mt_find_ge(const FstMemtable *mt, const char *up,
							 size_t uplen, uint64 seq, uint32 *prev,
							 uint32 *succ, int *cmp);

/*
 * The node of the newest version of user part up, from the point-lookup
 * hash: its offset, or 0 when the hash has no bucket for up (then
 * *complete says whether that means up has no version in the memtable).
 */
extern uint32 fst_mt_hash_find(const FstMemtable *mt, const char *up,
							   size_t uplen, bool *complete);

/* The writer: node off (just linked, version seq of up) into the hash. */
extern void fst_mt_hash_add(FstMemtable *mt, const char *up, size_t uplen,
							uint64 seq, uint32 off);

#endif							/* FST_MEMTABLE_INTERNAL_H */
