/*-------------------------------------------------------------------------
 *
 * dc_prefetch.c
 *	  fst_diskcache_prefetch: the chunks a reader is about to need, fetched
 *	  in one batch of parallel ranged reads and written into the cache, so
 *	  that the reader's own reads, one at a time, hit (see diskcache.h).
 *
 * Steps: list the chunks covering every range; sort them by (key, chunk)
 * and drop repeats; drop those the index holds; cut the rest into runs of
 * adjacent chunks of one object (at most RUN_CHUNKS each, so that a long
 * range is fetched as several requests in parallel); fetch the runs, at
 * most BATCH_BYTES at a time, with fst_objstore_get_ranges; write every
 * whole chunk that arrived.  Nothing here decides an error for a reader:
 * a chunk that could not be fetched is simply not cached.
 *
 *-------------------------------------------------------------------------
 */
#include "dc_internal.h"
#include "objstore.h"

#define RUN_CHUNKS	32			/* chunks per request at most */
#define BATCH_BYTES	(16 * 1024 * 1024)	/* fetched at once at most */

typedef struct Want
{
	const char *key;
	size_t		keylen;
	uint64		hash;
	uint64		object_size;
	uint64		chunk_size;		/* effective (object size: whole files) */
	uint64		chunk;
} Want;

static int
want_cmp(const void *a, const void *b)
{
	const Want *x = a;
	const Want *y = b;
	int			c = strcmp(x->key, y->key);

	if (c != 0)
		return c;
	return x->chunk < y->chunk ? -1 : x->chunk > y->chunk ? 1 : 0;
}

static inline uint64
want_len(const Want *w)
{
	uint64		start = w->chunk * w->chunk_size;

	return Min(w->chunk_size, w->object_size - start);
}

/* Fetches runs [0, nruns) (first chunks in run_first[], lengths in chunks). */
static FstCode
fetch_runs(FstDiskCache *c, FstObjStore *store, const Want *wants,
		   const int *run_first, const int *run_n, int nruns, FstError *err)
{
	FstObjRange *r = fst_calloc(nruns, sizeof(FstObjRange));
	FstCode		rc = FST_OK;
	FstError	e;
	int			i,
				j;

	if (r == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	for (i = 0; i < nruns && rc == FST_OK; i++)
	{
		const Want *w = &wants[run_first[i]];
		const Want *last = &wants[run_first[i] + run_n[i] - 1];

		r[i].key = w->key;
		r[i].offset = w->chunk * w->chunk_size;
		r[i].len = (size_t) (last->chunk * last->chunk_size + want_len(last) - r[i].offset);
		r[i].buf = fst_malloc(r[i].len);
		if (r[i].buf == NULL)
			rc = fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	if (rc == FST_OK)
	{
		fst_error_clear(&e);
		rc = fst_objstore_get_ranges(store, r, nruns, &e);
		if (rc == FST_INTERRUPTED || rc == FST_NO_MEMORY)
			*err = e;
		else
			rc = FST_OK;		/* failed ranges stay uncached */
	}
	for (i = 0; i < nruns && rc == FST_OK; i++)
	{
		if (r[i].code != FST_OK)
			continue;
		dc_count(c->idx, DC_ORIGIN_READS, 1);
		dc_count(c->idx, DC_BYTES_FETCHED, r[i].got);
		for (j = 0; j < run_n[i]; j++)
		{
			const Want *w = &wants[run_first[i] + j];
			uint64		off = w->chunk * w->chunk_size - r[i].offset;
			uint64		plen = want_len(w);

			if (off + plen > r[i].got)
				break;			/* the object was shorter than recorded */
			(void) dc_write_entry(c, w->key, w->keylen, w->hash,
								  w->object_size, w->chunk,
								  r[i].buf + off, (size_t) plen);
		}
	}
	for (i = 0; i < nruns; i++)
		fst_free(r[i].buf);
	fst_free(r);
	return rc;
}

FstCode
fst_diskcache_prefetch(FstDiskCache *c, FstObjStore *store,
					   const FstDcPrefetch *items, int n, FstError *err)
{
	Want	   *wants = NULL;
	int		   *run_first = NULL,
			   *run_n = NULL;
	size_t		nwants = 0,
				cap = 0;
	int			nruns = 0,
				i;
	uint64		batch = 0;
	FstCode		rc = FST_OK;

	fst_error_clear(err);
	if (n <= 0 || !__atomic_load_n(&c->idx->ready, __ATOMIC_ACQUIRE))
		return FST_OK;

	/* every chunk covering a range */
	for (i = 0; i < n; i++)
	{
		const FstDcPrefetch *it = &items[i];
		size_t		keylen = strlen(it->key);
		uint64		csize = c->opt.chunk_size ? c->opt.chunk_size : Max(it->object_size, 1);
		uint64		end = Min(it->offset + it->len, it->object_size);
		uint64		ch;

		if (it->len == 0 || it->offset >= it->object_size || keylen == 0 ||
			keylen > DC_KEY_MAX ||
			dc_accounted(c, DC_HDR + keylen + Min(csize, it->object_size)) > c->idx->capacity)
			continue;
		for (ch = it->offset / csize; ch * csize < end; ch++)
		{
			if (nwants == cap)
			{
				size_t		ncap = Max(cap * 2, 64);
				Want	   *nw = fst_realloc(wants, ncap * sizeof(Want));

				if (nw == NULL)
				{
					fst_free(wants);
					return fst_error(err, FST_NO_MEMORY, "out of memory");
				}
				wants = nw;
				cap = ncap;
			}
			wants[nwants++] = (Want)
			{
				it->key, keylen, dc_hash_key(it->key, keylen),
					it->object_size, csize, ch
			};
		}
	}
	if (nwants == 0)
		return FST_OK;
	qsort(wants, nwants, sizeof(Want), want_cmp);

	/* the missing ones, without repeats, in runs */
	run_first = fst_malloc(nwants * sizeof(int));
	run_n = fst_malloc(nwants * sizeof(int));
	if (run_first == NULL || run_n == NULL)
	{
		rc = fst_error(err, FST_NO_MEMORY, "out of memory");
		goto done;
	}
	dc_lock(c, false);
	{
		size_t		m = 0;

		for (i = 0; i < (int) nwants; i++)
		{
			if (i > 0 && want_cmp(&wants[i], &wants[i - 1]) == 0)
				continue;
			if (dc_index_find(c->idx, wants[i].hash, wants[i].chunk) >= 0)
				continue;
			wants[m++] = wants[i];
		}
		nwants = m;
	}
	dc_unlock(c);
	for (i = 0; i < (int) nwants; i++)
	{
		bool		extends = nruns > 0 &&
			strcmp(wants[i - 1].key, wants[i].key) == 0 &&
			wants[i - 1].chunk + 1 == wants[i].chunk &&
			run_n[nruns - 1] < RUN_CHUNKS;

		if (extends)
			run_n[nruns - 1]++;
		else
		{
			run_first[nruns] = i;
			run_n[nruns] = 1;
			nruns++;
		}
	}

	/* fetched in batches of at most BATCH_BYTES */
	{
		int			from = 0;

		for (i = 0; i < nruns && rc == FST_OK; i++)
		{
			batch += (uint64) run_n[i] * wants[run_first[i]].chunk_size;
			if (batch >= BATCH_BYTES || i == nruns - 1)
			{
				rc = fetch_runs(c, store, wants, run_first + from, run_n + from,
								i + 1 - from, err);
				from = i + 1;
				batch = 0;
			}
		}
	}

done:
	fst_free(run_first);
	fst_free(run_n);
	fst_free(wants);
	return rc;
}
