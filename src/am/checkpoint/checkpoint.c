/*-------------------------------------------------------------------------
 *
 * checkpoint.c
 *	  Checkpoints of the forst tables of a database (see checkpoint/checkpoint.h).
 *
 * One checkpoint runs at a time on a server (forst_ckpt->running); the
 * last FORST_CKPT_RING checkpoints' outcomes, failures included, are kept
 * in shared memory for the forst.checkpoints view, next to those listed
 * in the store.  A checkpoint never blocks writers: it freezes memtables
 * and waits for the flush worker like any full memtable would.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "commands/dbcommands.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/numeric.h"
#include "utils/pg_lsn.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
#include "common/hashfn.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/checkpoint/describe.h"
#include "am/expiry/cut.h"
#include "am/base/privileges.h"
#include "am/base/progress.h"
#include "am/shmem/shmem.h"
#include "am/base/stats.h"
#include "am/objects/store.h"

#define FORST_CKPT_RING 32
/* [lo, xmax) wider than this is refused: the xids could not all be asked */
#define CKPT_MAX_XID_SPAN 50000000

int			forst_checkpoint_interval_s = 300;
int			forst_checkpoints_retained = 3;

typedef struct ForstCkptStatus
{
	uint64		id;				/* 0 until an id is taken */
	Oid			dbid;
	TimestampTz started;
	TimestampTz finished;		/* 0 while running */
	uint64		bytes_written;
	uint64		state_bytes;
	int			ntables;
	int			tables_done;	/* progress while running */
	XLogRecPtr	lsn;
	char		status[16];		/* running, completed, failed */
	char		phase[32];
	char		error[256];
} ForstCkptStatus;

typedef struct ForstCkptShared
{
	LWLock	   *lock;
	int			running_pid;	/* 0: none */
	int			cuts_pending;	/* checkpoints between snapshot and manifests */
	uint64		next_id;		/* 0: not known yet (list the store) */
	uint64		attempts;
	int			next_slot;
	ForstCkptStatus ring[FORST_CKPT_RING];
} ForstCkptShared;

static ForstCkptShared *forst_ckpt = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
ckpt_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(ForstCkptShared)));
	RequestNamedLWLockTranche("forst_checkpoint", 1);
}

static void
ckpt_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	forst_ckpt = ShmemInitStruct("forst checkpoints", sizeof(ForstCkptShared), &found);
	if (!found)
	{
		memset(forst_ckpt, 0, sizeof(*forst_ckpt));
		forst_ckpt->lock = &(GetNamedLWLockTranche("forst_checkpoint"))->lock;
	}
	LWLockRelease(AddinShmemInitLock);
}

void
forst_checkpoint_define_gucs(void)
{
	DefineCustomIntVariable("forst.checkpoint_interval",
							"Seconds between automatic checkpoints of each database with forst tables (0: only forst.checkpoint()).",
							NULL, &forst_checkpoint_interval_s, 300, 0, 86400 * 7,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("forst.checkpoints_retained",
							"Number of newest checkpoints kept in the object store (pinned ones are kept too).",
							NULL, &forst_checkpoints_retained, 3, 1, 10000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("forst.checkpoint_timeout",
							"Longest a checkpoint waits for its memtables to be flushed.",
							NULL, &forst_checkpoint_timeout_s, 300, 1, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
}

void
forst_checkpoint_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ckpt_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ckpt_shmem_startup;
}

char *
forst_cluster_id(void)
{
	return psprintf(UINT64_FORMAT, GetSystemIdentifier());
}

char *
forst_checkpoint_key(const char *cluster, uint64 id)
{
	FstObjKey	k;

	forst_objkey_init(&k, FST_OBJKEY_CHECKPOINT);
	if (!fst_objkey_parse_cluster(cluster, &k.cluster))
		return NULL;
	k.checkpoint_id = id;
	return forst_objkey(&k);
}

/* ---------------------------------------------------------------------- */
/* The compaction gate                                                     */

/*
 * Between a checkpoint's snapshot and its reading of the manifests, no
 * compaction may start: one that started later would expire rows by a TTL
 * or watermark newer than the snapshot (expiry is not MVCC: it hides rows
 * at once), and the manifest the checkpoint records would lack rows its
 * snapshot sees.  A compaction computes its expiry rule inside the gate,
 * so it either did so before the snapshot (its rule expires nothing the
 * snapshot sees live) or does not start.  A flush, which the checkpoint
 * itself waits for, does not wait: while the gate is closed it drops no
 * expired rows.  So the watermarks the snapshot sees (recorded with the
 * checkpoint, expiry/cut.h) hold for its files.  Version drops need no gate: they
 * keep what any snapshot still running -- the checkpoint's -- can see.
 */
bool
forst_checkpoint_gate_enter(void)
{
	if (forst_ckpt == NULL)
		return true;
	LWLockAcquire(forst_ckpt->lock, LW_SHARED);
	if (forst_ckpt->cuts_pending > 0)
	{
		LWLockRelease(forst_ckpt->lock);
		return false;
	}
	return true;
}

void
forst_checkpoint_gate_leave(void)
{
	if (forst_ckpt != NULL)
		LWLockRelease(forst_ckpt->lock);
}

static void
cut_begin(bool *open)
{
	LWLockAcquire(forst_ckpt->lock, LW_EXCLUSIVE);
	forst_ckpt->cuts_pending++;
	LWLockRelease(forst_ckpt->lock);
	*open = true;
}

static void
cut_end(bool *open)
{
	if (!*open)
		return;
	LWLockAcquire(forst_ckpt->lock, LW_EXCLUSIVE);
	forst_ckpt->cuts_pending--;
	LWLockRelease(forst_ckpt->lock);
	*open = false;
}

/* ---------------------------------------------------------------------- */
/* Running a checkpoint                                                    */

typedef struct CkptTable
{
	ForstTableDesc d;			/* what it takes to create it again */
	RelFileNode rnode;
	uint64		version;
	uint64		bytes;
	int			files;
} CkptTable;

static ForstCkptStatus *
my_status(int slot)
{
	return &forst_ckpt->ring[slot];
}

static void
set_phase(int slot, const char *phase, int done)
{
	int			total;

	LWLockAcquire(forst_ckpt->lock, LW_EXCLUSIVE);
	strlcpy(my_status(slot)->phase, phase, sizeof(my_status(slot)->phase));
	my_status(slot)->tables_done = done;
	total = my_status(slot)->ntables;
	LWLockRelease(forst_ckpt->lock);
	forst_progress_update(phase, done, total, "tables");
}

/* Waits until no memtable of the tables holds entries logged before lsn. */
static void
flush_before(List *tables, XLogRecPtr lsn, int slot)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   forst_checkpoint_timeout_s * 1000);
	ListCell   *lc;
	int			done = 0;

	foreach(lc, tables)
	{
		CkptTable  *t = lfirst(lc);

		for (;;)
		{
			if (!forst_table_freeze_before(&t->rnode, lsn))
				break;
			forst_wake_flusher();
			if (GetCurrentTimestamp() > deadline)
				ereport(ERROR,
						(errcode(ERRCODE_QUERY_CANCELED),
						 errmsg("forst: checkpoint timed out waiting for table %s to be flushed",
								t->d.name),
						 errhint("Check that the object store is reachable (forst.stats), or raise forst.checkpoint_timeout.")));
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 10, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		set_phase(slot, "flushing memtables", ++done);
	}
}

/*
 * Appends the xids of [lo, xmax) that snap sees (committed, not in
 * progress for it) to buf as a JSON array of [first, last] ranges.
 */
static void
append_visible_ranges(StringInfo buf, TransactionId lo, Snapshot snap)
{
	TransactionId xid;
	bool		open = false;
	TransactionId start = InvalidTransactionId;
	bool		first = true;
	uint32		n = 0;

	appendStringInfoChar(buf, '[');
	for (xid = lo; TransactionIdPrecedes(xid, snap->xmax);)
	{
		bool		vis = TransactionIdDidCommit(xid) && !XidInMVCCSnapshot(xid, snap);

		if ((++n & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (vis && !open)
		{
			start = xid;
			open = true;
		}
		else if (!vis && open)
		{
			TransactionId last = xid;

			TransactionIdRetreat(last);
			appendStringInfo(buf, "%s[%u,%u]", first ? "" : ",", start, last);
			first = false;
			open = false;
		}
		TransactionIdAdvance(xid);
	}
	if (open)
	{
		TransactionId last = snap->xmax;

		TransactionIdRetreat(last);
		appendStringInfo(buf, "%s[%u,%u]", first ? "" : ",", start, last);
	}
	appendStringInfoChar(buf, ']');
}

static void
append_json_str(StringInfo buf, const char *key, const char *value)
{
	appendStringInfo(buf, "\"%s\":", key);
	escape_json(buf, value);
}

uint64
forst_checkpoint_put(const char *key, const char *json)
{
	StringInfoData obj;
	pg_crc32c	c;
	size_t		len = strlen(json);
	FstError	err;
	FstCode		rc;

	INIT_CRC32C(c);
	COMP_CRC32C(c, json, len);
	FIN_CRC32C(c);
	initStringInfo(&obj);
	appendStringInfo(&obj, FORST_CKPT_HEADER " %zu %08x\n%s", len, (unsigned) c, json);
	rc = fst_objstore_put_if_absent(forst_objstore(), key, obj.data, obj.len, &err);
	if (rc == FST_ALREADY_EXISTS)
		return 0;
	if (rc != FST_OK)
		forst_report(rc, &err, psprintf("writing \"%s\"", key));
	return obj.len;
}

/* Writes the checkpoint object under the first free id; returns its size. */
static uint64
write_object(uint64 *id, const char *json)
{
	int			attempt;

	for (attempt = 0; attempt < 100; attempt++)
	{
		uint64		n = forst_checkpoint_put(forst_checkpoint_key(forst_cluster_id(), *id), json);

		if (n > 0)
			return n;
		/* written by a server sharing the cluster id: take the next */
		(*id)++;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DUPLICATE_OBJECT),
			 errmsg("forst: could not find a free checkpoint id")));
	return 0;
}

/* Takes the next id (listing the store the first time). */
static uint64
next_checkpoint_id(void)
{
	uint64		id;

	LWLockAcquire(forst_ckpt->lock, LW_SHARED);
	id = forst_ckpt->next_id;
	LWLockRelease(forst_ckpt->lock);
	if (id == 0)
	{
		uint64	   *ids;
		int			n = forst_checkpoint_list(NULL, &ids);

		id = n > 0 ? ids[n - 1] + 1 : 1;
	}
	return id;
}

static bool cut_open = false;

static uint64
checkpoint_body(int slot, StringInfo json)
{
	List	   *tables;
	List	   *watermarks;
	ListCell   *lc;
	Snapshot	snap;
	XLogRecPtr	lsn;
	TransactionId lo;
	uint64		id;
	uint64		state_bytes = 0;
	uint64		flush_bytes_before = forst_stats_get(FS_FLUSH_BYTES);
	uint64		obj_bytes;
	int			ntables;
	char	   *dbname = get_database_name(MyDatabaseId);

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("forst: a checkpoint cannot run during recovery"),
				 errhint("Take checkpoints on the primary; a standby reads the same objects.")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	tables = NIL;
	foreach(lc, forst_describe_tables())
	{
		CkptTable  *t = palloc0(sizeof(CkptTable));

		t->d = *(ForstTableDesc *) lfirst(lc);
		tables = lappend(tables, t);
	}
	ntables = list_length(tables);
	foreach(lc, tables)
	{
		CkptTable  *t = lfirst(lc);
		Relation	rel = relation_open(t->d.relid, AccessShareLock);

		t->rnode = rel->rd_node;
		relation_close(rel, NoLock);	/* the lock stays until commit */
	}
	LWLockAcquire(forst_ckpt->lock, LW_EXCLUSIVE);
	my_status(slot)->ntables = ntables;
	LWLockRelease(forst_ckpt->lock);

	/* the cut: every transaction S sees logged its entries before lsn */
	cut_begin(&cut_open);
	snap = RegisterSnapshot(GetLatestSnapshot());
	lsn = GetXLogInsertRecPtr();
	watermarks = forst_expiry_watermarks_at(snap);
	LWLockAcquire(forst_ckpt->lock, LW_EXCLUSIVE);
	my_status(slot)->lsn = lsn;
	LWLockRelease(forst_ckpt->lock);

	set_phase(slot, "flushing memtables", 0);
	flush_before(tables, lsn, slot);

	/* the manifest versions that hold the cut, and the pending xids */
	set_phase(slot, "reading manifests", ntables);
	lo = snap->xmin;
	foreach(lc, tables)
	{
		CkptTable  *t = lfirst(lc);
		ForstTableShared *ts = forst_table_shared(&t->rnode, true);
		const FstManifest *m;
		int			l,
					i;

		forst_table_load(ts);
		LWLockAcquire(&ts->lock, LW_SHARED);
		t->version = ts->manifest_version;
		LWLockRelease(&ts->lock);
		if (t->version == 0)
			continue;
		m = forst_manifest_at(&t->rnode, t->version);
		t->bytes = fst_manifest_total_bytes(m);
		t->files = fst_manifest_total_files(m);
		state_bytes += t->bytes;
		for (l = 0; l < FST_NUM_LEVELS; l++)
			for (i = 0; i < m->levels[l].nfiles; i++)
			{
				const FstManifestFile *f = &m->levels[l].files[i];

				if (f->owner == NULL && f->meta.pending_xid_min != 0 &&
					TransactionIdPrecedes(f->meta.pending_xid_min, lo))
					lo = f->meta.pending_xid_min;
			}
	}
	cut_end(&cut_open);			/* compactions may start again */
	if ((uint32) (snap->xmax - lo) > CKPT_MAX_XID_SPAN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("forst: checkpoint would have to settle %u transactions",
						(uint32) (snap->xmax - lo)),
				 errdetail("SST files hold entries of transactions that were running %u transactions ago.",
						   (uint32) (snap->xmax - lo)),
				 errhint("End long-running transactions and let compaction rewrite old files.")));

	id = next_checkpoint_id();
	set_phase(slot, "writing checkpoint", ntables);
	appendStringInfo(json, "{\"format\":%d,\"id\":" UINT64_FORMAT ",", FORST_CKPT_FORMAT, id);
	append_json_str(json, "cluster", forst_cluster_id());
	appendStringInfoChar(json, ',');
	append_json_str(json, "database", dbname ? dbname : "");
	appendStringInfo(json, ",\"dboid\":%u", MyDatabaseId);
	appendStringInfo(json, ",\"started_at\":\"%s\",\"lsn\":\"%X/%X\",",
					 timestamptz_to_str(my_status(slot)->started), LSN_FORMAT_ARGS(lsn));
	appendStringInfo(json, "\"snapshot\":{\"lo\":%u,\"xmin\":%u,\"xmax\":%u,\"visible\":",
					 lo, snap->xmin, snap->xmax);
	append_visible_ranges(json, lo, snap);
	appendStringInfo(json, "},\"state_bytes\":" UINT64_FORMAT ",\"tables\":[", state_bytes);
	foreach(lc, tables)
	{
		CkptTable  *t = lfirst(lc);
		char		prefix[FORST_KEY_LEN];

		forst_table_prefix(&t->rnode, prefix, sizeof(prefix));
		if (lc != list_head(tables))
			appendStringInfoChar(json, ',');
		appendStringInfo(json, "{\"relid\":%u,", t->d.relid);
		append_json_str(json, "name", t->d.name);
		appendStringInfoChar(json, ',');
		append_json_str(json, "prefix", prefix);
		appendStringInfo(json, ",\"manifest\":" UINT64_FORMAT ",\"bytes\":" UINT64_FORMAT
						 ",\"files\":%d,", t->version, t->bytes, t->files);
		forst_describe_append(json, &t->d);
		forst_expiry_append_watermark(json, watermarks, t->d.relid);
		appendStringInfoChar(json, '}');
	}
	appendStringInfoString(json, "]}");
	UnregisterSnapshot(snap);

	obj_bytes = write_object(&id, json->data);
	SPI_finish();

	LWLockAcquire(forst_ckpt->lock, LW_EXCLUSIVE);
	forst_ckpt->next_id = Max(forst_ckpt->next_id, id + 1);
	my_status(slot)->id = id;
	my_status(slot)->state_bytes = state_bytes;
	my_status(slot)->bytes_written = obj_bytes +
		(forst_stats_get(FS_FLUSH_BYTES) - flush_bytes_before);
	LWLockRelease(forst_ckpt->lock);

	set_phase(slot, "retiring old checkpoints", ntables);
	(void) forst_checkpoint_retire(forst_checkpoints_retained);
	return id;
}

static void
finish_status(int slot, const char *status, const char *error)
{
	cut_end(&cut_open);
	LWLockAcquire(forst_ckpt->lock, LW_EXCLUSIVE);
	my_status(slot)->finished = GetCurrentTimestamp();
	strlcpy(my_status(slot)->status, status, sizeof(my_status(slot)->status));
	strlcpy(my_status(slot)->phase, "", sizeof(my_status(slot)->phase));
	if (error)
		strlcpy(my_status(slot)->error, error, sizeof(my_status(slot)->error));
	if (forst_ckpt->running_pid == MyProcPid)
		forst_ckpt->running_pid = 0;
	LWLockRelease(forst_ckpt->lock);
	forst_progress_end();
}

/* On error or exit (PG_ENSURE_ERROR_CLEANUP calls it for both). */
static void
release_on_exit(int code, Datum arg)
{
	int			slot = DatumGetInt32(arg);
	bool		running;

	LWLockAcquire(forst_ckpt->lock, LW_SHARED);
	running = strcmp(my_status(slot)->status, "running") == 0;
	LWLockRelease(forst_ckpt->lock);
	if (running)
		finish_status(slot, "failed", "the process running it exited");
}

uint64
forst_checkpoint_run(void)
{
	int			slot;
	uint64		id = 0;
	StringInfoData json;
	MemoryContext oldcxt = CurrentMemoryContext;

	LWLockAcquire(forst_ckpt->lock, LW_EXCLUSIVE);
	if (forst_ckpt->running_pid != 0 &&
		(kill(forst_ckpt->running_pid, 0) == 0 || errno != ESRCH))
	{
		int			pid = forst_ckpt->running_pid;

		LWLockRelease(forst_ckpt->lock);
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("forst: a checkpoint is already running (process %d)", pid),
				 errhint("Wait for it: forst.checkpoints shows its progress.")));
	}
	forst_ckpt->running_pid = MyProcPid;
	forst_ckpt->attempts++;
	slot = forst_ckpt->next_slot;
	forst_ckpt->next_slot = (slot + 1) % FORST_CKPT_RING;
	memset(my_status(slot), 0, sizeof(ForstCkptStatus));
	my_status(slot)->dbid = MyDatabaseId;
	my_status(slot)->started = GetCurrentTimestamp();
	strlcpy(my_status(slot)->status, "running", sizeof(my_status(slot)->status));
	LWLockRelease(forst_ckpt->lock);

	initStringInfo(&json);
	forst_progress_start("checkpoint", get_database_name(MyDatabaseId));
	PG_ENSURE_ERROR_CLEANUP(release_on_exit, Int32GetDatum(slot));
	{
		PG_TRY();
		{
			id = checkpoint_body(slot, &json);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(oldcxt);
			edata = CopyErrorData();
			finish_status(slot, "failed", edata->message);
			FreeErrorData(edata);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	PG_END_ENSURE_ERROR_CLEANUP(release_on_exit, Int32GetDatum(slot));
	finish_status(slot, "completed", NULL);
	return id;
}

/* ---------------------------------------------------------------------- */
/* SQL interface                                                           */

PG_FUNCTION_INFO_V1(forst_checkpoint_fn);
PG_FUNCTION_INFO_V1(forst_checkpoint_read_fn);
PG_FUNCTION_INFO_V1(forst_checkpoint_ids_fn);
PG_FUNCTION_INFO_V1(forst_checkpoint_status_fn);
PG_FUNCTION_INFO_V1(forst_cluster_id_fn);

/* forst.checkpoint() returns bigint */
Datum
forst_checkpoint_fn(PG_FUNCTION_ARGS)
{
	forst_require_role(ROLE_PG_CHECKPOINT, "pg_checkpoint",
					   "forst.checkpoint", "take a forst checkpoint");
	PG_RETURN_INT64((int64) forst_checkpoint_run());
}

/* forst.checkpoint_read(id bigint, cluster text DEFAULT NULL) returns jsonb */
Datum
forst_checkpoint_read_fn(PG_FUNCTION_ARGS)
{
	char	   *cluster = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *json;

	forst_require_role(ROLE_PG_READ_ALL_STATS, "pg_read_all_stats",
					   "forst.checkpoint_read", "read checkpoint objects");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	json = forst_checkpoint_fetch(cluster, (uint64) PG_GETARG_INT64(0));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/* forst.checkpoint_ids(cluster text DEFAULT NULL) returns setof bigint */
Datum
forst_checkpoint_ids_fn(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *cluster = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	uint64	   *ids;
	int			n,
				i;

	forst_require_role(ROLE_PG_READ_ALL_STATS, "pg_read_all_stats",
					   "forst.checkpoint_ids", "list checkpoint objects");
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	n = forst_checkpoint_list(cluster, &ids);
	for (i = 0; i < n; i++)
	{
		Datum		v = Int64GetDatum((int64) ids[i]);
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &v, &isnull);
	}
	return (Datum) 0;
}

/* forst._checkpoint_status(): this server's recent checkpoint attempts */
Datum
forst_checkpoint_status_fn(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ForstCkptStatus ring[FORST_CKPT_RING];
	int			i;

	forst_require_role(ROLE_PG_READ_ALL_STATS, "pg_read_all_stats",
					   "forst._checkpoint_status", "read the status of checkpoints");
	InitMaterializedSRF(fcinfo, 0);
	LWLockAcquire(forst_ckpt->lock, LW_SHARED);
	memcpy(ring, forst_ckpt->ring, sizeof(ring));
	LWLockRelease(forst_ckpt->lock);
	for (i = 0; i < FORST_CKPT_RING; i++)
	{
		ForstCkptStatus *s = &ring[i];
		Datum		v[11];
		bool		nulls[11];
		char		lsn[32];

		if (s->started == 0)
			continue;
		memset(nulls, 0, sizeof(nulls));
		v[0] = Int64GetDatum((int64) s->id);
		nulls[0] = s->id == 0;
		v[1] = ObjectIdGetDatum(s->dbid);
		v[2] = TimestampTzGetDatum(s->started);
		v[3] = IntervalPGetDatum(DatumGetIntervalP(DirectFunctionCall2(timestamp_mi,
																	   TimestampTzGetDatum(s->finished ? s->finished : GetCurrentTimestamp()),
																	   TimestampTzGetDatum(s->started))));
		v[4] = Int64GetDatum((int64) s->bytes_written);
		v[5] = Int64GetDatum((int64) s->state_bytes);
		v[6] = Int32GetDatum(s->ntables);
		snprintf(lsn, sizeof(lsn), "%X/%X", LSN_FORMAT_ARGS(s->lsn));
		v[7] = LSNGetDatum(s->lsn);
		nulls[7] = s->lsn == InvalidXLogRecPtr;
		v[8] = CStringGetTextDatum(s->status);
		v[9] = CStringGetTextDatum(s->phase[0] ? psprintf("%s (%d of %d tables)", s->phase,
																 s->tables_done, s->ntables) : "");
		nulls[9] = s->phase[0] == '\0';
		v[10] = CStringGetTextDatum(s->error);
		nulls[10] = s->error[0] == '\0';
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}

/* forst.cluster_id() returns text */
Datum
forst_cluster_id_fn(PG_FUNCTION_ARGS)
{
	forst_require_role(ROLE_PG_READ_ALL_STATS, "pg_read_all_stats",
					   "forst.cluster_id", "read the id naming this server's objects");
	PG_RETURN_TEXT_P(cstring_to_text(forst_cluster_id()));
}
