/*-------------------------------------------------------------------------
 *
 * shared_filters.c
 *	  The shared filter store (see read/shared_filters.h).
 *
 * Shared memory holds a header and a dynamic shared area (utils/dsa.h)
 * created in place, limited to its initial size so that it never needs a
 * DSM segment; the postmaster creates it, as PostgreSQL's own statistics
 * do, and every process attaches to it when it first needs it.  Each
 * filter is one allocation of the area: an SfFilter header, then the
 * filter's bytes.  A hash table in shared memory maps a file's cache id to
 * its filter.  One LWLock guards the table, the headers and the counters:
 * it is taken when a reader opens or closes a file's filter, never while a
 * lookup probes it.
 *
 * A handle is the filter's dsa_pointer.  This process counts its pins per
 * handle, so that it can give back at exit what readers still hold (a
 * backend keeps its readers open until it ends).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
#include "am/read/shared_filters.h"

#define SF_MIN_FILTER	1024	/* sizes the hash table: capacity / this */

typedef struct SfFilter
{
	uint64		cache_id;
	uint64		offset;			/* where the file stores it: a check */
	uint64		last_used;		/* the store's clock at its last pin */
	uint32		len;
	int32		pins;
	bool		listed;			/* in the hash table (false: forgotten) */
} SfFilter;

#define SF_HEADER		MAXALIGN(sizeof(SfFilter))
#define SF_DATA(f)		((char *) (f) + SF_HEADER)

typedef struct SfEntry
{
	uint64		cache_id;		/* hash key: first */
	dsa_pointer filter;
} SfEntry;

typedef struct SfShared
{
	LWLock	   *lock;
	uint64		capacity;
	uint32		max_filters;
	uint64		clock;
	uint64		bytes;
	uint64		filters;
	uint64		pinned;
	uint64		hits;
	uint64		puts;
	uint64		refused;
	uint64		evictions;
	/* then the area, in place */
} SfShared;

typedef struct SfLocalPin
{
	dsa_pointer filter;			/* hash key: first */
	int64		pins;
} SfLocalPin;

static SfShared *sf = NULL;
static HTAB *sf_hash = NULL;
static dsa_area *sf_area = NULL;
static HTAB *sf_local = NULL;
static uint64 sf_local_total = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static uint64
sf_capacity(void)
{
	uint64		c = (uint64) forst_shared_filter_memory_kb * 1024;

	return c == 0 ? 0 : Max(c, dsa_minimum_size());
}

static uint32
sf_max_filters(void)
{
	return (uint32) Max(sf_capacity() / SF_MIN_FILTER, 128);
}

static Size
sf_struct_size(void)
{
	return add_size(MAXALIGN(sizeof(SfShared)), (Size) sf_capacity());
}

static char *
sf_place(void)
{
	return (char *) sf + MAXALIGN(sizeof(SfShared));
}

static void
sf_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	if (sf_capacity() == 0)
		return;
	RequestAddinShmemSpace(add_size(sf_struct_size(),
									hash_estimate_size(sf_max_filters(), sizeof(SfEntry))));
	RequestNamedLWLockTranche("forst_shared_filters", 1);
}

static void
sf_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	if (sf_capacity() == 0)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	sf = ShmemInitStruct("forst shared filters", sf_struct_size(), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche("forst_shared_filters");
		dsa_area   *area;

		memset(sf, 0, sizeof(SfShared));
		sf->lock = &locks[0].lock;
		sf->capacity = sf_capacity();
		sf->max_filters = sf_max_filters();

		/*
		 * The postmaster cannot use DSM segments: the area lives in plain
		 * shared memory and may never grow past it.
		 */
		area = dsa_create_in_place(sf_place(), (size_t) sf->capacity,
								   sf->lock->tranche, NULL);
		dsa_pin(area);
		dsa_set_size_limit(area, (size_t) sf->capacity);
		dsa_detach(area);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(uint64);
	info.entrysize = sizeof(SfEntry);
	sf_hash = ShmemInitHash("forst shared filter map", sf_max_filters(),
							sf_max_filters(), &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

void
forst_filtershare_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sf_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sf_shmem_startup;
}

bool
forst_filtershare_enabled(void)
{
	return sf != NULL && sf_hash != NULL;
}

/* Frees a filter no reader pins.  Caller holds sf->lock exclusively. */
static void
sf_free(dsa_pointer p, SfFilter *f)
{
	Assert(f->pins == 0);
	if (f->listed)
		hash_search(sf_hash, &f->cache_id, HASH_REMOVE, NULL);
	sf->bytes -= SF_HEADER + f->len;
	sf->filters--;
	dsa_free(sf_area, p);
}

/* Gives back this process's pins, at its exit. */
static void
sf_exit(int code, Datum arg)
{
	HASH_SEQ_STATUS seq;
	SfLocalPin *lp;

	if (sf_area == NULL)
		return;
	LWLockAcquire(sf->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, sf_local);
	while ((lp = hash_seq_search(&seq)) != NULL)
	{
		SfFilter   *f = dsa_get_address(sf_area, lp->filter);

		f->pins -= (int32) lp->pins;
		if (f->pins == 0)
		{
			sf->pinned--;
			if (!f->listed)
				sf_free(lp->filter, f);
		}
	}
	LWLockRelease(sf->lock);
	sf_local_total = 0;
	/* in place, with no segment: detaching does not count the attachment */
	dsa_detach(sf_area);
	dsa_release_in_place(sf_place());
	sf_area = NULL;
}

/* Attaches this process to the area, once. */
static void
sf_attach(void)
{
	MemoryContext old;
	HASHCTL		ctl;

	if (sf_area != NULL)
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	sf_area = dsa_attach_in_place(sf_place(), NULL);
	dsa_pin_mapping(sf_area);
	MemoryContextSwitchTo(old);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(dsa_pointer);
	ctl.entrysize = sizeof(SfLocalPin);
	ctl.hcxt = TopMemoryContext;
	sf_local = hash_create("forst shared filter pins", 64, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	before_shmem_exit(sf_exit, 0);
}

/*
 * Pins f for this process.  Caller holds sf->lock exclusively.  The local
 * count is entered first: if hash_search fails for memory, no pin is taken
 * that this process could not give back.
 */
static const char *
sf_pin(dsa_pointer p, SfFilter *f, uint64 *handle)
{
	SfLocalPin *lp;
	bool		found;

	lp = hash_search(sf_local, &p, HASH_ENTER, &found);
	if (!found)
		lp->pins = 0;
	lp->pins++;
	sf_local_total++;
	if (f->pins++ == 0)
		sf->pinned++;
	f->last_used = ++sf->clock;
	*handle = (uint64) p;
	return SF_DATA(f);
}

static int
sf_lru_cmp(const void *a, const void *b)
{
	uint64		x = ((const uint64 *) a)[0];
	uint64		y = ((const uint64 *) b)[0];

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Frees unpinned filters, least recently used first, until at least need
 * bytes went (or all of them); returns how many.  Caller holds sf->lock
 * exclusively.
 */
static int
sf_evict(size_t need)
{
	HASH_SEQ_STATUS seq;
	SfEntry    *e;
	uint64	   *cand;			/* (last_used, pointer) pairs */
	long		n = 0,
				i;
	size_t		freed = 0;
	int			evicted = 0;

	cand = palloc_extended(sizeof(uint64) * 2 * Max(1, hash_get_num_entries(sf_hash)),
						   MCXT_ALLOC_NO_OOM);
	if (cand == NULL)
		return 0;				/* the filter stays the reader's own */
	hash_seq_init(&seq, sf_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		SfFilter   *f = dsa_get_address(sf_area, e->filter);

		if (f->pins == 0)
		{
			cand[2 * n] = f->last_used;
			cand[2 * n + 1] = (uint64) e->filter;
			n++;
		}
	}
	qsort(cand, n, sizeof(uint64) * 2, sf_lru_cmp);
	for (i = 0; i < n && (freed < need || evicted == 0); i++)
	{
		dsa_pointer p = (dsa_pointer) cand[2 * i + 1];
		SfFilter   *f = dsa_get_address(sf_area, p);

		freed += SF_HEADER + f->len;
		sf_free(p, f);
		sf->evictions++;
		evicted++;
	}
	pfree(cand);
	return evicted;
}

const char *
forst_filtershare_get(void *arg, uint64 cache_id, uint64 offset, size_t len,
					  uint64 *handle)
{
	SfEntry    *e;
	const char *out = NULL;

	if (!forst_filtershare_enabled())
		return NULL;
	sf_attach();
	LWLockAcquire(sf->lock, LW_EXCLUSIVE);
	e = hash_search(sf_hash, &cache_id, HASH_FIND, NULL);
	if (e != NULL)
	{
		SfFilter   *f = dsa_get_address(sf_area, e->filter);

		if (f->offset == offset && f->len == len &&
			(out = sf_pin(e->filter, f, handle)) != NULL)
			sf->hits++;
	}
	LWLockRelease(sf->lock);
	return out;
}

const char *
forst_filtershare_put(void *arg, uint64 cache_id, uint64 offset,
					  const char *data, size_t len, uint64 *handle)
{
	SfEntry    *e;
	SfFilter   *f;
	dsa_pointer p;
	bool		found;
	const char *out = NULL;

	if (!forst_filtershare_enabled() || len > PG_INT32_MAX / 2)
		return NULL;
	sf_attach();
	LWLockAcquire(sf->lock, LW_EXCLUSIVE);
	e = hash_search(sf_hash, &cache_id, HASH_FIND, NULL);
	if (e != NULL)
	{
		f = dsa_get_address(sf_area, e->filter);
		if (f->offset == offset && f->len == len)
		{
			/* another process put it meanwhile */
			out = sf_pin(e->filter, f, handle);
			LWLockRelease(sf->lock);
			return out;
		}
		/* another file's under the same id (it cannot be: but not that) */
		if (f->pins > 0)
			goto refused;
		sf_free(e->filter, f);
	}
	if (sf->filters >= sf->max_filters && sf_evict(0) == 0)
		goto refused;
	while ((p = dsa_allocate_extended(sf_area, SF_HEADER + len,
									  DSA_ALLOC_NO_OOM)) == InvalidDsaPointer)
	{
		if (sf_evict(SF_HEADER + len) == 0)
			goto refused;
	}
	f = dsa_get_address(sf_area, p);
	memset(f, 0, SF_HEADER);
	f->cache_id = cache_id;
	f->offset = offset;
	f->len = (uint32) len;
	memcpy(SF_DATA(f), data, len);
	e = hash_search(sf_hash, &cache_id, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		dsa_free(sf_area, p);
		goto refused;
	}
	Assert(!found);
	e->filter = p;
	f->listed = true;
	sf->bytes += SF_HEADER + len;
	sf->filters++;
	sf->puts++;
	out = sf_pin(p, f, handle);
	LWLockRelease(sf->lock);
	return out;

refused:
	sf->refused++;
	LWLockRelease(sf->lock);
	return NULL;
}

void
forst_filtershare_release(void *arg, uint64 handle)
{
	dsa_pointer p = (dsa_pointer) handle;
	SfLocalPin *lp;
	SfFilter   *f;

	if (sf_area == NULL)
		return;
	lp = hash_search(sf_local, &p, HASH_FIND, NULL);
	if (lp == NULL)
	{
		/* a bug: leave the store as it is rather than unpin another's */
		elog(WARNING, "forst: a shared filter released that this process did not pin");
		return;
	}
	if (--lp->pins == 0)
		hash_search(sf_local, &p, HASH_REMOVE, NULL);
	sf_local_total--;
	LWLockAcquire(sf->lock, LW_EXCLUSIVE);
	f = dsa_get_address(sf_area, p);
	Assert(f->pins > 0);
	if (--f->pins == 0)
	{
		sf->pinned--;
		if (!f->listed)
			sf_free(p, f);
	}
	LWLockRelease(sf->lock);
}

void
forst_filtershare_forget_files(const uint64 *cache_ids, int n)
{
	int			i;

	if (!forst_filtershare_enabled() || n == 0)
		return;
	sf_attach();
	LWLockAcquire(sf->lock, LW_EXCLUSIVE);
	for (i = 0; i < n; i++)
	{
		SfEntry    *e = hash_search(sf_hash, &cache_ids[i], HASH_FIND, NULL);
		dsa_pointer p;
		SfFilter   *f;

		if (e == NULL)
			continue;
		p = e->filter;
		f = dsa_get_address(sf_area, p);
		if (f->pins == 0)
			sf_free(p, f);
		else
		{
			hash_search(sf_hash, &cache_ids[i], HASH_REMOVE, NULL);
			f->listed = false;	/* freed at its last release */
		}
	}
	LWLockRelease(sf->lock);
}

void
forst_filtershare_stats(ForstFiltershareStats *s)
{
	memset(s, 0, sizeof(*s));
	if (!forst_filtershare_enabled())
		return;
	LWLockAcquire(sf->lock, LW_SHARED);
	s->capacity = sf->capacity;
	s->bytes = sf->bytes;
	s->filters = sf->filters;
	s->pinned = sf->pinned;
	s->hits = sf->hits;
	s->puts = sf->puts;
	s->refused = sf->refused;
	s->evictions = sf->evictions;
	LWLockRelease(sf->lock);
}

/*
 * forst.shared_filters(): the shared filter store's size, fill and
 * counters (since the server started), and this session's pins.
 */
PG_FUNCTION_INFO_V1(forst_shared_filters);

Datum
forst_shared_filters(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[9];
	bool		nulls[9] = {0};
	ForstFiltershareStats st;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	forst_filtershare_stats(&st);
	values[0] = Int64GetDatum((int64) st.capacity);
	values[1] = Int64GetDatum((int64) st.bytes);
	values[2] = Int64GetDatum((int64) st.filters);
	values[3] = Int64GetDatum((int64) st.pinned);
	values[4] = Int64GetDatum((int64) st.hits);
	values[5] = Int64GetDatum((int64) st.puts);
	values[6] = Int64GetDatum((int64) st.refused);
	values[7] = Int64GetDatum((int64) st.evictions);
	values[8] = Int64GetDatum((int64) sf_local_total);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
