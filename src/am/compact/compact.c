/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  Leveled compaction of a forst table's SST files, run by the
 *	  compaction workers (forst.compaction_workers; with 0, by the flush
 *	  worker between flushes).
 *
 * The engine picks the files (compaction_pick.c) and runs the job
 * (compaction.c: fst_compaction_job_run merges them, collecting garbage);
 * this file supplies what only PostgreSQL knows, as callbacks: which
 * versions no snapshot can need any more.  Walking a key's versions newest
 * first, the first one whose transaction committed before every running
 * snapshot's xmin (or that is frozen) is what every present and future
 * snapshot sees of the key: it is kept, frozen (a tombstone is dropped at
 * the bottom level) and everything older is dropped.  Versions of aborted
 * transactions are dropped; versions of running ones are kept.
 *
 * Freezing (zero xid and command id, the frozen flag) is what lets VACUUM
 * advance relfrozenxid (tableam/vacuum.c): a frozen version needs no clog
 * and means the same after any number of xid wraparounds.  VACUUM passes
 * a freeze limit; files holding unfrozen xids older than it are then
 * rewritten even when no compaction is due (compaction_pick.h).
 *
 * Expiry (expiry/expiry.h), with the cutoff at the compaction's start: that
 * all-visible version, if it is an expired row, is dropped at the bottom
 * level and replaced by a tombstone above it (older versions below stay
 * hidden).  Before picking a merge, files whose rows are all expired are
 * dropped whole, without being read: those with a TTL range wholly below
 * the cutoff, no tombstones, and either a key column as TTL column (every
 * version of a key has the same TTL value, so nothing older can reappear)
 * or no files in deeper levels (nothing older exists).  Outputs record the
 * TTL range of their rows.  What expiry removed is counted in the table's
 * shared state (forst.tables).
 *
 * Output files get ids from the table's shared counter, and the edit
 * (inputs out, outputs in) is applied under the table's manifest lock to
 * the version current at the end, which flushes may have given new level-0
 * files meanwhile; one worker at a time compacts a table, so the inputs
 * are all still there.  forst.compaction_rate_limit caps the bytes written
 * per second.
 *
 * The new files and the next manifest version are uploaded before the
 * table's shared state switches to it.  The input files stay in the object
 * store: readers holding an older view (and TIDs into those files) may
 * still read them; deleting files that nothing references any more is
 * garbage collection's job (checkpoint/gc.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "lsm/compaction.h"
#include "lsm/compaction_pick.h"
#include "am/forst.h"
#include "am/objects/disk_cache.h"
#include "am/checkpoint/checkpoint.h"
#include "am/expiry/expiry.h"
#include "am/compact/compact.h"
#include "am/base/stats.h"
#include "am/objects/store.h"
#include "am/wal/unlogged.h"
#include "am/wal/wal.h"
#include "am/read/mvcc.h"
#include "am/keys/index_entry.h"
#include "am/keys/tid.h"
#include "am/objects/spool.h"
#include "am/read/sst_readers.h"
#include "am/read/shared_blocks.h"
#include "am/read/shared_meta.h"
#include "lsm/merge_iter.h"

/*
 * The compaction job's MVCC rules (fst_compaction_job_run): the clog, the
 * oldest snapshot's horizon and the expiry rule.
 */
typedef struct MvccCtx
{
	TransactionId horizon;		/* committed before this: seen by all */
	ForstExpiry expiry;
} MvccCtx;

static FstXidState
compact_xid_state(void *arg, uint32 xid)
{
	if (forst_xid_committed(xid))
		return FST_XID_COMMITTED;
	if (TransactionIdIsInProgress(xid))
		return FST_XID_RUNNING;
	if (forst_xid_committed(xid))
		return FST_XID_RUNNING; /* committed just now: next time */
	return FST_XID_ABORTED;
}

static bool
compact_before_horizon(void *arg, uint32 xid)
{
	MvccCtx    *mc = arg;

	return TransactionIdPrecedes(xid, mc->horizon);
}

static bool
compact_expired(void *arg, FstSlice payload)
{
	MvccCtx    *mc = arg;

	return forst_row_expired(&mc->expiry, payload);
}

/* The TTL column of an output row, for its file's TTL range. */
static bool
compact_ttl_of(void *arg, FstSlice payload, int64 *ttl)
{
	MvccCtx    *mc = arg;

	return forst_expiry_value(&mc->expiry, payload, ttl);
}

/*
 * Adds to edit the removal of every file that holds only expired rows and
 * may go without being read (see the header); returns how many, and their
 * bytes and entries in *bytes and *rows.
 */
static int
expired_files(const FstManifest *m, const ForstExpiry *x, FstManifestEdit *edit,
			  uint64 *bytes, uint64 *rows)
{
	int			n = 0;
	FstError	err;
	FstCode		rc;

	*bytes = *rows = 0;
	if (!x->active)
		return 0;
	rc = fst_compaction_expired_files(m, x->cutoff, x->is_key, edit, &n,
									  bytes, rows, &err);
	if (rc != FST_OK)
		forst_report(rc, &err, "building an expiry edit");
	return n;
}

typedef struct OutputCtx
{
	RelFileNode rnode;
	ForstTableShared *ts;		/* file ids come from its counter */
	ForstSpool	spool;			/* the output being built */
	TimestampTz started;		/* for forst.compaction_rate_limit */
	uint64		written;		/* bytes uploaded so far */
	bool		progress;		/* VACUUM FULL's: heap_blks_scanned */
} OutputCtx;

/*
 * forst.compaction_rate_limit: after each uploaded file, sleeps until the
 * bytes written so far fit the rate (a file is the unit, so the rate holds
 * on average over files, not within one).
 */
static FstCode
compaction_throttle(OutputCtx *o, FstError *err)
{
	long		secs;
	int			usecs;
	double		elapsed;
	double		due;

	if (forst_compaction_rate_limit_kb <= 0)
		return FST_OK;
	TimestampDifference(o->started, GetCurrentTimestamp(), &secs, &usecs);
	elapsed = secs + usecs / 1e6;
	due = (double) o->written / ((double) forst_compaction_rate_limit_kb * 1024.0);
	while (due > elapsed)
	{
		long		ms = (long) Min((due - elapsed) * 1000.0 + 1, 1000.0);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		/* raised by the caller once the engine has returned, not through it */
		if (INTERRUPTS_PENDING_CONDITION())
			return fst_error(err, FST_INTERRUPTED, "interrupted");
		TimestampDifference(o->started, GetCurrentTimestamp(), &secs, &usecs);
		elapsed = secs + usecs / 1e6;
	}
	return FST_OK;
}

static FstCode
out_open(void *arg, uint64 *file_id, FstWriteSink **sink, FstError *err)
{
	OutputCtx  *o = arg;

	/* ids of objects left by failed attempts (or another writer) are skipped */
	for (;;)
	{
		char		key[FORST_KEY_LEN];
		FstObjInfo	info;
		FstCode		rc;

		*file_id = forst_table_new_file_id(o->ts);
		forst_sst_object_key(&o->rnode, *file_id, key, sizeof(key));
		rc = fst_objstore_head(forst_objstore(), key, &info, err);
		if (rc == FST_NOT_FOUND)
			break;
		if (rc != FST_OK)
			return rc;
	}
	forst_spool_reset(&o->spool);
	*sink = &o->spool.sink;
	return FST_OK;
}

static FstCode
out_finish(void *arg, uint64 file_id, const FstSstProps *props, FstError *err)
{
	OutputCtx  *o = arg;
	char		key[FORST_KEY_LEN];
	const FstPutSource *src;
	FstCode		rc;

	rc = forst_spool_source(&o->spool, &src, err);
	if (rc != FST_OK)
		return rc;
	forst_sst_object_key(&o->rnode, file_id, key, sizeof(key));
	/* never replaces an object: taken since out_open, the compaction fails */
	rc = fst_objstore_put_if_absent_source(forst_objstore(), key, src, err);
	if (rc == FST_OK)
	{
		forst_cache_admit_source(key, src);
		forst_stats_add(FS_COMPACTION_BYTES_WRITTEN, src->len);
		o->written += src->len;
		if (o->progress)
			pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_BLKS_SCANNED,
										 (int64) (o->written / BLCKSZ));
		rc = compaction_throttle(o, err);
	}
	return rc;
}

/*
 * Applies edit (freed here) to the table's current manifest version, under
 * its manifest lock (flushes may have added level-0 files since the
 * compaction read its version; only one worker compacts a table, so every
 * file the edit removes is still there), uploads the result as the next
 * version, switches the table's readers to it and tells a standby.
 */
static void
publish(ForstTableShared *ts, FstManifestEdit *edit, bool new_rows)
{
	RelFileNode rnode = ts->rnode;
	const FstManifest *m;
	FstManifest empty;
	FstManifest next;
	FstError	err;
	FstCode		rc;
	uint64		cur_version;
	uint64		new_version;

	LWLockAcquire(&ts->manifest_lock, LW_EXCLUSIVE);
	cur_version = ts->manifest_version;
	/* a table that has none yet: VACUUM FULL's new one */
	forst_manifest_init_new(&empty, &rnode);
	m = cur_version > 0 ? forst_manifest_at(&rnode, cur_version) : &empty;
	edit->has_next_file_id = true;
	edit->next_file_id = Max(m->next_file_id, pg_atomic_read_u64(&ts->next_file_id));
	rc = fst_manifest_apply(m, edit, &next, &err);
	fst_manifest_edit_free(edit);
	fst_manifest_free(&empty);
	if (rc != FST_OK)
		forst_report(rc, &err, "applying a compaction edit");
	next.version = cur_version + 1;
	forst_manifest_publish(&rnode, &next);
	new_version = next.version;
	fst_manifest_free(&next);

	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	if (!ts->drop_pending)
		ts->manifest_version = new_version;
	LWLockRelease(&ts->lock);
	/* a standby follows (no memtable changed: nothing newly covered) */
	if (new_rows)
		forst_wal_log_manifest_rows(&rnode, new_version, InvalidXLogRecPtr);
	else
		forst_wal_log_manifest(&rnode, new_version, InvalidXLogRecPtr);
	LWLockRelease(&ts->manifest_lock);
}

/* The job's reader of an input file (opened and cached by read/sst_readers.c). */
static FstCode
compact_reader(void *arg, const FstFileMeta *f, FstSstReader **r, FstError *err)
{
	*r = forst_sst_reader((const RelFileNode *) arg, f);
	return FST_OK;
}

/*
 * Sets job up for pick: the MVCC and expiry rules (mc, filled here, must
 * live as long as the job), outputs written as files of out_ts (out,
 * filled here), inputs read as files of in_rnode.
 */
static void
job_prepare(FstCompactionJob *job, const FstCompactionPick *pick,
			MvccCtx *mc, const ForstExpiry *expiry, OutputCtx *out,
			ForstTableShared *out_ts, RelFileNode *in_rnode)
{
	fst_compaction_job_init(job, pick);
	memset(out, 0, sizeof(*out));
	out->rnode = out_ts->rnode;
	out->ts = out_ts;
	out->started = GetCurrentTimestamp();
	if (!pick->trivial_move)
		forst_spool_begin(&out->spool);

	mc->horizon = GetOldestNonRemovableTransactionId(NULL);
	mc->expiry = *expiry;
	job->mvcc.xid_state = compact_xid_state;
	job->mvcc.before_horizon = compact_before_horizon;
	job->mvcc.expired = expiry->active ? compact_expired : NULL;
	job->mvcc.ttl_of = expiry->attnum > 0 ? compact_ttl_of : NULL;
	job->mvcc.arg = mc;
	job->reader = compact_reader;
	job->reader_arg = in_rnode;
	job->params.sst.block_size = forst_block_size_for_level(pick->output_level);
	job->params.sst.restart_interval = forst_block_restart_interval;
	job->params.sst.compression = forst_compression_for_level(pick->output_level);
	forst_index_prefix_options(&job->params.sst);
	job->params.target_file_size = (uint64) forst_target_file_size_kb * 1024;
	/* compressible rows: every block of an output must have TIDs */
	job->params.max_file_blocks = FORST_SST_MAX_BLOCKS;
	job->params.output.open_output = out_open;
	job->params.output.finish_output = out_finish;
	job->params.output.arg = out;
}

bool
forst_compact_one(ForstTableShared *ts, TransactionId freeze_xid)
{
	RelFileNode rnode = ts->rnode;
	uint64		base_version;
	const FstManifest *m;
	const FstFileMeta **arrays[FST_NUM_LEVELS];
	FstLevels	levels;
	FstCompactionPickOptions po;
	FstCompactionPick pick;
	FstManifestEdit edit;
	FstCompactionJob job;
	MvccCtx		mc;
	ForstExpiry expiry;
	int			ndropped;
	uint64		dropped_bytes,
				dropped_rows;
	uint64		dctx_rows = 0,
				dctx_bytes = 0;
	OutputCtx	out;
	FstError	err;
	FstCode		rc;
	bool		picked;
	uint64	   *gone = NULL;	/* inputs' block cache ids */
	int			ngone = 0;
	int			l,
				i,
				s;

	/*
	 * After an unclean stop, a database whose unlogged tables have not yet
	 * returned to their checkpoint waits: their files written since would
	 * be compacted for nothing (checkpoint/crash_restore.h).
	 */
	if (forst_unlogged_restore_pending() &&
		!forst_unlogged_db_restored(rnode.dbNode))
		return false;

	LWLockAcquire(&ts->lock, LW_SHARED);
	base_version = ts->manifest_version;
	LWLockRelease(&ts->lock);
	if (base_version == 0 || ts->drop_pending)
		return false;
	m = forst_manifest_at(&rnode, base_version);

	memset(&levels, 0, sizeof(levels));
	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		arrays[l] = palloc(sizeof(FstFileMeta *) * Max(m->levels[l].nfiles, 1));
		for (i = 0; i < m->levels[l].nfiles; i++)
			arrays[l][i] = &m->levels[l].files[i].meta;
		levels.files[l] = arrays[l];
		levels.nfiles[l] = m->levels[l].nfiles;
	}
	/* the expiry rule, unless a checkpoint is taking its cut (see there) */
	if (!forst_checkpoint_gate_enter())
		return false;
	(void) forst_expiry_shared_rule(ts, GetCurrentTimestamp(), &expiry);
	forst_checkpoint_gate_leave();

	/* wholly expired files go first, without being read */
	fst_manifest_edit_init(&edit);
	ndropped = expired_files(m, &expiry, &edit, &dropped_bytes, &dropped_rows);
	if (ndropped > 0)
	{
		elog(DEBUG1, "forst: dropping %d expired files of %u/%u (" UINT64_FORMAT " bytes)",
			 ndropped, rnode.dbNode, rnode.relNode, dropped_bytes);
		publish(ts, &edit, false);
		pg_atomic_fetch_add_u64(&ts->expiry.reclaimed_bytes, dropped_bytes);
		pg_atomic_fetch_add_u64(&ts->expiry.reclaimed_rows, dropped_rows);
		pg_atomic_fetch_add_u64(&ts->expiry.dropped_files, ndropped);
		return true;
	}
	fst_manifest_edit_free(&edit);

	fst_compaction_pick_options_default(&po);
	po.level1_target_bytes = (uint64) 64 * 1024 * 1024;
	po.freeze_xid = freeze_xid;
	rc = fst_compaction_pick(&levels, &po, &pick, &picked, &err);
	if (rc != FST_OK)
		forst_report(rc, &err, "picking a compaction");
	elog(DEBUG1, "forst: compaction of %u/%u at version " UINT64_FORMAT ": %s (L0 files %d)",
		 rnode.dbNode, rnode.relNode, base_version,
		 picked ? "picked" : "nothing due", m->levels[0].nfiles);
	if (!picked)
		return false;

	fst_manifest_edit_init(&edit);
	job_prepare(&job, &pick, &mc, &expiry, &out, ts, &rnode);
	rc = fst_compaction_job_run(&job, &edit, &err);
	dctx_rows = job.expired_rows;
	dctx_bytes = job.expired_bytes;
	if (!pick.trivial_move)
	{
		forst_spool_end(&out.spool);
		gone = palloc(sizeof(uint64) * Max(pick.ninputs[0] + pick.ninputs[1], 1));
		/* the inputs are read for the last time here */
		for (s = 0; s < 2; s++)
			for (i = 0; i < pick.ninputs[s]; i++)
			{
				const FstFileMeta *f = pick.inputs[s][i];

				/* (a borrowed file's id is not its own: leave those) */
				if (forst_mfile(f)->owner == NULL)
					gone[ngone++] = forst_sst_cache_id(&rnode, f);
				forst_sst_reader_forget(&rnode, f->file_id);
			}
	}
	fst_compaction_job_free(&job);
	if (rc != FST_OK)
	{
		bool		spooled = !pick.trivial_move;

		fst_compaction_pick_free(&pick);
		fst_manifest_edit_free(&edit);
		/* a temporary file's own error as it was (temp_file_limit, say) */
		if (spooled)
			forst_spool_raise_error(&out.spool);
		CHECK_FOR_INTERRUPTS();
		forst_report(rc, &err, "compacting SST files");
	}
	fst_compaction_pick_free(&pick);
	publish(ts, &edit, false);
	/* queries read the outputs now: the inputs' blocks are dead weight */
	if (ngone > 0)
	{
		forst_blockshare_forget_files(gone, ngone);
		forst_sharedmeta_forget_files(gone, ngone);
	}
	if (dctx_rows > 0)
	{
		pg_atomic_fetch_add_u64(&ts->expiry.reclaimed_bytes, dctx_bytes);
		pg_atomic_fetch_add_u64(&ts->expiry.reclaimed_rows, dctx_rows);
	}
	return true;
}

/*
 * VACUUM FULL's rewrite (tableam/rewrite.c): every file of table "from",
 * merged as one compaction into new files of table "to", whose manifest
 * gets them at the level whose target holds them all.  The same MVCC and
 * expiry rules as any compaction: the versions some snapshot may still
 * see are kept with their xids and sequences, the rest (older versions,
 * tombstones, expired rows) is dropped, as at the bottom level.  The
 * caller has flushed from's memtables, holds from's compaction (no worker
 * changes its files meanwhile) and from's table in AccessExclusiveLock;
 * "to" is new and empty.  from's files stay as they are.
 */
void
forst_compact_into(ForstTableShared *from, ForstTableShared *to,
				   ForstCompactIntoResult *res)
{
	RelFileNode from_rnode = from->rnode;
	uint64		version;
	const FstManifest *m;
	FstCompactionPickOptions po;
	FstCompactionPick pick;
	FstManifestEdit edit;
	FstCompactionJob job;
	MvccCtx		mc;
	ForstExpiry expiry;
	OutputCtx	out;
	FstError	err;
	FstCode		rc;
	uint64		bytes = 0;
	uint64		max_seq = 0;
	int			total = 0;
	int			n = 0;

	memset(res, 0, sizeof(*res));
	LWLockAcquire(&from->lock, LW_SHARED);
	version = from->manifest_version;
	LWLockRelease(&from->lock);
	if (version == 0)
		return;
	m = forst_manifest_at(&from_rnode, version);
	for (int l = 0; l < FST_NUM_LEVELS; l++)
		total += m->levels[l].nfiles;
	if (total == 0)
		return;

	memset(&pick, 0, sizeof(pick));
	pick.inputs[0] = fst_malloc(sizeof(FstFileMeta *) * total);
	pick.input_index[0] = fst_malloc(sizeof(int) * total);
	if (pick.inputs[0] == NULL || pick.input_index[0] == NULL)
	{
		fst_compaction_pick_free(&pick);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	}
	for (int l = 0; l < FST_NUM_LEVELS; l++)
		for (int i = 0; i < m->levels[l].nfiles; i++)
		{
			const FstFileMeta *f = &m->levels[l].files[i].meta;

			pick.inputs[0][n] = f;
			pick.input_index[0][n] = n;
			n++;
			bytes += f->size;
			max_seq = Max(max_seq, f->seq_max);
		}
	/* as level 0: every file its own sorted run, merged */
	pick.level = 0;
	pick.ninputs[0] = total;
	pick.bottom_level = true;
	fst_compaction_pick_options_default(&po);
	po.level1_target_bytes = (uint64) 64 * 1024 * 1024;
	pick.output_level = 1;
	while (pick.output_level < FST_NUM_LEVELS - 1 &&
		   fst_level_target_bytes(&po, pick.output_level) < bytes)
		pick.output_level++;

	/* the expiry rule, once no checkpoint is taking its cut (see there) */
	while (!forst_checkpoint_gate_enter())
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	(void) forst_expiry_shared_rule(from, GetCurrentTimestamp(), &expiry);
	forst_checkpoint_gate_leave();

	fst_manifest_edit_init(&edit);
	job_prepare(&job, &pick, &mc, &expiry, &out, to, &from_rnode);
	out.progress = true;
	pgstat_progress_update_param(PROGRESS_CLUSTER_TOTAL_HEAP_BLKS,
								 (int64) (bytes / BLCKSZ));
	rc = fst_compaction_job_run(&job, &edit, &err);
	forst_spool_end(&out.spool);
	res->files_in = total;
	res->files_out = job.result.nfiles;
	res->output_level = pick.output_level;
	res->stats = job.result.stats;
	for (int i = 0; i < job.result.nfiles; i++)
		if (job.result.files[i].xid_min != 0)
			fst_xid_range_note(&res->xid_min, &res->xid_max,
							   job.result.files[i].xid_min);
	fst_compaction_job_free(&job);
	fst_compaction_pick_free(&pick);
	if (rc != FST_OK)
	{
		fst_manifest_edit_free(&edit);
		forst_spool_raise_error(&out.spool);
		CHECK_FOR_INTERRUPTS();
		forst_report(rc, &err, "rewriting SST files");
	}

	/* from's files are from's: "to" only gains the outputs */
	fst_manifest_edit_drop_removals(&edit);
	edit.has_last_seq = true;
	edit.last_seq = max_seq;
	publish(to, &edit, true);
}
