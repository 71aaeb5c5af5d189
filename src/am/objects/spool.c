/*-------------------------------------------------------------------------
 *
 * spool.c
 *	  An object being written, in a bounded buffer and a temporary file
 *	  (see objects/spool.h).
 *
 * The engine's SST writer appends a file piece by piece and never reads
 * it back; the object store then wants the whole body.  Holding it in
 * memory made a compaction worker's memory the size of its largest output
 * (forst.target_file_size, 64 MB by default, and twice that for a moment
 * while the buffer grew by doubling), a third of a small server's memory
 * in the pgbench comparison with heap.  Here the body goes through a 1 MB
 * buffer into a temporary file, which the page cache holds as long as the
 * kernel can spare it, and is read back in pieces for the upload.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>

#include "pgstat.h"
#include "utils/wait_event.h"

#include "am/objects/spool.h"

/* what spool_file_io returns when the file operation raised an error */
#define SPOOL_CAUGHT	(-2)

/*
 * FileWrite (write) or FileRead of n bytes at offset: what it returns, or
 * SPOOL_CAUGHT if it raised an error.  Such an error is kept in the spool
 * (in the context the spool was begun in) and cleared; the caller returns
 * a code, and forst_spool_raise_error raises the error again, as it was,
 * once the engine has returned, aborting the transaction then.
 */
static int
spool_file_io(ForstSpool *spool, bool write, char *buf, int n, off_t offset)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile int got = -1;
	volatile bool caught = false;

	PG_TRY();
	{
		if (write)
			got = FileWrite(spool->file, buf, n, offset, WAIT_EVENT_BUFFILE_WRITE);
		else
			got = FileRead(spool->file, buf, n, offset, WAIT_EVENT_BUFFILE_READ);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(spool->cxt);
		if (spool->error == NULL)
			spool->error = CopyErrorData();
		FlushErrorState();
		MemoryContextSwitchTo(cxt);
		caught = true;
	}
	PG_END_TRY();
	return caught ? SPOOL_CAUGHT : got;
}

/* Writes what the buffer holds to the file. */
static FstCode
spool_drain(ForstSpool *spool, FstError *err)
{
	int			n;

	if (spool->buffered == 0)
		return FST_OK;
	n = spool_file_io(spool, true, spool->buf, (int) spool->buffered,
					  (off_t) spool->in_file);
	if (n == SPOOL_CAUGHT)
		return fst_error(err, FST_IO_ERROR, "%s", spool->error->message);
	if (n != (int) spool->buffered)
	{
		if (n >= 0)
			errno = ENOSPC;		/* a short write: the disk is full */
		return fst_error(err, FST_IO_ERROR,
						 "could not write temporary file \"%s\" of an SST file being built: %m",
						 FilePathName(spool->file));
	}
	spool->in_file += spool->buffered;
	spool->buffered = 0;
	return FST_OK;
}

static FstCode
spool_append(FstWriteSink *sink, const char *data, size_t len, FstError *err)
{
	ForstSpool *spool = (ForstSpool *) sink;

	while (len > 0)
	{
		size_t		n = Min(len, FORST_SPOOL_BUFFER - spool->buffered);
		FstCode		rc;

		memcpy(spool->buf + spool->buffered, data, n);
		spool->buffered += n;
		data += n;
		len -= n;
		if (spool->buffered == FORST_SPOOL_BUFFER)
		{
			rc = spool_drain(spool, err);
			if (rc != FST_OK)
				return rc;
		}
	}
	return FST_OK;
}

/* The source's reader: from the buffer alone, or from the file. */
static FstCode
spool_read(void *arg, uint64 offset, char *buf, size_t n, FstError *err)
{
	ForstSpool *spool = arg;
	int			got;

	if (spool->in_file == 0)
	{
		memcpy(buf, spool->buf + offset, n);
		return FST_OK;
	}
	got = spool_file_io(spool, false, buf, (int) n, (off_t) offset);
	if (got == SPOOL_CAUGHT)
		return fst_error(err, FST_IO_ERROR, "%s", spool->error->message);
	if (got != (int) n)
	{
		if (got >= 0)
			return fst_error(err, FST_IO_ERROR,
							 "temporary file \"%s\" of an SST file being built: %d of %zu bytes at offset " UINT64_FORMAT,
							 FilePathName(spool->file), got, n, offset);
		return fst_error(err, FST_IO_ERROR,
						 "could not read temporary file \"%s\" of an SST file being built: %m",
						 FilePathName(spool->file));
	}
	return FST_OK;
}

void
forst_spool_begin(ForstSpool *spool)
{
	memset(spool, 0, sizeof(*spool));
	spool->cxt = CurrentMemoryContext;
	spool->sink.append = spool_append;
	spool->buf = palloc(FORST_SPOOL_BUFFER);
	spool->file = OpenTemporaryFile(false);
}

void
forst_spool_reset(ForstSpool *spool)
{
	/* the file keeps its old bytes past the new object's end: unread */
	spool->buffered = 0;
	spool->in_file = 0;
}

FstCode
forst_spool_source(ForstSpool *spool, const FstPutSource **src, FstError *err)
{
	FstCode		rc = FST_OK;

	spool->src.len = spool->in_file + spool->buffered;
	spool->src.read = spool_read;
	spool->src.arg = spool;
	/* an object larger than the buffer is read back from the file alone */
	if (spool->in_file > 0)
		rc = spool_drain(spool, err);
	*src = &spool->src;
	return rc;
}

void
forst_spool_end(ForstSpool *spool)
{
	if (spool->file >= 0)
		FileClose(spool->file);
	spool->file = -1;
	if (spool->buf != NULL)
		pfree(spool->buf);
	spool->buf = NULL;
}

void
forst_spool_raise_error(ForstSpool *spool)
{
	ErrorData  *e = spool->error;

	if (e == NULL)
		return;
	spool->error = NULL;
	if (e->sqlerrcode == ERRCODE_CONFIGURATION_LIMIT_EXCEEDED && e->hint == NULL)
		e->hint = pstrdup("forst builds each SST file it writes in a temporary file, up to forst.target_file_size: "
						  "raise temp_file_limit above that, or lower forst.target_file_size.");
	if (e->context == NULL)
		e->context = pstrdup("building an SST file in a temporary file");
	ReThrowError(e);
}
