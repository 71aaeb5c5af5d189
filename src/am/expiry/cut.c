/*-------------------------------------------------------------------------
 *
 * cut.c
 *	  Watermarks at a checkpoint's cut, and the background worker that
 *	  returns them there after a crash (see expiry/cut.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "am/expiry/cut.h"
#include "am/expiry/expiry.h"

/* Columns of forst.expiry (as in expiry.c). */
#define Anum_expiry_relid		1
#define Anum_expiry_attnum		2
#define Anum_expiry_ttl			3
#define Anum_expiry_watermark	4

/* what the restoring backend and the worker share (a DSM segment) */
typedef struct ResetShared
{
	Oid			dboid;
	int			status;			/* RESET_* */
	int			updated;		/* rows of forst.expiry changed */
	char		message[512];	/* the worker's error */
	int			n;
	ForstWatermark resets[FLEXIBLE_ARRAY_MEMBER];
} ResetShared;

#define RESET_RUNNING	0
#define RESET_DONE		1
#define RESET_FAILED	2

/* ---------------------------------------------------------------------- */

List *
forst_expiry_watermarks_at(Snapshot snap)
{
	Oid			cat = forst_expiry_catalog_oid();
	List	   *out = NIL;
	Relation	crel;
	SysScanDesc scan;
	HeapTuple	tup;

	if (!OidIsValid(cat))
		return NIL;
	crel = table_open(cat, AccessShareLock);
	scan = systable_beginscan(crel, InvalidOid, false, snap, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		ForstWatermark *w = palloc0(sizeof(ForstWatermark));
		bool		isnull;
		Datum		d;

		d = heap_getattr(tup, Anum_expiry_relid, RelationGetDescr(crel), &isnull);
		if (isnull)
			continue;
		w->relid = DatumGetObjectId(d);
		d = heap_getattr(tup, Anum_expiry_watermark, RelationGetDescr(crel), &isnull);
		w->has_watermark = !isnull;
		w->watermark = isnull ? 0 : DatumGetTimestampTz(d);
		d = heap_getattr(tup, Anum_expiry_attnum, RelationGetDescr(crel), &isnull);
		w->attnum = isnull ? InvalidAttrNumber : DatumGetInt16(d);
		d = heap_getattr(tup, Anum_expiry_ttl, RelationGetDescr(crel), &isnull);
		w->has_ttl = !isnull;
		if (!isnull)
			w->ttl = *DatumGetIntervalP(d);
		out = lappend(out, w);
	}
	systable_endscan(scan);
	table_close(crel, AccessShareLock);
	return out;
}

/* The name of relid's column attnum, or NULL if it is dropped or absent. */
static char *
live_attname(Oid relid, AttrNumber attnum)
{
	HeapTuple	tp;
	char	   *name = NULL;

	if (attnum <= 0)
		return NULL;
	tp = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attnum));
	if (HeapTupleIsValid(tp))
	{
		Form_pg_attribute att = (Form_pg_attribute) GETSTRUCT(tp);

		if (!att->attisdropped)
			name = pstrdup(NameStr(att->attname));
		ReleaseSysCache(tp);
	}
	return name;
}

void
forst_expiry_append_watermark(StringInfo buf, List *watermarks, Oid relid)
{
	ListCell   *lc;

	foreach(lc, watermarks)
	{
		ForstWatermark *w = lfirst(lc);
		char	   *column;

		if (w->relid != relid)
			continue;
		if (w->has_watermark)
			appendStringInfo(buf, "\"watermark_us\":" INT64_FORMAT, (int64) w->watermark);
		else
			appendStringInfoString(buf, "\"watermark_us\":null");
		/* a dropped TTL column expires nothing (expiry.h): none to carry */
		column = live_attname(relid, w->attnum);
		if (column == NULL)
		{
			appendStringInfoString(buf, ",\"expiry\":null");
			return;
		}
		appendStringInfoString(buf, ",\"expiry\":{\"column\":");
		escape_json(buf, column);
		if (w->has_ttl)
			appendStringInfo(buf, ",\"ttl_days\":%d,\"ttl_us\":" INT64_FORMAT "}",
							 w->ttl.day, (int64) w->ttl.time);
		else
			appendStringInfoString(buf, ",\"ttl_days\":null,\"ttl_us\":null}");
		return;
	}
	appendStringInfoString(buf, "\"watermark_us\":null,\"expiry\":null");
}

/* ---------------------------------------------------------------------- */
/* The restoring backend                                                   */

void
forst_expiry_reset_watermarks(List *resets)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	BgwHandleStatus st;
	dsm_segment *seg;
	ResetShared *rs;
	ListCell   *lc;
	pid_t		pid;
	int			i = 0;

	if (resets == NIL)
		return;
	seg = dsm_create(offsetof(ResetShared, resets) +
					 sizeof(ForstWatermark) * list_length(resets), 0);
	rs = dsm_segment_address(seg);
	memset(rs, 0, offsetof(ResetShared, resets));
	rs->dboid = MyDatabaseId;
	rs->status = RESET_RUNNING;
	rs->n = list_length(resets);
	foreach(lc, resets)
		rs->resets[i++] = *(ForstWatermark *) lfirst(lc);

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "forst");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "forst_watermark_reset_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "forst watermark restore of database %u", MyDatabaseId);
	snprintf(bgw.bgw_type, BGW_MAXLEN, "forst watermark restore");
	bgw.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	bgw.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("forst: could not start a worker to return the watermarks of unlogged tables to their checkpoint"),
				 errhint("Raise max_worker_processes, or retry when fewer background workers run.")));
	st = WaitForBackgroundWorkerStartup(handle, &pid);
	if (st == BGWH_STARTED)
		st = WaitForBackgroundWorkerShutdown(handle);
	if (st == BGWH_POSTMASTER_DIED)
		ereport(FATAL,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("postmaster exited while forst restored watermarks")));
	pg_read_barrier();
	if (rs->status != RESET_DONE)
	{
		char	   *msg = rs->status == RESET_FAILED ? pstrdup(rs->message) :
		pstrdup("the worker exited before it finished");

		dsm_detach(seg);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst: could not return the watermarks of unlogged tables to their checkpoint: %s", msg),
				 errhint("The next use of a forst table of this database tries again.")));
	}
	elog(DEBUG1, "forst: %d watermarks returned to the checkpoint", rs->updated);
	dsm_detach(seg);
	/* the worker's relcache invalidations: cached settings reload */
	AcceptInvalidationMessages();
}

/* ---------------------------------------------------------------------- */
/* The worker                                                              */

/* Whether relid is still the unlogged table of relfilenode. */
static bool
same_table(const ForstWatermark *w)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(w->relid));
	bool		same;

	if (!HeapTupleIsValid(tup))
		return false;
	same = ((Form_pg_class) GETSTRUCT(tup))->relfilenode == w->relfilenode &&
		((Form_pg_class) GETSTRUCT(tup))->relpersistence == RELPERSISTENCE_UNLOGGED;
	ReleaseSysCache(tup);
	return same;
}

static void
reset_all(ResetShared *rs)
{
	Oid			argtypes[2] = {REGCLASSOID, TIMESTAMPTZOID};
	int			i;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the backend that waits for us may hold locks: never wait long */
	if (SPI_execute("SET LOCAL search_path = pg_catalog, pg_temp", false, 0) < 0 ||
		SPI_execute("SET LOCAL lock_timeout = '10s'", false, 0) < 0)
		elog(ERROR, "forst: setting up the watermark restore failed");
	for (i = 0; i < rs->n; i++)
	{
		ForstWatermark *w = &rs->resets[i];
		Datum		args[2];
		char		nulls[2] = {' ', ' '};
		int			ret;

		if (!same_table(w))
			continue;
		args[0] = ObjectIdGetDatum(w->relid);
		args[1] = TimestampTzGetDatum(w->watermark);
		if (!w->has_watermark)
			nulls[1] = 'n';
		ret = SPI_execute_with_args("UPDATE forst.expiry"
									" SET watermark = $2, version = version OPERATOR(pg_catalog.+) 1"
									" WHERE relid OPERATOR(pg_catalog.=) $1"
									" AND watermark IS DISTINCT FROM $2",
									2, argtypes, args, nulls, false, 0);
		if (ret != SPI_OK_UPDATE)
			elog(ERROR, "forst: updating forst.expiry failed: %d", ret);
		if (SPI_processed > 0)
		{
			CacheInvalidateRelcacheByRelid(w->relid);
			rs->updated++;
		}
	}
	SPI_finish();
}

void
forst_watermark_reset_main(Datum arg)
{
	dsm_segment *seg;
	ResetShared *rs;
	MemoryContext cxt;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	seg = dsm_attach(DatumGetUInt32(arg));
	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst: the backend that started this watermark restore is gone")));
	rs = dsm_segment_address(seg);
	BackgroundWorkerInitializeConnectionByOid(rs->dboid, InvalidOid, 0);
	cxt = CurrentMemoryContext;

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "forst watermark restore");
		reset_all(rs);
		PopActiveSnapshot();
		CommitTransactionCommand();
		pgstat_report_activity(STATE_IDLE, NULL);
		pg_write_barrier();
		rs->status = RESET_DONE;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		strlcpy(rs->message, edata->message ? edata->message : "unknown error",
				sizeof(rs->message));
		pg_write_barrier();
		rs->status = RESET_FAILED;
		PG_RE_THROW();
	}
	PG_END_TRY();
	dsm_detach(seg);
	proc_exit(0);
}
