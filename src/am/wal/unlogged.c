/*-------------------------------------------------------------------------
 *
 * unlogged.c
 *	  The clean-shutdown mark of unlogged forst tables and the databases
 *	  that have brought theirs back to a checkpoint (see wal/unlogged.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "am/forst.h"
#include "am/wal/unlogged.h"

/* databases that restored their unlogged tables since start-up */
#define FORST_UNLOGGED_MAX_DBS 4096

typedef struct ForstUnloggedShared
{
	LWLock	   *lock;			/* the file and the list */
	pg_atomic_uint32 clean;		/* forst/unlogged_clean is there */
	pg_atomic_uint32 pending;	/* databases must restore before use */
	int			ndone;
	Oid			done[FORST_UNLOGGED_MAX_DBS];
} ForstUnloggedShared;

static ForstUnloggedShared *ush = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static bool
file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/*
 * Reads forst/unlogged_clean: "all" (every database's unlogged tables are
 * whole: returns true), or "databases <oid> ..." (only those; the others
 * never restored theirs after an earlier crash and still must), which
 * become the list of databases done.
 */
static bool
read_mark(void)
{
	FILE	   *f = fopen(FORST_UNLOGGED_CLEAN_FILE, "r");
	char		word[32];
	bool		all = false;

	char		line[128];

	if (f == NULL)
		return false;
	/* the first line says what the file is and when it was written */
	if (fgets(line, sizeof(line), f) == NULL ||
		strncmp(line, "forst-unlogged-clean", 20) != 0)
	{
		fclose(f);
		return false;
	}
	while (fscanf(f, "%31s", word) == 1)
	{
		unsigned long oid;
		char	   *end;

		if (strcmp(word, "all") == 0)
			all = true;
		oid = strtoul(word, &end, 10);
		if (*end == '\0' && oid > 0 && oid <= PG_UINT32_MAX &&
			ush->ndone < FORST_UNLOGGED_MAX_DBS)
			ush->done[ush->ndone++] = (Oid) oid;
	}
	fclose(f);
	return all;
}

static void
unlogged_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(ForstUnloggedShared)));
	RequestNamedLWLockTranche("forst_unlogged", 1);
}

/*
 * In the postmaster, at start-up and after a crash of a child (shared
 * memory is made anew then): the data directory is the working directory.
 */
static void
unlogged_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ush = ShmemInitStruct("forst unlogged tables", sizeof(ForstUnloggedShared),
						  &found);
	if (!found)
	{
		bool		marked = file_exists(FORST_UNLOGGED_CLEAN_FILE) &&
			!file_exists(STANDBY_SIGNAL_FILE) &&
			!file_exists(RECOVERY_SIGNAL_FILE);

		ush->lock = &(GetNamedLWLockTranche("forst_unlogged"))->lock;
		ush->ndone = 0;
		pg_atomic_init_u32(&ush->clean, marked ? 1 : 0);
		pg_atomic_init_u32(&ush->pending, 1);
		if (marked && read_mark())
			pg_atomic_write_u32(&ush->pending, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
forst_unlogged_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = unlogged_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = unlogged_shmem_startup;
}

bool
forst_unlogged_restore_pending(void)
{
	return ush != NULL && pg_atomic_read_u32(&ush->pending) != 0;
}

bool
forst_unlogged_db_restored(Oid db)
{
	bool		done = false;
	int			i;

	LWLockAcquire(ush->lock, LW_SHARED);
	for (i = 0; i < ush->ndone && !done; i++)
		done = ush->done[i] == db;
	LWLockRelease(ush->lock);
	return done;
}

void
forst_unlogged_set_db_restored(Oid db)
{
	if (forst_unlogged_db_restored(db))
		return;
	LWLockAcquire(ush->lock, LW_EXCLUSIVE);
	if (ush->ndone >= FORST_UNLOGGED_MAX_DBS)
	{
		/*
		 * Not recorded, the database would restore again at a later use,
		 * and lose what was written meanwhile: refuse instead.
		 */
		LWLockRelease(ush->lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("forst: more than %d databases restored their unlogged tables since start-up",
						FORST_UNLOGGED_MAX_DBS),
				 errhint("Restart the server cleanly: after a clean shutdown no database needs to.")));
	}
	ush->done[ush->ndone++] = db;
	LWLockRelease(ush->lock);
}

void
forst_unlogged_dirty(void)
{
	if (likely(pg_atomic_read_u32(&ush->clean) == 0))
		return;
	LWLockAcquire(ush->lock, LW_EXCLUSIVE);
	if (pg_atomic_read_u32(&ush->clean) != 0)
	{
		/*
		 * durable_unlink syncs the directory, so that a crash after the
		 * write cannot find the mark again.  ERROR keeps the write from
		 * happening if the file stays.
		 */
		if (durable_unlink(FORST_UNLOGGED_CLEAN_FILE, LOG) != 0 &&
			file_exists(FORST_UNLOGGED_CLEAN_FILE))
		{
			LWLockRelease(ush->lock);
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("forst: could not remove \"%s\" before writing an unlogged table",
							FORST_UNLOGGED_CLEAN_FILE)));
		}
		pg_atomic_write_u32(&ush->clean, 0);
	}
	LWLockRelease(ush->lock);
}

bool
forst_unlogged_mark_clean(void)
{
	const char *tmp = FORST_UNLOGGED_CLEAN_FILE ".tmp";
	FILE	   *f;
	bool		ok;

	LWLockAcquire(ush->lock, LW_EXCLUSIVE);
	(void) MakePGDirectory("forst");
	f = AllocateFile(tmp, PG_BINARY_W);
	ok = f != NULL &&
		fprintf(f, "forst-unlogged-clean %s\n",
				timestamptz_to_str(GetCurrentTimestamp())) > 0;
	if (ok && pg_atomic_read_u32(&ush->pending) == 0)
		ok = fprintf(f, "all\n") > 0;
	else if (ok)
	{
		/* only these databases restored theirs since the last crash */
		int			i;

		ok = fprintf(f, "databases") > 0;
		for (i = 0; ok && i < ush->ndone; i++)
			ok = fprintf(f, " %u", ush->done[i]) > 0;
		ok = ok && fprintf(f, "\n") > 0;
	}
	ok = ok && fflush(f) == 0 && pg_fsync(fileno(f)) == 0;
	if (f != NULL && FreeFile(f) != 0)
		ok = false;
	if (ok)
		ok = durable_rename(tmp, FORST_UNLOGGED_CLEAN_FILE, LOG) == 0;
	if (ok)
		pg_atomic_write_u32(&ush->clean, 1);
	LWLockRelease(ush->lock);
	if (!ok)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("forst: could not write \"%s\": unlogged tables will return to their last checkpoint at the next start",
						FORST_UNLOGGED_CLEAN_FILE)));
	return ok;
}
