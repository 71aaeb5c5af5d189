/*-------------------------------------------------------------------------
 *
 * shared_blocks.c
 *	  The shared block cache (see read/shared_blocks.h).
 *
 * Shared memory holds a header, a directory ring of the blocks in the
 * order they were written, the block ring itself, and a partitioned hash
 * table from (cache id, offset) to ring position.  Positions are logical
 * (they only grow); a block at position p lies at p mod capacity, never
 * wrapped around the ring's end.  valid_from only grows too: every block
 * at a position below it may be overwritten and does not count.
 *
 * Writing a block (under the allocation lock): reserve [p, p + len), raise
 * valid_from past everything the reservation will overwrite (and past the
 * oldest directory entry when the directory is full), drop those blocks'
 * hash entries, copy the block in; then, without the lock, enter it in the
 * hash table unless valid_from has passed it meanwhile.  Reading:
 * look the key up under its partition's lock, copy the block out, then
 * check that valid_from is still at or below its position.  valid_from is
 * raised before a byte is overwritten, so a reader that copied any of the
 * new bytes sees the new valid_from (a seqlock).
 *
 * Blocks of files that are gone (compaction replaced them) are forgotten
 * when the compaction ends (forst_blockshare_forget_files): their hash
 * entries go, their directory records are marked dead, and the pages of
 * the ring that hold only dead bytes are given back to the kernel
 * (madvise(MADV_REMOVE)).  Shared memory pages count in the PSS of the
 * processes that touched them; without this the ring became resident to
 * its whole size even for a table much smaller than it, as each
 * compaction's new files were read into it anew.  A reader that copies or
 * searches a block where pages may be given back meanwhile sees zeros,
 * which valid_from does not catch (no position moved): every release
 * first adds one to released, and readers check that it did not change
 * while they read, as they check valid_from.
 *
 * Lock order: the allocation lock, then one partition lock at a time.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <unistd.h>

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "am/forst.h"
#include "am/read/shared_blocks.h"

#define SBC_PARTITIONS		16
#define SBC_MIN_BLOCK		2048	/* sizes the directory: capacity / this */
#define SBC_MIN_RELEASE		(64 * 1024)	/* smaller dead runs stay resident */

typedef struct SbcKey
{
	uint64		cache_id;
	uint64		offset;
} SbcKey;

typedef struct SbcEntry
{
	SbcKey		key;			/* hash key: first */
	uint64		pos;			/* logical ring position */
	uint32		len;
} SbcEntry;

typedef struct SbcRecord
{
	SbcKey		key;
	uint64		pos;
	uint32		len;
	bool		dead;			/* its file is gone: its entry too */
} SbcRecord;

typedef struct SbcShared
{
	LWLock	   *alloc_lock;		/* head and the directory */
	LWLock	   *part_locks[SBC_PARTITIONS];
	uint64		capacity;		/* bytes of the ring */
	uint64		head;			/* next logical position */
	pg_atomic_uint64 valid_from;	/* blocks below it do not count */
	pg_atomic_uint64 released;	/* pages given back: see above */
	uint32		dir_cap;
	uint32		dir_tail;		/* oldest record */
	uint32		dir_count;
	pg_atomic_uint64 hits;
	pg_atomic_uint64 misses;
	pg_atomic_uint64 inserts;
	/* then: SbcRecord dir[dir_cap], the ring */
} SbcShared;


static SbcShared *sbc = NULL;
static HTAB *sbc_hash = NULL;
static SbcRecord *sbc_dir = NULL;
static char *sbc_ring = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static uint64
sbc_capacity(void)
{
	return (uint64) forst_shared_block_cache_size_kb * 1024;
}

static uint32
sbc_dir_cap(void)
{
	return (uint32) Max(sbc_capacity() / SBC_MIN_BLOCK, 16);
}

static Size
sbc_struct_size(void)
{
	return add_size(MAXALIGN(sizeof(SbcShared)),
					add_size(MAXALIGN(mul_size(sizeof(SbcRecord), sbc_dir_cap())),
							 (Size) sbc_capacity()));
}

static void
sbc_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	if (sbc_capacity() == 0)
		return;
	RequestAddinShmemSpace(add_size(sbc_struct_size(),
									hash_estimate_size(sbc_dir_cap(), sizeof(SbcEntry))));
	RequestNamedLWLockTranche("forst_shared_blocks", 1 + SBC_PARTITIONS);
}

static void
sbc_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;
	char	   *base;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	if (sbc_capacity() == 0)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	base = ShmemInitStruct("forst shared blocks", sbc_struct_size(), &found);
	sbc = (SbcShared *) base;
	sbc_dir = (SbcRecord *) (base + MAXALIGN(sizeof(SbcShared)));
	sbc_ring = base + MAXALIGN(sizeof(SbcShared)) +
		MAXALIGN(mul_size(sizeof(SbcRecord), sbc_dir_cap()));
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche("forst_shared_blocks");
		int			i;

		sbc->alloc_lock = &locks[0].lock;
		for (i = 0; i < SBC_PARTITIONS; i++)
			sbc->part_locks[i] = &locks[1 + i].lock;
		sbc->capacity = sbc_capacity();
		sbc->head = 0;
		pg_atomic_init_u64(&sbc->valid_from, 0);
		pg_atomic_init_u64(&sbc->released, 0);
		sbc->dir_cap = sbc_dir_cap();
		sbc->dir_tail = 0;
		sbc->dir_count = 0;
		pg_atomic_init_u64(&sbc->hits, 0);
		pg_atomic_init_u64(&sbc->misses, 0);
		pg_atomic_init_u64(&sbc->inserts, 0);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(SbcKey);
	info.entrysize = sizeof(SbcEntry);
	info.num_partitions = SBC_PARTITIONS;
	sbc_hash = ShmemInitHash("forst shared block map", sbc_dir_cap(), sbc_dir_cap(),
							 &info, HASH_ELEM | HASH_BLOBS | HASH_PARTITION);
	LWLockRelease(AddinShmemInitLock);
}

void
forst_blockshare_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sbc_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sbc_shmem_startup;
}

bool
forst_blockshare_enabled(void)
{
	return sbc != NULL && sbc_hash != NULL;
}

static inline LWLock *
part_lock(uint32 hash)
{
	return sbc->part_locks[hash % SBC_PARTITIONS];
}

static void
make_key(SbcKey *key, uint64 cache_id, uint64 offset)
{
	memset(key, 0, sizeof(*key));
	key->cache_id = cache_id;
	key->offset = offset;
}

/*
 * This process's hits and misses not yet added to the shared counters:
 * counted here and added at transaction end (forst_blockshare_publish), so
 * that concurrent readers do not pass one counter's cache line back and
 * forth on every block.
 */
static uint64 local_hits = 0;
static uint64 local_misses = 0;

void
forst_blockshare_publish(void)
{
	if (sbc == NULL || (local_hits == 0 && local_misses == 0))
		return;
	if (local_hits > 0)
		pg_atomic_fetch_add_u64(&sbc->hits, local_hits);
	if (local_misses > 0)
		pg_atomic_fetch_add_u64(&sbc->misses, local_misses);
	local_hits = local_misses = 0;
}

/* Where the block of (cache_id, offset) is in the ring, if it is there. */
static bool
find_block(uint64 cache_id, uint64 offset, uint64 *pos, uint32 *len)
{
	SbcKey		key;
	SbcEntry   *e;
	uint32		hash;
	bool		found = false;

	if (!forst_blockshare_enabled())
		return false;
	make_key(&key, cache_id, offset);
	hash = get_hash_value(sbc_hash, &key);
	LWLockAcquire(part_lock(hash), LW_SHARED);
	e = hash_search_with_hash_value(sbc_hash, &key, hash, HASH_FIND, NULL);
	if (e != NULL && e->pos >= pg_atomic_read_u64(&sbc->valid_from))
	{
		*pos = e->pos;
		*len = e->len;
		found = true;
	}
	LWLockRelease(part_lock(hash));
	return found;
}

bool
forst_blockshare_get(void *arg, uint64 cache_id, uint64 offset,
					 char **data, size_t *len)
{
	uint64		pos;
	uint32		n;
	char	   *copy;
	uint64		released;

	if (!forst_blockshare_enabled())
		return false;
	released = pg_atomic_read_u64(&sbc->released);
	if (!find_block(cache_id, offset, &pos, &n))
	{
		local_misses++;
		return false;
	}
	copy = fst_malloc(n);
	if (copy == NULL)
		return false;
	memcpy(copy, sbc_ring + pos % sbc->capacity, n);
	/* any byte overwritten (or given back) while we copied said so first */
	pg_memory_barrier();
	if (pos < pg_atomic_read_u64(&sbc->valid_from) ||
		pg_atomic_read_u64(&sbc->released) != released)
	{
		fst_free(copy);
		local_misses++;
		return false;
	}
	local_hits++;
	*data = copy;
	*len = n;
	return true;
}

bool
forst_blockshare_peek(void *arg, uint64 cache_id, uint64 offset,
					  bool (*fn) (void *fnarg, const char *data, size_t len),
					  void *fnarg)
{
	uint64		pos;
	uint32		n;
	bool		ok;
	uint64		released;

	if (!forst_blockshare_enabled())
		return false;
	released = pg_atomic_read_u64(&sbc->released);
	if (!find_block(cache_id, offset, &pos, &n))
		return false;			/* the copying path that follows counts it */
	ok = fn(fnarg, sbc_ring + pos % sbc->capacity, n);
	/* as in forst_blockshare_get */
	pg_memory_barrier();
	if (pos < pg_atomic_read_u64(&sbc->valid_from) ||
		pg_atomic_read_u64(&sbc->released) != released || !ok)
		return false;
	local_hits++;
	return true;
}

/* Drops the hash entry of a directory record (if it still names it). */
static void
forget_record(const SbcRecord *rec)
{
	uint32		hash = get_hash_value(sbc_hash, &rec->key);
	SbcEntry   *e;

	LWLockAcquire(part_lock(hash), LW_EXCLUSIVE);
	e = hash_search_with_hash_value(sbc_hash, &rec->key, hash, HASH_FIND, NULL);
	if (e != NULL && e->pos == rec->pos)
		(void) hash_search_with_hash_value(sbc_hash, &rec->key, hash, HASH_REMOVE, NULL);
	LWLockRelease(part_lock(hash));
}

bool
forst_blockshare_put(void *arg, uint64 cache_id, uint64 offset,
					 const char *data, size_t len)
{
	SbcKey		key;
	SbcEntry   *e;
	uint32		hash;
	uint64		pos;
	uint64		valid;
	uint32		evict;
	uint32		i;
	bool		found;
	bool		stored = false;
	uint64		released;

	/*
	 * Only queries fill it: compaction reads every block of files that are
	 * about to go, which would push out what queries use (the flush and
	 * compaction workers, the checkpointer are background workers).
	 */
	if (!forst_blockshare_enabled() || MyBackendType != B_BACKEND ||
		len == 0 || len > sbc->capacity / 4 || len > PG_UINT32_MAX)
		return false;
	make_key(&key, cache_id, offset);
	hash = get_hash_value(sbc_hash, &key);

	/* another backend may have put it meanwhile */
	LWLockAcquire(part_lock(hash), LW_SHARED);
	e = hash_search_with_hash_value(sbc_hash, &key, hash, HASH_FIND, NULL);
	found = e != NULL && e->pos >= pg_atomic_read_u64(&sbc->valid_from);
	LWLockRelease(part_lock(hash));
	if (found)
		return true;

	LWLockAcquire(sbc->alloc_lock, LW_EXCLUSIVE);
	pos = sbc->head;
	if (pos % sbc->capacity + len > sbc->capacity)
		pos += sbc->capacity - pos % sbc->capacity;	/* never wrap a block */
	sbc->head = pos + len;
	valid = Max(pg_atomic_read_u64(&sbc->valid_from),
				sbc->head > sbc->capacity ? sbc->head - sbc->capacity : 0);

	/* the records that go: overwritten, or the oldest of a full directory */
	evict = 0;
	while (evict < sbc->dir_count)
	{
		const SbcRecord *rec = &sbc_dir[(sbc->dir_tail + evict) % sbc->dir_cap];

		if (rec->pos < valid)
			evict++;
		else if (sbc->dir_count - evict >= sbc->dir_cap)
		{
			valid = rec->pos + 1;
			evict++;
		}
		else
			break;
	}

	/* no reader may trust what is about to be overwritten: first */
	pg_atomic_write_u64(&sbc->valid_from, valid);
	pg_memory_barrier();
	for (i = 0; i < evict; i++)
	{
		forget_record(&sbc_dir[sbc->dir_tail]);
		sbc->dir_tail = (sbc->dir_tail + 1) % sbc->dir_cap;
		sbc->dir_count--;
	}
	{
		SbcRecord  *rec = &sbc_dir[(sbc->dir_tail + sbc->dir_count) % sbc->dir_cap];

		rec->key = key;
		rec->pos = pos;
		rec->len = (uint32) len;
		rec->dead = false;
	}
	sbc->dir_count++;

	/*
	 * Copied in under the lock: a writer copying after it would race with
	 * writers that lap the ring meanwhile and reuse its region, and could
	 * overwrite a block they had already published.
	 */
	memcpy(sbc_ring + pos % sbc->capacity, data, len);
	released = pg_atomic_read_u64(&sbc->released);
	LWLockRelease(sbc->alloc_lock);

	/*
	 * Not if its file was forgotten meanwhile (its pages may be given back
	 * already): a query on an older manifest version may read a file that a
	 * compaction has just replaced.
	 */
	LWLockAcquire(part_lock(hash), LW_EXCLUSIVE);
	if (pos >= pg_atomic_read_u64(&sbc->valid_from) &&
		pg_atomic_read_u64(&sbc->released) == released)
	{
		e = hash_search_with_hash_value(sbc_hash, &key, hash, HASH_ENTER_NULL, &found);
		if (e != NULL)
		{
			e->pos = pos;
			e->len = (uint32) len;
			pg_atomic_fetch_add_u64(&sbc->inserts, 1);
			stored = true;
		}
	}
	LWLockRelease(part_lock(hash));
	return stored;
}

/*
 * Gives back the whole pages of the ring's logical range [from, to); the
 * caller holds the allocation lock and has raised released.
 */
static void
release_range(uint64 from, uint64 to)
{
	static uintptr_t page_size = 0;

	if (page_size == 0)
	{
		long		ps = sysconf(_SC_PAGESIZE);

		page_size = ps > 0 ? (uintptr_t) ps : 4096;
	}
	while (to > from && to - from >= SBC_MIN_RELEASE)
	{
		/* one lap at a time: the range may go on from the ring's start */
		uint64		lap_end = from - from % sbc->capacity + sbc->capacity;
		uint64		end = Min(to, lap_end);
		uintptr_t	a = (uintptr_t) (sbc_ring + from % sbc->capacity);
		uintptr_t	b = a + (end - from);

		a = TYPEALIGN(page_size, a);
		b = TYPEALIGN_DOWN(page_size, b);
#ifdef MADV_REMOVE
		if (b > a)
			(void) madvise((void *) a, b - a, MADV_REMOVE);
#endif
		from = end;
	}
}

/*
 * The files of these cache ids are gone (a compaction replaced them): their
 * blocks are forgotten, and the pages of the ring that hold nothing else
 * are given back to the kernel (see the file's header).  A query still
 * reading such a file (an older manifest version) reads its blocks from
 * the file and may put them back.
 */
void
forst_blockshare_forget_files(const uint64 *cache_ids, int n)
{
	uint64		valid;
	uint64		live_end;
	uint32		i;
	int			j;
	bool		any = false;

	if (!forst_blockshare_enabled() || n <= 0)
		return;
	LWLockAcquire(sbc->alloc_lock, LW_EXCLUSIVE);
	valid = pg_atomic_read_u64(&sbc->valid_from);
	for (i = 0; i < sbc->dir_count; i++)
	{
		SbcRecord  *rec = &sbc_dir[(sbc->dir_tail + i) % sbc->dir_cap];

		if (rec->dead || rec->pos < valid)
			continue;
		for (j = 0; j < n; j++)
		{
			if (rec->key.cache_id == cache_ids[j])
			{
				forget_record(rec);
				rec->dead = true;
				any = true;
				break;
			}
		}
	}
	if (!any)
	{
		LWLockRelease(sbc->alloc_lock);
		return;
	}

	/* readers that may be reading what goes now will not trust it: first */
	pg_atomic_fetch_add_u64(&sbc->released, 1);
	pg_memory_barrier();

	/* every run of bytes between live blocks: dead blocks, skipped tails */
	live_end = valid;
	for (i = 0; i < sbc->dir_count; i++)
	{
		SbcRecord  *rec = &sbc_dir[(sbc->dir_tail + i) % sbc->dir_cap];

		if (rec->dead || rec->pos < valid)
			continue;
		if (rec->pos > live_end)
			release_range(live_end, rec->pos);
		live_end = Max(live_end, rec->pos + rec->len);
	}
	if (sbc->head > live_end)
		release_range(live_end, sbc->head);
	LWLockRelease(sbc->alloc_lock);
}

static void
forst_blockshare_stats(ForstBlockshareStats *out)
{
	memset(out, 0, sizeof(*out));
	if (!forst_blockshare_enabled())
		return;
	forst_blockshare_publish();	/* this process's own counts too */
	out->capacity = sbc->capacity;
	LWLockAcquire(sbc->alloc_lock, LW_SHARED);
	out->written = sbc->head;
	out->entries = sbc->dir_count;
	LWLockRelease(sbc->alloc_lock);
	out->hits = pg_atomic_read_u64(&sbc->hits);
	out->misses = pg_atomic_read_u64(&sbc->misses);
	out->inserts = pg_atomic_read_u64(&sbc->inserts);
}

/*
 * forst.shared_block_cache(): the shared block cache's size, fill and
 * counters (since the server started).
 */
PG_FUNCTION_INFO_V1(forst_shared_block_cache);

Datum
forst_shared_block_cache(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {0};
	ForstBlockshareStats st;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	forst_blockshare_stats(&st);
	values[0] = Int64GetDatum((int64) st.capacity);
	values[1] = Int64GetDatum((int64) Min(st.written, st.capacity));
	values[2] = Int64GetDatum((int64) st.entries);
	values[3] = Int64GetDatum((int64) st.hits);
	values[4] = Int64GetDatum((int64) st.misses);
	values[5] = Int64GetDatum((int64) st.inserts);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
