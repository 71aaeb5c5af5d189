/*-------------------------------------------------------------------------
 *
 * sst_internal.h
 *	  Pieces of the SST format shared by the writer and the reader only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_SST_INTERNAL_H
#define FST_SST_INTERNAL_H

#include "sst.h"

/* Footer field offsets (see sst.h for the layout). */
#define FOOTER_VERSION_OFF		0
#define FOOTER_FILTER_OFF		4
#define FOOTER_PROPS_OFF		16
#define FOOTER_INDEX_OFF		28
#define FOOTER_RESERVED_OFF		40
#define FOOTER_CRC_OFF			52
#define FOOTER_MAGIC_OFF		56

/* The index block restarts at every entry: seeks are pure binary search. */
#define FST_INDEX_RESTART_INTERVAL	1

/* The reader (sst_reader.c), shared with its iterator (sst_iter.c). */
struct FstSstReader
{
	FstRangeSource *src;
	FstSstReadOptions opt;
	FstSstProps props;
	FstBlock   *index;			/* decoded index block */
	char	   *filter;			/* bloom filter bytes (owned unless shared) */
	size_t		filter_len;
	FstBlockHandle filter_h;	/* where the filter is stored */
	bool		filter_loaded;	/* filter/filter_len are set */
	bool		filter_shared;	/* in opt's meta store, pinned by handle */
	uint64		filter_handle;
	bool		index_shared;	/* index's contents are in the meta store */
	uint64		index_handle;
	uint64		data_end;		/* end of the data region */
	FstSstReaderStats stats;
	/* sst_peek.c's iterators, kept between lookups (NULL until the first) */
	FstIter    *peek_index_it;	/* over index */
	FstIter    *peek_data_it;	/* over no block between lookups */
	/* sst_peek.c's fences: a 16-byte prefix of each index key's user part */
	uint64	   *fences;			/* 2 per index entry (high, low), or NULL */
	uint32		nfences;
	bool		fences_tried;	/* built, or found impossible (no memory) */
	bool		fences_shared;	/* in the meta store, pinned by handle */
	uint64		fences_handle;
	uint64		index_offset;	/* where the file holds the index (a check) */
};

/* The data block at h, with a reference the caller releases (caches, checks, rewrite hook). */
extern FstCode fst_sst_load_data_block(FstSstReader *r, FstBlockHandle h,
									   FstBlock **out, FstError *err);

extern void fst_sst_props_encode(const FstSstProps *p, FstBuf *out);
extern FstCode fst_sst_props_decode(FstSlice in, FstSstProps *p, FstError *err);

#endif							/* FST_SST_INTERNAL_H */
