/*-------------------------------------------------------------------------
 *
 * prewarm.c
 *	  forst.prewarm(table, data): the warm-up after an attach (or a
 *	  restart with an empty cache).  Reads a table's SST files through the
 *	  local disk cache so that the next sessions' reads hit it.
 *
 * A table attached on a new server has nothing cached: each new backend's
 * first reads of a file fetch its metadata (footer, properties, index and,
 * at the first point lookup, the bloom filter) from the object store, and
 * the disk cache's admission filter lets a chunk in only at its second
 * miss.  Prewarm reads every file's metadata (and with data => true, every
 * byte, as long as the cache has room for it) through sources that admit
 * whatever they fetch, so that the cache holds it afterwards.  Chunks
 * already cached are hits and cost no request.
 *
 * On s3:// the metadata of all files, and the data 16 MB at a time, are
 * fetched with parallel ranged GETs first (read/prefetch.c).
 *
 * It shows progress in forst.progress (command "prewarm"), checks for
 * interrupts between reads, and skips files that a compaction replaced
 * and gc deleted while it ran.  It needs the disk cache
 * (forst.cache_size > 0).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/keys/rel.h"
#include "am/objects/disk_cache.h"
#include "am/read/prefetch.h"
#include "am/base/privileges.h"
#include "am/base/progress.h"
#include "am/objects/store.h"
#include "store/objstore_source.h"

PG_FUNCTION_INFO_V1(forst_prewarm_fn);

/* Bytes read per request when data is prewarmed (a multiple of chunks). */
#define PREWARM_READ_BYTES	(1024 * 1024)
/* Bytes fetched ahead in parallel, where the store allows (a multiple). */
#define PREWARM_AHEAD_BYTES	(16 * PREWARM_READ_BYTES)

typedef struct PrewarmCounts
{
	int			files;
	int			skipped;		/* gone from the store meanwhile */
	uint64		bytes_read;		/* through the cache */
	uint64		bytes_fetched;	/* from the object store (this process's) */
} PrewarmCounts;

/*
 * Opens object okey (size bytes) through the disk cache with admission of
 * everything fetched.  Returns false if the object is gone.
 */
static bool
open_source(FstDiskCache *cache, const char *okey, uint64 size,
			FstRangeSource **cached)
{
	FstRangeSource *origin;
	FstError	err;
	FstCode		rc;

	rc = fst_range_source_object(forst_objstore(), okey, size, &origin, &err);
	if (rc == FST_NOT_FOUND)
		return false;
	if (rc != FST_OK)
		forst_report(rc, &err, psprintf("opening \"%s\" to prewarm it", okey));
	rc = fst_range_source_cached(cache, origin, okey, size, cached, &err);
	if (rc != FST_OK)
	{
		fst_range_close(origin);
		forst_report(rc, &err, psprintf("opening \"%s\" to prewarm it", okey));
	}
	fst_range_source_cached_admit_all(*cached);
	return true;
}

/* Reads a file's metadata (footer, properties, index, filter). */
static bool
prewarm_metadata(FstRangeSource *src, const char *okey)
{
	FstSstReadOptions ro;
	FstSstReader *r;
	FstError	err;
	FstCode		rc;

	fst_sst_read_options_default(&ro);
	rc = fst_sst_open(src, &ro, &r, &err);
	if (rc == FST_OK)
	{
		rc = fst_sst_load_filter(r, &err);
		fst_sst_close(r);
	}
	if (rc == FST_NOT_FOUND)
		return false;
	if (rc != FST_OK)
		forst_report(rc, &err, psprintf("prewarming SST \"%s\"", okey));
	return true;
}

/*
 * Reads the first size bytes of a file in PREWARM_READ_BYTES pieces; false
 * if the file is gone.
 */
static bool
prewarm_data(const RelFileNode *rnode, const FstManifestFile *mf,
			 FstRangeSource *src, const char *okey, uint64 size,
			 uint64 *done, uint64 total)
{
	char	   *buf = palloc(PREWARM_READ_BYTES);
	uint64		off;

	for (off = 0; off < size; off += PREWARM_READ_BYTES)
	{
		size_t		n = (size_t) Min((uint64) PREWARM_READ_BYTES, size - off);
		FstError	err;
		FstCode		rc;

		CHECK_FOR_INTERRUPTS();
		if (off % PREWARM_AHEAD_BYTES == 0)
		{
			/* on s3://: the next pieces in parallel (then read from cache) */
			ForstPrefetchRange ahead = {mf, off, Min((uint64) PREWARM_AHEAD_BYTES, size - off)};

			forst_prefetch_ranges(rnode, &ahead, 1);
		}
		rc = fst_range_read(src, off, n, buf, &err);
		if (rc == FST_NOT_FOUND)
		{
			pfree(buf);
			return false;
		}
		if (rc != FST_OK)
			forst_report(rc, &err, psprintf("prewarming SST \"%s\"", okey));
		*done += n;
		forst_progress_update("reading data", (int64) *done, (int64) total, "bytes");
	}
	pfree(buf);
	return true;
}

Datum
forst_prewarm_fn(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	bool		data = PG_GETARG_BOOL(1);
	FstDiskCache *cache = forst_disk_cache();
	Relation	rel;
	ForstTableView view;
	PrewarmCounts c = {0};
	FstDiskCacheStats st;
	uint64		total = 0,
				done = 0,
				budget = 0,
				fetched_before;
	int			nfiles = 0,
				pass,
				level,
				i;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {0};

	forst_require_table_owner(relid, "forst.prewarm");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (cache == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst: prewarm needs the local disk cache"),
				 errhint("Set forst.cache_size above 0 (and forst.cache_dir to a usable directory); "
						 "its default turns the cache off on a file:// store, whose files are local already.")));
	rel = relation_open(relid, AccessShareLock);
	if (!forst_is_forst_relation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a forst table", RelationGetRelationName(rel))));
	forst_table_view(forst_table_shared(&rel->rd_node, true), &rel->rd_node, &view);

	for (level = 0; view.manifest && level < FST_NUM_LEVELS; level++)
	{
		nfiles += view.manifest->levels[level].nfiles;
		total += fst_manifest_level_bytes(view.manifest, level);
	}

	fetched_before = fst_objstore_stats(forst_objstore())->bytes_read;
	forst_progress_start("prewarm", RelationGetRelationName(rel));
	if (forst_prefetch_possible() && nfiles > 0)
	{
		/* on s3://: every file's metadata in parallel, then opened below */
		const FstManifestFile **all = palloc(sizeof(FstManifestFile *) * nfiles);
		int			m = 0;

		forst_progress_update("fetching metadata", 0, nfiles, "files");
		for (level = 0; view.manifest && level < FST_NUM_LEVELS; level++)
			for (i = 0; i < view.manifest->levels[level].nfiles; i++)
				all[m++] = &view.manifest->levels[level].files[i];
		forst_prefetch_metadata(&rel->rd_node, all, m);
		pfree(all);
	}
	/* pass 0 reads metadata, pass 1 data (newest levels first) */
	for (pass = 0; pass < (data ? 2 : 1); pass++)
	{
		int			n = 0;

		if (pass == 1)
		{
			/*
			 * Data up to 90% of the cache less the metadata just read: the
			 * rest of the cache's room keeps that metadata and other
			 * tables' hot chunks from being evicted by this pass.
			 */
			fst_diskcache_stats(cache, &st);
			budget = st.capacity / 10 * 9;
			budget = budget > c.bytes_read ? budget - c.bytes_read : 0;
			if (total > budget)
				ereport(NOTICE,
						(errmsg("forst: \"%s\" holds %llu bytes of SST files, more than the disk cache's room of %llu: only the newest are prewarmed",
								RelationGetRelationName(rel), (unsigned long long) total,
								(unsigned long long) budget),
						 errhint("Raise forst.cache_size to hold the whole table.")));
			total = Min(total, budget);
		}
		for (level = 0; view.manifest && level < FST_NUM_LEVELS; level++)
		{
			for (i = 0; i < view.manifest->levels[level].nfiles; i++)
			{
				const FstManifestFile *mf = &view.manifest->levels[level].files[i];
				char		okey[FORST_KEY_LEN];
				FstRangeSource *src;
				bool		present;

				CHECK_FOR_INTERRUPTS();
				if (pass == 0)
					forst_progress_update("reading metadata", n++, nfiles, "files");
				else if (done >= budget)
					break;
				forst_file_object_key(&rel->rd_node, mf, okey, sizeof(okey));
				present = open_source(cache, okey, mf->meta.size, &src);
				if (present)
				{
					present = pass == 0 ? prewarm_metadata(src, okey) :
						prewarm_data(&rel->rd_node, mf, src, okey,
									 Min(mf->meta.size, budget - done), &done, total);
					c.bytes_read += src->bytes_read;
					fst_range_close(src);
				}
				if (pass == 0)
				{
					if (present)
						c.files++;
					else
						c.skipped++;
				}
			}
		}
	}
	forst_progress_end();
	relation_close(rel, AccessShareLock);
	c.bytes_fetched = fst_objstore_stats(forst_objstore())->bytes_read - fetched_before;

	values[0] = Int32GetDatum(c.files);
	values[1] = Int32GetDatum(c.skipped);
	values[2] = Int64GetDatum((int64) c.bytes_read);
	values[3] = Int64GetDatum((int64) c.bytes_fetched);
	values[4] = Int64GetDatum((int64) (data ? done : 0));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
