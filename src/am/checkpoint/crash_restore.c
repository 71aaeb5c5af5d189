/*-------------------------------------------------------------------------
 *
 * crash_restore.c
 *	  Returning a database's unlogged forst tables to its newest checkpoint
 *	  after an unclean stop (see checkpoint/crash_restore.h).
 *
 * The gate runs in forst_table_shared, so that nothing -- a scan, a write,
 * a checkpoint, the planner's size estimate -- sees an unlogged table's
 * state before the restore.  It costs one atomic read once the server is
 * clean or every database is done.  The restore runs inside the caller's
 * transaction, as its user: it only reads the catalog (pg_class) and the
 * store and publishes manifests, which need no privilege.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/checkpoint/crash_restore.h"
#include "am/expiry/cut.h"
#include "am/expiry/expiry.h"
#include "am/objects/store.h"
#include "am/shmem/shmem.h"
#include "am/wal/unlogged.h"

/* the lock a database's backends take to restore (an advisory-type tag) */
#define RESTORE_LOCK_KEY1 0x666F7273	/* "fors" */
#define RESTORE_LOCK_KEY2 0x74756E6C	/* "tunl" */
#define RESTORE_LOCK_FIELD4 0x4653	/* not 1 or 2: never a user's lock */

/* The cut the tables return to. */
typedef struct RestoreCut
{
	uint64		id;				/* 0: no checkpoint of this database */
	char	   *json;
	int64		lo;
	int64		xmax;
	char	   *ranges;			/* "first-last,..." or "-" */
} RestoreCut;

static bool restoring = false;

/* this backend's database is done: a backend stays in one database */
static bool my_db_restored = false;

static void
restore_error_context(void *arg)
{
	RestoreCut *cut = arg;

	if (cut->id > 0)
		errcontext("returning the unlogged forst tables of database \"%s\" to checkpoint " UINT64_FORMAT " after an unclean stop",
				   get_database_name(MyDatabaseId), cut->id);
	else
		errcontext("emptying the unlogged forst tables of database \"%s\" after an unclean stop (it has no checkpoint)",
				   get_database_name(MyDatabaseId));
}

/*
 * The newest checkpoint of this database in the store, with its snapshot;
 * cut->id = 0 if there is none (forst_checkpoint_database says whose a
 * checkpoint is, as retention does).
 */
static void
find_cut(RestoreCut *cut)
{
	uint64	   *ids;
	int			n = forst_checkpoint_list(NULL, &ids);
	char	   *by_oid = psprintf("oid %u", MyDatabaseId);
	char	   *by_name = psprintf("name %s", get_database_name(MyDatabaseId));
	Datum		args[1];
	Oid			argtypes[1] = {TEXTOID};
	bool		isnull;
	int			ret;
	int			i;

	memset(cut, 0, sizeof(*cut));
	for (i = n - 1; i >= 0 && cut->id == 0; i--)
	{
		char	   *json = forst_checkpoint_get(forst_checkpoint_key(forst_cluster_id(), ids[i]), true);
		char	   *db;

		if (json == NULL)
			continue;			/* retired meanwhile */
		db = forst_checkpoint_database(json);
		if (strcmp(db, by_oid) == 0 || strcmp(db, by_name) == 0)
		{
			cut->id = ids[i];
			cut->json = json;
		}
	}
	if (cut->id == 0)
		return;
	args[0] = CStringGetTextDatum(cut->json);
	ret = SPI_execute_with_args(
								"SELECT (j->'snapshot'->>'lo')::pg_catalog.int8,"
								" (j->'snapshot'->>'xmax')::pg_catalog.int8,"
								" coalesce((SELECT pg_catalog.string_agg(pg_catalog.format('%s-%s', r->>0, r->>1), ',')"
								"   FROM pg_catalog.jsonb_array_elements(j->'snapshot'->'visible') r), '-')"
								" FROM (SELECT $1::pg_catalog.jsonb AS j) s",
								1, argtypes, args, NULL, true, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "forst: reading checkpoint " UINT64_FORMAT " failed: %d", cut->id, ret);
	cut->lo = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	cut->xmax = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	cut->ranges = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
}

/*
 * The manifest version the cut names for a table prefix, 0 if none; and
 * whether the cut records the table's watermark (checkpoints of older
 * servers do not), and which.
 */
static uint64
cut_version(const RestoreCut *cut, const char *prefix, bool *found,
			bool *wm_known, ForstWatermark *wm)
{
	Datum		args[2];
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	bool		isnull;
	int			ret;
	HeapTuple	tup;
	TupleDesc	desc;

	*found = false;
	*wm_known = false;
	if (cut->id == 0)
		return 0;
	args[0] = CStringGetTextDatum(cut->json);
	args[1] = CStringGetTextDatum(prefix);
	ret = SPI_execute_with_args(
								"SELECT (t->>'manifest')::pg_catalog.int8,"
								" t ? 'watermark_us', (t->>'watermark_us')::pg_catalog.int8"
								" FROM pg_catalog.jsonb_array_elements($1::pg_catalog.jsonb->'tables') t"
								" WHERE t->>'prefix' = $2",
								2, argtypes, args, NULL, true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "forst: reading checkpoint " UINT64_FORMAT " failed: %d", cut->id, ret);
	if (SPI_processed == 0)
		return 0;
	*found = true;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	*wm_known = DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull));
	wm->watermark = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	wm->has_watermark = !isnull;
	return (uint64) DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
}

/*
 * Returns one table to the cut; a line for the log goes to *report, and
 * its watermark to *resets if the cut's differs from the one now.
 */
static void
restore_table(Oid relid, const RestoreCut *cut, StringInfo report,
			  List **resets)
{
	Relation	rel = try_relation_open(relid, AccessShareLock);
	ForstTableShared *ts;
	char		prefix[FORST_KEY_LEN];
	uint64		version;
	uint64		files;
	bool		found;
	bool		has_rows;
	bool		wm_known;
	ForstWatermark wm;

	if (rel == NULL)
		return;					/* dropped meanwhile */
	forst_table_prefix(&rel->rd_node, prefix, sizeof(prefix));
	version = cut_version(cut, prefix, &found, &wm_known, &wm);
	if (found && wm_known)
	{
		bool		has_now;
		TimestampTz now;

		forst_expiry_watermark_now(rel, &has_now, &now);
		if (has_now != wm.has_watermark || (has_now && now != wm.watermark))
		{
			ForstWatermark *r = palloc(sizeof(ForstWatermark));

			*r = wm;
			r->relid = relid;
			r->relfilenode = rel->rd_node.relNode;
			*resets = lappend(*resets, r);
			appendStringInfo(report, "\nforst: watermark of unlogged table \"%s\" returned to %s",
							 RelationGetRelationName(rel),
							 wm.has_watermark ? timestamptz_to_str(wm.watermark) : "none");
		}
	}
	ts = forst_table_shared(&rel->rd_node, true);
	forst_table_load(ts);
	LWLockAcquire(&ts->lock, LW_SHARED);
	has_rows = ts->nimmutable > 0 ||
		(ts->active >= 0 &&
		 fst_memtable_num_entries(forst_slab_memtable(ts->active)) > 0);
	LWLockRelease(&ts->lock);
	if (has_rows)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("forst: unlogged table \"%s\" has rows in memory before its restore",
						RelationGetRelationName(rel))));
	ts->unlogged = true;

	if (version == 0 && ts->manifest_version == 0)
	{
		/* empty then and now */
		relation_close(rel, AccessShareLock);
		return;
	}
	files = forst_attach_manifest(rel, version > 0 ? prefix : NULL, version,
								  -1, -1, (TransactionId) cut->lo,
								  (TransactionId) cut->xmax,
								  cut->ranges ? cut->ranges : "-", true);
	if (found)
		appendStringInfo(report, "\nforst: unlogged table \"%s\" returned to checkpoint " UINT64_FORMAT " (%llu files)",
						 RelationGetRelationName(rel), cut->id,
						 (unsigned long long) files);
	else
		appendStringInfo(report, "\nforst: unlogged table \"%s\" is empty: no checkpoint holds its rows (created, truncated or rewritten after the newest checkpoint of its database, or the database has none)",
						 RelationGetRelationName(rel));
	relation_close(rel, AccessShareLock);
}

/* Every unlogged forst table of this database, back to one cut. */
static void
restore_tables(void)
{
	List	   *relids = NIL;
	List	   *resets = NIL;
	ListCell   *lc;
	RestoreCut	cut;
	ErrorContextCallback errcb;
	StringInfoData report;
	bool		pushed = false;
	TimestampTz start = GetCurrentTimestamp();
	uint64		i;
	int			ret;

	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute("SELECT c.oid FROM pg_catalog.pg_class c"
					  " JOIN pg_catalog.pg_am a ON a.oid = c.relam"
					  " WHERE a.amname = 'forst' AND c.relkind = 'r'"
					  " AND c.relpersistence = 'u' ORDER BY c.oid",
					  true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "forst: listing unlogged forst tables failed: %d", ret);
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		relids = lappend_oid(relids,
							 DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
															SPI_tuptable->tupdesc, 1, &isnull)));
	}
	if (relids != NIL)
	{
		find_cut(&cut);
		errcb.callback = restore_error_context;
		errcb.arg = &cut;
		errcb.previous = error_context_stack;
		error_context_stack = &errcb;
		initStringInfo(&report);
		foreach(lc, relids)
		{
			CHECK_FOR_INTERRUPTS();
			restore_table(lfirst_oid(lc), &cut, &report, &resets);
		}
		/* their watermarks, committed by a worker (expiry/cut.h) */
		forst_expiry_reset_watermarks(resets);
		error_context_stack = errcb.previous;
		ereport(LOG,
				(errmsg("forst: %d unlogged tables of database \"%s\" returned to %s after an unclean stop in %ld ms",
						list_length(relids), get_database_name(MyDatabaseId),
						cut.id > 0 ? psprintf("checkpoint " UINT64_FORMAT, cut.id) : "empty (no checkpoint)",
						TimestampDifferenceMilliseconds(start, GetCurrentTimestamp())),
				 report.len > 0 ? errdetail_internal("%s", report.data + 1) : 0));
	}
	SPI_finish();
	if (pushed)
		PopActiveSnapshot();
}

static void
restore_database(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, RESTORE_LOCK_KEY1,
						 RESTORE_LOCK_KEY2, RESTORE_LOCK_FIELD4);
	restoring = true;
	PG_TRY();
	{
		/* the database's other backends wait here until it is done */
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
		/* a restore done meanwhile may have changed watermarks */
		AcceptInvalidationMessages();
		if (!forst_unlogged_db_restored(MyDatabaseId))
		{
			restore_tables();
			forst_unlogged_set_db_restored(MyDatabaseId);
		}
		LockRelease(&tag, ExclusiveLock, false);
	}
	PG_FINALLY();
	{
		restoring = false;
	}
	PG_END_TRY();
}

static void
restore_gate(const RelFileNode *rnode)
{
	if (likely(my_db_restored || !forst_unlogged_restore_pending()))
		return;
	if (restoring || !OidIsValid(MyDatabaseId) || rnode->dbNode != MyDatabaseId ||
		!IsTransactionState() || IsBinaryUpgrade || RecoveryInProgress())
		return;
	/*
	 * Under an LWLock (the WAL catch-up replaying logged tables' records,
	 * which calls us for each table it meets): not now.  Whoever reads or
	 * writes a table comes here again without one first.
	 */
	if (!INTERRUPTS_CAN_BE_PROCESSED())
		return;
	if (!forst_unlogged_db_restored(MyDatabaseId))
		restore_database();
	my_db_restored = forst_unlogged_db_restored(MyDatabaseId);
}

void
forst_crash_restore_init(void)
{
	forst_table_gate_hook = restore_gate;
}
