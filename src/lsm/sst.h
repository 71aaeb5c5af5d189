/*-------------------------------------------------------------------------
 *
 * sst.h
 *	  Sorted string table files: the immutable unit of state in object
 *	  storage.
 *
 * File layout:
 *
 *		data block 0 + trailer
 *		...
 *		data block n-1 + trailer
 *		filter block + trailer		bloom over user parts (may be empty)
 *		properties block + trailer	tagged fields (FstSstProps)
 *		index block + trailer		last internal key of each data block ->
 *									its handle (varint offset, varint size)
 *		footer (64 bytes)
 *
 * Footer: fixed32 format version, then (fixed64 offset, fixed32 size) for
 * the filter, properties and index blocks, 12 zero bytes, a masked CRC-32C
 * of the 52 bytes before it, and the 8-byte magic "FORSTSST".  Every byte of
 * a file is covered by a checksum: the footer by its own, every block by its
 * trailer.  A reader validates the footer and all metadata blocks when it
 * opens a file and each data block when it reads it; anything malformed is
 * FST_CORRUPT, a newer format version FST_NOT_SUPPORTED with the cause
 * FST_CAUSE_NEWER_FORMAT.
 *
 * Entries are (internal key, value) with values starting with an entry
 * header (ikey.h).  Keys must be added in strictly increasing fst_ikey_cmp
 * order.  The writer streams blocks to a sink as they fill, so memory stays
 * bounded by one block plus the index and filter.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_SST_H
#define FST_SST_H

#include "block.h"
#include "filemeta.h"
#include "rangesrc.h"

#define FST_SST_MAGIC			"FORSTSST"
/*
 * Version 2 is version 1 whose data blocks may be zstd-compressed.  A
 * writer stamps 2 only on files that use zstd, so that servers that know
 * only version 1 still read every other file, and refuse these as not
 * supported instead of reporting their blocks as corrupt.
 */
#define FST_SST_FORMAT_VERSION	1
#define FST_SST_FORMAT_ZSTD		2
/* the versions a reader accepts: older ones, never newer (docs/operations.md) */
#define FST_SST_FORMAT_OLDEST	FST_SST_FORMAT_VERSION
#define FST_SST_FORMAT_NEWEST	FST_SST_FORMAT_ZSTD
#define FST_SST_FOOTER_SIZE		64

typedef struct FstBlockCache FstBlockCache;

/*
 * A prefix rule: the length of the leading part of a user part that the
 * bloom filter also holds, or 0 if the user part has none.  A range over
 * all user parts with one such prefix (and no others) can then skip a file
 * whose filter says the prefix is absent.  The rule is named by an id > 0
 * that the file's properties keep: a reader answers for a prefix only
 * under the rule the file was written with.
 */
typedef size_t (*FstPrefixFn) (FstSlice user_part);

typedef struct FstSstOptions
{
	size_t		block_size;		/* target uncompressed data block size */
	int			restart_interval;
	int			compression;	/* FST_COMPRESS_* */
	int			bloom_bits_per_key; /* 0 = no filter */
	FstPrefixFn prefix_of;		/* NULL: the filter holds whole user parts */
	uint32		prefix_id;		/* the rule's id, > 0 with prefix_of */
} FstSstOptions;

extern void fst_sst_options_default(FstSstOptions *opt);

/* What a file says about itself (its properties block). */
typedef struct FstSstProps
{
	FstBuf		smallest;		/* internal keys */
	FstBuf		largest;
	uint16		kg_min;
	uint16		kg_max;
	uint64		num_entries;
	uint64		num_tombstones;
	uint64		num_data_blocks;
	uint64		raw_key_bytes;
	uint64		raw_value_bytes;
	uint64		seq_min;
	uint64		seq_max;
	uint32		xid_min;		/* over entries not frozen, modulo 2^32
								 * (fst_xid_range_note); 0/0 if none */
	uint32		xid_max;
	bool		has_ttl;
	int64		ttl_min;
	int64		ttl_max;
	uint32		compression;
	uint32		block_size;
	uint32		bloom_bits_per_key;
	uint32		restart_interval;	/* of data blocks */
	uint32		prefix_id;		/* the filter's prefix rule; 0 for none */
	int64		created_at;		/* microseconds since the Unix epoch */
	uint64		file_size;		/* set by writer finish and reader open */
} FstSstProps;

extern void fst_sst_props_init(FstSstProps *p);
extern void fst_sst_props_free(FstSstProps *p);
/* Fills the range and statistics of a FstFileMeta (id and level untouched). */
extern bool fst_sst_props_to_filemeta(const FstSstProps *p, FstFileMeta *m);

/* --- writing ----------------------------------------------------------- */

/* Where finished bytes go: a buffer, a file, an upload. */
typedef struct FstWriteSink FstWriteSink;
struct FstWriteSink
{
	FstCode		(*append) (FstWriteSink *sink, const char *data, size_t len,
						   FstError *err);
};

/* A sink appending to a caller-owned FstBuf. */
typedef struct FstBufSink
{
	FstWriteSink base;
	FstBuf	   *buf;
} FstBufSink;

extern void fst_buf_sink_init(FstBufSink *s, FstBuf *buf);

/* A sink writing to a caller-owned file descriptor (with write(2)). */
typedef struct FstFdSink
{
	FstWriteSink base;
	int			fd;
} FstFdSink;

extern void fst_fd_sink_init(FstFdSink *s, int fd);

typedef struct FstSstWriter FstSstWriter;

extern FstCode fst_sst_writer_create(const FstSstOptions *opt,
									 FstWriteSink *sink,
									 FstSstWriter **out, FstError *err);

/*
 * Adds an entry.  FST_INVALID_ARGUMENT if the key is not greater than the
 * previous one or the value has no valid entry header.
 */
extern FstCode fst_sst_writer_add(FstSstWriter *w, FstSlice ikey,
								  FstSlice value, FstError *err);

/* Records the TTL column value of the entry just added. */
extern void fst_sst_writer_note_ttl(FstSstWriter *w, int64 ttl);

/* Bytes written so far plus the block being built. */
extern uint64 fst_sst_writer_estimated_size(const FstSstWriter *w);
/* Data blocks finished so far (the one being built not counted). */
extern uint64 fst_sst_writer_num_data_blocks(const FstSstWriter *w);

/* Writes the metadata blocks and the footer; props (optional) gets a copy. */
extern FstCode fst_sst_writer_finish(FstSstWriter *w, FstSstProps *props,
									 FstError *err);
extern void fst_sst_writer_destroy(FstSstWriter *w);

/* --- reading ----------------------------------------------------------- */

/* What FstSstReadOptions.meta_get and meta_put store of a file. */
typedef enum FstSharedMeta
{
	FST_META_FILTER = 0,		/* the bloom filter block */
	FST_META_INDEX = 1,			/* the index block (its contents) */
	FST_META_FENCES = 2,		/* the index fences sst_peek.c builds */
	FST_META_KINDS = 3
} FstSharedMeta;

typedef struct FstSstReadOptions
{
	bool		verify_checksums;	/* false only for fuzzing the parsers */
	FstBlockCache *cache;		/* optional decoded-block cache */
	uint64		cache_id;		/* unique per file within the cache */

	/*
	 * Optional: called for every entry of a data block when the block is
	 * read from the source (after its checksum is verified, before it is
	 * cached), with the entry's value (header first) writable in place.  It
	 * may change the entry header's flags, xid and cid, nothing else: this
	 * is how the table AM presents entries of files another server wrote
	 * (frozen or aborted, by that server's checkpoint).  Blocks rewritten
	 * this way must get a cache_id of their own.
	 */
	void		(*rewrite_entry) (void *arg, FstSlice ikey, char *value,
								  size_t len);
	void	   *rewrite_arg;

	/*
	 * Optional: a second cache of decoded block contents, below cache and
	 * shared between processes (the table AM keeps it in shared memory).
	 * shared_get returns true with *data an fst_malloc'ed copy of the
	 * contents (as rewrite_entry left them) stored under (cache_id, offset);
	 * shared_put offers contents read from the source (it copies them) and
	 * returns true if the shared cache holds them now.  A block the shared
	 * cache holds (found there, or taken by shared_put) is not kept in
	 * cache as well: reads find it there (point reads without a copy,
	 * through shared_peek), and a copy in every process would multiply its
	 * memory by the number of processes.  cache then holds the blocks the
	 * shared cache does not take.
	 */
	bool		(*shared_get) (void *arg, uint64 cache_id, uint64 offset,
							   char **data, size_t *len);
	bool		(*shared_put) (void *arg, uint64 cache_id, uint64 offset,
							   const char *data, size_t len);

	/*
	 * Optional, with shared_get: runs fn over the contents stored under
	 * (cache_id, offset) where they lie, without a copy.  They may be
	 * overwritten while fn reads them, so fn must only read (within len)
	 * and copy out what it needs; shared_peek returns true only if fn
	 * returned true and the contents were intact all along (false if
	 * absent, overwritten, or fn returned false).
	 */
	bool		(*shared_peek) (void *arg, uint64 cache_id, uint64 offset,
								bool (*fn) (void *fnarg, const char *data,
											size_t len),
								void *fnarg);

	/*
	 * Optional: a store of a file's metadata shared between processes (the
	 * FstSharedMeta kinds below), so that each process that reads a file
	 * does not hold a copy of its bloom filter and block index.  meta_get
	 * returns the bytes stored under (cache_id, kind), if they are len
	 * bytes and stored with this check (where the file holds them), or
	 * NULL; meta_put offers bytes read from the source and validated, or
	 * built from them (it copies them), and returns the stored copy, or
	 * NULL if the store does not take them.  What either returns is
	 * pinned: it stays where it is, unchanged, until meta_release(*handle),
	 * which the reader calls when it closes.  None of them may fail
	 * otherwise.  The stored bytes are 8-byte aligned.
	 */
	const char *(*meta_get) (void *arg, uint64 cache_id, int kind,
							 uint64 check, size_t len, uint64 *handle);
	const char *(*meta_put) (void *arg, uint64 cache_id, int kind,
							 uint64 check, const char *data, size_t len,
							 uint64 *handle);
	void		(*meta_release) (void *arg, uint64 handle);

	/*
	 * Optional: told where the file's metadata (filter, properties, index,
	 * footer) starts, once the footer is read and before any of it is
	 * read past the tail, so that a caching source can keep it.
	 */
	void		(*meta_region) (void *arg, uint64 offset);
	void	   *meta_region_arg;
	void	   *shared_arg;
} FstSstReadOptions;

extern void fst_sst_read_options_default(FstSstReadOptions *opt);

typedef struct FstSstReader FstSstReader;

/*
 * Opens a file over src (borrowed: it must outlive the reader).  Reads the
 * tail of the file in one request and validates footer, index and
 * properties, and the bloom filter if the tail holds it (otherwise the
 * first fst_sst_may_contain or fst_sst_get reads and validates it).
 */
extern FstCode fst_sst_open(FstRangeSource *src, const FstSstReadOptions *opt,
							FstSstReader **out, FstError *err);
extern void fst_sst_close(FstSstReader *r);

/* Bytes the reader holds, mostly its index block and bloom filter. */
extern size_t fst_sst_memory(const FstSstReader *r);

extern const FstSstProps *fst_sst_props(const FstSstReader *r);

/*
 * The bloom filter's answer for a user part (key group + user key) in
 * *may.  The first call may read the filter (fst_sst_open leaves a filter
 * the file's tail does not hold unread); a read or corruption error is
 * returned then, with *may true.
 */
extern FstCode fst_sst_may_contain(FstSstReader *r, FstSlice user_part,
								   bool *may, FstError *err);
/* The same, for user_part's fst_bloom_hash computed by the caller once. */
extern FstCode fst_sst_may_contain_hash(FstSstReader *r, uint64 hash,
										bool *may, FstError *err);

/*
 * Whether the file may hold user parts whose prefix under rule prefix_id
 * (FstSstOptions.prefix_of) is prefix: false only if the file was written
 * with that rule and its filter says the prefix is absent.  Reads the
 * filter as fst_sst_may_contain does.
 */
extern FstCode fst_sst_may_contain_prefix(FstSstReader *r, uint32 prefix_id,
										  FstSlice prefix, bool *may,
										  FstError *err);

/*
 * Where the data block that a seek to user_part (newest version first)
 * lands in is stored: *offset and *len (with its trailer), for prefetching.
 * false when user_part sorts after the file's last key.
 */
extern bool fst_sst_block_for(FstSstReader *r, FstSlice user_part,
							  uint64 *offset, uint64 *len);

/*
 * The file's data blocks, by number (fst_sst_num_blocks of them), for
 * sampling: fst_sst_block_last_key copies the last internal key of block
 * block_no into *key (its index entry) and returns false past the last
 * block or if memory runs out.
 */
extern uint32 fst_sst_num_blocks(const FstSstReader *r);
extern bool fst_sst_block_last_key(FstSstReader *r, uint32 block_no,
								   FstBuf *key);

/* Reads the bloom filter now if it is not read yet (to warm caches). */
extern FstCode fst_sst_load_filter(FstSstReader *r, FstError *err);

/*
 * An iterator over all entries.  Each instance holds one data block at a
 * time.  The reader must outlive it.
 */
extern FstIter *fst_sst_iter_create(FstSstReader *r);

/*
 * A point read without a copy of the data block (sst_peek.c): the versions
 * of user_part in the data block that target (user_part + the highest
 * sequence wanted) falls in, if that block is decoded in the reader's block
 * cache or the shared one (shared_peek), copied into *out, newest first,
 * with their positions (fst_sst_iter_position's block and entry numbers).
 * Returns false when the block cannot answer this way -- not cached, the
 * versions may go on into the next block, more versions or bytes than out
 * holds, or a malformed block -- and the caller then reads with an
 * iterator.  Does not consult the bloom filter.
 */
#define FST_SST_PEEK_VERSIONS	16

typedef struct FstSstPeekVersion
{
	FstSlice	key;			/* internal key, in buf */
	FstSlice	value;			/* in buf */
	uint32		entry_no;
} FstSstPeekVersion;

typedef struct FstSstPeek
{
	uint32		block_no;
	int			nversions;
	FstSstPeekVersion v[FST_SST_PEEK_VERSIONS];
	size_t		used;
	char		buf[4096];
} FstSstPeek;

extern bool fst_sst_peek(FstSstReader *r, FstSlice target, FstSlice user_part,
						 FstSstPeek *out);

/*
 * Where the entry an SST iterator is at lives: data block number and entry
 * number within the block (a stable address of one version in an immutable
 * file; the table AM puts it in TIDs).  fst_sst_read_at copies the entry at
 * such an address; FST_NOT_FOUND if there is none.
 */
extern void fst_sst_iter_position(FstIter *it, uint32 *block_no,
								  uint32 *entry_no);
extern FstCode fst_sst_read_at(FstSstReader *r, uint32 block_no,
							   uint32 entry_no, FstBuf *key, FstBuf *value,
							   FstError *err);

/*
 * Point lookup: the newest version of user_part with seq <= max_seq that
 * visible() accepts (NULL accepts every version).  Consults the bloom
 * filter first.  On FST_GET_FOUND, value (if not NULL) receives the whole
 * value (entry header + payload) and hdr the decoded header; on
 * FST_GET_DELETED the visible version is a tombstone; FST_GET_NONE means
 * this file has no visible version and older sources must be asked.
 * (lookup.c: the per-file part of fst_lookup_get, for one file alone.)
 */
typedef enum FstGetResult
{
	FST_GET_NONE = 0,
	FST_GET_FOUND,
	FST_GET_DELETED
} FstGetResult;

typedef bool (*FstVisibleFn) (void *arg, const FstEntryHeader *hdr);

extern FstCode fst_sst_get(FstSstReader *r, FstSlice user_part, uint64 max_seq,
						   FstVisibleFn visible, void *arg,
						   FstGetResult *result, FstEntryHeader *hdr,
						   FstBuf *value, FstError *err);

/* Reader statistics (cumulative). */
typedef struct FstSstReaderStats
{
	uint64		bloom_checks;
	uint64		bloom_negatives;	/* lookups the filter answered alone */
	uint64		block_reads;	/* data blocks read from the source */
	uint64		cache_hits;
	uint64		shared_hits;	/* data blocks found by shared_get */
	uint64		filter_loads;	/* 1 once the bloom filter was read */
	uint64		filter_shared;	/* 1 if it is in the meta_get store */
	uint64		index_shared;	/* 1 if the index is */
} FstSstReaderStats;

extern const FstSstReaderStats *fst_sst_reader_stats(const FstSstReader *r);

#endif							/* FST_SST_H */
