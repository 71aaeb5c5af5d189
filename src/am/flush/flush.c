/*-------------------------------------------------------------------------
 *
 * flush.c
 *	  Writing a table's oldest immutable memtable to an SST file.
 *
 * Every entry of the memtable whose transaction did not abort goes into
 * the SST: those whose transaction committed are marked committed, so that
 * readers need no clog lookup for them (they still check the snapshot);
 * entries of transactions still running keep their plain header, and
 * readers look up their fate like that of a memtable entry.  (Carrying
 * running transactions' entries over into the next memtable instead would
 * deadlock a bounded memtable pool as soon as one transaction writes more
 * than the pool holds, so they are flushed too.)
 * Aborted entries are dropped.  Entries of transactions that committed
 * before every running snapshot's xmin are frozen (compact/compact.c).
 *
 * When the table's expiry settings are known (expiry/expiry.h), the SST's
 * properties record the range of its rows' TTL column (a NULL counts as
 * never expiring), so that compaction can later drop a wholly expired file
 * without reading it.
 *
 * The SST is built through a bounded buffer into a temporary file
 * (objects/spool.h), as compactions build theirs, and uploaded from it
 * under a file id no object has (an SST left by an
 * earlier failed attempt, or another writer's, is never replaced), then
 * the next manifest version (previous
 * files + the new one at level 0) create-if-absent, then, under the
 * table's lock, the shared state switches to the new manifest and forgets
 * the memtable.  Until that switch readers see the memtable, after it the
 * SST; versions that are briefly in both are the same versions (same
 * sequence number), which readers take once.
 *
 * The memtable's slab is not reused until every transaction that was
 * running at the switch has ended, because such a transaction may hold
 * TIDs that point into it (flush/flush_worker.c waits for them).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/objects/disk_cache.h"
#include "am/expiry/expiry.h"
#include "am/keys/index_entry.h"
#include "am/flush/flush.h"
#include "am/objects/spool.h"
#include "lsm/flush_build.h"
#include "am/base/stats.h"
#include "am/objects/store.h"
#include "am/wal/wal.h"
#include "am/read/mvcc.h"


/* flush_write_sst's callbacks: the clog, the snapshots, the expiry rule */
typedef struct FlushRules
{
	TransactionId horizon;		/* committed before it: frozen */
	const ForstExpiry *expiry;
} FlushRules;

static FstFlushFate
flush_fate(void *arg, uint32 xid)
{
	if (forst_xid_committed(xid))
		return FST_FLUSH_COMMITTED;
	if (TransactionIdIsInProgress(xid))
		return FST_FLUSH_PENDING;	/* running: unmarked */
	if (forst_xid_committed(xid))
		return FST_FLUSH_COMMITTED; /* committed meanwhile */
	return FST_FLUSH_DROP;		/* aborted, or crashed before committing */
}

static bool
flush_frozen(void *arg, uint32 xid)
{
	FlushRules *fr = arg;

	return TransactionIdPrecedes(xid, fr->horizon);
}

static bool
flush_ttl(void *arg, FstSlice payload, int64 *ttl)
{
	FlushRules *fr = arg;

	return forst_expiry_value(fr->expiry, payload, ttl);
}

/*
 * Writes the memtable's entries that did not abort into an SST in file
 * (fst_flush_build); [*pending_lo, *pending_hi] gets the xids of those
 * written uncommitted.
 */
static FstCode
flush_write_sst(FstMemtable *mt, const ForstExpiry *x, ForstSpool *file,
				FstSstProps *props, uint64 *max_seq, uint32 *pending_lo,
				uint32 *pending_hi, FstError *err)
{
	FlushRules	fr;
	FstFlushBuild fb;
	FstCode		rc;

	fr.horizon = GetOldestNonRemovableTransactionId(NULL);
	fr.expiry = x;
	fst_flush_build_init(&fb);
	fb.opt.block_size = forst_flush_block_size();
	fb.opt.restart_interval = forst_block_restart_interval;
	fb.opt.compression = forst_compression_for_level(0);
	forst_index_prefix_options(&fb.opt);
	fb.fate = flush_fate;
	fb.frozen = flush_frozen;
	fb.ttl = x->attnum > 0 ? flush_ttl : NULL;
	fb.arg = &fr;
	rc = fst_flush_build(mt, &fb, &file->sink, props, err);
	*max_seq = Max(*max_seq, fb.max_seq);
	*pending_lo = fb.pending_xid_min;
	*pending_hi = fb.pending_xid_max;
	return rc;
}

bool
forst_flush_one(ForstTableShared *ts, int *retired_slab)
{
	RelFileNode rnode = ts->rnode;
	int			slab;
	uint64		base_version;
	FstMemtable *mt;
	FstManifest next;
	FstManifestEdit edit;
	ForstSpool	file;
	const FstPutSource *src = NULL;
	FstSstProps props;
	FstError	err;
	FstCode		rc;
	uint64		max_seq = 0;
	uint64		new_version;
	XLogRecPtr	covered;
	uint64		file_id;
	bool		have_file;
	ForstExpiry expiry;
	char		okey[FORST_KEY_LEN];
	uint32		pending_lo = 0,
				pending_hi = 0;

	*retired_slab = -1;
	forst_table_load(ts);
	LWLockAcquire(&ts->lock, LW_SHARED);
	if (ts->nimmutable == 0 || ts->drop_pending)
	{
		LWLockRelease(&ts->lock);
		return false;
	}
	slab = ts->immutable[ts->nimmutable - 1];	/* the oldest */
	LWLockRelease(&ts->lock);
	mt = forst_slab_memtable(slab);

	/* the SST, under a file id of its own (a compaction may run meanwhile) */
	file_id = forst_table_new_file_id(ts);
	forst_spool_begin(&file);
	fst_sst_props_init(&props);
	/*
	 * The expiry rule, inside the checkpoint's gate: while a checkpoint
	 * takes its cut, a rule newer than its snapshot would drop rows that the
	 * snapshot sees live from a file the checkpoint names, so then nothing
	 * is dropped (the next compaction does it).
	 */
	if (forst_checkpoint_gate_enter())
	{
		(void) forst_expiry_shared_rule(ts, GetCurrentTimestamp(), &expiry);
		forst_checkpoint_gate_leave();
	}
	else
	{
		(void) forst_expiry_shared_rule(ts, GetCurrentTimestamp(), &expiry);
		expiry.active = false;
	}
	rc = flush_write_sst(mt, &expiry, &file, &props, &max_seq, &pending_lo,
						 &pending_hi, &err);
	if (rc == FST_OK)
		rc = forst_spool_source(&file, &src, &err);
	if (rc != FST_OK)
	{
		forst_spool_end(&file);
		forst_spool_raise_error(&file);
		forst_report(rc, &err, "writing an SST file");
	}
	have_file = props.num_entries > 0;
	if (have_file)
	{
		int			attempt;

		/*
		 * An object with this id may be left by a flush that failed before
		 * its manifest (ids restart from the manifest after a crash) -- or
		 * belong to another writer of the table, which is fenced only when
		 * one of us publishes a manifest.  Never overwrite: take the next id.
		 */
		for (attempt = 0;; attempt++)
		{
			forst_sst_object_key(&rnode, file_id, okey, sizeof(okey));
			rc = fst_objstore_put_if_absent_source(forst_objstore(), okey, src, &err);
			if (rc != FST_ALREADY_EXISTS || attempt == 1000)
				break;
			file_id = forst_table_new_file_id(ts);
		}
		if (rc != FST_OK)
		{
			forst_spool_end(&file);
			forst_spool_raise_error(&file);
			forst_report(rc, &err, psprintf("uploading \"%s\"", okey));
		}
		/* fresh output is read soon: admit it to the disk cache */
		forst_cache_admit_source(okey, src);
		forst_stats_add(FS_FLUSHES, 1);
		forst_stats_add(FS_FLUSH_BYTES, src->len);
	}
	forst_spool_end(&file);

	/*
	 * The next manifest version: the current one plus the new file.  The
	 * manifest lock makes "current" stay current until the switch.
	 */
	LWLockAcquire(&ts->manifest_lock, LW_EXCLUSIVE);
	base_version = ts->manifest_version;
	if (base_version > 0)
	{
		fst_manifest_init(&next);
		rc = fst_manifest_copy(&next, forst_manifest_at(&rnode, base_version), &err);
		if (rc != FST_OK)
			forst_report(rc, &err, "copying a manifest");
	}
	else
		forst_manifest_init_new(&next, &rnode);
	fst_manifest_edit_init(&edit);
	if (have_file)
	{
		FstFileMeta meta;

		memset(&meta, 0, sizeof(meta));
		if (!fst_sst_props_to_filemeta(&props, &meta))
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		meta.file_id = file_id;
		meta.level = 0;
		meta.pending_xid_min = pending_lo;
		meta.pending_xid_max = pending_hi;
		rc = fst_manifest_edit_add(&edit, 0, &meta, NULL, &err);
		fst_filemeta_clear(&meta);
		if (rc != FST_OK)
			forst_report(rc, &err, "building a manifest edit");
	}
	edit.has_next_file_id = true;
	edit.next_file_id = Max(next.next_file_id,
							pg_atomic_read_u64(&ts->next_file_id));
	edit.has_last_seq = true;
	edit.last_seq = Max(next.last_seq, max_seq);
	{
		FstManifest applied;

		rc = fst_manifest_apply(&next, &edit, &applied, &err);
		fst_manifest_edit_free(&edit);
		fst_manifest_free(&next);
		if (rc != FST_OK)
			forst_report(rc, &err, "applying a manifest edit");
		next = applied;
	}
	next.version = base_version + 1;
	fst_sst_props_free(&props);
	forst_manifest_publish(&rnode, &next);
	new_version = next.version;
	fst_manifest_free(&next);

	/* switch readers to the new manifest and forget the memtable */
	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	if (ts->drop_pending)
	{
		/* dropped meanwhile: forst_flush_end frees everything */
		LWLockRelease(&ts->lock);
		LWLockRelease(&ts->manifest_lock);
		return false;
	}
	ts->manifest_version = new_version;
	Assert(ts->nimmutable > 0 && ts->immutable[ts->nimmutable - 1] == slab);
	ts->nimmutable--;
	forst_shared->slabs[slab].state = FORST_SLAB_RETIRING;
	covered = forst_table_unflushed_lsn(ts);
	LWLockRelease(&ts->lock);
	/* a standby switches to the new version and frees what it covers */
	forst_wal_log_manifest(&rnode, new_version, covered);
	LWLockRelease(&ts->manifest_lock);
	*retired_slab = slab;
	return true;
}
