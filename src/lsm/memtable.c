/*-------------------------------------------------------------------------
 *
 * memtable.c
 *	  A skiplist memtable inside one position-independent region (see
 *	  memtable.h for the layout and the concurrency contract).
 *
 * Memory ordering, in one place:
 *
 *	- The writer fills a node (header, links, key, value), marks it in the
 *	  node-start bitmap and advances "used" with a release store, then links
 *	  the node level by level from the bottom, each with a release store.
 *	  Readers load every link with acquire, so whatever node they reach is
 *	  complete.  Level 0 is the list itself; upper levels are shortcuts, and
 *	  a reader that misses a fresh upper link just walks further below.
 *	- The list height is raised (relaxed) before the head's new upper links
 *	  are set: a reader that sees the new height and a still-empty head link
 *	  just goes down a level.
 *	- "entries" is stored with release after the node is linked, so a
 *	  reader that acquires a count of n and then scans finds >= n entries.
 *	  Other counters are single-writer values read with relaxed loads.
 *	- Hint bytes are the only bytes of a linked node that change; they are
 *	  read and CAS'ed with relaxed atomics (they order nothing else).
 *	- The point-lookup hash (below) is written after the node is linked,
 *	  each bucket with a release store (0 -> node, or node -> newer node of
 *	  the same user part), and so is "hash_full"; readers load them with
 *	  acquire.  A reader that misses a fresh bucket sees the memtable as it
 *	  was just before that insert, as a skiplist reader may.
 *
 * The point-lookup hash: open addressing (linear probing) from a user
 * part to the node of its newest version (the first in list order), one
 * bucket per 64 bytes of region.  Buckets are never emptied, so a probe
 * chain only grows.  When three quarters of the buckets are taken the
 * writer stops adding user parts and sets hash_full: lookups that find no
 * bucket then search the skiplist.  It turns a point lookup's ~20 scattered
 * node visits into one or two.
 *
 *-------------------------------------------------------------------------
 */
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
	uint32		xid_min;		/* > xid_max while no unfrozen entry */
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

/* Layout offsets for a region of the given capacity. */
static void
mt_layout(uint32 capacity, uint32 *head, uint32 *bitmap, uint32 *hash,
		  uint32 *hash_mask, uint32 *first_node)
{
	uint64		bits = (uint64) capacity / 8;	/* one per 8-byte unit */
	uint32		nbuckets = 16;

	while ((uint64) nbuckets * 2 <= capacity / 64)
		nbuckets *= 2;
	*head = MT_HEADER_SIZE;
	*bitmap = (uint32) (MT_HEADER_SIZE + node_size(FST_MT_MAX_HEIGHT, 0, 0));
	*hash = (uint32) (*bitmap + (bits + 63) / 64 * 8);
	*hash_mask = nbuckets - 1;
	*first_node = *hash + nbuckets * (uint32) sizeof(uint32);
}

/* A 32-bit hash of a user part (8 bytes at a time, then the tail). */
static inline uint32
mt_hash(const char *p, size_t n)
{
	uint64		h = UINT64CONST(0x9E3779B97F4A7C15) ^ (uint64) n;
	uint64		v;

	while (n >= 8)
	{
		memcpy(&v, p, 8);
		h = (h ^ v) * UINT64CONST(0xFF51AFD7ED558CCD);
		h ^= h >> 32;
		p += 8;
		n -= 8;
	}
	v = 0;
	memcpy(&v, p, n);
	h = (h ^ v) * UINT64CONST(0xC4CEB9FE1A85EC53);
	h ^= h >> 29;
	return (uint32) h;
}

static inline bool
node_has_user_part(const MtNode *n, const char *up, size_t uplen)
{
	return (size_t) n->key_len - FST_SEQ_BYTES == uplen &&
		memcmp(node_key(n), up, uplen) == 0;
}

/*
 * The node of the newest version of user part up, from the hash: its
 * offset, or 0 when the hash has no bucket for up (then *complete says
 * whether that means up has no version here).
 */
static uint32
hash_find(const FstMemtable *mt, const char *up, size_t uplen, bool *complete)
{
	const uint32 *b = mt_buckets(mt);
	uint32		mask = mt->hash_mask;
	uint32		i = mt_hash(up, uplen) & mask;

	for (;;)
	{
		uint32		off = mt_load_acq(&b[i]);

		if (off == 0)
		{
			*complete = !mt_load_acq(&mt->hash_full);
			return 0;
		}
		if (node_has_user_part(mt_node(mt, off), up, uplen))
			return off;
		i = (i + 1) & mask;
	}
}

/* The writer: node off (linked, version seq of up) into the hash. */
static void
hash_add(FstMemtable *mt, const char *up, size_t uplen, uint64 seq, uint32 off)
{
	uint32	   *b = mt_buckets(mt);
	uint32		mask = mt->hash_mask;
	uint32		i = mt_hash(up, uplen) & mask;

	if (mt_load_rlx(&mt->hash_full))
		return;
	for (;;)
	{
		uint32		cur = mt_load_rlx(&b[i]);

		if (cur == 0)
		{
			if ((uint64) mt->hash_used * 4 >= (uint64) (mask + 1) * 3)
			{
				mt_store_rel(&mt->hash_full, 1);
				return;
			}
			mt->hash_used++;
			mt_store_rel(&b[i], off);
			return;
		}
		if (node_has_user_part(mt_node(mt, cur), up, uplen))
		{
			const MtNode *n = mt_node(mt, cur);

			if (seq > fst_get_be64(node_key(n) + n->key_len - FST_SEQ_BYTES))
				mt_store_rel(&b[i], off);
			return;
		}
		i = (i + 1) & mask;
	}
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

/*
 * Finds the first node >= (up, seq): returns its offset (0 if none) and in
 * *cmp its comparison with the target (1 if none).  With prev not NULL,
 * prev[l] receives the last node < target at every level l below the
 * current height (the writer's splice points).
 */
static uint32
find_ge(const FstMemtable *mt, const char *up, size_t uplen, uint64 seq,
		uint32 *prev, int *cmp)
{
	uint32		x = mt->head;
	int			level = (int) mt_load_rlx(&mt->height) - 1;
	uint32		known_ge = 0;	/* a node already found >= target */
	int			known_cmp = 1;

	for (;;)
	{
		uint32		next = mt_load_acq(&mt_node(mt, x)->next[level]);
		int			c;

		if (next == 0)
			c = 1;
		else if (next == known_ge)
			c = known_cmp;		/* compared at the level above */
		else
			c = node_cmp(mt_node(mt, next), up, uplen, seq);
		if (c < 0)
		{
			x = next;
			continue;
		}
		known_ge = next;
		known_cmp = c;
		if (prev)
			prev[level] = x;
		if (level == 0)
		{
			*cmp = c;
			return next;
		}
		level--;
	}
}

/* xorshift64*: the height PRNG (its state lives in the region). */
static inline uint64
mt_rand(uint64 *state)
{
	uint64		x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64CONST(2685821657736338717);
}

/* ---------------------------------------------------------------------- */

FstCode
fst_memtable_init(void *region, size_t size, uint64 seed, FstMemtable **out,
				  FstError *err)
{
	FstMemtable *mt = (FstMemtable *) region;
	MtNode	   *head;
	uint32		capacity;

	*out = NULL;
	if (region == NULL || ((uintptr_t) region & 7) != 0)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "memtable region must be 8-byte aligned");
	if (size < FST_MT_MIN_REGION_SIZE)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "memtable region of %zu bytes is smaller than the minimum of %d",
						 size, FST_MT_MIN_REGION_SIZE);
	if ((uint64) size > PG_UINT32_MAX)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "memtable region of %zu bytes exceeds the 4 GiB its offsets address",
						 size);
	capacity = (uint32) (size & ~(size_t) 7);

	memset(mt, 0, MT_HEADER_SIZE);
	mt->capacity = capacity;
	mt_layout(capacity, &mt->head, &mt->bitmap, &mt->hash, &mt->hash_mask,
			  &mt->first_node);
	head = mt_node(mt, mt->head);
	/* head node, bitmap and hash buckets */
	memset(head, 0, mt->first_node - mt->head);
	head->height = FST_MT_MAX_HEIGHT;
	mt->height = 1;
	mt->frozen = 0;
	mt->used = mt->first_node;
	mt->rng = seed ? seed : UINT64CONST(0x2545F4914F6CDD1D);
	mt->entries = 0;
	mt->seq_min = PG_UINT64_MAX;
	mt->seq_max = 0;
	mt->xid_min = PG_UINT32_MAX;
	mt->xid_max = 0;
	mt->version = FST_MT_VERSION;
	/* the magic last: a region is recognizable only once fully formatted */
	mt_store_rel(&mt->magic, (uint32) FST_MT_MAGIC);
	*out = mt;
	return FST_OK;
}

FstCode
fst_memtable_attach(void *region, FstMemtable **out, FstError *err)
{
	FstMemtable *mt = (FstMemtable *) region;
	uint32		head,
				bitmap,
				hash,
				hash_mask,
				first_node,
				used,
				height;

	*out = NULL;
	if (region == NULL || ((uintptr_t) region & 7) != 0)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "memtable region must be 8-byte aligned");
	if (mt_load_acq(&mt->magic) != FST_MT_MAGIC)
		return fst_error(err, FST_CORRUPT, "not a memtable region (bad magic)");
	if (mt->version != FST_MT_VERSION)
		return fst_error(err, FST_NOT_SUPPORTED,
						 "memtable format version %u, this build reads %d",
						 mt->version, FST_MT_VERSION);
	if (mt->capacity < FST_MT_MIN_REGION_SIZE || (mt->capacity & 7) != 0)
		return fst_error(err, FST_CORRUPT, "memtable capacity %u is invalid",
						 mt->capacity);
	mt_layout(mt->capacity, &head, &bitmap, &hash, &hash_mask, &first_node);
	used = mt_load_acq(&mt->used);
	height = mt_load_rlx(&mt->height);
	if (mt->head != head || mt->bitmap != bitmap ||
		mt->hash != hash || mt->hash_mask != hash_mask ||
		mt->first_node != first_node ||
		used < first_node || used > mt->capacity || (used & 7) != 0 ||
		height < 1 || height > FST_MT_MAX_HEIGHT ||
		mt_node(mt, head)->height != FST_MT_MAX_HEIGHT)
		return fst_error(err, FST_CORRUPT, "memtable header is inconsistent");
	*out = mt;
	return FST_OK;
}

FstCode
fst_memtable_insert(FstMemtable *mt, FstSlice ikey, FstSlice value,
					uint32 *ref_out, FstError *err)
{
	FstEntry	e;
	uint32		prev[FST_MT_MAX_HEIGHT];
	uint32		next,
				off,
				list_height;
	uint64		rng,
				r,
				need;
	uint64	   *bitmap;
	MtNode	   *node;
	char	   *p;
	int			height,
				c,
				i;

	if (mt_load_rlx(&mt->frozen))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "memtable is frozen: no more inserts");
	if (!fst_entry_decode(ikey, value, &e))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "malformed memtable entry (key of %zu bytes, value of %zu bytes)",
						 ikey.len, value.len);
	if (ikey.len > FST_MT_MAX_KEY_LEN)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "internal key of %zu bytes exceeds the memtable's limit of %d",
						 ikey.len, FST_MT_MAX_KEY_LEN);
	if (value.len > mt->capacity ||
		node_size(1, ikey.len, value.len) > mt->capacity - mt->first_node)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "entry of %zu bytes can never fit a memtable of %u bytes",
						 ikey.len + value.len, mt->capacity);

	next = find_ge(mt, e.user_part.data, e.user_part.len, e.hdr.seq, prev, &c);
	if (next != 0 && c == 0)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "memtable already holds this internal key (sequence %llu)",
						 (unsigned long long) e.hdr.seq);

	/* the PRNG state is stored back only on success: FST_FULL changes nothing */
	rng = mt->rng;
	r = mt_rand(&rng);
	height = 1;
	while (height < FST_MT_MAX_HEIGHT && (r & 3) == 0)
	{
		height++;
		r >>= 2;
	}
	need = node_size(height, ikey.len, value.len);
	off = mt->used;
	if (need > (uint64) (mt->capacity - off))
		return fst_error(err, FST_FULL,
						 "memtable is full (%u of %u bytes used, entry needs %llu)",
						 off, mt->capacity, (unsigned long long) need);

	/* build the node completely while no reader can reach it */
	node = mt_node(mt, off);
	node->height = (uint8) height;
	node->hint = 0;
	node->key_len = (uint16) ikey.len;
	node->value_len = (uint32) value.len;
	list_height = mt->height;
	for (i = (int) list_height; i < height; i++)
		prev[i] = mt->head;
	for (i = 0; i < height; i++)
		node->next[i] = mt_load_rlx(&mt_node(mt, prev[i])->next[i]);
	p = (char *) node + MT_NODE_HDR + (size_t) height * sizeof(uint32);
	memcpy(p, ikey.data, ikey.len);
	p += ikey.len;
	memcpy(p, value.data, value.len);
	p += value.len;
	memset(p, 0, (char *) node + need - p);

	bitmap = mt_bitmap(mt);
	mt_store_rlx(&bitmap[off / 512],
				 bitmap[off / 512] | (UINT64CONST(1) << ((off / 8) % 64)));
	mt_store_rel(&mt->used, off + (uint32) need);

	/* publish: bottom-up */
	if ((uint32) height > list_height)
		mt_store_rlx(&mt->height, (uint32) height);
	for (i = 0; i < height; i++)
		mt_store_rel(&mt_node(mt, prev[i])->next[i], off);
	hash_add(mt, e.user_part.data, e.user_part.len, e.hdr.seq, off);

	mt->rng = rng;
	if (e.hdr.flags & FST_ENTRY_TOMBSTONE)
		mt_store_rlx(&mt->tombstones, mt->tombstones + 1);
	mt_store_rlx(&mt->key_bytes, mt->key_bytes + ikey.len);
	mt_store_rlx(&mt->value_bytes, mt->value_bytes + value.len);
	if (e.hdr.seq < mt->seq_min)
		mt_store_rlx(&mt->seq_min, e.hdr.seq);
	if (e.hdr.seq > mt->seq_max)
		mt_store_rlx(&mt->seq_max, e.hdr.seq);
	if (!(e.hdr.flags & FST_ENTRY_FROZEN))
	{
		if (e.hdr.xid < mt->xid_min)
			mt_store_rlx(&mt->xid_min, e.hdr.xid);
		if (e.hdr.xid > mt->xid_max)
			mt_store_rlx(&mt->xid_max, e.hdr.xid);
	}
	mt_store_rel(&mt->entries, mt->entries + 1);

	if (ref_out)
		*ref_out = off;
	return FST_OK;
}

/*
 * Is ref the offset of a node?  Exact: bounds, alignment, and the bit insert
 * set in the node-start bitmap before it published "used" past the node.
 */
static inline bool
ref_valid(const FstMemtable *mt, uint32 ref)
{
	uint32		used = mt_load_acq(&mt->used);
	uint64		word;

	if (ref < mt->first_node || ref >= used || (ref & 7) != 0)
		return false;
	word = mt_load_rlx(&mt_bitmap(mt)[ref / 512]);
	return (word >> ((ref / 8) % 64)) & 1;
}

static FstCode
bad_ref(FstError *err, uint32 ref)
{
	return fst_error(err, FST_INVALID_ARGUMENT,
					 "%u is not the ref of a memtable entry", ref);
}

FstCode
fst_memtable_entry(const FstMemtable *mt, uint32 ref, FstSlice *ikey,
				   FstSlice *value, uint8 *hint, FstError *err)
{
	const MtNode *n;

	if (!ref_valid(mt, ref))
		return bad_ref(err, ref);
	n = mt_node(mt, ref);
	if (ikey)
		*ikey = fst_slice(node_key(n), n->key_len);
	if (value)
		*value = fst_slice(node_value(n), n->value_len);
	if (hint)
		*hint = mt_load_rlx(&n->hint);
	return FST_OK;
}

FstCode
fst_memtable_get_hint(const FstMemtable *mt, uint32 ref, uint8 *hint,
					  FstError *err)
{
	if (!ref_valid(mt, ref))
		return bad_ref(err, ref);
	*hint = mt_load_rlx(&mt_node(mt, ref)->hint);
	return FST_OK;
}

FstCode
fst_memtable_set_hint(FstMemtable *mt, uint32 ref, uint8 bits, FstError *err)
{
	const uint8 fate = FST_MT_HINT_COMMITTED | FST_MT_HINT_ABORTED;
	MtNode	   *n;
	uint8		old;

	if (!ref_valid(mt, ref))
		return bad_ref(err, ref);
	if (bits & ~FST_MT_HINT_KNOWN)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "unknown memtable hint bits 0x%02x", bits);
	n = mt_node(mt, ref);
	old = mt_load_rlx(&n->hint);
	for (;;)
	{
		uint8		newbits = old | bits;

		if ((newbits & fate) == fate)
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "memtable entry %u cannot be hinted both committed and aborted",
							 ref);
		if (newbits == old)
			return FST_OK;
		if (__atomic_compare_exchange_n(&n->hint, &old, newbits, true,
										__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return FST_OK;
		/* old now holds the current byte: retry */
	}
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

FstCode
fst_memtable_get(FstMemtable *mt, FstSlice user_part, uint64 max_seq,
				 FstMtVisibleFn visible, void *arg, FstGetResult *result,
				 FstEntryHeader *hdr, FstSlice *value, uint32 *ref,
				 FstError *err)
{
	uint32		x;
	int			c;

	*result = FST_GET_NONE;
	if (value)
		*value = fst_slice(NULL, 0);
	if (ref)
		*ref = 0;
	if (user_part.len < FST_KG_BYTES)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "lookup key is shorter than a key group");

	x = 0;
	if (max_seq == FST_MAX_SEQ)
	{
		bool		complete;

		x = hash_find(mt, user_part.data, user_part.len, &complete);
		if (x == 0 && complete)
			return FST_OK;		/* no version of user_part here */
	}
	if (x == 0)
		x = find_ge(mt, user_part.data, user_part.len, max_seq, NULL, &c);
	for (; x != 0; x = mt_load_acq(&mt_node(mt, x)->next[0]))
	{
		const MtNode *n = mt_node(mt, x);
		FstEntryHeader h;

		if ((size_t) n->key_len - FST_SEQ_BYTES != user_part.len ||
			memcmp(node_key(n), user_part.data, user_part.len) != 0)
			break;				/* past the key: no visible version here */
		node_header(n, &h);
		if (visible && !visible(arg, mt, &h, x, mt_load_rlx(&n->hint)))
			continue;
		if (hdr)
			*hdr = h;
		if (ref)
			*ref = x;
		if (h.flags & FST_ENTRY_TOMBSTONE)
			*result = FST_GET_DELETED;
		else
		{
			*result = FST_GET_FOUND;
			if (value)
				*value = fst_slice(node_value(n), n->value_len);
		}
		break;
	}
	return FST_OK;
}

/* ---------------------------------------------------------------------- */

typedef struct MtIter
{
	FstIter		base;
	FstMemtable *mt;
	uint32		cur;			/* current node, 0 = not valid */
	FstCode		status;
} MtIter;

static void
mtiter_seek_first(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;

	it->status = FST_OK;
	it->cur = mt_load_acq(&mt_node(it->mt, it->mt->head)->next[0]);
}

static void
mtiter_seek(FstIter *iter, FstSlice target)
{
	MtIter	   *it = (MtIter *) iter;
	int			c;

	if (!fst_ikey_valid(target))
	{
		it->status = FST_INVALID_ARGUMENT;
		it->cur = 0;
		return;
	}
	it->status = FST_OK;
	it->cur = find_ge(it->mt, target.data, target.len - FST_SEQ_BYTES,
					  fst_ikey_seq(target), NULL, &c);
}

static void
mtiter_next(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;

	if (it->cur != 0)
		it->cur = mt_load_acq(&mt_node(it->mt, it->cur)->next[0]);
}

static bool
mtiter_valid(FstIter *iter)
{
	return ((MtIter *) iter)->cur != 0;
}

static FstSlice
mtiter_key(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;
	const MtNode *n;

	if (it->cur == 0)
		return fst_slice(NULL, 0);
	n = mt_node(it->mt, it->cur);
	return fst_slice(node_key(n), n->key_len);
}

static FstSlice
mtiter_value(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;
	const MtNode *n;

	if (it->cur == 0)
		return fst_slice(NULL, 0);
	n = mt_node(it->mt, it->cur);
	return fst_slice(node_value(n), n->value_len);
}

static FstCode
mtiter_status(FstIter *iter, FstError *err)
{
	MtIter	   *it = (MtIter *) iter;

	if (it->status != FST_OK)
		return fst_error(err, it->status,
						 "memtable seek target is not an internal key");
	return FST_OK;
}

static void
mtiter_destroy(FstIter *iter)
{
	fst_free(iter);
}

static const FstIterOps memtable_iter_ops = {
	mtiter_seek_first, mtiter_seek, mtiter_next, mtiter_valid,
	mtiter_key, mtiter_value, mtiter_status, mtiter_destroy
};

FstIter *
fst_memtable_iter_create(FstMemtable *mt)
{
	MtIter	   *it = fst_calloc(1, sizeof(MtIter));

	if (it == NULL)
		return NULL;
	it->base.ops = &memtable_iter_ops;
	it->mt = mt;
	it->cur = 0;
	it->status = FST_OK;
	return &it->base;
}

uint32
fst_memtable_iter_ref(FstIter *iter)
{
	Assert(iter->ops == &memtable_iter_ops);
	return ((MtIter *) iter)->cur;
}

uint8
fst_memtable_iter_hint(FstIter *iter)
{
	MtIter	   *it = (MtIter *) iter;

	Assert(iter->ops == &memtable_iter_ops);
	if (it->cur == 0)
		return 0;
	return mt_load_rlx(&mt_node(it->mt, it->cur)->hint);
}

/* ---------------------------------------------------------------------- */

void
fst_memtable_freeze(FstMemtable *mt)
{
	mt_store_rel(&mt->frozen, 1);
}

bool
fst_memtable_is_frozen(const FstMemtable *mt)
{
	return mt_load_acq(&mt->frozen) != 0;
}

uint64
fst_memtable_num_entries(const FstMemtable *mt)
{
	return mt_load_acq(&mt->entries);
}

void
fst_memtable_stats(const FstMemtable *mt, FstMemtableStats *st)
{
	uint32		xid_min,
				xid_max;

	memset(st, 0, sizeof(*st));	/* padding too: snapshots compare with memcmp */
	st->entries = mt_load_acq(&mt->entries);
	st->tombstones = mt_load_rlx(&mt->tombstones);
	st->bytes_used = mt_load_rlx(&mt->used);
	st->capacity = mt->capacity;
	st->key_bytes = mt_load_rlx(&mt->key_bytes);
	st->value_bytes = mt_load_rlx(&mt->value_bytes);
	st->seq_min = mt_load_rlx(&mt->seq_min);
	st->seq_max = mt_load_rlx(&mt->seq_max);
	if (st->seq_min > st->seq_max)
		st->seq_min = st->seq_max = 0;
	xid_min = mt_load_rlx(&mt->xid_min);
	xid_max = mt_load_rlx(&mt->xid_max);
	if (xid_min > xid_max)
		xid_min = xid_max = 0;
	st->xid_min = xid_min;
	st->xid_max = xid_max;
	st->height = (int) mt_load_rlx(&mt->height);
	st->frozen = fst_memtable_is_frozen(mt);
}

void *
fst_memtable_region(FstMemtable *mt)
{
	return mt;
}

size_t
fst_memtable_capacity(const FstMemtable *mt)
{
	return mt->capacity;
}
