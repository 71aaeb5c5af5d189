/*-------------------------------------------------------------------------
 *
 * slab_pins.c
 *	  Which backends may still hold pointers into memtable slabs that the
 *	  flush has retired, so that a slab is reused only when none can.
 *
 * A reader takes a table's view (its memtable slabs) and may keep TIDs and
 * entry pointers into those slabs for as long as an executor runs: the rows
 * a scan returned, an UPDATE's target, EvalPlanQual, an open cursor, AFTER
 * trigger events that fetch rows at the end of the statement or, if
 * deferred, at COMMIT.  Between statements of a transaction that has no
 * open cursor and no deferred trigger event on a forst table it holds
 * none.  Waiting for every running transaction instead (as the flush
 * worker used to) let one idle transaction block the reuse of every slab
 * retired after it began, and so stall every writer once the pool had
 * cycled through.
 *
 * The protocol:
 *	- the flush worker numbers retirements (forst_shared->retire_epoch)
 *	  after taking the slab out of its table's view;
 *	- a backend, before it takes a view or fetches a row by TID, publishes
 *	  pins[MyBackendId] = (the epoch it reads) + 1, once per holding period;
 *	- a slab retired at epoch E may be reused when every backend's pin is 0
 *	  or greater than E (it pinned after the retirement, so no view of it
 *	  contains the slab);
 *	- a backend that waits for memtable memory does not count (it would
 *	  wait for itself); the worker decides and gives the slab its new
 *	  generation under the pool lock, which the backend takes to end its
 *	  wait (forst_memory_wait_end), so that it finds its views stale
 *	  before it reads them again;
 *	- a backend unpins at the end of its transaction, and at the end of a
 *	  top-level executor run when no executor is open (cursors keep theirs
 *	  open) and it has not written a forst table with triggers in this
 *	  transaction (deferred trigger events hold TIDs until COMMIT).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/backendid.h"
#include "storage/ipc.h"

#include "am/forst.h"
#include "am/shmem/shmem.h"

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

static bool pinned = false;
static int	exec_depth = 0;			/* executors started and not ended */
static bool keep_until_commit = false;	/* wrote a forst table with triggers */

void
forst_slab_pin(void)
{
	uint64		epoch;

	/*
	 * Not the startup process: in hot standby it has a backend id, but no
	 * executor or transaction end to unpin at, so a pin taken while it
	 * replays (a table view) stayed for good, retired slabs were never
	 * reused, and its own wait for memtable memory hung replay (t/015).
	 * It needs none: only it retires slabs during recovery, and a view it
	 * takes while redoing one record lists no slab retired before.
	 */
	if (pinned || AmStartupProcess() ||
		MyBackendId == InvalidBackendId || MyBackendId > MaxBackends)
		return;
	epoch = pg_atomic_read_u64(&forst_shared->retire_epoch);
	pg_atomic_write_u64(FORST_PIN(MyBackendId), epoch + 1);
	pg_memory_barrier();
	pinned = true;
}

static void
unpin(void)
{
	if (!pinned)
		return;
	pg_memory_barrier();
	pg_atomic_write_u64(FORST_PIN(MyBackendId), 0);
	pinned = false;
}

void
forst_slab_pin_until_commit(void)
{
	keep_until_commit = true;
	forst_slab_pin();
}

bool
forst_slab_reusable(uint64 retired_epoch, const bool *skip)
{
	int			b;

	pg_memory_barrier();
	for (b = 1; b <= MaxBackends; b++)
	{
		uint64		pin = pg_atomic_read_u64(FORST_PIN(b));

		if (pin != 0 && pin - 1 < retired_epoch && !(skip && skip[b]))
			return false;
	}
	return true;
}

int
forst_slab_blocker(uint64 retired_epoch)
{
	int			b;

	for (b = 1; b <= MaxBackends; b++)
	{
		uint64		pin = pg_atomic_read_u64(FORST_PIN(b));

		if (pin != 0 && pin - 1 < retired_epoch && !forst_shared->waiting[b])
			return b;
	}
	return InvalidBackendId;
}

static void
pin_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	exec_depth++;
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
pin_ExecutorEnd(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	if (exec_depth > 0)
		exec_depth--;
	if (exec_depth == 0 && !keep_until_commit)
		unpin();
}

/*
 * The in-flight mark of a write (see put_entry in write/dml.c): set before
 * its WAL record, cleared after its memtable insert.  An error between the
 * two (a cancel while the writer waits for memtable memory, a memory
 * deadlock) skips the clear, so aborts and exits clear it too: a mark left
 * behind would hold forst's slot, and every covered_lsn, at its LSN.
 */
static bool inflight_exit_registered = false;

static void
inflight_clear(void)
{
	if (MyBackendId != InvalidBackendId &&
		pg_atomic_read_u64(FORST_INFLIGHT(MyBackendId)) != 0)
		pg_atomic_write_u64(FORST_INFLIGHT(MyBackendId), 0);
}

static void
inflight_exit(int code, Datum arg)
{
	inflight_clear();
}

void
forst_inflight_set(XLogRecPtr lsn)
{
	if (!inflight_exit_registered)
	{
		before_shmem_exit(inflight_exit, (Datum) 0);
		inflight_exit_registered = true;
	}
	pg_atomic_write_u64(FORST_INFLIGHT(MyBackendId), lsn);
	pg_memory_barrier();
}

void
forst_inflight_clear(void)
{
	pg_memory_barrier();
	pg_atomic_write_u64(FORST_INFLIGHT(MyBackendId), 0);
}

static void
pin_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			inflight_clear();
			forst_memory_wait_end();
			/* FALLTHROUGH */
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			unpin();
			exec_depth = 0;
			keep_until_commit = false;
			break;
		default:
			break;
	}
}

static void
pin_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		inflight_clear();
		forst_memory_wait_end();
	}
}

void
forst_slab_pins_init(void)
{
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = pin_ExecutorStart;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = pin_ExecutorEnd;
	RegisterXactCallback(pin_xact_callback, NULL);
	RegisterSubXactCallback(pin_subxact_callback, NULL);
}
