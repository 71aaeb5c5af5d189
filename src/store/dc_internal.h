/*-------------------------------------------------------------------------
 *
 * dc_internal.h
 *	  Internals of the disk cache (diskcache.h), shared by its files:
 *
 *	  dc_index.c	the shared index: a CLOCK over fixed slots and the
 *					byte accounting, in one flat region (shared memory in
 *					the server, malloc'ed when stand-alone)
 *	  dc_entry.c	entry files: names, the header, writing and verifying
 *	  dc_scan.c		the cache directory: adopting it, and the rebuild
 *					scan that fills the index from the files on disk
 *	  diskcache.c	handles, the cached range source, admission
 *
 * Locking: every dc_index_* function expects the caller to hold the
 * index lock (dc_lock) -- shared for find/touch, exclusive for the rest.
 * Counters are updated with atomic adds and need no lock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_DC_INTERNAL_H
#define FST_DC_INTERNAL_H

#include "diskcache.h"

#define DC_MAGIC		"FSTDCE01"
#define DC_VERSION		1
#define DC_HDR			FST_DISKCACHE_ENTRY_HEADER
#define DC_KEY_MAX		1024
#define DC_PATH_MAX		1400
#define DC_NSUBDIRS		256
#define DC_TEMP_GRACE	600		/* seconds a live process's temp file may
								 * live before a stand-alone rebuild deletes
								 * it anyway */

/* ---- the index (dc_index.c) --------------------------------------------- */

typedef enum DcSlotState
{
	DC_SLOT_FREE = 0,
	DC_SLOT_PENDING,			/* reserved: its file is being written */
	DC_SLOT_VALID				/* its file is in place */
} DcSlotState;

typedef struct DcSlot
{
	uint64		hash;			/* of the object key */
	uint64		chunk;
	uint64		bytes;			/* accounted size of its file */
	int32		next;			/* hash chain, or free list; -1 ends */
	uint8		state;			/* DcSlotState */
	uint8		ref;			/* CLOCK reference bit */
} DcSlot;

/* Counters; indexes into DcIndex.counters (atomic adds). */
typedef enum DcCounter
{
	DC_HITS = 0,
	DC_MISSES,
	DC_BYTES_FROM_CACHE,
	DC_BYTES_FETCHED,
	DC_ORIGIN_READS,
	DC_ADMISSIONS,
	DC_BYTES_ADMITTED,
	DC_ADOPTIONS,
	DC_EVICTIONS,
	DC_CORRUPT,
	DC_WRITE_ERRORS,
	DC_NOT_ADMITTED,
	DC_NUM_COUNTERS
} DcCounter;

/*
 * The index region: this header, then nbuckets int32 chain heads, then
 * nslots DcSlots, then the admission filter's nfilter 64-bit words.  Position independent (offsets, not pointers), so that
 * every process may map it at its own address.
 */
typedef struct DcIndex
{
	uint64		capacity;		/* bytes */
	uint32		nslots;
	uint32		nbuckets;		/* power of two */
	uint32		hand;			/* CLOCK hand */
	int32		free_head;
	uint32		ready;			/* the rebuild scan has finished */
	uint32		pad;
	uint32		nfilter;		/* words of the admission filter (power of 2) */
	uint32		pad2;
	uint64		filter_set;		/* bits set since it was last cleared */
	uint64		bytes_used;		/* VALID + PENDING slots */
	uint64		entries;		/* VALID + PENDING slots */
	uint64		counters[DC_NUM_COUNTERS];
} DcIndex;

/* Called for each entry CLOCK evicts (under the exclusive lock). */
typedef void (*DcEvictFn) (void *arg, uint64 hash, uint64 chunk);

extern uint32 dc_index_nslots(uint64 capacity);
extern size_t dc_index_size(uint32 nslots);
extern void dc_index_init(DcIndex *idx, uint64 capacity, uint32 nslots);
extern DcSlot *dc_index_slot(DcIndex *idx, int32 i);

/* The slot of (hash, chunk) in any state, or -1. */
extern int32 dc_index_find(DcIndex *idx, uint64 hash, uint64 chunk);

/*
 * Reserve a PENDING slot of bytes for (hash, chunk), which must not be in
 * the index, evicting VALID entries by CLOCK (calling evict for each)
 * until bytes fit the capacity and a slot is free.  -1 when they cannot
 * (bytes over the capacity, or everything else is pending).
 */
extern int32 dc_index_reserve(DcIndex *idx, uint64 hash, uint64 chunk,
							  uint64 bytes, DcEvictFn evict, void *arg);
extern void dc_index_publish(DcIndex *idx, int32 slot, bool referenced);

/* Forget a slot (its file is gone or about to be). */
extern void dc_index_remove(DcIndex *idx, int32 slot);

/*
 * The admission filter (no lock needed): records that (hash, chunk)
 * missed and says whether it had missed before, since the filter was last
 * cleared (it clears itself after about two index-fulls of misses).
 */
extern bool dc_index_missed_before(DcIndex *idx, uint64 hash, uint64 chunk);

static inline void
dc_count(DcIndex *idx, DcCounter c, uint64 n)
{
	__atomic_fetch_add(&idx->counters[c], n, __ATOMIC_RELAXED);
}

static inline uint64
dc_counter(const DcIndex *idx, DcCounter c)
{
	return __atomic_load_n(&idx->counters[c], __ATOMIC_RELAXED);
}

/* ---- the handle --------------------------------------------------------- */

struct FstDiskCache
{
	char	   *dir;
	FstDiskCacheOptions opt;
	DcIndex    *idx;
	bool		owns_idx;		/* malloc'ed by open() */
	uint64		tmp_counter;
};

static inline void
dc_lock(FstDiskCache *c, bool exclusive)
{
	if (c->opt.lock)
		c->opt.lock(c->opt.lock_arg, exclusive);
}

static inline void
dc_unlock(FstDiskCache *c)
{
	if (c->opt.unlock)
		c->opt.unlock(c->opt.lock_arg);
}

/* The accounted size of an entry file of raw bytes. */
static inline uint64
dc_accounted(const FstDiskCache *c, uint64 raw)
{
	uint64		b = c->opt.account_block;

	return b > 1 ? (raw + b - 1) / b * b : raw;
}

/* ---- entry files (dc_entry.c) ------------------------------------------- */

extern uint64 dc_hash_key(const char *key, size_t len);
extern void dc_path(const FstDiskCache *c, uint64 hash, uint64 chunk,
					char *path, size_t pathlen);
extern bool dc_parse_entry_name(const char *name, uint64 *hash, uint64 *chunk);
extern ssize_t dc_pread_all(int fd, char *buf, size_t len, off_t off);
extern bool dc_header_valid(const char *h, const char *key_bytes,
							uint32 chunk_size);

/* Unlinks an entry's file (the DcEvictFn of a handle: arg is the handle). */
extern void dc_unlink_entry(void *arg, uint64 hash, uint64 chunk);

/*
 * Write an entry through the index: reserve (evicting), write a temp file,
 * rename it into place, publish.  Skipped while the index is not ready and
 * when another process already holds or writes (hash, chunk).  true when
 * this call published the entry.
 */
extern bool dc_write_entry(FstDiskCache *c, const char *key, size_t keylen,
						   uint64 hash, uint64 object_size, uint64 chunk,
						   const char *payload, size_t plen);

typedef enum
{
	DC_LOOKUP_HIT,
	DC_LOOKUP_MISS,
	DC_LOOKUP_CORRUPT
} DcLookup;

/*
 * Read and verify the entry of (key, chunk) of an object of object_size
 * bytes, whose payload is plen bytes, into *scratch (grown as needed).
 * On a hit the payload starts at *scratch + DC_HDR + keylen.
 */
extern DcLookup dc_read_entry(FstDiskCache *c, const char *key, size_t keylen,
							  uint64 hash, uint64 object_size, uint64 chunk,
							  size_t plen, char **scratch, size_t *scratch_cap);

extern bool dc_grow_buf(char **buf, size_t *cap, size_t need);

/* ---- the directory (dc_scan.c) ------------------------------------------ */

/* Create dir (and its subdirectories) or adopt it if it is a cache. */
extern FstCode dc_prepare_dir(const char *dir, FstError *err);

/*
 * Fill the (empty, not ready) index from the entry files on disk, newest
 * first while they fit, delete the rest and every garbage file, and mark
 * the index ready.  all_temps_dead: no process writes into the directory
 * yet (the server's start-up), so every temp file is garbage.
 */
extern FstCode dc_rebuild(FstDiskCache *c, bool all_temps_dead, FstError *err);

#endif							/* FST_DC_INTERNAL_H */
