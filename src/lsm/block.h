/*-------------------------------------------------------------------------
 *
 * block.h
 *	  Sorted key/value blocks: the unit of I/O, compression and caching
 *	  inside an SST file.
 *
 * Block contents (uncompressed):
 *
 *		entry*  restart[num_restarts] (fixed32 each)  num_restarts (fixed32)
 *		entry = varint shared, varint unshared, varint value_len,
 *				unshared key bytes, value bytes
 *
 * "shared" is the length of the prefix the key has in common with the
 * previous key; it is 0 at every restart point, every restart_interval
 * entries, so a reader can binary-search the restart array and then scan.
 * Keys are internal keys in fst_ikey_cmp order (or any keys in the order a
 * caller-supplied comparator gives; index blocks use the same comparator).
 *
 * On disk a block is followed by a 5-byte trailer: a compression type byte
 * and a masked CRC-32C of the stored payload plus that type byte.  A
 * compressed payload is varint(raw length) + the compressed bytes: an lz4
 * frame-less block, or a zstd frame.
 *
 * lz4 decodes about four times as fast as zstd; zstd's entropy coding makes
 * typical rows a third to two fifths smaller (text, hex, small integers).
 * Each process compresses and decompresses zstd with one context of its
 * own, created at first use: block writing and decoding are not
 * thread-safe (the server's processes are single-threaded).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_BLOCK_H
#define FST_BLOCK_H

#include "iter.h"

#define FST_BLOCK_TRAILER_SIZE	5
#define FST_COMPRESS_NONE		0
#define FST_COMPRESS_LZ4		1
#define FST_COMPRESS_ZSTD		2
#define FST_COMPRESS_MAX		FST_COMPRESS_ZSTD

/* zstd's level for FST_COMPRESS_ZSTD blocks (1: fastest of the standard) */
#define FST_ZSTD_LEVEL			1

/* Where a block lives in a file: offset and payload size (no trailer). */
typedef struct FstBlockHandle
{
	uint64		offset;
	uint64		size;
} FstBlockHandle;

extern void fst_block_handle_encode(FstBuf *b, FstBlockHandle h);
extern bool fst_block_handle_decode(FstSlice in, FstBlockHandle *h);

/* --- building ---------------------------------------------------------- */

typedef struct FstBlockBuilder
{
	FstBuf		buf;
	FstBuf		restarts;		/* fixed32 offsets */
	int			restart_interval;
	int			counter;		/* entries since the last restart */
	int			num_entries;
	FstBuf		last_key;
} FstBlockBuilder;

extern void fst_block_builder_init(FstBlockBuilder *bb, int restart_interval);
extern void fst_block_builder_free(FstBlockBuilder *bb);
extern void fst_block_builder_reset(FstBlockBuilder *bb);
/* Keys must be added in increasing order (the caller's responsibility). */
extern void fst_block_builder_add(FstBlockBuilder *bb, FstSlice key, FstSlice value);
/* Bytes the finished block would take (before compression). */
extern size_t fst_block_builder_size_estimate(const FstBlockBuilder *bb);
/* Appends the restart array; returns the finished contents (borrowed). */
extern FstSlice fst_block_builder_finish(FstBlockBuilder *bb);
extern bool fst_block_builder_oom(const FstBlockBuilder *bb);

/*
 * Compresses contents (if type is lz4 or zstd and it saves at least 1/8;
 * otherwise the block is stored as it is) and appends
 * payload + trailer to out.  *handle gets the payload's position, assuming
 * out's current length is the file offset plus base_offset.
 */
extern FstCode fst_block_write(FstBuf *out, uint64 base_offset, FstSlice contents,
							   int compression, FstBlockHandle *handle,
							   FstError *err);

/* Verifies the checksum in the trailer of a stored block (payload_size + trailer bytes). */
extern FstCode fst_block_check_stored(const char *stored, size_t payload_size,
									  FstError *err);

/*
 * Checks the trailer of a stored block (payload + trailer bytes as read
 * from the file) and returns its uncompressed contents in *out (a fresh
 * malloc'ed buffer the caller frees with fst_free).
 */
extern FstCode fst_block_decode_stored(const char *stored, size_t payload_size,
									   bool verify_checksum,
									   char **out, size_t *out_len,
									   FstError *err);

/* --- reading ----------------------------------------------------------- */

typedef int (*FstKeyCmp) (FstSlice a, FstSlice b);

/*
 * A parsed block over contents that outlive it (owned=true: fst_free'd with
 * the block).  fst_block_open validates the restart array.
 */
typedef struct FstBlock
{
	const char *data;
	size_t		size;			/* bytes of entries (restart array excluded) */
	size_t		contents_size;
	uint32		num_restarts;
	const char *restarts;
	bool		owned;
	bool		embedded;		/* the caller's storage (fst_block_view) */
	int			refcount;		/* for caches; 1 after open */
	uint32		restart_interval;	/* entries per restart; 0 if unknown */
} FstBlock;

extern FstCode fst_block_open(const char *contents, size_t len, bool owned,
							  FstBlock **out, FstError *err);
extern void fst_block_release(FstBlock *b);

/*
 * A view of contents in a caller-owned FstBlock, for a search that ends
 * before contents may change (a block read where it lies in a shared
 * cache).  Unlike fst_block_open it checks only that the restart array
 * fits, not its order: block iterators check every offset they follow
 * against the block's size anyway.  Nothing is allocated, and releasing
 * the view frees nothing.  False if the restart array does not fit.
 */
extern bool fst_block_view(FstBlock *b, const char *contents, size_t len);

/*
 * An iterator over one block.  It holds a reference to the block (released
 * on destroy) and compares keys with cmp; fst_block_ikey_iter_create's
 * iterators compare internal keys (fst_ikey_cmp, without an indirect call).
 * fst_block_iter_reset points an iterator at another block (or at none,
 * NULL), keeping its key buffer: a reader's point lookups reuse one
 * iterator instead of allocating one per lookup.
 */
extern FstIter *fst_block_iter_create(FstBlock *b, FstKeyCmp cmp);
extern FstIter *fst_block_ikey_iter_create(FstBlock *b);
extern void fst_block_iter_reset(FstIter *it, FstBlock *b);

/*
 * Positions by ordinal: the index (0-based) of the entry a block iterator
 * is at, and a seek to the entry with a given index (invalid past the end).
 * Both need the block's restart_interval to be known.
 */
extern uint32 fst_block_iter_index(FstIter *it);
extern void fst_block_iter_seek_to_index(FstIter *it, uint32 index);

#endif							/* FST_BLOCK_H */
