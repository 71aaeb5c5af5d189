/*-------------------------------------------------------------------------
 *
 * vacuum.c
 *	  VACUUM of a forst table: keeping relfrozenxid honest; VACUUM FULL
 *	  (at the end of this file).
 *
 * Compaction removes the versions no snapshot can see (compact/compact.c),
 * so VACUUM has no dead rows to look for.  What it must do is what lets
 * PostgreSQL truncate clog and keep xids from wrapping around: advance
 * pg_class.relfrozenxid to the oldest xid the table may still look up.
 * Before, relfrozenxid stayed where CREATE TABLE set it.  Autovacuum then
 * vacuumed the table "to prevent wraparound" again and again to no effect,
 * and 2^31 transactions after the table's creation the server stopped
 * assigning xids until it was dropped.
 *
 * A version's xid is looked up until the version is frozen, and flushes
 * and compactions freeze every version that all snapshots see.  So the
 * oldest xid left is the oldest unfrozen xid of the table's memtables and
 * of its own SST files, which each memtable and file records (modulo
 * 2^32).  Borrowed files (a table attached from a checkpoint) present
 * their versions as frozen or aborted and their xids mean nothing here.
 * relfrozenxid becomes that xid, or the vacuum's OldestXmin if it is
 * older: no transaction that can still write has an older xid.
 *
 * A file that compaction leaves alone (the last level of a table that is
 * no longer written to, say) keeps its xids for good.  So an aggressive
 * VACUUM (VACUUM FREEZE, DISABLE_PAGE_SKIPPING, or relfrozenxid older than
 * vacuum_freeze_table_age, which includes autovacuum's anti-wraparound
 * runs) first freezes what is older than its freeze limit
 * (vacuum_freeze_min_age): it flushes memtables holding such xids and
 * rewrites each file holding them (compaction_pick.h's freeze pick), in
 * this backend, as the table's compaction worker would.  Progress shows in
 * pg_stat_progress_vacuum: heap_blks_total counts the files to rewrite,
 * heap_blks_scanned those rewritten.  The cost is a rewrite of the files
 * not compacted since the last aggressive VACUUM, as heap's aggressive
 * VACUUM reads the pages not frozen since.
 *
 * Multixacts: forst stores none (row locks live in the lock manager), so
 * relminmxid advances to the oldest multixact any transaction can see.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "am/forst.h"
#include "am/objects/store.h"
#include "am/tableam/vacuum.h"
#include "am/compact/compact.h"
#include "am/ddl/rekey.h"
#include "am/expiry/expiry.h"
#include "am/tableam/tableam.h"
#include "am/write/dml.h"

/* How long VACUUM waits for a flush of memtables holding old xids. */
#define FLUSH_WAIT_MS		60000

/* The table's own files whose oldest unfrozen xid precedes limit. */
static int
files_older_than(const RelFileNode *rnode, ForstTableShared *ts,
				 TransactionId limit)
{
	const FstManifest *m;
	uint64		version;
	int			l,
				i,
				n = 0;

	LWLockAcquire(&ts->lock, LW_SHARED);
	version = ts->manifest_version;
	LWLockRelease(&ts->lock);
	if (version == 0)
		return 0;
	m = forst_manifest_at(rnode, version);
	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < m->levels[l].nfiles; i++)
		{
			const FstManifestFile *f = &m->levels[l].files[i];

			if (f->owner == NULL && f->meta.xid_min != 0 &&
				fst_xid_precedes(f->meta.xid_min, limit))
				n++;
		}
	return n;
}

static TransactionId
forst_table_oldest_xid(Relation rel, TransactionId *mt_oldest)
{
	ForstTableShared *ts = forst_table_shared(&rel->rd_node, true);
	int			slabs[FORST_MAX_IMMUTABLE + 1];
	uint32		lo = 0,
				hi = 0;
	uint64		version;
	int			n,
				l,
				i;

	*mt_oldest = InvalidTransactionId;
	if (ts == NULL)
		return InvalidTransactionId;
	forst_table_load(ts);

	/*
	 * Memtables first, then the manifest version: a flush switches both at
	 * once, so this order sees a flushed memtable's entries in one place or
	 * both.  A slab seen here is not reused while this transaction runs.
	 */
	n = forst_table_slabs(ts, slabs);
	for (i = 0; i < n; i++)
	{
		FstMemtableStats st;

		fst_memtable_stats(forst_slab_memtable(slabs[i]), &st);
		fst_xid_range_note(&lo, &hi, st.xid_min);
	}
	*mt_oldest = (TransactionId) lo;
	LWLockAcquire(&ts->lock, LW_SHARED);
	version = ts->manifest_version;
	LWLockRelease(&ts->lock);
	if (version > 0)
	{
		const FstManifest *m = forst_manifest_at(&rel->rd_node, version);

		for (l = 0; l < FST_NUM_LEVELS; l++)
			for (i = 0; i < m->levels[l].nfiles; i++)
			{
				const FstManifestFile *f = &m->levels[l].files[i];

				if (f->owner == NULL)
					fst_xid_range_note(&lo, &hi, f->meta.xid_min);
			}
	}
	return (TransactionId) lo;
}

/*
 * Flushes the table's memtables (as forst.checkpoint() does), waiting at
 * most FLUSH_WAIT_MS; false if they were not all flushed by then.
 */
static bool
flush_memtables(Relation rel)
{
	XLogRecPtr	lsn = GetXLogInsertRecPtr();
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   FLUSH_WAIT_MS);

	while (forst_table_freeze_before(&rel->rd_node, lsn))
	{
		forst_wake_flusher();
		if (GetCurrentTimestamp() > deadline)
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	return true;
}

/*
 * The table's compaction, taken from the compaction worker (waiting for it
 * to let go); NULL if the table is being dropped.  Give it back with
 * forst_compact_end.
 */
static ForstTableShared *
compaction_of(Relation rel)
{
	ForstTableShared *ts;

	while ((ts = forst_compact_begin(&rel->rd_node)) == NULL)
	{
		if (forst_table_shared(&rel->rd_node, false) == NULL)
			return NULL;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	return ts;
}

/*
 * Rewrites every file of the table holding xids older than limit, as the
 * table's compaction worker (waiting for the worker to let go of it).
 * Returns the number of compactions run.
 */
static int
freeze_files(Relation rel, TransactionId limit)
{
	ForstTableShared *ts;
	int			todo;
	volatile int done = 0;

	ts = forst_table_shared(&rel->rd_node, true);
	if (ts == NULL)
		return 0;
	todo = files_older_than(&rel->rd_node, ts, limit);
	if (todo == 0)
		return 0;
	pgstat_progress_update_param(PROGRESS_VACUUM_TOTAL_HEAP_BLKS, todo);
	if ((ts = compaction_of(rel)) == NULL)
		return 0;
	PG_TRY();
	{
		/* a compaction may take in several such files, or move one down */
		while (files_older_than(&rel->rd_node, ts, limit) > 0 &&
			   forst_compact_one(ts, limit))
		{
			done++;
			pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_SCANNED,
										 Min(done, todo));
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		forst_compact_end(ts);
	}
	PG_END_TRY();
	return done;
}

void
forst_relation_vacuum(Relation rel, struct VacuumParams *params,
					  BufferAccessStrategy bstrategy)
{
	TransactionId oldest_xmin;
	TransactionId freeze_limit;
	TransactionId oldest;
	TransactionId frozenxid;
	MultiXactId oldest_mxact;
	MultiXactId mxact_cutoff;
	bool		aggressive;
	TransactionId mt_oldest;
	bool		frozenxid_updated = false;
	bool		minmulti_updated = false;
	int			rewritten = 0;
	int			elevel = (params->options & VACOPT_VERBOSE) ? INFO : DEBUG2;

	pgstat_progress_start_command(PROGRESS_COMMAND_VACUUM, RelationGetRelid(rel));
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_SCAN_HEAP);
	aggressive = vacuum_set_xid_limits(rel,
									   params->freeze_min_age,
									   params->freeze_table_age,
									   params->multixact_freeze_min_age,
									   params->multixact_freeze_table_age,
									   &oldest_xmin, &oldest_mxact,
									   &freeze_limit, &mxact_cutoff);
	if (params->options & VACOPT_DISABLE_PAGE_SKIPPING)
		aggressive = true;

	oldest = forst_table_oldest_xid(rel, &mt_oldest);
	if (aggressive && TransactionIdIsNormal(oldest) &&
		TransactionIdPrecedes(oldest, freeze_limit))
	{
		/*
		 * Compaction freezes what precedes every database's horizon, which
		 * may lag this database's: freeze no further than that, or files
		 * would be picked again and again.
		 */
		TransactionId shared = GetOldestNonRemovableTransactionId(NULL);

		if (TransactionIdPrecedes(shared, freeze_limit))
			freeze_limit = shared;
		if (TransactionIdIsNormal(mt_oldest) &&
			TransactionIdPrecedes(mt_oldest, freeze_limit) &&
			!flush_memtables(rel))
			ereport(WARNING,
					(errmsg("forst: could not flush the memtables of table \"%s\" within %d s; their xids stay unfrozen",
							RelationGetRelationName(rel), FLUSH_WAIT_MS / 1000),
					 errhint("Check that the object store is reachable (forst.stats).")));
		rewritten = freeze_files(rel, freeze_limit);
		oldest = forst_table_oldest_xid(rel, &mt_oldest);
	}

	frozenxid = oldest_xmin;
	if (TransactionIdIsNormal(oldest) && TransactionIdPrecedes(oldest, frozenxid))
		frozenxid = oldest;
	vac_update_relstats(rel, rel->rd_rel->relpages, rel->rd_rel->reltuples,
						rel->rd_rel->relallvisible, rel->rd_rel->relhasindex,
						frozenxid, oldest_mxact,
						&frozenxid_updated, &minmulti_updated, false);
	ereport(elevel,
			(errmsg("forst: vacuuming \"%s\": relfrozenxid %u%s, oldest unfrozen xid %u%s",
					RelationGetRelationName(rel), frozenxid,
					frozenxid_updated ? " (advanced)" : "",
					oldest, (TransactionIdIsNormal(mt_oldest) && mt_oldest == oldest) ?
					" (in memtables)" : ""),
			 aggressive ?
			 errdetail("Aggressive: %d compactions froze the xids older than %u.",
					   rewritten, freeze_limit) : 0));
	pgstat_progress_end_command();
}

/* The storage that this transaction's VACUUM FULL filled, entries included */
static RelFileNode copied_node;
static TransactionId copied_xid = InvalidTransactionId;
static double copied_rows;

bool
forst_rewrite_copied_entries(Relation heap, double *rows)
{
	if (!TransactionIdIsValid(copied_xid) ||
		!TransactionIdEquals(copied_xid, GetTopTransactionIdIfAny()) ||
		!RelFileNodeEquals(copied_node, heap->rd_node))
		return false;
	*rows = copied_rows;
	return true;
}

/*
 * VACUUM FULL.  PostgreSQL gives the table a new relfilenode, has this
 * fill it, swaps it in, rebuilds the indexes on it and drops the old one
 * when the transaction commits (cluster.c), all under AccessExclusiveLock.
 * forst fills it with one compaction of all the old one's files
 * (forst_compact_into): the versions some snapshot may still see are kept
 * with their xids, as heap's rewrite keeps xmin and xmax, so that VACUUM
 * FULL stays MVCC-safe; older versions, tombstones and expired rows go.
 * The old memtables are flushed first.  The new files sit at one level,
 * the one whose target size holds them all, so that no compaction is due
 * right after.  Secondary index entries are copied with the rows, with
 * their xids, so that a snapshot older than the VACUUM FULL still finds its
 * rows through the indexes, which PostgreSQL lets it use after their
 * rebuild; that rebuild then has nothing to write (the entries would be
 * there twice: forst_rewrite_copied_entries).  Progress:
 * pg_stat_progress_cluster's heap_blks_total is the input's size in
 * blocks, heap_blks_scanned the output's so far.
 *
 * Refused: an unlogged forst table (it returns to its last checkpoint after
 * a crash, which names the files of the relfilenode it had then), and one
 * that owns only some key groups or that another server claimed (as any
 * rewrite, ddl/rekey.h).
 */
void
forst_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
								Relation OldIndex, bool use_sort,
								TransactionId OldestXmin,
								TransactionId *xid_cutoff,
								MultiXactId *multi_cutoff,
								double *num_tuples, double *tups_vacuumed,
								double *tups_recently_dead)
{
	ForstTableShared *from;
	ForstTableShared *to;
	ForstCompactIntoResult res;
	ForstExpiry expiry;

	if (OldIndex != NULL)
		forst_not_supported("CLUSTER");
	if (OldTable->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("VACUUM FULL is not supported on unlogged forst table \"%s\"",
						RelationGetRelationName(OldTable)),
				 errdetail("After a crash the table returns to its last checkpoint, which names the files it has now."),
				 errhint("Compaction reclaims the space in the background; VACUUM FREEZE rewrites the files holding old transaction ids.")));

	forst_check_rewrite_whole(OldTable,
							  "Compaction reclaims the space in the background; VACUUM FREEZE rewrites the files holding old transaction ids.");
	/* the expiry rule in the table's shared state, for the compaction */
	forst_expiry_get(OldTable, &expiry);
	if (!flush_memtables(OldTable))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst: could not flush the memtables of table \"%s\" within %d s",
						RelationGetRelationName(OldTable), FLUSH_WAIT_MS / 1000),
				 errhint("Check that the object store is reachable (forst.stats).")));
	to = forst_table_for_write(NewTable);
	from = compaction_of(OldTable);
	if (from == NULL)
		elog(ERROR, "forst: table \"%s\" is being dropped",
			 RelationGetRelationName(OldTable));
	pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
								 PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP);
	PG_TRY();
	{
		forst_compact_into(from, to, &res);
	}
	PG_FINALLY();
	{
		forst_compact_end(from);
	}
	PG_END_TRY();

	/* versions of rows kept (the entries are the indexes') */
	*num_tuples = (double) (res.stats.entries_out - res.stats.index_entries_out);
	*tups_vacuumed = (double) (res.stats.entries_in - res.stats.entries_out);
	copied_node = NewTable->rd_node;
	copied_xid = GetTopTransactionId();
	copied_rows = *num_tuples;
	*tups_recently_dead = 0;
	/* relfrozenxid: no later than the oldest xid the new files keep */
	if (res.xid_min != 0 && TransactionIdPrecedes(res.xid_min, *xid_cutoff))
		*xid_cutoff = res.xid_min;
	/* forst stores no multixacts: *multi_cutoff stands */
	pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN,
								 (int64) res.stats.entries_out);
	ereport(DEBUG1,
			(errmsg("forst: rewrote \"%s\": %d files into %d at level %d, " UINT64_FORMAT " of " UINT64_FORMAT " entries kept",
					RelationGetRelationName(OldTable), res.files_in,
					res.files_out, res.output_level, res.stats.entries_out,
					res.stats.entries_in)));
}
