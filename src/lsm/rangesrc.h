/*-------------------------------------------------------------------------
 *
 * rangesrc.h
 *	  Byte-range sources: how an SST reader gets at a file's bytes, whether
 *	  they sit in memory, in a local file, in the disk cache or in an
 *	  object store.  The reader only ever asks for ranges, so one reader
 *	  serves every place a file can live.
 *
 * read() must deliver exactly len bytes or fail: a short object is
 * FST_CORRUPT (the size the source reported was a lie), not a short read.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_RANGESRC_H
#define FST_RANGESRC_H

#include "fst_common.h"

typedef struct FstRangeSource FstRangeSource;

struct FstRangeSource
{
	uint64		size;			/* total bytes */
	FstCode		(*read) (FstRangeSource *src, uint64 offset, size_t len,
						 char *buf, FstError *err);
	void		(*close) (FstRangeSource *src);
	/* counters, maintained by the wrappers below */
	uint64		reads;
	uint64		bytes_read;
};

static inline FstCode
fst_range_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
			   FstError *err)
{
	if (offset > src->size || len > src->size - offset)
		return fst_error(err, FST_CORRUPT,
						 "read of %zu bytes at offset " UINT64_FORMAT
						 " is past the end of a " UINT64_FORMAT "-byte file",
						 len, offset, src->size);
	src->reads++;
	src->bytes_read += len;
	return src->read(src, offset, len, buf, err);
}

static inline void
fst_range_close(FstRangeSource *src)
{
	if (src)
		src->close(src);
}

/* Bytes in memory; copied unless copy is false (then they must outlive it). */
extern FstRangeSource *fst_range_source_memory(const char *data, size_t len,
											   bool copy);

/* A local file opened read-only (pread). */
extern FstCode fst_range_source_file(const char *path, FstRangeSource **out,
									 FstError *err);

/*
 * A window over inner (which it owns and closes): the third and later
 * reads of a run, each starting where the one before it ended (an
 * iterator going through consecutive blocks), fetch the aligned
 * window-sized pieces around them from inner in one read and keep them, so
 * that the next blocks come from memory.  Any other read goes straight to
 * inner, as do reads of window size or more: a point read, or a short
 * range that reads on into one more block, reads only its blocks.  Suits
 * an inner source that serves whole aligned pieces at once anyway (the
 * disk cache reads and checks a whole chunk to serve any part of it):
 * small blocks read in order then cost one inner read per piece, not one
 * per block.  NULL when out of memory (inner is closed then).
 */
extern FstRangeSource *fst_range_source_window(FstRangeSource *inner,
											   size_t window);

#endif							/* FST_RANGESRC_H */
