/*-------------------------------------------------------------------------
 *
 * diskcache.h
 *	  The local disk cache of SST bytes (forst.cache_dir, bounded by
 *	  forst.cache_size): a byte-range source wrapper that serves reads from
 *	  local files and fills misses from the origin (an object), plus
 *	  write-through admission of fresh flush/compaction output.
 *
 * Unit of caching: aligned chunks of an object
 *	  An object is cut into aligned chunks of chunk_size bytes (the last one
 *	  shorter); a chunk is the unit of caching, eviction and accounting.  A
 *	  read that spans chunks is served chunk by chunk; consecutive missing
 *	  chunks are fetched from the origin in one ranged request.
 *	  chunk_size = 0 caches whole objects instead (one entry per object).
 *
 *	  Decision: 32 KiB chunks (FST_DISKCACHE_DEFAULT_CHUNK), measured with
 *	  bench/cache.c: random point reads, Zipf s=1.0 over the blocks of 32
 *	  objects x 4 MiB, hot blocks scattered over all objects, cache = 10% of
 *	  the data, cold start + warm-up, origin = latency per request +
 *	  100 MB/s; "all-cached" = the same unit with everything admitted.
 *	  ops/s (chunk hit ratio); full tables in bench/results/cache-20261130.md:
 *
 *		unit		4K reads,1ms	32K reads,1ms	32K unaligned,1ms	32K reads,10ms
 *		no cache	  849			  660			  668				   94
 *		4 KiB		 2003 (67%)		   -			   -				   -
 *		16 KiB		 1431 (59%)		   -			 1312 (61%)			   -
 *		32 KiB		 1229 (52%)		 1472 (64%)		 1093 (57%)			  260 (66%)
 *		64 KiB		  725 (46%)		 1063 (57%)		  839 (51%)			  212 (60%)
 *		256 KiB		  328 (34%)		  393 (43%)		  330 (42%)			  127 (43%)
 *		1 MiB		   82 (23%)		  100 (26%)		   98 (26%)			   60 (26%)
 *		whole file	   21 (13%)		   25 (16%)		   -				   20 (17%)
 *		all-cached	147k (4K) 80k (32K) 54k (64K) 3.4k (1M) 0.7k (whole file)
 *
 *	  Whole files lose by one to two orders of magnitude: a 10% cache holds
 *	  three 4 MiB files, a miss fetches 4 MiB for one block and a hit
 *	  reads and verifies 4 MiB (0.4-0.9k ops/s even when everything is
 *	  cached).  Among chunks, smaller units keep more distinct hot blocks
 *	  per cached byte (hot blocks are scattered, their neighbours are cold)
 *	  and move fewer bytes per miss and per hit, so throughput falls
 *	  monotonically with the unit.  Units below the SST block (32 KiB
 *	  uncompressed, less after lz4) gain a little more on scattered reads
 *	  but make one block read touch two or three entries and double the
 *	  files and index nodes again (index: 64 bytes of RAM per entry, 0.2%
 *	  of the capacity at 32 KiB).  So: 32 KiB, the SST block size, the best
 *	  measured unit at or above it (+40% over 64 KiB at 1 ms, +23% at
 *	  10 ms).  A larger unit only pays for sequential scans (fewer
 *	  requests per byte), which should get readahead in the scan path
 *	  rather than a coarser cache.  When a hit costs 10-20 us and a miss
 *	  1-10 ms, a cold 10% cache runs at 0.3-3% of an all-cached one: the
 *	  miss ratio is everything, which is why the unit is small.
 *
 *	  The server's SST blocks have since become 8 KiB (less after lz4), and
 *	  the same reasoning moved the server's unit to 8 KiB (the GUC
 *	  forst.cache_chunk_size sets opt.chunk_size): on RGW, a cache of 10%,
 *	  Zipf 2 over 30,000 keys of 10 rows, point reads at 0.84 of all-cached
 *	  with 8 KiB, 0.86 with 16 KiB, 0.59 with 32 KiB (docs/benchmarks.md).
 *	  FST_DISKCACHE_DEFAULT_CHUNK stays the engine's default (bench/cache.c).
 *
 * On-disk format (one file per cached chunk)
 *	  <dir>/FORST_DISKCACHE				marker: refuses to adopt a directory
 *										 that holds anything else
 *	  <dir>/<hh>/<h16>.<chunk hex>		an entry; h16 = 16 hex digits of
 *										 hash_bytes_extended(object key),
 *										 hh = its first two
 *	  <dir>/<hh>/.tmp.<pid>.<n>			an entry being written
 *
 *	  entry = 48-byte header, object key bytes, payload:
 *		 0	magic "FSTDCE01"
 *		 8	u32 format version (1)
 *		12	u32 key length
 *		16	u64 object size
 *		24	u64 chunk index
 *		32	u32 chunk size (0 = whole object)
 *		36	u32 payload length
 *		40	u32 CRC-32C of the payload
 *		44	u32 CRC-32C of bytes 0..43 and the key
 *	  (little endian).  The key inside the entry detects hash collisions (a
 *	  colliding entry is a miss and is replaced).  Every read of an entry
 *	  verifies both CRCs, the key, the sizes and the file length: a corrupt
 *	  entry (bit flip, truncation) is deleted, counted in corrupt_entries
 *	  and re-fetched from the origin, never returned.  Entries are written
 *	  to a temp file and renamed into place, so a crash never leaves a
 *	  partial entry under a valid name; they are not fsync'ed (a cache loses
 *	  nothing by losing an entry, and a torn file fails its checks).
 *
 * Eviction and the bound
 *	  CLOCK by bytes over one index of every entry in the directory (see
 *	  dc_index.c).  The index and its byte count live in one flat region:
 *	  malloc'ed by fst_diskcache_open (one process), or placed in shared
 *	  memory by the server (fst_diskcache_region_init + attach) so that all
 *	  its processes share one index, one byte count and one bound.  Before
 *	  an entry file is created its bytes are reserved in the index,
 *	  evicting (unlinking) entries until they fit, so the directory (temp
 *	  files included) never holds more than the capacity.  A file counts
 *	  its size rounded up to account_block (the file system's block; 0 =
 *	  bytes), so that du agrees.  Entries larger than the capacity are not
 *	  cached; objects one unit of which exceeds the capacity bypass the
 *	  cache (only the asked bytes are fetched).
 *	  CLOCK replaced the first version's per-process LRU at no cost in the
 *	  measurement above (32 KiB reads, 1 ms: 65.7% hits, 1561 ops/s, LRU
 *	  64%, 1472).  admit_on_second_miss (the server's setting) keeps chunks
 *	  read once out of the cache: 67.6% hits, 1836 ops/s, and no entry
 *	  file written for a one-off read.
 *
 * Restart
 *	  fst_diskcache_rebuild fills an empty index from the files on disk
 *	  (newest first while they fit; the capacity may have shrunk), deletes
 *	  temp files of dead writers and files that are not entries of this
 *	  format and chunk size, and marks the index ready.  Until then a handle
 *	  serves hits from files on disk and fetches misses without caching
 *	  them, so that nothing waits for the scan and the bound still holds.
 *	  fst_diskcache_open runs the rebuild itself; the server runs it in a
 *	  background worker at start-up.
 *
 * Concurrency
 *	  Entries are published by atomic rename (a reader that opened the old
 *	  file keeps reading it), every read verifies the CRCs, an entry that
 *	  vanishes under a reader is a miss.  Processes sharing a region take
 *	  its lock (the lock/unlock options: an LWLock in the server) around
 *	  index changes; entry files are read and written outside it.  Handles
 *	  with separate regions over one directory (stand-alone tools) stay
 *	  correct -- an entry another handle wrote is adopted into this
 *	  handle's index on its first hit -- but each bounds only what it sees.
 *
 * A handle is used by one thread at a time (backends are processes).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_DISKCACHE_H
#define FST_DISKCACHE_H

#include "fst_common.h"
#include "rangesrc.h"
#include "objstore.h"

#define FST_DISKCACHE_DEFAULT_CHUNK		(32 * 1024)
#define FST_DISKCACHE_MAX_CHUNK			(64 * 1024 * 1024)
#define FST_DISKCACHE_ENTRY_HEADER		48
#define FST_DISKCACHE_MARKER			"FORST_DISKCACHE"

typedef struct FstDiskCache FstDiskCache;

/* Index lock (see Concurrency above); NULL = one process, no lock. */
typedef void (*FstDiskCacheLockFn) (void *arg, bool exclusive);
typedef void (*FstDiskCacheUnlockFn) (void *arg);

typedef struct FstDiskCacheOptions
{
	uint32		chunk_size;		/* bytes, 0 = whole objects */
	bool		cleanup;		/* on rebuild: delete garbage and dead temp
								 * files (default true) */
	uint32		account_block;	/* round file sizes up to this (0: bytes) */
	bool		admit_on_second_miss;	/* cache a fetched chunk only when it
										 * missed before (see dc_index.c);
										 * admit() and corrupt entries are
										 * not filtered */
	FstDiskCacheLockFn lock;
	FstDiskCacheUnlockFn unlock;
	void	   *lock_arg;
} FstDiskCacheOptions;

typedef struct FstDiskCacheStats
{
	uint64		hits;			/* chunk lookups served from the cache */
	uint64		misses;			/* chunk lookups that went to the origin */
	uint64		bytes_read_from_cache;	/* bytes returned from hits */
	uint64		bytes_fetched;	/* bytes read from origins */
	uint64		origin_reads;	/* requests to origins */
	uint64		admissions;		/* entries written (fills + admit) */
	uint64		bytes_admitted; /* payload bytes of those */
	uint64		adoptions;		/* entries found on disk, written by another
								 * process, taken into the index */
	uint64		evictions;		/* entries deleted to make room */
	uint64		corrupt_entries;	/* entries that failed verification */
	uint64		write_errors;	/* entries that could not be written */
	uint64		not_admitted;	/* fetched chunks the admission filter
								 * kept out (first misses) */
	uint64		entries;		/* in the index now */
	uint64		bytes_used;		/* bytes of the entries in the index */
	uint64		capacity;
	bool		ready;			/* the rebuild scan has finished */
} FstDiskCacheStats;

extern void fst_diskcache_options_default(FstDiskCacheOptions *opt);

/*
 * Open (creating if needed) the cache under dir, bounded by capacity_bytes.
 * dir must be empty, absent or an existing cache (it has the marker);
 * anything else is FST_INVALID_ARGUMENT.  opt may be NULL (defaults).
 */
extern FstCode fst_diskcache_open(const char *dir, uint64 capacity_bytes,
								  const FstDiskCacheOptions *opt,
								  FstDiskCache **out, FstError *err);

/*
 * Shared use (the server).  region_size bytes of shared memory hold the
 * index of a cache of capacity_bytes; region_init initializes them once;
 * each process then attaches a handle (creating or adopting dir, no scan),
 * and one process runs fst_diskcache_rebuild.  opt->lock and opt->unlock
 * must guard the region across processes.
 */
extern size_t fst_diskcache_region_size(uint64 capacity_bytes);

/* How many entries the index of a cache of capacity_bytes holds at most. */
extern uint32 fst_diskcache_max_entries(uint64 capacity_bytes);
extern void fst_diskcache_region_init(void *region, uint64 capacity_bytes);
extern FstCode fst_diskcache_attach(const char *dir, void *region,
									const FstDiskCacheOptions *opt,
									FstDiskCache **out, FstError *err);

/*
 * Fill the shared index from the files on disk and mark it ready.  Call
 * once, before any process has written into the directory (every temp
 * file found is garbage).
 */
extern FstCode fst_diskcache_rebuild(FstDiskCache *cache, FstError *err);

/* Zero the counters (not the contents). */
extern void fst_diskcache_reset_counters(FstDiskCache *cache);

/* Keeps the entries on disk.  Every cached source must be closed first. */
extern void fst_diskcache_close(FstDiskCache *cache);

/*
 * A range source over object_key (object_size bytes; 0 = origin->size)
 * that reads through the cache.  On success the new source owns origin
 * (closing it closes origin); on failure the caller still does.  The
 * origin is read only for misses.  The cache must outlive the source.
 */
extern FstCode fst_range_source_cached(FstDiskCache *cache,
									   FstRangeSource *origin,
									   const char *object_key,
									   uint64 object_size,
									   FstRangeSource **out, FstError *err);

/* One byte range of an object to prefetch (fst_diskcache_prefetch). */
typedef struct FstDcPrefetch
{
	const char *key;			/* object key, as given to the cached source */
	uint64		object_size;
	uint64		offset;
	uint64		len;
} FstDcPrefetch;

/*
 * Brings the chunks that cover the given ranges into the cache: those not
 * cached yet are fetched from store in one batch (fst_objstore_get_ranges,
 * parallel on s3://; runs of adjacent missing chunks of one object in one
 * request), and admitted past the admission filter, since a reader is
 * about to read them.  Overlapping and repeated ranges are fetched once.
 * A range whose fetch fails is left uncached (the reader's own read then
 * meets the error); only FST_INTERRUPTED and FST_NO_MEMORY are returned.
 * Counts fetched bytes and requests like misses of cached sources.
 */
extern FstCode fst_diskcache_prefetch(FstDiskCache *cache,
									  FstObjStore *store,
									  const FstDcPrefetch *items, int n,
									  FstError *err);

/*
 * Makes a source from fst_range_source_cached (only such a source) admit
 * every chunk it fetches, past the admission filter: for reads that are
 * meant to fill the cache (forst.prewarm).
 */
extern void fst_range_source_cached_admit_all(FstRangeSource *cached);

/*
 * The same for the chunks that reach past offset only: for the metadata of
 * an SST file (filter, properties, index, from FstSstReadOptions.
 * meta_region), which every process that opens the file needs, but which a
 * shared store may hand to all but the first (a second miss, which the
 * admission filter waits for, then never comes).
 */
extern void fst_range_source_cached_admit_from(FstRangeSource *cached,
											   uint64 offset);

/*
 * Write-through: admit an object just written (flush or compaction output)
 * so that its first reads hit.  Chunks are admitted in order, the tail
 * (footer, index: what an open reads) last, so that it is the most recent.
 * Failing to write an entry is not an error (the cache is an optimisation:
 * write_errors counts it); FST_OK unless the arguments are bad.
 */
extern FstCode fst_diskcache_admit(FstDiskCache *cache, const char *key,
								   const void *data, size_t len,
								   FstError *err);
/* The same for a body read from src in pieces of one chunk. */
extern FstCode fst_diskcache_admit_source(FstDiskCache *cache, const char *key,
										  const FstPutSource *src,
										  FstError *err);

/*
 * Whole-object read from the cache alone (no origin): small immutable
 * objects such as manifests, admitted with fst_diskcache_admit.  Reads and
 * verifies every chunk of key into out (replacing its contents); FST_OK if
 * all were cached, FST_NOT_FOUND if any is missing or corrupt (a corrupt
 * entry is deleted), and then the caller reads the store.
 */
extern FstCode fst_diskcache_get(FstDiskCache *cache, const char *key,
								 FstBuf *out, FstError *err);

/*
 * Delete every cached chunk of key (the object was deleted), including
 * those other processes wrote.
 */
extern void fst_diskcache_evict_key(FstDiskCache *cache, const char *key);

extern void fst_diskcache_stats(const FstDiskCache *cache,
								FstDiskCacheStats *out);

/* The path of the entry file of (key, chunk) (for tests and tools). */
extern void fst_diskcache_entry_path(const FstDiskCache *cache,
									 const char *key, uint64 chunk,
									 char *path, size_t pathlen);

#endif							/* FST_DISKCACHE_H */
