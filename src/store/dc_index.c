/*-------------------------------------------------------------------------
 *
 * dc_index.c
 *	  The disk cache's index: which (object, chunk) entries are on disk,
 *	  how many bytes they take, and which to evict next (CLOCK).
 *
 * One flat region holds everything, so that the server can place it in
 * shared memory and every backend sees the same index and the same byte
 * count: the cache directory is bounded across all processes.  Slots are
 * fixed (dc_index_nslots per capacity); a full slot table evicts like a
 * full byte budget does.  A hash table of int32 chain heads over the slots
 * finds an entry; free slots form a list through the same links.
 *
 * CLOCK: a hit sets the slot's reference bit (a byte store under the
 * shared lock; racing stores all write 1).  To make room, the hand sweeps
 * the slots, clearing set bits and evicting the first VALID slot whose bit
 * is clear.  PENDING slots (files being written) are never evicted, but
 * their bytes count, so that temp files are within the bound too.
 *
 * Admission filter: a bitmap of 64 bits per slot over (object, chunk)
 * hashes.  When the handle asks for it (admit_on_second_miss), a chunk read
 * from the origin is only cached on its second miss within the filter's
 * window, so that chunks read once (a scan, the cold tail of a skewed
 * workload) do not evict hot ones.  The window ends when as many bits have
 * been set as there are slots, twice: the map is cleared.  Races between
 * processes lose at worst a bit or a clear, which only changes which chunk
 * is admitted.
 *
 * Sizing: a slot per 8 KiB of capacity (entries are 32 KiB chunks; the
 * spare slots hold the short tails of small files), at most 4M slots
 * (128 MB of shared memory): a cache above ~128 GB is bounded by entries
 * before bytes.  Eviction unlinks the victim's file under the exclusive
 * lock, which keeps the directory and the count in step; an unlink is a
 * few microseconds on a local file system.
 *
 * The caller holds the lock (see dc_internal.h).
 *
 *-------------------------------------------------------------------------
 */
#include "dc_internal.h"

/* A slot per this many bytes of capacity (an entry is one chunk and its header). */
#define DC_BYTES_PER_SLOT	8192
#define DC_MIN_SLOTS		64
#define DC_MAX_SLOTS		(1U << 22)

static inline int32 *
buckets(DcIndex *idx)
{
	return (int32 *) ((char *) idx + MAXALIGN(sizeof(DcIndex)));
}

DcSlot *
dc_index_slot(DcIndex *idx, int32 i)
{
	DcSlot	   *slots = (DcSlot *) ((char *) buckets(idx) +
									MAXALIGN(sizeof(int32) * idx->nbuckets));

	return &slots[i];
}

static uint32
nbuckets_for(uint32 nslots)
{
	uint32		n = 64;

	while (n < nslots)
		n <<= 1;
	return n;
}

uint32
dc_index_nslots(uint64 capacity)
{
	uint64		n = capacity / DC_BYTES_PER_SLOT;

	if (n < DC_MIN_SLOTS)
		n = DC_MIN_SLOTS;
	if (n > DC_MAX_SLOTS)
		n = DC_MAX_SLOTS;
	return (uint32) n;
}

static uint32
nfilter_for(uint32 nslots)
{
	return nbuckets_for(nslots);	/* 64 bits per slot, a power of two */
}

static inline uint64 *
filter_words(DcIndex *idx)
{
	return (uint64 *) dc_index_slot(idx, (int32) idx->nslots);
}

size_t
dc_index_size(uint32 nslots)
{
	return MAXALIGN(sizeof(DcIndex)) +
		MAXALIGN(sizeof(int32) * nbuckets_for(nslots)) +
		sizeof(DcSlot) * (size_t) nslots +
		sizeof(uint64) * (size_t) nfilter_for(nslots);
}

void
dc_index_init(DcIndex *idx, uint64 capacity, uint32 nslots)
{
	int32	   *b;
	uint32		i;

	memset(idx, 0, sizeof(DcIndex));
	idx->capacity = capacity;
	idx->nslots = nslots;
	idx->nbuckets = nbuckets_for(nslots);
	idx->nfilter = nfilter_for(nslots);
	memset(filter_words(idx), 0, sizeof(uint64) * idx->nfilter);
	b = buckets(idx);
	for (i = 0; i < idx->nbuckets; i++)
		b[i] = -1;
	for (i = 0; i < nslots; i++)
	{
		DcSlot	   *s = dc_index_slot(idx, (int32) i);

		memset(s, 0, sizeof(DcSlot));
		s->next = (i + 1 < nslots) ? (int32) (i + 1) : -1;
	}
	idx->free_head = 0;
}

static inline uint32
bucket_of(const DcIndex *idx, uint64 hash, uint64 chunk)
{
	uint64		h = hash ^ (chunk * UINT64CONST(0x9E3779B97F4A7C15));

	h ^= h >> 29;
	return (uint32) (h & (idx->nbuckets - 1));
}

int32
dc_index_find(DcIndex *idx, uint64 hash, uint64 chunk)
{
	int32		i;

	for (i = buckets(idx)[bucket_of(idx, hash, chunk)]; i >= 0;)
	{
		DcSlot	   *s = dc_index_slot(idx, i);

		if (s->hash == hash && s->chunk == chunk)
			return i;
		i = s->next;
	}
	return -1;
}

void
dc_index_remove(DcIndex *idx, int32 slot)
{
	DcSlot	   *s = dc_index_slot(idx, slot);
	int32	   *pp = &buckets(idx)[bucket_of(idx, s->hash, s->chunk)];

	while (*pp >= 0 && *pp != slot)
		pp = &dc_index_slot(idx, *pp)->next;
	if (*pp == slot)
		*pp = s->next;
	idx->bytes_used -= s->bytes;
	idx->entries--;
	memset(s, 0, sizeof(DcSlot));
	s->next = idx->free_head;
	idx->free_head = slot;
}

/* Evict one VALID entry by CLOCK; false if there is none to evict. */
static bool
clock_evict(DcIndex *idx, DcEvictFn evict, void *arg)
{
	uint64		i;

	/* two sweeps: the first may only clear reference bits */
	for (i = 0; i < 2 * (uint64) idx->nslots + 1; i++)
	{
		int32		n = (int32) idx->hand;
		DcSlot	   *s = dc_index_slot(idx, n);

		idx->hand = (idx->hand + 1) % idx->nslots;
		if (s->state != DC_SLOT_VALID)
			continue;
		if (s->ref)
		{
			s->ref = 0;
			continue;
		}
		if (evict)
			evict(arg, s->hash, s->chunk);
		dc_index_remove(idx, n);
		dc_count(idx, DC_EVICTIONS, 1);
		return true;
	}
	return false;
}

int32
dc_index_reserve(DcIndex *idx, uint64 hash, uint64 chunk, uint64 bytes,
				 DcEvictFn evict, void *arg)
{
	int32		n;
	DcSlot	   *s;
	uint32		b;

	if (bytes > idx->capacity)
		return -1;
	while (idx->bytes_used + bytes > idx->capacity || idx->free_head < 0)
	{
		if (!clock_evict(idx, evict, arg))
			return -1;
	}
	n = idx->free_head;
	s = dc_index_slot(idx, n);
	idx->free_head = s->next;
	s->hash = hash;
	s->chunk = chunk;
	s->bytes = bytes;
	s->state = DC_SLOT_PENDING;
	s->ref = 0;
	b = bucket_of(idx, hash, chunk);
	s->next = buckets(idx)[b];
	buckets(idx)[b] = n;
	idx->bytes_used += bytes;
	idx->entries++;
	return n;
}

void
dc_index_publish(DcIndex *idx, int32 slot, bool referenced)
{
	DcSlot	   *s = dc_index_slot(idx, slot);

	s->state = DC_SLOT_VALID;
	s->ref = referenced ? 1 : 0;
}

bool
dc_index_missed_before(DcIndex *idx, uint64 hash, uint64 chunk)
{
	uint64		h = hash ^ (chunk * UINT64CONST(0xC2B2AE3D27D4EB4F));
	uint64	   *w;
	uint64		bit;
	uint64		old;

	h ^= h >> 31;
	h *= UINT64CONST(0x9E3779B97F4A7C15);
	w = &filter_words(idx)[(h >> 6) & (idx->nfilter - 1)];
	bit = UINT64CONST(1) << (h & 63);
	old = __atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
	if (old & bit)
		return true;
	if (__atomic_add_fetch(&idx->filter_set, 1, __ATOMIC_RELAXED) >
		2 * (uint64) idx->nslots)
	{
		uint32		i;

		__atomic_store_n(&idx->filter_set, 0, __ATOMIC_RELAXED);
		for (i = 0; i < idx->nfilter; i++)
			__atomic_store_n(&filter_words(idx)[i], 0, __ATOMIC_RELAXED);
	}
	return false;
}
