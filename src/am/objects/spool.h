/*-------------------------------------------------------------------------
 *
 * spool.h
 *	  An object being written, held in a bounded buffer and, past it, in a
 *	  temporary file of the server's, so that building a large SST file
 *	  (a compaction's output, up to forst.target_file_size) costs the
 *	  writer a buffer's worth of memory, not the file's size.
 *
 * Contract:
 *	  forst_spool_begin		in a transaction: allocates the buffer in the
 *							current memory context and opens a temporary
 *							file (fd.c: base/pgsql_tmp, temp_tablespaces
 *							not consulted, under temp_file_limit, deleted
 *							when closed or when the transaction aborts).
 *	  forst_spool_reset		starts the next object (the file is reused).
 *	  spool->sink			the engine's write sink: appends, returning a
 *							code (never raising) when the file fails.
 *							A PostgreSQL error of the file (say,
 *							temp_file_limit exceeded) is caught there and
 *							kept, so that it never jumps through the
 *							engine's code (or curl's, for a source read
 *							during an upload), which would leak what they
 *							allocated.
 *	  forst_spool_source	the object written so far, as a source that
 *							reads it back in pieces (objstore.h), for
 *							fst_objstore_put_if_absent_source and the disk
 *							cache's admission.  An object that fits in the
 *							buffer is read from memory.
 *	  forst_spool_end		closes (deletes) the file, frees the buffer.
 *	  forst_spool_raise_error	after a failure: raises the PostgreSQL
 *							error the file caught, as it was (its SQLSTATE
 *							and message), if it caught one; else returns.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_SPOOL_H
#define FORST_SPOOL_H

#include "postgres.h"

#include "storage/fd.h"
#include "utils/elog.h"

#include "lsm/sst.h"
#include "store/objstore.h"

/* the buffer: what an object smaller than this costs, and no more */
#define FORST_SPOOL_BUFFER (1024 * 1024)

typedef struct ForstSpool
{
	FstWriteSink sink;			/* first: the engine appends through it */
	File		file;			/* the temporary file, or -1 */
	char	   *buf;			/* FORST_SPOOL_BUFFER bytes */
	size_t		buffered;		/* bytes in buf not yet in the file */
	uint64		in_file;		/* bytes of this object in the file */
	FstPutSource src;
	MemoryContext cxt;			/* where the buffer and a caught error live */
	ErrorData  *error;			/* what a file operation raised, or NULL */
} ForstSpool;

extern void forst_spool_begin(ForstSpool *spool);
extern void forst_spool_reset(ForstSpool *spool);
extern FstCode forst_spool_source(ForstSpool *spool,
								  const FstPutSource **src, FstError *err);
extern void forst_spool_end(ForstSpool *spool);
extern void forst_spool_raise_error(ForstSpool *spool);

#endif							/* FORST_SPOOL_H */
