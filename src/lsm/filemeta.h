/*-------------------------------------------------------------------------
 *
 * filemeta.h
 *	  What the engine knows about one SST file without opening it: the
 *	  record kept per file in a manifest and used to pick compactions.
 *
 * The key range is inclusive and given as internal keys (smallest and
 * largest entries of the file).  Key bytes are owned by the FstFileMeta
 * (malloc'ed); fst_filemeta_copy / fst_filemeta_clear manage them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_FILEMETA_H
#define FST_FILEMETA_H

#include "fst_common.h"

#define FST_NUM_LEVELS 7

typedef struct FstFileMeta
{
	uint64		file_id;		/* names the object: sst/<spread>/<id>.sst */
	int			level;			/* 0 .. FST_NUM_LEVELS-1 */
	uint64		size;			/* bytes of the whole file */
	char	   *smallest;		/* internal key */
	size_t		smallest_len;
	char	   *largest;		/* internal key */
	size_t		largest_len;
	uint16		kg_min;			/* key-group range, inclusive */
	uint16		kg_max;
	uint64		num_entries;
	uint64		num_tombstones;
	uint64		seq_min;
	uint64		seq_max;
	uint32		xid_min;		/* oldest unfrozen xid (modulo 2^32); 0
								 * when every entry is frozen */
	uint32		xid_max;

	/*
	 * Range of the xids of entries written without the committed flag (their
	 * transactions were running when the file was written); 0/0 if none.
	 * A checkpoint resolves these xids' fate once and for all (forst's
	 * checkpoint.c), because another server cannot ask this one's clog.
	 */
	uint32		pending_xid_min;
	uint32		pending_xid_max;
	bool		has_ttl;		/* TTL column range present */
	int64		ttl_min;
	int64		ttl_max;
	uint64		raw_bytes;		/* uncompressed key + value bytes */
} FstFileMeta;

/* Deep copy; returns false on out of memory (dst is then cleared). */
extern bool fst_filemeta_copy(FstFileMeta *dst, const FstFileMeta *src);
extern void fst_filemeta_clear(FstFileMeta *m);

/* Sets smallest/largest from borrowed bytes (copied). */
extern bool fst_filemeta_set_range(FstFileMeta *m,
								   FstSlice smallest, FstSlice largest);

static inline FstSlice
fst_filemeta_smallest(const FstFileMeta *m)
{
	return fst_slice(m->smallest, m->smallest_len);
}

static inline FstSlice
fst_filemeta_largest(const FstFileMeta *m)
{
	return fst_slice(m->largest, m->largest_len);
}

#endif							/* FST_FILEMETA_H */
