/*-------------------------------------------------------------------------
 *
 * shared_meta.c
 *	  The shared metadata store (see read/shared_meta.h).
 *
 * Shared memory holds a header and a dynamic shared area (utils/dsa.h)
 * created in place, limited to its initial size so that it never needs a
 * DSM segment; the postmaster creates it, as PostgreSQL's own statistics
 * do, and every process attaches to it when it first needs it.  Each
 * entry is one allocation of the area: an SmEntry header, then the bytes.
 * A hash table in shared memory maps (a file's cache id, the kind of
 * metadata) to its entry.  One LWLock guards the table, the headers and
 * the counters: it is taken when a reader opens or closes a file's
 * metadata, never while a lookup reads it.
 *
 * A handle is the entry's dsa_pointer.  This process counts its pins per
 * handle, so that it can give back at exit what readers still hold (a
 * backend keeps its readers open until it ends).
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
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/dsa.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "am/forst.h"
#include "am/read/shared_meta.h"
#include "lsm/sst.h"

#define SM_MIN_ENTRY	1024	/* sizes the hash table: capacity / this */
#define SM_LARGE		(16 * 1024) /* above dsa's size classes: whole pages */

typedef struct SmKey
{
	uint64		cache_id;
	uint64		kind;			/* FstSharedMeta */
} SmKey;

typedef struct SmEntry
{
	SmKey		key;
	uint64		check;			/* where the file holds it: a check */
	uint64		last_used;		/* the store's clock at its last pin */
	uint32		len;
	int32		pins;
	bool		listed;			/* in the hash table (false: forgotten) */
} SmEntry;

#define SM_HEADER		MAXALIGN(sizeof(SmEntry))
#define SM_DATA(e)		((char *) (e) + SM_HEADER)

typedef struct SmSlot
{
	SmKey		key;			/* hash key: first */
	dsa_pointer entry;
} SmSlot;

typedef struct SmShared
{
	LWLock	   *lock;
	uint64		capacity;
	uint32		max_entries;
	uint64		clock;
	uint64		bytes[FST_META_KINDS];
	uint64		entries;
	uint64		pinned;
	uint64		hits;
	uint64		puts;
	uint64		refused;
	uint64		evictions;
	/* then the area, in place */
} SmShared;

typedef struct SmLocalPin
{
	dsa_pointer entry;			/* hash key: first */
	int64		pins;
} SmLocalPin;

static Size sm_page = 4096;		/* the kernel's page size (sm_attach) */
static SmShared *sm = NULL;
static HTAB *sm_hash = NULL;
static dsa_area *sm_area = NULL;
static HTAB *sm_local = NULL;
static uint64 sm_local_total = 0;
static bool sm_exited = false;	/* sm_exit ran: readers keep their own */

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static uint64
sm_capacity(void)
{
	uint64		c = (uint64) forst_shared_metadata_memory_kb * 1024;

	return c == 0 ? 0 : Max(c, dsa_minimum_size());
}

static uint32
sm_max_entries(void)
{
	return (uint32) Max(sm_capacity() / SM_MIN_ENTRY, 128);
}

static Size
sm_struct_size(void)
{
	return add_size(MAXALIGN(sizeof(SmShared)), (Size) sm_capacity());
}

static char *
sm_place(void)
{
	return (char *) sm + MAXALIGN(sizeof(SmShared));
}

static void
sm_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	if (sm_capacity() == 0)
		return;
	RequestAddinShmemSpace(add_size(sm_struct_size(),
									hash_estimate_size(sm_max_entries(), sizeof(SmSlot))));
	RequestNamedLWLockTranche("forst_shared_metadata", 1);
}

static void
sm_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	if (sm_capacity() == 0)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	sm = ShmemInitStruct("forst shared metadata", sm_struct_size(), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche("forst_shared_metadata");
		dsa_area   *area;

		memset(sm, 0, sizeof(SmShared));
		sm->lock = &locks[0].lock;
		sm->capacity = sm_capacity();
		sm->max_entries = sm_max_entries();

		/*
		 * The postmaster cannot use DSM segments: the area lives in plain
		 * shared memory and may never grow past it.
		 */
		area = dsa_create_in_place(sm_place(), (size_t) sm->capacity,
								   sm->lock->tranche, NULL);
		dsa_pin(area);
		dsa_set_size_limit(area, (size_t) sm->capacity);
		dsa_detach(area);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(SmKey);
	info.entrysize = sizeof(SmSlot);
	sm_hash = ShmemInitHash("forst shared metadata map", sm_max_entries(),
							sm_max_entries(), &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

void
forst_sharedmeta_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sm_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sm_shmem_startup;
}

bool
forst_sharedmeta_enabled(void)
{
	return sm != NULL && sm_hash != NULL && !sm_exited;
}

static void
sm_key(SmKey *key, uint64 cache_id, int kind)
{
	memset(key, 0, sizeof(*key));
	key->cache_id = cache_id;
	key->kind = (uint64) kind;
}

/*
 * Frees an entry no reader pins.  Caller holds sm->lock exclusively.
 *
 * A large entry's pages are given back to the kernel first, all but its
 * first page (where the area's free page manager writes what it keeps of
 * a free run): shared memory counts in the PSS of every process that
 * touched it, and the area keeps freed pages for its next allocations, so
 * without this the store stayed resident as far as it was ever filled
 * (during compactions, with the metadata of the files they replace and of
 * their outputs together).
 */
static void
sm_free(dsa_pointer p, SmEntry *e)
{
	Size		size = SM_HEADER + e->len;

	Assert(e->pins == 0);
	if (e->listed)
		hash_search(sm_hash, &e->key, HASH_REMOVE, NULL);
	sm->bytes[e->key.kind] -= size;
	sm->entries--;
#ifdef MADV_REMOVE
	if (size > SM_LARGE)
	{
		uintptr_t	a = TYPEALIGN(sm_page, (uintptr_t) e + 1);
		uintptr_t	b = TYPEALIGN_DOWN(sm_page, (uintptr_t) e + size);

		if (b > a)
			(void) madvise((void *) a, b - a, MADV_REMOVE);
	}
#endif
	dsa_free(sm_area, p);
}

/* Drops one pin of e.  Caller holds sm->lock exclusively. */
static void
sm_unpin(dsa_pointer p, SmEntry *e, int64 n)
{
	Assert(e->pins >= n);
	e->pins -= (int32) n;
	if (e->pins == 0)
	{
		sm->pinned--;
		if (!e->listed)
			sm_free(p, e);
	}
}

/* Gives back this process's pins, and its attachment, at its exit. */
static void
sm_exit(int code, Datum arg)
{
	HASH_SEQ_STATUS seq;
	SmLocalPin *lp;

	sm_exited = true;
	if (sm_area == NULL)
		return;
	LWLockAcquire(sm->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, sm_local);
	while ((lp = hash_seq_search(&seq)) != NULL)
		sm_unpin(lp->entry, dsa_get_address(sm_area, lp->entry), lp->pins);
	LWLockRelease(sm->lock);
	sm_local_total = 0;
	/* in place, with no segment: detaching does not count the attachment */
	dsa_detach(sm_area);
	dsa_release_in_place(sm_place());
	sm_area = NULL;
}

/* Attaches this process to the area, once. */
static void
sm_attach(void)
{
	MemoryContext old;
	HASHCTL		ctl;

	if (sm_area != NULL)
		return;
	sm_page = (Size) sysconf(_SC_PAGESIZE);
	old = MemoryContextSwitchTo(TopMemoryContext);
	sm_area = dsa_attach_in_place(sm_place(), NULL);
	dsa_pin_mapping(sm_area);
	MemoryContextSwitchTo(old);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(dsa_pointer);
	ctl.entrysize = sizeof(SmLocalPin);
	ctl.hcxt = TopMemoryContext;
	sm_local = hash_create("forst shared metadata pins", 64, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	before_shmem_exit(sm_exit, 0);
}

/*
 * Pins e for this process.  Caller holds sm->lock exclusively.  The local
 * count is entered first: if hash_search fails for memory, no pin is taken
 * that this process could not give back.
 */
static const char *
sm_pin(dsa_pointer p, SmEntry *e, uint64 *handle)
{
	SmLocalPin *lp;
	bool		found;

	lp = hash_search(sm_local, &p, HASH_ENTER, &found);
	if (!found)
		lp->pins = 0;
	lp->pins++;
	sm_local_total++;
	if (e->pins++ == 0)
		sm->pinned++;
	e->last_used = ++sm->clock;
	*handle = (uint64) p;
	return SM_DATA(e);
}

static int
sm_lru_cmp(const void *a, const void *b)
{
	uint64		x = ((const uint64 *) a)[0];
	uint64		y = ((const uint64 *) b)[0];

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Frees unpinned entries, least recently used first, until at least need
 * bytes went (and at least one, or none is unpinned); returns how many.
 * Caller holds sm->lock exclusively.
 */
static int
sm_evict(size_t need)
{
	HASH_SEQ_STATUS seq;
	SmSlot	   *slot;
	uint64	   *cand;			/* (last_used, pointer) pairs */
	long		n = 0,
				i;
	size_t		freed = 0;
	int			evicted = 0;

	cand = palloc_extended(sizeof(uint64) * 2 * Max(1, hash_get_num_entries(sm_hash)),
						   MCXT_ALLOC_NO_OOM);
	if (cand == NULL)
		return 0;				/* the reader keeps its own copy */
	hash_seq_init(&seq, sm_hash);
	while ((slot = hash_seq_search(&seq)) != NULL)
	{
		SmEntry    *e = dsa_get_address(sm_area, slot->entry);

		if (e->pins == 0)
		{
			cand[2 * n] = e->last_used;
			cand[2 * n + 1] = (uint64) slot->entry;
			n++;
		}
	}
	qsort(cand, n, sizeof(uint64) * 2, sm_lru_cmp);
	for (i = 0; i < n && (freed < need || evicted == 0); i++)
	{
		dsa_pointer p = (dsa_pointer) cand[2 * i + 1];
		SmEntry    *e = dsa_get_address(sm_area, p);

		freed += SM_HEADER + e->len;
		sm_free(p, e);
		sm->evictions++;
		evicted++;
	}
	pfree(cand);
	return evicted;
}

/*
 * The entry under key, pinned, if it holds len bytes stored with check
 * (*stale: an entry is there that does not).  Caller holds sm->lock
 * exclusively.
 */
static const char *
sm_find_pin(const SmKey *key, uint64 check, size_t len, uint64 *handle,
			SmSlot **stale)
{
	SmSlot	   *slot = hash_search(sm_hash, key, HASH_FIND, NULL);
	SmEntry    *e;

	*stale = NULL;
	if (slot == NULL)
		return NULL;
	e = dsa_get_address(sm_area, slot->entry);
	if (e->check == check && e->len == len)
		return sm_pin(slot->entry, e, handle);
	*stale = slot;
	return NULL;
}

const char *
forst_sharedmeta_get(void *arg, uint64 cache_id, int kind, uint64 check,
					 size_t len, uint64 *handle)
{
	SmKey		key;
	SmSlot	   *stale;
	const char *out;

	if (!forst_sharedmeta_enabled() || kind < 0 || kind >= FST_META_KINDS)
		return NULL;
	sm_attach();
	sm_key(&key, cache_id, kind);
	LWLockAcquire(sm->lock, LW_EXCLUSIVE);
	if ((out = sm_find_pin(&key, check, len, handle, &stale)) != NULL)
		sm->hits++;
	LWLockRelease(sm->lock);
	return out;
}

const char *
forst_sharedmeta_put(void *arg, uint64 cache_id, int kind, uint64 check,
					 const char *data, size_t len, uint64 *handle)
{
	SmKey		key;
	SmSlot	   *slot;
	SmEntry    *e;
	dsa_pointer p;
	bool		found;
	const char *out;

	if (!forst_sharedmeta_enabled() || kind < 0 || kind >= FST_META_KINDS ||
		len > PG_INT32_MAX / 2)
		return NULL;
	sm_attach();
	sm_key(&key, cache_id, kind);
	LWLockAcquire(sm->lock, LW_EXCLUSIVE);
	/* another process may have put it meanwhile */
	if ((out = sm_find_pin(&key, check, len, handle, &slot)) != NULL)
	{
		LWLockRelease(sm->lock);
		return out;
	}
	if (slot != NULL)
	{
		/* another file's under the same id (it cannot be: but not that) */
		e = dsa_get_address(sm_area, slot->entry);
		if (e->pins > 0)
			goto refused;
		sm_free(slot->entry, e);
	}
	if (sm->entries >= sm->max_entries && sm_evict(0) == 0)
		goto refused;
	while ((p = dsa_allocate_extended(sm_area, SM_HEADER + len,
									  DSA_ALLOC_NO_OOM)) == InvalidDsaPointer)
	{
		if (sm_evict(SM_HEADER + len) == 0)
			goto refused;
	}
	e = dsa_get_address(sm_area, p);
	memset(e, 0, SM_HEADER);
	e->key = key;
	e->check = check;
	e->len = (uint32) len;
	memcpy(SM_DATA(e), data, len);
	slot = hash_search(sm_hash, &key, HASH_ENTER_NULL, &found);
	if (slot == NULL)
	{
		dsa_free(sm_area, p);
		goto refused;
	}
	Assert(!found);
	slot->entry = p;
	e->listed = true;
	sm->bytes[kind] += SM_HEADER + len;
	sm->entries++;
	sm->puts++;
	out = sm_pin(p, e, handle);
	LWLockRelease(sm->lock);
	return out;

refused:
	sm->refused++;
	LWLockRelease(sm->lock);
	return NULL;
}

void
forst_sharedmeta_release(void *arg, uint64 handle)
{
	dsa_pointer p = (dsa_pointer) handle;
	SmLocalPin *lp;

	if (sm_area == NULL)
		return;
	lp = hash_search(sm_local, &p, HASH_FIND, NULL);
	if (lp == NULL)
	{
		/* a bug: leave the store as it is rather than unpin another's */
		elog(WARNING, "forst: shared metadata released that this process did not pin");
		return;
	}
	if (--lp->pins == 0)
		hash_search(sm_local, &p, HASH_REMOVE, NULL);
	sm_local_total--;
	LWLockAcquire(sm->lock, LW_EXCLUSIVE);
	sm_unpin(p, dsa_get_address(sm_area, p), 1);
	LWLockRelease(sm->lock);
}

void
forst_sharedmeta_forget_files(const uint64 *cache_ids, int n)
{
	int			i,
				kind;

	if (!forst_sharedmeta_enabled() || n == 0)
		return;
	sm_attach();
	LWLockAcquire(sm->lock, LW_EXCLUSIVE);
	for (i = 0; i < n; i++)
		for (kind = 0; kind < FST_META_KINDS; kind++)
		{
			SmKey		key;
			SmSlot	   *slot;
			dsa_pointer p;
			SmEntry    *e;

			sm_key(&key, cache_ids[i], kind);
			slot = hash_search(sm_hash, &key, HASH_FIND, NULL);
			if (slot == NULL)
				continue;
			p = slot->entry;
			e = dsa_get_address(sm_area, p);
			if (e->pins == 0)
				sm_free(p, e);
			else
			{
				hash_search(sm_hash, &key, HASH_REMOVE, NULL);
				e->listed = false;	/* freed at its last release */
			}
		}
	LWLockRelease(sm->lock);
}

/*
 * forst.shared_metadata(): the store's size, fill by kind and counters
 * (since the server started), and this session's pins.
 */
PG_FUNCTION_INFO_V1(forst_shared_metadata);

Datum
forst_shared_metadata(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11] = {0};
	uint64		v[11] = {0};
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (forst_sharedmeta_enabled())
	{
		LWLockAcquire(sm->lock, LW_SHARED);
		v[0] = sm->capacity;
		v[1] = sm->bytes[FST_META_FILTER] + sm->bytes[FST_META_INDEX] +
			sm->bytes[FST_META_FENCES];
		v[2] = sm->bytes[FST_META_FILTER];
		v[3] = sm->bytes[FST_META_INDEX] + sm->bytes[FST_META_FENCES];
		v[4] = sm->entries;
		v[5] = sm->pinned;
		v[6] = sm->hits;
		v[7] = sm->puts;
		v[8] = sm->refused;
		v[9] = sm->evictions;
		LWLockRelease(sm->lock);
	}
	v[10] = sm_local_total;
	for (i = 0; i < 11; i++)
		values[i] = Int64GetDatum((int64) v[i]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
