/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  Progress of long forst operations (see base/progress.h).
 *
 * One slot per backend id, written only by its backend under a spinlock
 * of its own (a reader copies the slot), read by forst.progress.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/backendid.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "am/base/privileges.h"
#include "am/base/progress.h"

typedef struct ProgressSlot
{
	slock_t		mutex;
	int			pid;			/* 0: none */
	Oid			dbid;
	TimestampTz started;
	char		command[24];
	char		target[64];
	char		phase[48];
	int64		done;
	int64		total;
	char		unit[12];
} ProgressSlot;

static ProgressSlot *slots = NULL;
static bool reporting = false;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static Size
progress_size(void)
{
	return mul_size(MaxBackends + 1, sizeof(ProgressSlot));
}

static void
progress_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(progress_size());
}

static void
progress_shmem_startup(void)
{
	bool		found;
	int			i;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	slots = ShmemInitStruct("forst progress", progress_size(), &found);
	if (!found)
	{
		memset(slots, 0, progress_size());
		for (i = 0; i <= MaxBackends; i++)
			SpinLockInit(&slots[i].mutex);
	}
	LWLockRelease(AddinShmemInitLock);
}

static ProgressSlot *
my_slot(void)
{
	if (slots == NULL || MyBackendId == InvalidBackendId || MyBackendId > MaxBackends)
		return NULL;
	return &slots[MyBackendId];
}

static void
progress_xact_callback(XactEvent event, void *arg)
{
	if (reporting && (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT))
		forst_progress_end();
}

static void
progress_exit(int code, Datum arg)
{
	if (reporting)
		forst_progress_end();
}

void
forst_progress_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = progress_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = progress_shmem_startup;
	RegisterXactCallback(progress_xact_callback, NULL);
}

void
forst_progress_start(const char *command, const char *target)
{
	ProgressSlot *s = my_slot();
	static bool exit_registered = false;

	if (s == NULL)
		return;
	if (!exit_registered)
	{
		before_shmem_exit(progress_exit, (Datum) 0);
		exit_registered = true;
	}
	SpinLockAcquire(&s->mutex);
	s->pid = MyProcPid;
	s->dbid = MyDatabaseId;
	s->started = GetCurrentTimestamp();
	strlcpy(s->command, command, sizeof(s->command));
	strlcpy(s->target, target ? target : "", sizeof(s->target));
	s->phase[0] = '\0';
	s->done = s->total = 0;
	s->unit[0] = '\0';
	SpinLockRelease(&s->mutex);
	reporting = true;
}

void
forst_progress_update(const char *phase, int64 done, int64 total, const char *unit)
{
	ProgressSlot *s = my_slot();

	if (s == NULL || !reporting)
		return;
	SpinLockAcquire(&s->mutex);
	strlcpy(s->phase, phase, sizeof(s->phase));
	s->done = done;
	s->total = total;
	strlcpy(s->unit, unit ? unit : "", sizeof(s->unit));
	SpinLockRelease(&s->mutex);
}

void
forst_progress_end(void)
{
	ProgressSlot *s = my_slot();

	reporting = false;
	if (s == NULL)
		return;
	SpinLockAcquire(&s->mutex);
	s->pid = 0;
	SpinLockRelease(&s->mutex);
}

PG_FUNCTION_INFO_V1(forst_progress_fn);

/*
 * May the current user see the operation of backend pid?  As
 * pg_stat_progress_*: its own role's (or a role whose privileges it has),
 * or everything with pg_read_all_stats.  Background workers run as the
 * bootstrap superuser, so only the latter see their checkpoints and GC.
 */
static bool
may_see(int pid)
{
	PGPROC	   *proc = BackendPidGetProc(pid);

	if (proc == NULL)
		proc = AuxiliaryPidGetProc(pid);
	return forst_may_see_role(proc ? proc->roleId : InvalidOid);
}

/* forst.progress_info(): one row per operation running now that may be seen */
Datum
forst_progress_fn(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	for (i = 1; slots != NULL && i <= MaxBackends; i++)
	{
		ProgressSlot c;
		Datum		v[9];
		bool		nulls[9] = {0};

		SpinLockAcquire(&slots[i].mutex);
		c = slots[i];
		SpinLockRelease(&slots[i].mutex);
		if (c.pid == 0 || !may_see(c.pid))
			continue;
		v[0] = Int32GetDatum(c.pid);
		v[1] = ObjectIdGetDatum(c.dbid);
		v[2] = CStringGetTextDatum(c.command);
		v[3] = CStringGetTextDatum(c.target);
		nulls[3] = c.target[0] == '\0';
		v[4] = TimestampTzGetDatum(c.started);
		v[5] = CStringGetTextDatum(c.phase);
		v[6] = Int64GetDatum(c.done);
		v[7] = Int64GetDatum(c.total);
		v[8] = CStringGetTextDatum(c.unit);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}
