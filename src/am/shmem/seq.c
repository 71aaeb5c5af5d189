/*-------------------------------------------------------------------------
 *
 * seq.c
 *	  The global sequence of entry versions, increasing across restarts.
 *
 * Every version has a sequence number (its place among the versions of
 * its key, and the hidden row id of a keyless table's row).  A new version
 * must get a number above every version already written, also those that
 * only the object store still holds after a restart.  WAL replay moves the
 * counter past what it replays, and loading a table's manifest past its
 * flushed versions, but neither sees everything (replay starts at forst's
 * slot; a table is loaded on first use, which needs the store).  So the
 * counter runs under a lease: numbers below forst_shared->seq_lease may be
 * handed out; reaching it writes a new lease, SEQ_LEASE_CHUNK further, to
 * $PGDATA/forst/seq_lease (durably) first.  At start-up the counter begins
 * at the lease.  A crash thus skips at most one chunk of numbers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"

#include "am/forst.h"
#include "am/shmem/shmem.h"

#define SEQ_LEASE_CHUNK		(UINT64CONST(1) << 20)
#define SEQ_LEASE_FILE		"forst/seq_lease"

/* Reads the lease (0 if none), in the postmaster at start-up. */
uint64
forst_seq_lease_read(void)
{
	char		path[MAXPGPATH];
	char		buf[64];
	FILE	   *f;
	uint64		lease = 0;

	snprintf(path, sizeof(path), "%s/%s", DataDir, SEQ_LEASE_FILE);
	f = AllocateFile(path, "r");
	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL)
		lease = strtou64(buf, NULL, 10);
	FreeFile(f);
	return lease;
}

static void
seq_lease_write(uint64 lease)
{
	char		dir[MAXPGPATH];
	char		path[MAXPGPATH];
	char		tmp[MAXPGPATH];
	char		buf[64];
	int			fd;
	int			len;

	snprintf(dir, sizeof(dir), "%s/forst", DataDir);
	snprintf(path, sizeof(path), "%s/%s", DataDir, SEQ_LEASE_FILE);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	(void) MakePGDirectory(dir);
	len = snprintf(buf, sizeof(buf), UINT64_FORMAT "\n", lease);
	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("forst: could not create file \"%s\": %m", tmp)));
	if (write(fd, buf, len) != len)
	{
		int			save_errno = errno;

		CloseTransientFile(fd);
		errno = save_errno ? save_errno : ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("forst: could not write file \"%s\": %m", tmp)));
	}
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("forst: could not close file \"%s\": %m", tmp)));
	/* fsyncs the file, renames it, fsyncs the directory */
	durable_rename(tmp, path, ERROR);
}

/* The slow path of forst_next_seq: seq reached the lease. */
void
forst_seq_extend_lease(uint64 seq)
{
	LWLockAcquire(forst_shared->lock, LW_EXCLUSIVE);
	PG_TRY();
	{
		uint64		lease = pg_atomic_read_u64(&forst_shared->seq_lease);

		if (seq >= lease)
		{
			uint64		next = seq + SEQ_LEASE_CHUNK;

			seq_lease_write(next);
			pg_atomic_write_u64(&forst_shared->seq_lease, next);
		}
	}
	PG_FINALLY();
	{
		LWLockRelease(forst_shared->lock);
	}
	PG_END_TRY();
}
