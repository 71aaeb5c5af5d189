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
 *	- The point-lookup hash (memtable_index.c) is written after the node is linked,
 *	  each bucket with a release store (0 -> node, or node -> newer node of
 *	  the same user part), and so is "hash_full"; readers load them with
 *	  acquire.  A reader that misses a fresh bucket sees the memtable as it
 *	  was just before that insert, as a skiplist reader may.
 *
 *-------------------------------------------------------------------------
 */
#include "memtable_internal.h"

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
	mt->xid_min = 0;			/* empty (fst_xid_range_note) */
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

void
fst_memtable_find_splice(const FstMemtable *mt, FstSlice ikey,
						 FstMemtableSplice *sp)
{
	sp->mt = NULL;
	if (ikey.len <= FST_SEQ_BYTES || ikey.len > FST_MT_MAX_KEY_LEN)
		return;					/* the insert refuses it */
	sp->height = mt_load_rlx(&mt->height);
	(void) fst_mt_find_ge(mt, ikey.data, ikey.len - FST_SEQ_BYTES,
						  fst_ikey_seq(ikey), sp->prev, sp->succ, &sp->cmp);
	sp->mt = mt;
}

/*
 * Whether sp still gives the splice points of its key: the list has its
 * height, and at every level the node found before the key is still
 * followed by the node found after it.  Nodes are never removed and a next
 * pointer changes only to a node inserted between the two, so an
 * unchanged pointer means that nothing came between.
 */
static bool
splice_holds(const FstMemtable *mt, const FstMemtableSplice *sp)
{
	uint32		i;

	if (sp == NULL || sp->mt != mt || sp->height != mt_load_rlx(&mt->height))
		return false;
	for (i = 0; i < sp->height; i++)
		if (mt_load_rlx(&mt_node(mt, sp->prev[i])->next[i]) != sp->succ[i])
			return false;
	return true;
}

FstCode
fst_memtable_insert(FstMemtable *mt, FstSlice ikey, FstSlice value,
					uint32 *ref_out, FstError *err)
{
	return fst_memtable_insert_at(mt, ikey, value, NULL, ref_out, err);
}

FstCode
fst_memtable_insert_at(FstMemtable *mt, FstSlice ikey, FstSlice value,
					   const FstMemtableSplice *sp, uint32 *ref_out,
					   FstError *err)
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

	if (splice_holds(mt, sp))
	{
		memcpy(prev, sp->prev, sp->height * sizeof(uint32));
		next = sp->succ[0];
		c = sp->cmp;
	}
	else
		next = fst_mt_find_ge(mt, e.user_part.data, e.user_part.len, e.hdr.seq,
							  prev, NULL, &c);
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
	fst_mt_hash_add(mt, e.user_part.data, e.user_part.len, e.hdr.seq, off);

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
		uint32		lo = mt->xid_min,
					hi = mt->xid_max;

		fst_xid_range_note(&lo, &hi, e.hdr.xid);
		if (lo != mt->xid_min)
			mt_store_rlx(&mt->xid_min, lo);
		if (hi != mt->xid_max)
			mt_store_rlx(&mt->xid_max, hi);
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

		x = fst_mt_hash_find(mt, user_part.data, user_part.len, &complete);
		if (x == 0 && complete)
			return FST_OK;		/* no version of user_part here */
	}
	if (x == 0)
		x = fst_mt_find_ge(mt, user_part.data, user_part.len, max_seq, NULL, NULL, &c);
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
	/* modulo 2^32; a reader racing the inserter may see one end updated */
	xid_min = mt_load_rlx(&mt->xid_min);
	xid_max = mt_load_rlx(&mt->xid_max);
	if (xid_min == 0 || xid_max == 0)
		xid_min = xid_max = Max(xid_min, xid_max);
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
