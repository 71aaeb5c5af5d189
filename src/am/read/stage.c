/*-------------------------------------------------------------------------
 *
 * stage.c
 *	  Byte ranges of SST files held in this backend's memory for one batch
 *	  of key lookups (see read/stage.h).
 *
 * The stage is a hash table from object key to that object's staged
 * ranges, sorted by offset, all in one memory context that the next batch
 * (or the end of the transaction) resets.  When nothing is staged, a read
 * through forst_stage_source costs one branch.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "am/forst.h"
#include "am/objects/store.h"
#include "am/read/stage.h"
#include "store/objstore.h"

/*
 * Ranges of one file that overlap or touch are fetched by one request.
 * Then neighbours less than STAGE_GAP_MAX apart are joined, the smallest
 * gap first, as long as the gaps fit in what forst.batch_lookup_memory
 * leaves and a request stays under STAGE_RUN_MAX: each join saves a
 * request for the gap's bytes, and against an object store a request
 * costs more than that many bytes (its latency and the server's work per
 * request), so the cheapest joins are the ones worth making.
 */
#define STAGE_GAP_MAX	(128 * 1024)
#define STAGE_RUN_MAX	(1024 * 1024)

typedef struct StagedRange
{
	uint64		offset;
	uint64		len;
	char	   *data;
} StagedRange;

typedef struct StagedFile
{
	char		key[FORST_KEY_LEN]; /* hash key: the object key */
	int			n;
	int			cap;
	StagedRange *ranges;		/* sorted by offset, not overlapping */
} StagedFile;

/* one range to fetch, with its object key */
typedef struct Want
{
	char	   *okey;
	uint64		object_size;
	uint64		offset;
	uint64		len;
} Want;

static MemoryContext stage_cxt = NULL;
static HTAB *stage_files = NULL;
static int	stage_nfiles = 0;
static uint64 stage_hits = 0;
static uint64 stage_generation = 0;	/* of what is staged; 0: nothing */
static uint64 stage_fetches = 0;

void
forst_stage_reset(void)
{
	if (stage_cxt != NULL)
		MemoryContextReset(stage_cxt);
	stage_files = NULL;
	stage_nfiles = 0;
	stage_generation = 0;
}

void
forst_stage_release(uint64 generation)
{
	if (generation != 0 && generation == stage_generation)
		forst_stage_reset();
}

uint64
forst_stage_hits(void)
{
	return stage_hits;
}

static int
want_cmp(const void *a, const void *b)
{
	const Want *x = a;
	const Want *y = b;
	int			c = strcmp(x->okey, y->okey);

	if (c != 0)
		return c;
	return x->offset < y->offset ? -1 : x->offset > y->offset ? 1 : 0;
}

static void
stage_add(const char *okey, uint64 offset, uint64 len, char *data)
{
	StagedFile *f;
	bool		found;

	f = hash_search(stage_files, okey, HASH_ENTER, &found);
	if (!found)
	{
		f->n = 0;
		f->cap = 4;
		f->ranges = MemoryContextAlloc(stage_cxt, sizeof(StagedRange) * f->cap);
		stage_nfiles++;
	}
	if (f->n == f->cap)
	{
		f->cap *= 2;
		f->ranges = repalloc(f->ranges, sizeof(StagedRange) * f->cap);
	}
	/* runs arrive sorted by (key, offset) and apart */
	f->ranges[f->n].offset = offset;
	f->ranges[f->n].len = len;
	f->ranges[f->n].data = data;
	f->n++;
}

static const char *stage_find(const char *okey, uint64 offset, size_t len);

/* Whether every want lies within one staged range. */
static bool
stage_covers(const Want *wants, int n)
{
	if (stage_nfiles == 0)
		return false;
	for (int i = 0; i < n; i++)
		if (wants[i].len > 0 &&
			stage_find(wants[i].okey, wants[i].offset, (size_t) wants[i].len) == NULL)
			return false;
	return true;
}

/* A gap between runs[i] and runs[i + 1] of one object. */
typedef struct Gap
{
	uint64		len;
	int			i;
} Gap;

static int
gap_cmp(const void *a, const void *b)
{
	const Gap  *x = a;
	const Gap  *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->i - y->i;
}

/*
 * Joins neighbouring runs (sorted by object and offset, apart) across the
 * smallest gaps first while the gaps' bytes fit in spare (see above), and
 * returns how many runs are left, compacted in place.  A group of joined
 * runs is contiguous: first_of[] holds its first run at its last, last_of[]
 * its last at its first.
 */
static int
join_gaps(FstObjRange *runs, int nruns, uint64 spare)
{
	Gap		   *gaps;
	int		   *first_of;
	int		   *last_of;
	int			ngaps = 0,
				out = 0;

	if (nruns < 2)
		return nruns;
	gaps = palloc(sizeof(Gap) * (nruns - 1));
	first_of = palloc(sizeof(int) * nruns);
	last_of = palloc(sizeof(int) * nruns);
	for (int i = 0; i < nruns; i++)
	{
		first_of[i] = last_of[i] = i;
		if (i + 1 < nruns && strcmp(runs[i].key, runs[i + 1].key) == 0)
		{
			uint64		len = runs[i + 1].offset - (runs[i].offset + runs[i].len);

			if (len <= STAGE_GAP_MAX && len <= spare)
			{
				gaps[ngaps].len = len;
				gaps[ngaps].i = i;
				ngaps++;
			}
		}
	}
	qsort(gaps, ngaps, sizeof(Gap), gap_cmp);
	for (int g = 0; g < ngaps && gaps[g].len <= spare; g++)
	{
		int			a = first_of[gaps[g].i];
		int			b = last_of[gaps[g].i + 1];

		if (runs[b].offset + runs[b].len - runs[a].offset > STAGE_RUN_MAX)
			continue;
		spare -= gaps[g].len;
		last_of[a] = b;
		first_of[b] = a;
	}
	for (int i = 0; i < nruns; i = last_of[i] + 1)
	{
		int			b = last_of[i];
		uint64		end = runs[b].offset + runs[b].len;

		runs[out] = runs[i];
		runs[out].len = end - runs[i].offset;
		out++;
	}
	pfree(gaps);
	pfree(first_of);
	pfree(last_of);
	return out;
}

void
forst_stage_fetch(const RelFileNode *rnode, const ForstPrefetchRange *ranges,
				  int n, ForstStageFetch *out)
{
	uint64		limit = (uint64) forst_batch_lookup_memory_kb * 1024;
	uint64		total = 0;
	Want	   *wants;
	FstObjRange *runs;
	int			nruns = 0;
	HASHCTL		ctl;
	FstError	err;
	FstCode		rc;
	MemoryContext old;
	MemoryContext tmp;

	memset(out, 0, sizeof(*out));
	if (n <= 0 || limit == 0)
	{
		forst_stage_reset();
		return;
	}

	/* the wants and runs live in a context of this call, the bytes in ours */
	tmp = AllocSetContextCreate(CurrentMemoryContext, "forst stage fetch",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	wants = palloc(sizeof(Want) * n);
	for (int i = 0; i < n; i++)
	{
		/* a file's blocks come together: its key is named once */
		if (i > 0 && ranges[i].file == ranges[i - 1].file)
			wants[i].okey = wants[i - 1].okey;
		else
		{
			wants[i].okey = palloc(FORST_KEY_LEN);
			forst_file_object_key(rnode, ranges[i].file, wants[i].okey, FORST_KEY_LEN);
		}
		wants[i].object_size = ranges[i].file->meta.size;
		wants[i].offset = ranges[i].offset;
		wants[i].len = Min(ranges[i].len, wants[i].object_size - Min(ranges[i].offset, wants[i].object_size));
	}

	/* what is staged holds all of it already (a rescan): keep it */
	if (stage_covers(wants, n))
	{
		out->generation = stage_generation;
		MemoryContextSwitchTo(old);
		MemoryContextDelete(tmp);
		return;
	}
	forst_stage_reset();
	if (stage_cxt == NULL)
		stage_cxt = AllocSetContextCreate(TopMemoryContext, "forst stage",
										  ALLOCSET_DEFAULT_SIZES);

	qsort(wants, n, sizeof(Want), want_cmp);

	/* runs: what overlaps or touches in one object, within the limit */
	runs = palloc0(sizeof(FstObjRange) * n);
	for (int i = 0; i < n; i++)
	{
		Want	   *w = &wants[i];
		FstObjRange *r = nruns > 0 ? &runs[nruns - 1] : NULL;

		if (w->len == 0)
			continue;
		if (r != NULL && strcmp(r->key, w->okey) == 0 &&
			w->offset <= r->offset + r->len)
		{
			uint64		end = Max(r->offset + r->len, w->offset + w->len);
			uint64		grow = end - (r->offset + r->len);

			if (end - r->offset <= STAGE_RUN_MAX && total + grow <= limit)
			{
				total += grow;
				r->len = end - r->offset;
				continue;
			}
			/* a run that may not grow: fetch only the rest */
			if (w->offset + w->len <= r->offset + r->len)
				continue;
			w->len = w->offset + w->len - (r->offset + r->len);
			w->offset = r->offset + r->len;
		}
		if (total + w->len > limit)
			continue;
		total += w->len;
		r = &runs[nruns++];
		r->key = w->okey;
		r->offset = w->offset;
		r->len = w->len;
	}
	nruns = join_gaps(runs, nruns, limit - total);
	for (int i = 0; i < nruns; i++)
		runs[i].buf = MemoryContextAlloc(stage_cxt, runs[i].len);

	rc = fst_objstore_get_ranges(forst_objstore(), runs, nruns, &err);
	MemoryContextSwitchTo(old);
	if (rc == FST_INTERRUPTED)
	{
		MemoryContextDelete(tmp);
		forst_stage_reset();
		CHECK_FOR_INTERRUPTS();
		return;
	}
	old = MemoryContextSwitchTo(stage_cxt);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = FORST_KEY_LEN;
	ctl.entrysize = sizeof(StagedFile);
	ctl.hcxt = stage_cxt;
	stage_files = hash_create("forst stage", 64, &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	for (int i = 0; i < nruns; i++)
	{
		/* a failed range is not staged: its read fetches it (stage.h) */
		if (runs[i].code != FST_OK || runs[i].got == 0)
			continue;
		stage_add(runs[i].key, runs[i].offset, runs[i].got, runs[i].buf);
		out->bytes += runs[i].got;
	}
	MemoryContextSwitchTo(old);
	out->requests = nruns;
	stage_generation = ++stage_fetches;
	out->generation = stage_generation;
	MemoryContextDelete(tmp);
}

/* The staged bytes [offset, offset + len) of okey, or NULL. */
static const char *
stage_find(const char *okey, uint64 offset, size_t len)
{
	StagedFile *f = hash_search(stage_files, okey, HASH_FIND, NULL);
	int			lo = 0,
				hi;

	if (f == NULL)
		return NULL;
	/* the last range starting at or before offset */
	hi = f->n - 1;
	while (lo < hi)
	{
		int			mid = (lo + hi + 1) / 2;

		if (f->ranges[mid].offset <= offset)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (f->n == 0 || f->ranges[lo].offset > offset ||
		offset + len > f->ranges[lo].offset + f->ranges[lo].len)
		return NULL;
	return f->ranges[lo].data + (offset - f->ranges[lo].offset);
}

typedef struct StageSource
{
	FstRangeSource base;
	FstRangeSource *inner;
	char		okey[FORST_KEY_LEN];
} StageSource;

static FstCode
stage_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
		   FstError *err)
{
	StageSource *s = (StageSource *) src;

	if (stage_nfiles > 0)
	{
		const char *p = stage_find(s->okey, offset, len);

		if (p != NULL)
		{
			memcpy(buf, p, len);
			stage_hits++;
			return FST_OK;
		}
	}
	return fst_range_read(s->inner, offset, len, buf, err);
}

static void
stage_close(FstRangeSource *src)
{
	StageSource *s = (StageSource *) src;

	fst_range_close(s->inner);
	fst_free(s);
}

FstRangeSource *
forst_stage_source(FstRangeSource *inner, const char *okey)
{
	StageSource *s = fst_calloc(1, sizeof(StageSource));

	if (s == NULL)
	{
		fst_range_close(inner);
		return NULL;
	}
	s->base.size = inner->size;
	s->base.read = stage_read;
	s->base.close = stage_close;
	s->inner = inner;
	strlcpy(s->okey, okey, sizeof(s->okey));
	return &s->base;
}

static void
stage_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PARALLEL_COMMIT)
		forst_stage_reset();
}

void
forst_stage_init(void)
{
	RegisterXactCallback(stage_xact_callback, NULL);
}
