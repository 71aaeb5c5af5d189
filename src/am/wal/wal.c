/*-------------------------------------------------------------------------
 *
 * wal.c
 *	  forst's WAL: registering the resource manager, logging records, the
 *	  forst-owned replication slot, and the catch-up replay that makes the
 *	  memtables whole again before anyone reads them after a start.
 *
 * Why a catch-up replay.  PostgreSQL replays WAL from its last
 * checkpoint's redo pointer, and not at all after a clean shutdown, but
 * forst's memtables (shared memory) hold every entry not yet flushed to an
 * SST file, however old.  So forst keeps a physical replication slot,
 * "forst", whose restart_lsn is at or before the oldest WAL record whose
 * entry may not be in an SST file; PostgreSQL then keeps that WAL, and at
 * start-up forst re-reads its own records from there.
 *
 * When the catch-up runs.  A shared flag ("ready") says that the memtables
 * hold everything from the slot's restart_lsn up to where PostgreSQL's own
 * redo takes over.  The first of these to find it unset does the catch-up
 * under forst_wal's lock, and sets it:
 *
 *	- the startup process, at the first forst record it redoes (crash
 *	  recovery, or a standby): it reads [restart_lsn, that record) and then
 *	  redoes the record and the rest in WAL order, so memtable generations
 *	  come out as they were;
 *	- otherwise (a clean shutdown, or a crash recovery without forst
 *	  records) the first backend that touches a forst table
 *	  (forst_table_shared calls forst_wal_ensure_ready): it reads from the
 *	  slot to the end of the WAL.  Every reader and writer of forst tables
 *	  goes through forst_table_shared first and waits there until the flag
 *	  is set, so nobody sees a table before it is whole, and no forst record
 *	  can be written while the end of the WAL is being read.
 *
 * On a standby there is no slot (pg_basebackup does not copy pg_replslot):
 * the catch-up finds nothing, and the standby's own redo of forst records
 * feeds its memtables from its base backup's start on.  The rows logged
 * before that are in SST files: checkpoint/backup.c flushes every memtable when
 * a backup starts, and leaves forst/backup_start for the copy to find.
 *
 * The slot.  It is created (persistent, WAL reserved from the current redo
 * pointer) by the first forst write or CREATE TABLE ... USING forst after
 * start-up if it does not exist, and a marker file forst/wal_slot in the
 * data directory remembers that it was.  Every forst write checks, without
 * a lock, that the slot it knows is still there; if it was dropped (or
 * invalidated by max_slot_wal_keep_size) it is created again with a WARNING
 * saying from which LSN on WAL is kept again.  A missing slot at start-up
 * (with the marker present) is a WARNING too: rows not yet in SST files
 * that PostgreSQL's own redo did not cover are lost.
 *
 * Nothing advances the slot yet.  The flush to SST files must call
 * forst_wal_advance_slot(lsn) with the smallest LSN, over all tables, of a
 * forst record whose entry is not yet durable in the object store.
 *
 * Guards.  Slots need wal_level >= replica and max_replication_slots > 0.
 * Without them the server still starts (a WARNING in the log), so that the
 * rest of the cluster stays usable and the setting can be fixed, but every
 * forst write and CREATE TABLE ... USING forst fails with an error saying
 * why: forst would otherwise accept writes it could lose.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"

#include "am/forst.h"
#include "am/wal/wal.h"

#define FORST_MARKER_DIR	"forst"
#define FORST_MARKER_FILE	"forst/wal_slot"

typedef struct ForstWalShared
{
	LWLock	   *lock;			/* catch-up and slot management */
	pg_atomic_uint32 ready;		/* memtables caught up with the slot */
	int			slot_index;		/* in ReplicationSlotCtl, -1: unknown */
	bool		redo_no_slot;	/* redo found the slot invalidated */
} ForstWalShared;

static ForstWalShared *walsh = NULL;
static bool in_catchup = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static RmgrData forst_rmgr = {
	.rm_name = FORST_RMGR_NAME,
	.rm_redo = forst_redo,
	.rm_desc = forst_desc,
	.rm_identify = forst_identify,
};

static void
forst_wal_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(ForstWalShared)));
	RequestNamedLWLockTranche("forst_wal", 1);
}

static void
forst_wal_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	walsh = ShmemInitStruct("forst WAL state", sizeof(ForstWalShared), &found);
	if (!found)
	{
		walsh->lock = &(GetNamedLWLockTranche("forst_wal"))->lock;
		pg_atomic_init_u32(&walsh->ready, 0);
		walsh->slot_index = -1;
		walsh->redo_no_slot = false;
	}
	LWLockRelease(AddinShmemInitLock);
}

static bool
wal_settings_ok(void)
{
	return wal_level >= WAL_LEVEL_REPLICA && max_replication_slots > 0;
}

void
forst_wal_init(void)
{
	RegisterCustomRmgr(FORST_RMGR_ID, &forst_rmgr);
	forst_memtables_ready_hook = forst_wal_ensure_ready;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = forst_wal_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = forst_wal_shmem_startup;

	if (!wal_settings_ok())
		ereport(WARNING,
				(errmsg("forst tables are read-only: forst needs wal_level = replica or logical and max_replication_slots > 0"),
				 errdetail("wal_level is \"%s\" and max_replication_slots is %d.",
						   GetConfigOption("wal_level", false, false),
						   max_replication_slots),
				 errhint("Set wal_level = replica and max_replication_slots to at least 1 more than other uses need, then restart the server.")));
}

static void
forst_wal_check_writable(void)
{
	if (!wal_settings_ok())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst tables cannot be written with wal_level = %s and max_replication_slots = %d",
						GetConfigOption("wal_level", false, false),
						max_replication_slots),
				 errdetail("forst keeps the WAL of rows not yet in SST files with a replication slot, which needs wal_level = replica or logical and max_replication_slots > 0."),
				 errhint("Set wal_level = replica and max_replication_slots to at least 1, then restart the server.")));
}

/* ---------------------------------------------------------------------- */
/* The marker file                                                         */

static bool
marker_exists(void)
{
	struct stat st;

	return stat(FORST_MARKER_FILE, &st) == 0;
}

static void
write_marker(XLogRecPtr restart)
{
	char		tmp[] = FORST_MARKER_FILE ".tmp";
	char		buf[128];
	int			fd;
	int			len;

	if (MakePGDirectory(FORST_MARKER_DIR) < 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", FORST_MARKER_DIR)));
	len = snprintf(buf, sizeof(buf),
				   "forst replication slot \"%s\" created at %X/%X\n",
				   FORST_SLOT_NAME, LSN_FORMAT_ARGS(restart));
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
	durable_rename(tmp, FORST_MARKER_FILE, ERROR);
}

/* ---------------------------------------------------------------------- */
/* The slot                                                                */

/* The slot and its restart_lsn, or NULL. */
static ReplicationSlot *
find_slot(XLogRecPtr *restart)
{
	ReplicationSlot *s = SearchNamedReplicationSlot(FORST_SLOT_NAME, true);

	*restart = InvalidXLogRecPtr;
	if (s)
	{
		SpinLockAcquire(&s->mutex);
		*restart = s->data.restart_lsn;
		SpinLockRelease(&s->mutex);
	}
	return s;
}

/*
 * Lets go of MyReplicationSlot in the startup process.  ReplicationSlotRelease
 * also clears PROC_IN_LOGICAL_DECODING in ProcGlobal->statusFlags at
 * MyProc->pgxactoff, but the startup process is not in the proc array (its
 * pgxactoff names some backend's entry), so for it we do the part that
 * applies to a persistent physical slot by hand.
 */
static void
release_slot(void)
{
	ReplicationSlot *slot = MyReplicationSlot;

	if (!AmStartupProcess())
	{
		ReplicationSlotRelease();
		return;
	}
	Assert(slot->data.persistency == RS_PERSISTENT);
	SpinLockAcquire(&slot->mutex);
	slot->active_pid = 0;
	SpinLockRelease(&slot->mutex);
	ConditionVariableBroadcast(&slot->active_cv);
	MyReplicationSlot = NULL;
}

/* Creates the slot; caller holds walsh->lock. */
static void
create_slot(void)
{
	XLogRecPtr	restart;

	if (MyReplicationSlot != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst cannot create its replication slot \"%s\" in a session that uses replication slot \"%s\"",
						FORST_SLOT_NAME, NameStr(MyReplicationSlot->data.name))));
	ReplicationSlotCreate(FORST_SLOT_NAME, false, RS_PERSISTENT, false);
	/* physical: the current redo pointer (in recovery: where redo began) */
	ReplicationSlotReserveWal();
	ReplicationSlotMarkDirty();
	ReplicationSlotSave();
	restart = MyReplicationSlot->data.restart_lsn;
	walsh->slot_index = ReplicationSlotIndex(MyReplicationSlot);
	release_slot();
	ReplicationSlotsComputeRequiredLSN();
	write_marker(restart);
	ereport(LOG,
			(errmsg("forst: created replication slot \"%s\", keeping WAL from %X/%X",
					FORST_SLOT_NAME, LSN_FORMAT_ARGS(restart))));
}

/* Is the slot we know of still there?  Lock-free; may say no wrongly. */
static bool
slot_known_valid(void)
{
	int			idx = walsh->slot_index;
	volatile ReplicationSlot *vs;

	if (idx < 0)
		return false;
	vs = &ReplicationSlotCtl->replication_slots[idx];
	return vs->in_use &&
		strcmp(NameStr(((ReplicationSlot *) vs)->data.name), FORST_SLOT_NAME) == 0 &&
		!XLogRecPtrIsInvalid(vs->data.restart_lsn);
}

/*
 * In the startup process, before a forst record is redone: a standby (or
 * a primary in crash recovery whose slot is gone) creates the slot, so
 * that its own restartpoints keep the WAL its memtables need and a
 * restart of this server (or a promotion) replays it.  The slot reserves
 * WAL from the redo pointer where this recovery began.
 */
void
forst_wal_redo_ensure_slot(void)
{
	XLogRecPtr	restart;
	ReplicationSlot *s;

	if (slot_known_valid() || !wal_settings_ok() || walsh->redo_no_slot)
		return;
	LWLockAcquire(walsh->lock, LW_EXCLUSIVE);
	s = find_slot(&restart);
	if (s && !XLogRecPtrIsInvalid(restart))
		walsh->slot_index = ReplicationSlotIndex(s);
	else if (s)
	{
		/* invalidated: the first write after recovery replaces it */
		walsh->redo_no_slot = true;
	}
	else
		create_slot();
	LWLockRelease(walsh->lock);
}

/* Makes sure the slot exists before a forst record is written. */
static void
ensure_slot(void)
{
	ReplicationSlot *s;
	XLogRecPtr	restart;
	bool		known;

	if (slot_known_valid())
		return;

	LWLockAcquire(walsh->lock, LW_EXCLUSIVE);
	known = walsh->slot_index >= 0;
	s = find_slot(&restart);
	if (s && !XLogRecPtrIsInvalid(restart))
	{
		walsh->slot_index = ReplicationSlotIndex(s);
		LWLockRelease(walsh->lock);
		return;
	}
	if (s)
	{
		ereport(WARNING,
				(errmsg("forst: replication slot \"%s\" was invalidated; creating it again",
						FORST_SLOT_NAME),
				 errdetail("WAL that forst needed may have been removed: rows not yet in SST files may be lost in a crash."),
				 errhint("Do not limit max_slot_wal_keep_size below what forst needs.")));
		ReplicationSlotDrop(FORST_SLOT_NAME, true);
	}
	else if (known || marker_exists())
		ereport(WARNING,
				(errmsg("forst: replication slot \"%s\" was dropped; creating it again",
						FORST_SLOT_NAME),
				 errdetail("Without it, WAL with forst rows not yet in SST files may have been removed: such rows written before the slot is created again may be lost in a crash."),
				 errhint("Do not drop the replication slot \"%s\": forst replays its WAL from there at start-up.",
						 FORST_SLOT_NAME)));
	create_slot();
	LWLockRelease(walsh->lock);
}

/*
 * Moves the slot's restart_lsn forward to flushed_upto: the flush calls it
 * with the smallest LSN, over all forst tables, of a forst record whose
 * entry is not yet durable in an SST file (or the current insert position
 * when every memtable is empty).  WAL before it may then be removed, and
 * the next start-up replays from there.  Never moves backwards.  On a
 * standby, the redo of the primary's "flushed up to" record (not built
 * yet) must call it too, from the startup process, or the standby's own
 * slot keeps all its WAL.
 */
void
forst_wal_advance_slot(XLogRecPtr flushed_upto)
{
	XLogRecPtr	restart;

	if (AmStartupProcess())
		forst_wal_redo_ensure_slot();	/* a standby's redo of a flush */
	else if (RecoveryInProgress())
		return;
	else
		ensure_slot();
	LWLockAcquire(walsh->lock, LW_EXCLUSIVE);
	ReplicationSlotAcquire(FORST_SLOT_NAME, true);
	SpinLockAcquire(&MyReplicationSlot->mutex);
	restart = MyReplicationSlot->data.restart_lsn;
	if (flushed_upto > restart)
		MyReplicationSlot->data.restart_lsn = flushed_upto;
	SpinLockRelease(&MyReplicationSlot->mutex);
	if (flushed_upto > restart)
	{
		ReplicationSlotMarkDirty();
		ReplicationSlotSave();
	}
	release_slot();
	ReplicationSlotsComputeRequiredLSN();
	LWLockRelease(walsh->lock);
}

/* ---------------------------------------------------------------------- */
/* Logging                                                                 */

/* Logs one version; returns the record's start LSN (for the flush). */
XLogRecPtr
forst_wal_log_put(ForstTableShared *ts, FstSlice ikey, FstSlice value)
{
	/*
	 * A base backup is starting (checkpoint/backup.c): wait until its checkpoint
	 * has begun.  The caller's in-flight mark would keep the backup's flush
	 * from getting past us, so it is set again afterwards.
	 */
	if (unlikely(forst_backup_gate_closed()))
	{
		forst_inflight_clear();
		forst_backup_gate_wait();
		forst_inflight_set(GetXLogInsertRecPtr());
	}
	forst_wal_check_writable();
	forst_wal_ensure_ready();
	ensure_slot();
	return forst_wal_insert_put(&ts->rnode, ikey, value);
}

/*
 * CREATE is logged where a forst table gets a new relfilenode (and refuses
 * when forst cannot be written); DROP after a table's state is dropped at
 * commit or abort, where nothing should fail (so it is skipped when the
 * settings do not allow forst writes: there is nothing to replay then).
 */
void
forst_wal_log_rel(uint8 info, const RelFileNode *rnode)
{
	xl_forst_rel xlrec;

	/*
	 * pg_upgrade restores the schema into the new cluster in binary-upgrade
	 * mode and then resets its WAL: a record or a slot made now would only
	 * leave a slot whose WAL is gone.  The tables it creates are empty.
	 */
	if (IsBinaryUpgrade)
		return;
	if (info == XLOG_FORST_CREATE)
	{
		forst_wal_check_writable();
		forst_wal_ensure_ready();
		ensure_slot();
	}
	else if (!wal_settings_ok() || RecoveryInProgress())
		return;
	xlrec.rnode = *rnode;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	(void) XLogInsert(FORST_RMGR_ID, info);
}

/*
 * MANIFEST is logged by the flush worker once a manifest version is in the
 * store.  Nothing needs it on a server whose settings forbid forst writes.
 */
static void
log_manifest(const RelFileNode *rnode, uint64 version, XLogRecPtr covered_lsn,
			 uint8 info)
{
	xl_forst_manifest xlrec;

	if (!wal_settings_ok() || RecoveryInProgress())
		return;
	xlrec.rnode = *rnode;
	xlrec.version = version;
	xlrec.covered_lsn = covered_lsn;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	(void) XLogInsert(FORST_RMGR_ID, info);
}

void
forst_wal_log_manifest(const RelFileNode *rnode, uint64 version,
					   XLogRecPtr covered_lsn)
{
	log_manifest(rnode, version, covered_lsn, XLOG_FORST_MANIFEST);
}

void
forst_wal_log_manifest_rows(const RelFileNode *rnode, uint64 version,
							XLogRecPtr covered_lsn)
{
	log_manifest(rnode, version, covered_lsn, XLOG_FORST_MANIFEST_ROWS);
}

/* ---------------------------------------------------------------------- */
/* Catch-up                                                                */

/* Replays [slot's restart_lsn, upto); caller holds walsh->lock. */
static void
do_catchup(XLogRecPtr upto)
{
	XLogRecPtr	restart;
	XLogRecPtr	end;
	ReplicationSlot *s;
	uint64		n;
	bool		standby = AmStartupProcess() ? StandbyMode : RecoveryInProgress();
	XLogRecPtr	backup_lsn;

	s = find_slot(&restart);
	/* a backup start's promise, which only a copy of it needs (see below) */
	backup_lsn = forst_backup_take_file(s == NULL || XLogRecPtrIsInvalid(restart));
	if (s == NULL || XLogRecPtrIsInvalid(restart))
	{
		/*
		 * pg_basebackup copies no slots.  A server started from a backup
		 * that forst prepared (checkpoint/backup.c) replays from the backup's
		 * redo pointer, at or after the position before which every forst
		 * row was in SST files: nothing is missing.
		 */
		if (!XLogRecPtrIsInvalid(backup_lsn) && GetRedoRecPtr() >= backup_lsn)
			ereport(LOG,
					(errmsg("forst: started from a base backup: forst rows logged before %X/%X are in SST files, later ones in the WAL from %X/%X",
							LSN_FORMAT_ARGS(backup_lsn),
							LSN_FORMAT_ARGS(GetRedoRecPtr()))));
		else if (!standby && marker_exists())
			ereport(WARNING,
					(errmsg("forst: replication slot \"%s\" is %s", FORST_SLOT_NAME,
							s ? "invalidated" : "missing"),
					 errdetail("forst tables hold only what PostgreSQL's own redo replayed: rows written before the last checkpoint that were not yet in SST files are lost."),
					 errhint("Do not drop the replication slot \"%s\"; forst creates it again at the next write.",
							 FORST_SLOT_NAME)));
		return;
	}
	in_catchup = true;
	forst_in_catchup_replay = !AmStartupProcess();
	PG_TRY();
	{
		n = forst_replay_range(restart, upto, &end);
	}
	PG_FINALLY();
	{
		in_catchup = false;
		forst_in_catchup_replay = false;
	}
	PG_END_TRY();
	ereport(LOG,
			(errmsg("forst: replayed " UINT64_FORMAT " forst WAL records from %X/%X to %X/%X",
					n, LSN_FORMAT_ARGS(restart), LSN_FORMAT_ARGS(end))));
}

/* In the startup process, before redoing the forst record at upto. */
void
forst_wal_catchup_before(XLogRecPtr upto)
{
	if (pg_atomic_read_u32(&walsh->ready))
		return;
	LWLockAcquire(walsh->lock, LW_EXCLUSIVE);
	if (!pg_atomic_read_u32(&walsh->ready))
	{
		do_catchup(upto);
		pg_atomic_write_u32(&walsh->ready, 1);
	}
	LWLockRelease(walsh->lock);
}

/*
 * Whether the catch-up replay is done.  The flush and compaction workers do
 * nothing before: the replay frees and reuses the memtables it rebuilds,
 * and what it has not replayed yet is in no memtable (a flush would move
 * forst's slot past it).
 */
bool
forst_wal_ready(void)
{
	return pg_atomic_read_u32(&walsh->ready) != 0;
}

/*
 * Before anyone uses a table's memtables: waits for (or does) the
 * catch-up replay.
 */
void
forst_wal_ensure_ready(void)
{
	if (likely(pg_atomic_read_u32(&walsh->ready)) || in_catchup ||
		AmStartupProcess())
		return;
	LWLockAcquire(walsh->lock, LW_EXCLUSIVE);
	if (!pg_atomic_read_u32(&walsh->ready))
	{
		do_catchup(InvalidXLogRecPtr);
		pg_atomic_write_u32(&walsh->ready, 1);
	}
	LWLockRelease(walsh->lock);
}
