/*-------------------------------------------------------------------------
 *
 * backup.c
 *	  Base backups (pg_basebackup, pg_backup_start): before the backup's
 *	  checkpoint fixes its redo pointer, every forst row logged so far is
 *	  in SST files, and no forst row is logged until that checkpoint began.
 *
 * Why.  A server started from a base backup replays WAL from the backup's
 * checkpoint redo pointer R only, and pg_basebackup copies no replication
 * slots: forst's slot, which keeps older WAL for rows still in memtables,
 * is not there.  Rows logged before R and not yet in SST files would be
 * lost.  So, when a backup starts, forst
 *
 *	1. asks for an immediate checkpoint and waits for it: a spread
 *	   checkpoint in progress would otherwise delay the backup's own, and
 *	   forst writes would wait for it (step 4);
 *	2. has the flush worker write every memtable holding rows logged
 *	   before now to SST files (writers go on meanwhile);
 *	3. closes the "gate": forst writers wait before logging a row; then it
 *	   flushes what was logged meanwhile, up to the insert position F.
 *	   Every row logged before F is now in SST files and published
 *	   manifests (forst's slot moved to F), and no row is logged after F;
 *	4. lets the backup go on.  Its checkpoint computes R >= F, and writers
 *	   pass the gate once the redo pointer has reached F, or after
 *	   GATE_TIMEOUT_MS with a WARNING (rows logged from then on until the
 *	   backup's checkpoint begins may be missing from the backup).
 *
 * PostgreSQL 15 has no hook at the start of a backup, so forst finds the
 * two ways in:
 *
 *	- the replication command BASE_BACKUP (pg_basebackup and the tools
 *	  built on it).  A walsender logs "received replication command: ..."
 *	  before it runs a command, at LOG if log_replication_commands is on,
 *	  else at DEBUG1 (usually not emitted at all).  forst turns the setting
 *	  on in walsenders (ClientAuthentication_hook) and does the work from
 *	  emit_log_hook when the command is BASE_BACKUP, dropping the log line
 *	  if the user had not asked for it.  This needs log_min_messages below
 *	  FATAL (LOG is emitted at every other level).
 *	- pg_backup_start() called from SQL: an ExecutorStart_hook spots the
 *	  function in a top-level SELECT (the usual "SELECT pg_backup_start(...)";
 *	  fmgr's needs_fmgr_hook is never consulted for built-in functions).
 *
 * Errors (the flush does not finish within forst.checkpoint_timeout, a
 * backup from a standby with rows in memtables) are raised there, so the
 * backup fails rather than misses rows.
 *
 * Limit: writers pass the gate at the first checkpoint that begins after
 * step 3, which is the backup's own unless another one begins in the
 * instant between (a CHECKPOINT command; step 1 makes timed and WAL-volume
 * checkpoints unlikely there).  Rows logged between that checkpoint and the
 * backup's would then be missing from the backup.  Telling the backup's
 * checkpoint apart would need the checkpointer's private counters.
 *
 * While a backup runs (a process that started one is alive, or until its
 * pg_backup_stop()), forst.gc() deletes nothing: a default, in-data-
 * directory store is copied file by file, and the copy must keep every SST
 * file of the manifests it holds.  The file forst/backup_start, written at
 * step 3, tells a server started from the backup that rows before F are in
 * its SST files, so that a missing slot is expected there; it keeps it as
 * forst/restored_from_backup, which lets forst_table_load pass over
 * manifests whose SST files the copy lacks (objects/store.c).  The primary
 * removes forst/backup_start once no backup runs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "pgstat.h"
#include "postmaster/bgwriter.h"
#include "replication/slot.h"
#include "replication/walsender.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "am/forst.h"
#include "am/objects/store.h"
#include "am/shmem/shmem.h"
#include "am/wal/unlogged.h"
#include "am/wal/wal.h"

/*
 * libpq/auth.h's hook, declared here: that header pulls in libpq-be.h and
 * with it the GSSAPI headers of PostgreSQL's build, which a server
 * development package need not have.  Port is the same struct.
 */
struct Port;
typedef void (*forst_client_auth_hook_type) (struct Port *port, int status);
extern PGDLLIMPORT forst_client_auth_hook_type ClientAuthentication_hook;

#define FORST_BACKUP_FILE		"forst/backup_start"
#define MAX_BACKUPS				16
#define GATE_TIMEOUT_MS			30000

typedef struct ForstBackupProc
{
	int			pgprocno;
	int			pid;
} ForstBackupProc;

typedef struct ForstBackupShared
{
	pg_atomic_uint32 gate_closed;	/* writers wait (fast-path flag) */
	LWLock	   *file_lock;		/* writing and removing forst/backup_start */
	slock_t		mutex;			/* protects the rest */
	int			npreparing;		/* backups between steps 3 and 4 */
	XLogRecPtr	gate_lsn;		/* writers pass once the redo pointer is here */
	TimestampTz gate_deadline;	/* ... or at this time, with a WARNING */
	int			nbackups;
	ForstBackupProc backups[MAX_BACKUPS];
} ForstBackupShared;

static ForstBackupShared *bsh = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static emit_log_hook_type prev_emit_log_hook = NULL;
static forst_client_auth_hook_type prev_client_auth_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;

/* in a walsender: whether the user asked for log_replication_commands */
static bool user_logs_commands = true;
static bool in_emit_hook = false;

static void
backup_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(ForstBackupShared)));
	RequestNamedLWLockTranche("forst_backup", 1);
}

static void
backup_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bsh = ShmemInitStruct("forst backup state", sizeof(ForstBackupShared), &found);
	if (!found)
	{
		memset(bsh, 0, sizeof(*bsh));
		pg_atomic_init_u32(&bsh->gate_closed, 0);
		SpinLockInit(&bsh->mutex);
		bsh->file_lock = &(GetNamedLWLockTranche("forst_backup"))->lock;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* ---------------------------------------------------------------------- */
/* The gate                                                                */

bool
forst_backup_gate_closed(void)
{
	return bsh != NULL && pg_atomic_read_u32(&bsh->gate_closed) != 0;
}

/*
 * Opens the gate unless a backup is still preparing; with timed_out, says
 * (once) that writers stopped waiting for the backup's checkpoint.
 */
static void
open_gate(bool timed_out)
{
	bool		opened = false;
	XLogRecPtr	lsn;

	SpinLockAcquire(&bsh->mutex);
	lsn = bsh->gate_lsn;
	if (bsh->npreparing == 0 && pg_atomic_read_u32(&bsh->gate_closed))
	{
		pg_atomic_write_u32(&bsh->gate_closed, 0);
		bsh->gate_lsn = InvalidXLogRecPtr;
		opened = true;
	}
	SpinLockRelease(&bsh->mutex);
	if (opened && timed_out)
		ereport(WARNING,
				(errmsg("forst: writes waited %d s for a base backup's checkpoint to begin and go on now",
						GATE_TIMEOUT_MS / 1000),
				 errdetail("forst rows written from now until the backup's checkpoint begins (redo pointer %X/%X or later) may be missing from the backup.",
						   LSN_FORMAT_ARGS(lsn)),
				 errhint("Check the checkpointer: a backup's checkpoint should begin at once after forst has flushed.")));
}

/*
 * Called by a forst writer before it logs a row while the gate is closed
 * (forst_backup_gate_closed); the caller holds no LWLock.  Returns once
 * the backup's checkpoint has begun.
 */
void
forst_backup_gate_wait(void)
{
	for (;;)
	{
		XLogRecPtr	lsn;
		TimestampTz deadline;
		int			npreparing;

		if (!forst_backup_gate_closed())
			return;
		SpinLockAcquire(&bsh->mutex);
		lsn = bsh->gate_lsn;
		deadline = bsh->gate_deadline;
		npreparing = bsh->npreparing;
		SpinLockRelease(&bsh->mutex);
		if (npreparing == 0 &&
			(XLogRecPtrIsInvalid(lsn) || GetRedoRecPtr() >= lsn))
		{
			open_gate(false);
			continue;
		}
		if (GetCurrentTimestamp() >= deadline)
		{
			open_gate(true);
			if (forst_backup_gate_closed())
				return;			/* still preparing past its deadline */
			continue;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 5, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* ---------------------------------------------------------------------- */
/* Backups in progress                                                     */

static void
register_backup(void)
{
	int			i;

	SpinLockAcquire(&bsh->mutex);
	for (i = 0; i < bsh->nbackups; i++)
		if (bsh->backups[i].pgprocno == MyProc->pgprocno)
			break;
	if (i == bsh->nbackups && i < MAX_BACKUPS)
		bsh->nbackups++;
	if (i < MAX_BACKUPS)
	{
		bsh->backups[i].pgprocno = MyProc->pgprocno;
		bsh->backups[i].pid = MyProcPid;
	}
	SpinLockRelease(&bsh->mutex);
}

static void
unregister_backup(void)
{
	int			i;

	SpinLockAcquire(&bsh->mutex);
	for (i = 0; i < bsh->nbackups; i++)
		if (bsh->backups[i].pgprocno == MyProc->pgprocno)
			bsh->backups[i] = bsh->backups[--bsh->nbackups];
	SpinLockRelease(&bsh->mutex);
}

/*
 * The process id of a base backup that forst prepared and that may still
 * be copying files (its process is alive and, for pg_backup_start, has not
 * called pg_backup_stop), or 0.  When none is left, removes
 * forst/backup_start.
 */
int
forst_backup_in_progress(void)
{
	ForstBackupProc procs[MAX_BACKUPS];
	int			n;
	int			i;
	int			pid = 0;

	if (bsh == NULL)
		return 0;
	SpinLockAcquire(&bsh->mutex);
	n = bsh->nbackups;
	memcpy(procs, bsh->backups, sizeof(ForstBackupProc) * n);
	SpinLockRelease(&bsh->mutex);

	/* an exited process's PGPROC keeps its pid: ask the proc array */
	for (i = 0; i < n; i++)
	{
		int			j;

		if (BackendPidGetProc(procs[i].pid) != NULL)
		{
			pid = procs[i].pid;
			continue;
		}
		SpinLockAcquire(&bsh->mutex);
		for (j = 0; j < bsh->nbackups; j++)
			if (bsh->backups[j].pid == procs[i].pid &&
				bsh->backups[j].pgprocno == procs[i].pgprocno)
				bsh->backups[j--] = bsh->backups[--bsh->nbackups];
		SpinLockRelease(&bsh->mutex);
	}
	if (pid == 0 && access(FORST_BACKUP_FILE, F_OK) == 0)
	{
		/* under file_lock: a backup registers before it writes the file */
		LWLockAcquire(bsh->file_lock, LW_EXCLUSIVE);
		SpinLockAcquire(&bsh->mutex);
		n = bsh->nbackups;
		if (n > 0)
			pid = bsh->backups[0].pid;
		SpinLockRelease(&bsh->mutex);
		if (n == 0)
			(void) unlink(FORST_BACKUP_FILE);
		LWLockRelease(bsh->file_lock);
	}
	return pid;
}

/*
 * At the catch-up after a start (wal/wal.c): the position F from
 * forst/backup_start, or Invalid if there is none.  In a server started
 * from the backup (slot_missing: pg_basebackup copies no slots) the file
 * becomes forst/restored_from_backup, which stays; elsewhere (a primary
 * restarted during a backup, which the restart ended) it is removed.
 */
XLogRecPtr
forst_backup_take_file(bool slot_missing)
{
	FILE	   *f = AllocateFile(FORST_BACKUP_FILE, "r");
	uint32		hi,
				lo;
	XLogRecPtr	lsn = InvalidXLogRecPtr;

	if (f == NULL)
		return InvalidXLogRecPtr;
	if (fscanf(f, "forst rows before %X/%X", &hi, &lo) == 2)
		lsn = ((uint64) hi << 32) | lo;
	FreeFile(f);
	if (slot_missing && !XLogRecPtrIsInvalid(lsn))
		durable_rename(FORST_BACKUP_FILE, FORST_RESTORED_FILE, WARNING);
	else
		(void) unlink(FORST_BACKUP_FILE);
	return lsn;
}


static void
write_backup_file(XLogRecPtr lsn)
{
	char		tmp[] = FORST_BACKUP_FILE ".tmp";
	char		buf[160];
	int			fd;
	int			len;

	if (MakePGDirectory("forst") < 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", "forst")));
	len = snprintf(buf, sizeof(buf),
				   "forst rows before %X/%X are in SST files (written at the start of a base backup)\n",
				   LSN_FORMAT_ARGS(lsn));
	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	if (write(fd, buf, len) != len)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	}
	if (pg_fsync(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", tmp)));
	CloseTransientFile(fd);
	durable_rename(tmp, FORST_BACKUP_FILE, ERROR);
}

/* ---------------------------------------------------------------------- */
/* Preparing a backup                                                      */

static bool
any_table(ForstTableShared *ts, void *arg)
{
	return true;
}

/*
 * Has the flush worker write every memtable entry logged before lsn to SST
 * files (and move forst's slot past it); ERROR at deadline.
 */
static void
flush_before(XLogRecPtr lsn, TimestampTz deadline)
{
	RelFileNode *rnodes = palloc(sizeof(RelFileNode) * FORST_TABLES_BATCH);

	for (;;)
	{
		ForstTableScan scan;
		int			n;
		int			i;

		/* every table, a batch at a time */
		forst_tables_scan_begin(&scan, 0);
		while ((n = forst_tables_next(&scan, any_table, NULL, rnodes,
									  FORST_TABLES_BATCH)) > 0)
		{
			for (i = 0; i < n; i++)
				(void) forst_table_freeze_before(&rnodes[i], lsn);
			forst_wake_flusher();
		}
		if (forst_oldest_unflushed_lsn() >= lsn)
			break;
		if (GetCurrentTimestamp() >= deadline)
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("forst: the base backup cannot start: forst rows logged before %X/%X did not reach SST files within forst.checkpoint_timeout (%d s)",
							LSN_FORMAT_ARGS(lsn), forst_checkpoint_timeout_s),
					 errdetail("A server started from this backup would miss them, so the backup is refused."),
					 errhint("Check that the object store is reachable (forst.stats), then start the backup again.")));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(rnodes);
}

/* Steps 1 to 3 of the header comment; "what" names the backup's command. */
static void
backup_prepare(const char *what)
{
	TimestampTz deadline;
	XLogRecPtr	lsn;

	if (wal_level < WAL_LEVEL_REPLICA || max_replication_slots <= 0)
		return;					/* forst tables are read-only */

	if (RecoveryInProgress())
	{
		/*
		 * A standby's memtables hold rows of the primary's that its backup
		 * would not have (the backup's WAL starts at the standby's last
		 * restartpoint), and a standby cannot flush them.
		 */
		if (forst_memtables_in_use(false))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst: a base backup of a standby is refused while its memtables hold forst rows"),
					 errdetail("A server started from the backup would lack the rows that only the standby's memory holds."),
					 errhint("Take the base backup from the primary.")));
		return;
	}

	/* the memtables must hold what the slot's WAL has before we flush */
	forst_wal_ensure_ready();

	/*
	 * A copy holds unlogged tables as of some checkpoint only: it must not
	 * take the clean-shutdown mark with it (wal/unlogged.h).
	 */
	forst_unlogged_dirty();

	/* 1: no spread checkpoint in progress to delay the backup's own */
	RequestCheckpoint(CHECKPOINT_IMMEDIATE | CHECKPOINT_FORCE | CHECKPOINT_WAIT);

	/* 2: the bulk, while writers go on */
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
										   forst_checkpoint_timeout_s * 1000L);
	flush_before(GetXLogInsertRecPtr(), deadline);

	/* 3: writers wait; flush what they logged meanwhile */
	SpinLockAcquire(&bsh->mutex);
	bsh->npreparing++;
	bsh->gate_deadline = TimestampTzPlusMilliseconds(deadline, GATE_TIMEOUT_MS);
	pg_atomic_write_u32(&bsh->gate_closed, 1);
	SpinLockRelease(&bsh->mutex);
	register_backup();			/* before forst/backup_start exists */
	pg_memory_barrier();		/* pairs with forst_inflight_set's */
	PG_TRY();
	{
		/*
		 * A writer that found the gate open before we closed it set its
		 * in-flight mark before it looked, and may log its row after any
		 * position we read now: wait until such writers are done (a writer
		 * that finds the gate closed clears its mark at once), and only
		 * then take the position F that the flush must reach.
		 */
		lsn = GetXLogInsertRecPtr();
		while (forst_oldest_inflight_lsn() < lsn)
		{
			if (GetCurrentTimestamp() >= deadline)
				ereport(ERROR,
						(errcode(ERRCODE_QUERY_CANCELED),
						 errmsg("forst: the base backup cannot start: a forst write in progress did not finish within forst.checkpoint_timeout (%d s)",
								forst_checkpoint_timeout_s)));
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 1, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		lsn = GetXLogInsertRecPtr();
		flush_before(lsn, deadline);
		LWLockAcquire(bsh->file_lock, LW_EXCLUSIVE);
		write_backup_file(lsn);
		LWLockRelease(bsh->file_lock);
	}
	PG_CATCH();
	{
		SpinLockAcquire(&bsh->mutex);
		bsh->npreparing--;
		SpinLockRelease(&bsh->mutex);
		unregister_backup();
		open_gate(false);
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* 4: the backup's checkpoint opens the gate */
	SpinLockAcquire(&bsh->mutex);
	bsh->npreparing--;
	if (lsn > bsh->gate_lsn)
		bsh->gate_lsn = lsn;
	bsh->gate_deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													 GATE_TIMEOUT_MS);
	SpinLockRelease(&bsh->mutex);
	ereport(LOG,
			(errmsg("forst: %s: forst rows logged before %X/%X are in SST files; forst writes wait for the backup's checkpoint to begin",
					what, LSN_FORMAT_ARGS(lsn))));
}

/* ---------------------------------------------------------------------- */
/* Hooks                                                                   */

static bool
is_command(const char *s, const char *cmd)
{
	size_t		len = strlen(cmd);

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return pg_strncasecmp(s, cmd, len) == 0 &&
		!(isalnum((unsigned char) s[len]) || s[len] == '_');
}

static void
backup_emit_log_hook(ErrorData *edata)
{
	if (am_walsender && !in_emit_hook && edata->message_id != NULL &&
		strcmp(edata->message_id, "received replication command: %s") == 0)
	{
		if (!user_logs_commands)
			edata->output_to_server = false;
		if (edata->elevel == LOG && debug_query_string != NULL &&
			is_command(debug_query_string, "BASE_BACKUP"))
		{
			in_emit_hook = true;
			PG_TRY();
			{
				backup_prepare("BASE_BACKUP");
			}
			PG_FINALLY();
			{
				in_emit_hook = false;
			}
			PG_END_TRY();
		}
	}
	if (prev_emit_log_hook && edata->output_to_server)
		prev_emit_log_hook(edata);
}

/*
 * In walsenders, log_replication_commands on (see the header comment); the
 * user's own value decides whether the log lines are kept.
 */
static void
backup_client_auth(struct Port *port, int status)
{
	if (prev_client_auth_hook)
		prev_client_auth_hook(port, status);
	if (am_walsender && status == STATUS_OK)
	{
		user_logs_commands = log_replication_commands;
		if (!log_replication_commands)
			SetConfigOption("log_replication_commands", "on", PGC_SUSET,
							PGC_S_OVERRIDE);
	}
}

static bool
calls_function_walker(Node *node, Oid *funcid)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == *funcid)
		return true;
	return expression_tree_walker(node, calls_function_walker, funcid);
}

/* Whether a SELECT's top plan nodes call the function (cheap: no scans). */
static bool
plan_calls(Plan *plan, Oid funcid)
{
	for (; plan != NULL; plan = plan->lefttree)
	{
		if (!IsA(plan, Result) && !IsA(plan, ProjectSet) && !IsA(plan, FunctionScan))
			return false;
		if (calls_function_walker((Node *) plan->targetlist, &funcid))
			return true;
		if (IsA(plan, FunctionScan) &&
			calls_function_walker((Node *) ((FunctionScan *) plan)->functions, &funcid))
			return true;
	}
	return false;
}

static void
backup_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;

	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY) && stmt->commandType == CMD_SELECT &&
		list_length(stmt->rtable) <= 1)
	{
		if (plan_calls(stmt->planTree, F_PG_BACKUP_START))
			backup_prepare("pg_backup_start");
		else if (plan_calls(stmt->planTree, F_PG_BACKUP_STOP))
			unregister_backup();
	}
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

void
forst_backup_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = backup_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = backup_shmem_startup;
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = backup_emit_log_hook;
	prev_client_auth_hook = ClientAuthentication_hook;
	ClientAuthentication_hook = backup_client_auth;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = backup_ExecutorStart;
}
