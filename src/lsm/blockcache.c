/*-------------------------------------------------------------------------
 *
 * blockcache.c
 *	  Process-local LRU cache of decoded blocks (see blockcache.h).
 *
 * An open-hashing table (chains) over (file id, offset) plus a doubly
 * linked LRU list; the table doubles when it holds more entries than
 * buckets.  Eviction releases the cache's reference: a block still used by
 * an iterator lives on until that iterator releases it.
 *
 *-------------------------------------------------------------------------
 */
#include "blockcache.h"

typedef struct CacheEntry
{
	uint64		file_id;
	uint64		offset;
	FstBlock   *block;
	size_t		charge;
	struct CacheEntry *hash_next;
	struct CacheEntry *lru_prev;	/* towards most recently used */
	struct CacheEntry *lru_next;
} CacheEntry;

struct FstBlockCache
{
	CacheEntry **buckets;
	size_t		nbuckets;		/* power of two */
	CacheEntry	lru;			/* sentinel: lru.lru_next is the oldest */
	FstBlockCacheStats stats;
};

static inline size_t
hash_slot(size_t nbuckets, uint64 file_id, uint64 offset)
{
	uint64		h = file_id * UINT64CONST(0x9E3779B97F4A7C15) ^ (offset >> 6) * UINT64CONST(0xC2B2AE3D27D4EB4F);

	h ^= h >> 29;
	return (size_t) (h & (nbuckets - 1));
}

FstBlockCache *
fst_block_cache_create(size_t capacity_bytes)
{
	FstBlockCache *c = fst_calloc(1, sizeof(FstBlockCache));

	if (c == NULL)
		return NULL;
	c->nbuckets = 1024;
	c->buckets = fst_calloc(c->nbuckets, sizeof(CacheEntry *));
	if (c->buckets == NULL)
	{
		fst_free(c);
		return NULL;
	}
	c->lru.lru_next = c->lru.lru_prev = &c->lru;
	c->stats.capacity = capacity_bytes;
	return c;
}

static void
lru_unlink(CacheEntry *e)
{
	e->lru_prev->lru_next = e->lru_next;
	e->lru_next->lru_prev = e->lru_prev;
}

static void
lru_push_newest(FstBlockCache *c, CacheEntry *e)
{
	e->lru_prev = c->lru.lru_prev;
	e->lru_next = &c->lru;
	c->lru.lru_prev->lru_next = e;
	c->lru.lru_prev = e;
}

static CacheEntry **
find_slot(FstBlockCache *c, uint64 file_id, uint64 offset)
{
	CacheEntry **p = &c->buckets[hash_slot(c->nbuckets, file_id, offset)];

	while (*p && ((*p)->file_id != file_id || (*p)->offset != offset))
		p = &(*p)->hash_next;
	return p;
}

static void
remove_entry(FstBlockCache *c, CacheEntry **slot)
{
	CacheEntry *e = *slot;

	*slot = e->hash_next;
	lru_unlink(e);
	c->stats.charge -= e->charge;
	c->stats.entries--;
	fst_block_release(e->block);
	fst_free(e);
}

static void
evict(FstBlockCache *c)
{
	while (c->stats.charge > c->stats.capacity && c->lru.lru_next != &c->lru)
	{
		CacheEntry *oldest = c->lru.lru_next;

		remove_entry(c, find_slot(c, oldest->file_id, oldest->offset));
		c->stats.evictions++;
	}
}

static void
grow(FstBlockCache *c)
{
	size_t		n = c->nbuckets * 2;
	CacheEntry **nb = fst_calloc(n, sizeof(CacheEntry *));
	size_t		i;

	if (nb == NULL)
		return;					/* keep the longer chains */
	for (i = 0; i < c->nbuckets; i++)
	{
		CacheEntry *e = c->buckets[i];

		while (e)
		{
			CacheEntry *next = e->hash_next;
			size_t		b;

			b = hash_slot(n, e->file_id, e->offset);
			e->hash_next = nb[b];
			nb[b] = e;
			e = next;
		}
	}
	fst_free(c->buckets);
	c->buckets = nb;
	c->nbuckets = n;
}

FstBlock *
fst_block_cache_lookup(FstBlockCache *c, uint64 file_id, uint64 offset)
{
	CacheEntry *e = *find_slot(c, file_id, offset);

	if (e == NULL)
	{
		c->stats.misses++;
		return NULL;
	}
	c->stats.hits++;
	lru_unlink(e);
	lru_push_newest(c, e);
	e->block->refcount++;
	return e->block;
}

void
fst_block_cache_insert(FstBlockCache *c, uint64 file_id, uint64 offset,
					   FstBlock *b)
{
	CacheEntry **slot = find_slot(c, file_id, offset);
	CacheEntry *e;

	if (*slot)
		remove_entry(c, slot);
	if (b->contents_size > c->stats.capacity)
		return;					/* would evict everything else */
	e = fst_malloc(sizeof(CacheEntry));
	if (e == NULL)
		return;					/* caching is best effort */
	e->file_id = file_id;
	e->offset = offset;
	e->block = b;
	b->refcount++;
	e->charge = b->contents_size + sizeof(CacheEntry) + sizeof(FstBlock);
	slot = find_slot(c, file_id, offset);
	e->hash_next = NULL;
	*slot = e;
	lru_push_newest(c, e);
	c->stats.charge += e->charge;
	c->stats.entries++;
	c->stats.inserts++;
	evict(c);
	if (c->stats.entries > c->nbuckets)
		grow(c);
}

void
fst_block_cache_erase_file(FstBlockCache *c, uint64 file_id)
{
	size_t		i;

	for (i = 0; i < c->nbuckets; i++)
	{
		CacheEntry **p = &c->buckets[i];

		while (*p)
		{
			if ((*p)->file_id == file_id)
				remove_entry(c, p);
			else
				p = &(*p)->hash_next;
		}
	}
}

void
fst_block_cache_stats(const FstBlockCache *c, FstBlockCacheStats *out)
{
	*out = c->stats;
}

void
fst_block_cache_destroy(FstBlockCache *c)
{
	size_t		i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nbuckets; i++)
	{
		while (c->buckets[i])
			remove_entry(c, &c->buckets[i]);
	}
	fst_free(c->buckets);
	fst_free(c);
}
