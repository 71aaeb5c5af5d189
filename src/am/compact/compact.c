/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  Leveled compaction of a forst table's SST files, run by the
 *	  compaction workers (forst.compaction_workers; with 0, by the flush
 *	  worker between flushes).
 *
 * The engine picks the files (compaction_pick.c) and merges them
 * (compaction.c); this file supplies what only PostgreSQL knows: which
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
 * still read them; deleting unreferenced files is garbage collection's job
 * (not built yet).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "miscadmin.h"
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
#include "am/flush/flush.h"
#include "am/base/stats.h"
#include "am/objects/store.h"
#include "am/wal/wal.h"
#include "am/read/mvcc.h"
#include "am/keys/tid.h"
#include "am/read/sst_readers.h"
#include "lsm/merge_iter.h"

typedef struct DropCtx
{
	TransactionId horizon;		/* committed before this: seen by all */
	bool		bottom;
	bool		settled;		/* the key's all-visible version was seen */
	ForstExpiry expiry;
	uint64		expired_rows;
	uint64		expired_bytes;
	uint32		pending_lo;		/* xids of entries kept uncommitted */
	uint32		pending_hi;
} DropCtx;

static FstDropDecision mvcc_decide(DropCtx *ctx, const FstEntry *e,
								   bool newest_of_key);

/*
 * The drop policy's hook: mvcc_decide's answer, noting the xids of the
 * entries it keeps without the committed flag (the outputs' pending xid
 * range, which checkpoints resolve).
 */
static FstDropDecision
mvcc_drop(void *arg, const FstEntry *e, bool newest_of_key)
{
	DropCtx    *ctx = arg;
	FstDropDecision d = mvcc_decide(ctx, e, newest_of_key);

	if (d == FST_DROP_KEEP &&
		!(e->hdr.flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)))
		fst_xid_range_note(&ctx->pending_lo, &ctx->pending_hi, e->hdr.xid);
	return d;
}

static FstDropDecision
mvcc_decide(DropCtx *ctx, const FstEntry *e, bool newest_of_key)
{
	bool		all_visible;

	if (newest_of_key)
		ctx->settled = false;
	if (ctx->settled)
		return FST_DROP_DROP;	/* shadowed for every snapshot */
	if (e->hdr.flags & FST_ENTRY_FROZEN)
		all_visible = true;
	else if ((e->hdr.flags & FST_ENTRY_COMMITTED) || forst_xid_committed(e->hdr.xid))
		all_visible = TransactionIdPrecedes(e->hdr.xid, ctx->horizon);
	else if (TransactionIdIsInProgress(e->hdr.xid))
		return FST_DROP_KEEP;
	else if (forst_xid_committed(e->hdr.xid))
		return FST_DROP_KEEP;	/* committed just now: next time */
	else
		return FST_DROP_DROP;	/* aborted */
	if (!all_visible)
		return FST_DROP_KEEP;
	ctx->settled = true;
	if (e->hdr.flags & FST_ENTRY_TOMBSTONE)
		return ctx->bottom ? FST_DROP_DROP : FST_DROP_FREEZE;
	if (ctx->expiry.active && forst_row_expired(&ctx->expiry, e->payload))
	{
		ctx->expired_rows++;
		ctx->expired_bytes += e->user_part.len + FST_SEQ_BYTES +
			FST_ENTRY_HEADER_SIZE + e->payload.len;
		return ctx->bottom ? FST_DROP_DROP : FST_DROP_TOMBSTONE;
	}
	return FST_DROP_FREEZE;
}

/* The TTL column of an output row, for its file's TTL range. */
static bool
compact_ttl_of(void *arg, FstSlice payload, int64 *ttl)
{
	if (!forst_expiry_value((const ForstExpiry *) arg, payload, ttl))
		*ttl = PG_INT64_MAX;	/* NULL: never expires */
	return true;
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
	int			deepest = -1;
	int			n = 0;
	int			l,
				i;
	FstError	err;

	*bytes = *rows = 0;
	if (!x->active)
		return 0;
	for (l = 0; l < FST_NUM_LEVELS; l++)
		if (m->levels[l].nfiles > 0)
			deepest = l;
	for (l = 0; l < FST_NUM_LEVELS; l++)
	{
		if (!x->is_key && (l == 0 || l != deepest))
			continue;
		for (i = 0; i < m->levels[l].nfiles; i++)
		{
			const FstManifestFile *mf = &m->levels[l].files[i];
			const FstFileMeta *f = &mf->meta;
			FstCode		rc;

			if (!f->has_ttl || f->ttl_max >= x->cutoff || f->num_tombstones > 0)
				continue;
			rc = fst_manifest_edit_remove(edit, l, f->file_id, mf->owner, &err);
			if (rc != FST_OK)
				forst_report(rc, &err, "building an expiry edit");
			*bytes += f->size;
			*rows += f->num_entries;
			n++;
		}
	}
	return n;
}

typedef struct OutputCtx
{
	RelFileNode rnode;
	ForstTableShared *ts;		/* file ids come from its counter */
	FstBuf		buf;
	FstBufSink	sink;
	TimestampTz started;		/* for forst.compaction_rate_limit */
	uint64		written;		/* bytes uploaded so far */
} OutputCtx;

/*
 * forst.compaction_rate_limit: after each uploaded file, sleeps until the
 * bytes written so far fit the rate (a file is the unit, so the rate holds
 * on average over files, not within one).
 */
static void
compaction_throttle(OutputCtx *o)
{
	long		secs;
	int			usecs;
	double		elapsed;
	double		due;

	if (forst_compaction_rate_limit_kb <= 0)
		return;
	TimestampDifference(o->started, GetCurrentTimestamp(), &secs, &usecs);
	elapsed = secs + usecs / 1e6;
	due = (double) o->written / ((double) forst_compaction_rate_limit_kb * 1024.0);
	while (due > elapsed)
	{
		long		ms = (long) Min((due - elapsed) * 1000.0 + 1, 1000.0);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		TimestampDifference(o->started, GetCurrentTimestamp(), &secs, &usecs);
		elapsed = secs + usecs / 1e6;
	}
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
	fst_buf_reset(&o->buf);
	fst_buf_sink_init(&o->sink, &o->buf);
	*sink = &o->sink.base;
	return FST_OK;
}

static FstCode
out_finish(void *arg, uint64 file_id, const FstSstProps *props, FstError *err)
{
	OutputCtx  *o = arg;
	char		key[FORST_KEY_LEN];
	FstCode		rc;

	if (o->buf.oom)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	forst_sst_object_key(&o->rnode, file_id, key, sizeof(key));
	/* never replaces an object: taken since out_open, the compaction fails */
	rc = fst_objstore_put_if_absent(forst_objstore(), key, o->buf.data, o->buf.len, err);
	if (rc == FST_OK)
	{
		forst_cache_admit(key, o->buf.data, o->buf.len);
		forst_stats_add(FS_COMPACTION_BYTES_WRITTEN, o->buf.len);
		o->written += o->buf.len;
		compaction_throttle(o);
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
publish(ForstTableShared *ts, FstManifestEdit *edit)
{
	RelFileNode rnode = ts->rnode;
	const FstManifest *m;
	FstManifest next;
	FstError	err;
	FstCode		rc;
	uint64		cur_version;
	uint64		new_version;

	LWLockAcquire(&ts->manifest_lock, LW_EXCLUSIVE);
	cur_version = ts->manifest_version;
	m = forst_manifest_at(&rnode, cur_version);
	edit->has_next_file_id = true;
	edit->next_file_id = Max(m->next_file_id, pg_atomic_read_u64(&ts->next_file_id));
	rc = fst_manifest_apply(m, edit, &next, &err);
	fst_manifest_edit_free(edit);
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
	forst_wal_log_manifest(&rnode, new_version, InvalidXLogRecPtr);
	LWLockRelease(&ts->manifest_lock);
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
	FstCompactionResult result;
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
	int			l,
				i,
				s;

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
		publish(ts, &edit);
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
	fst_compaction_result_init(&result);
	memset(&out, 0, sizeof(out));
	out.rnode = rnode;
	out.ts = ts;
	out.started = GetCurrentTimestamp();
	fst_buf_init(&out.buf);
	for (s = 0; s < 2; s++)
		for (i = 0; i < pick.ninputs[s]; i++)
		{
			rc = fst_manifest_edit_remove(&edit, s == 0 ? pick.level : pick.output_level,
										  pick.inputs[s][i]->file_id,
										  forst_mfile(pick.inputs[s][i])->owner, &err);
			if (rc != FST_OK)
				forst_report(rc, &err, "building a compaction edit");
		}

	if (pick.trivial_move)
	{
		FstFileMeta moved;

		if (!fst_filemeta_copy(&moved, pick.inputs[0][0]))
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		moved.level = pick.output_level;
		/* a borrowed file stays borrowed (and keeps its visibility rule) */
		rc = fst_manifest_edit_add(&edit, pick.output_level, &moved,
								   forst_mfile(pick.inputs[0][0])->owner, &err);
		fst_filemeta_clear(&moved);
		if (rc != FST_OK)
			forst_report(rc, &err, "building a compaction edit");
	}
	else
	{
		FstIter   **children;
		FstIter    *merged;
		FstCompactionParams params;
		DropCtx		dctx;
		int			n = 0;

		children = palloc(sizeof(FstIter *) * (pick.ninputs[0] + pick.ninputs[1]));
		for (s = 0; s < 2; s++)
			for (i = 0; i < pick.ninputs[s]; i++)
				(void) forst_sst_reader(&rnode, pick.inputs[s][i]);
		for (s = 0; s < 2; s++)
			for (i = 0; i < pick.ninputs[s]; i++)
				children[n++] = fst_sst_iter_create(forst_sst_reader(&rnode, pick.inputs[s][i]));
		merged = fst_merge_iter_create(children, n);
		if (merged == NULL)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));

		dctx.horizon = GetOldestNonRemovableTransactionId(NULL);
		dctx.bottom = pick.bottom_level;
		dctx.settled = false;
		dctx.expiry = expiry;
		dctx.expired_rows = dctx.expired_bytes = 0;
		dctx.pending_lo = dctx.pending_hi = 0;
		memset(&params, 0, sizeof(params));
		fst_drop_policy_init(&params.policy, 0, pick.bottom_level);
		params.policy.custom = mvcc_drop;
		params.policy.custom_arg = &dctx;
		if (expiry.attnum > 0)
		{
			params.policy.ttl_of = compact_ttl_of;
			params.policy.ttl_arg = &dctx.expiry;
		}
		fst_sst_options_default(&params.sst);
		params.sst.block_size = forst_block_size_for_level(pick.output_level);
		params.sst.compression = forst_compression_for_level(pick.output_level);
		params.target_file_size = (uint64) forst_target_file_size_kb * 1024;
		/* compressible rows: every block of an output must have TIDs */
		params.max_file_blocks = FORST_SST_MAX_BLOCKS;
		params.output_level = pick.output_level;
		params.output.open_output = out_open;
		params.output.finish_output = out_finish;
		params.output.arg = &out;
		rc = fst_compaction_run(merged, &params, &result, &err);
		dctx_rows = dctx.expired_rows;
		dctx_bytes = dctx.expired_bytes;
		fst_iter_destroy(merged);
		fst_buf_free(&out.buf);
		/* the inputs are read for the last time here */
		for (s = 0; s < 2; s++)
			for (i = 0; i < pick.ninputs[s]; i++)
				forst_sst_reader_forget(&rnode, pick.inputs[s][i]->file_id);
		if (rc != FST_OK)
			forst_report(rc, &err, "compacting SST files");
		for (i = 0; i < result.nfiles; i++)
		{
			/* the range over all outputs: wider than some need, never narrower */
			result.files[i].pending_xid_min = dctx.pending_lo;
			result.files[i].pending_xid_max = dctx.pending_hi;
			rc = fst_manifest_edit_add(&edit, pick.output_level, &result.files[i], NULL, &err);
			if (rc != FST_OK)
				forst_report(rc, &err, "building a compaction edit");
		}
	}

	fst_compaction_result_free(&result);
	fst_compaction_pick_free(&pick);
	publish(ts, &edit);
	if (dctx_rows > 0)
	{
		pg_atomic_fetch_add_u64(&ts->expiry.reclaimed_bytes, dctx_bytes);
		pg_atomic_fetch_add_u64(&ts->expiry.reclaimed_rows, dctx_rows);
	}
	return true;
}
