/*-------------------------------------------------------------------------
 *
 * memtable_index.c
 *	  Finding nodes in a memtable: the skiplist search, and the point-lookup
 *	  hash (memtable.c has the memory-ordering rules both follow).
 *
 * The point-lookup hash: open addressing (linear probing) from a user
 * part to the node of its newest version (the first in list order), one
 * bucket per 64 bytes of region.  Buckets are never emptied, so a probe
 * chain only grows.  When three quarters of the buckets are taken the
 * writer stops adding user parts and sets hash_full: lookups that find no
 * bucket then search the skiplist.  A user part that has a bucket keeps it
 * pointing at its newest version, full or not.  It turns a point lookup's ~20 scattered
 * node visits into one or two.
 *
 *-------------------------------------------------------------------------
 */
#include "memtable_internal.h"

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

/*
 * The node of the newest version of user part up, from the hash: its
 * offset, or 0 when the hash has no bucket for up (then *complete says
 * whether that means up has no version here).
 */
uint32
fst_mt_hash_find(const FstMemtable *mt, const char *up, size_t uplen, bool *complete)
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
void
fst_mt_hash_add(FstMemtable *mt, const char *up, size_t uplen, uint64 seq, uint32 off)
{
	uint32	   *b = mt_buckets(mt);
	uint32		mask = mt->hash_mask;
	uint32		i = mt_hash(up, uplen) & mask;

	/*
	 * Even when the hash is full, a user part that has a bucket must have
	 * it point to its newest version: lookups trust a bucket they find.
	 */
	for (;;)
	{
		uint32		cur = mt_load_rlx(&b[i]);

		if (cur == 0)
		{
			if (mt_load_rlx(&mt->hash_full))
				return;
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

/* See memtable_internal.h. */
uint32
fst_mt_find_ge(const FstMemtable *mt, const char *up, size_t uplen, uint64 seq,
			   uint32 *prev, uint32 *succ, int *cmp)
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
		{
			prev[level] = x;
			if (succ)
				succ[level] = next;
		}
		if (level == 0)
		{
			*cmp = c;
			return next;
		}
		level--;
	}
}

