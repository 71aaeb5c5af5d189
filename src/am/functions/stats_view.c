/*-------------------------------------------------------------------------
 *
 * stats_view.c
 *	  The forst.stats view and forst.stats_reset(): each process publishes
 *	  its counts (object store requests, block cache, bloom filters) into
 *	  the shared counters of base/stats.c at the end of every transaction
 *	  and before the view reads them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "lsm/blockcache.h"
#include "am/forst.h"
#include "am/base/privileges.h"
#include "am/base/stats.h"
#include "am/objects/disk_cache.h"
#include "am/objects/store.h"
#include "am/read/shared_blocks.h"
#include "am/read/sst_readers.h"

/* Publishes this process's deltas. */
static void forst_stats_publish(void);

PG_FUNCTION_INFO_V1(forst_stats_fn);
PG_FUNCTION_INFO_V1(forst_stats_reset_fn);

static void
stats_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
		forst_stats_publish();
}

void
forst_stats_view_init(void)
{
	/* inherited by every backend the postmaster forks */
	RegisterXactCallback(stats_xact_callback, NULL);
}

static void
forst_stats_publish(void)
{
	FstObjStore *store = forst_objstore_if_open();
	FstBlockCache *bc = forst_block_cache_if_open();

	if (!forst_stats_loaded())
		return;
	StaticAssertStmt(FS_STORE_DELETE - FS_STORE_PUT + 1 == FST_OBJ_NUM_OPS,
					 "forst.stats has a column per object store operation");
	if (store != NULL)
	{
		const FstObjStats *os = fst_objstore_stats(store);
		uint64		errors = 0;
		uint64		usec = 0;
		int			op;

		for (op = 0; op < FST_OBJ_NUM_OPS; op++)
		{
			forst_stats_publish_count(FS_STORE_PUT + op, os->requests[op]);
			errors += os->errors[op];
			usec += os->request_usec[op];
		}
		forst_stats_publish_count(FS_STORE_RETRIES, os->retries);
		forst_stats_publish_count(FS_STORE_REQUEST_US, usec);
		forst_stats_publish_count(FS_STORE_ERRORS, errors);
		forst_stats_publish_count(FS_STORE_NOT_FOUND, os->not_found);
		forst_stats_publish_count(FS_STORE_BYTES_READ, os->bytes_read);
		forst_stats_publish_count(FS_STORE_BYTES_WRITTEN, os->bytes_written);
	}
	if (bc != NULL)
	{
		FstBlockCacheStats bs;

		fst_block_cache_stats(bc, &bs);
		forst_stats_publish_count(FS_BLOCK_CACHE_HITS, bs.hits);
		forst_stats_publish_count(FS_BLOCK_CACHE_MISSES, bs.misses);
	}
	forst_blockshare_publish();
	forst_stats_publish_count(FS_BLOOM_CHECKS, forst_local_bloom_checks);
	forst_stats_publish_count(FS_BLOOM_NEGATIVES, forst_local_bloom_negatives);
	forst_stats_publish_count(FS_BLOOM_FALSE_POSITIVES, forst_local_bloom_false_positives);
}

/* Column order of forst.stats (forst--1.0.sql): counters, then these. */
#define STATS_EXTRA_COLUMNS 13

Datum
forst_stats_fn(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum	   *values;
	bool	   *nulls;
	FstDiskCache *dc;
	FstDiskCacheStats ds;
	int			n = 0;
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != FS_NUM_STATS + STATS_EXTRA_COLUMNS)
		elog(ERROR, "forst.stats has %d columns, the module %d: reinstall the extension",
			 tupdesc->natts, FS_NUM_STATS + STATS_EXTRA_COLUMNS);
	if (!forst_stats_loaded())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst is not loaded through shared_preload_libraries")));
	forst_stats_publish();

	values = palloc0(sizeof(Datum) * tupdesc->natts);
	nulls = palloc0(sizeof(bool) * tupdesc->natts);
	for (i = 0; i < FS_NUM_STATS; i++)
	{
		uint64		v = forst_stats_get((ForstStat) i);

		if (i == FS_WRITE_STALL_US || i == FS_STORE_REQUEST_US)
			values[n++] = Float8GetDatum((double) v / 1000.0);
		else
			values[n++] = Int64GetDatum((int64) v);
	}

	dc = forst_disk_cache();
	if (dc != NULL)
	{
		fst_diskcache_stats(dc, &ds);
		values[n++] = Int64GetDatum((int64) ds.hits);
		values[n++] = Int64GetDatum((int64) ds.misses);
		values[n++] = Int64GetDatum((int64) ds.evictions);
		values[n++] = Int64GetDatum((int64) ds.entries);
		values[n++] = Int64GetDatum((int64) ds.bytes_used);
		values[n++] = Int64GetDatum((int64) ds.capacity);
		values[n++] = Int64GetDatum((int64) ds.bytes_admitted);
		values[n++] = Int64GetDatum((int64) ds.bytes_read_from_cache);
		values[n++] = Int64GetDatum((int64) ds.bytes_fetched);
		values[n++] = Int64GetDatum((int64) ds.corrupt_entries);
		values[n++] = Int64GetDatum((int64) ds.not_admitted);
		values[n++] = BoolGetDatum(ds.ready);
	}
	else
	{
		for (i = 0; i < STATS_EXTRA_COLUMNS - 1; i++)
			nulls[n++] = true;
	}
	values[n++] = TimestampTzGetDatum(forst_stats_reset_time());
	Assert(n == tupdesc->natts);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
forst_stats_reset_fn(PG_FUNCTION_ARGS)
{
	FstDiskCache *dc;

	forst_require_superuser("forst.stats_reset", "reset forst's counters");
	if (!forst_stats_loaded())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst is not loaded through shared_preload_libraries")));
	/* this process's own unpublished counts belong before the reset */
	forst_stats_publish();
	forst_stats_zero();
	dc = forst_disk_cache();
	if (dc != NULL)
		fst_diskcache_reset_counters(dc);
	PG_RETURN_VOID();
}
