/*-------------------------------------------------------------------------
 *
 * sst_readers.h
 *	  The SST files this backend reads (read/sst_readers.c): open readers
 *	  over the object store and the disk cache, cached per backend within
 *	  forst.sst_reader_memory, with the block caches above them; and the
 *	  file slots that TIDs of SST versions name.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_READ_SST_READERS_H
#define FORST_READ_SST_READERS_H

#include "storage/relfilenode.h"

#include "lsm/blockcache.h"
#include "lsm/fst_common.h"
#include "lsm/sst.h"

/* The block cache of this process, or NULL if none is open (statistics). */
extern FstBlockCache *forst_block_cache_if_open(void);

/* An open reader of one of the table's SST files, cached by this backend. */
extern FstSstReader *forst_sst_reader(const RelFileNode *rnode,
									  const FstFileMeta *file);

/*
 * The reader of a file that may hold versions of user_part (within its key
 * range and not excluded by its bloom filter), or NULL if it cannot.
 * bloom_hash: user_part's fst_bloom_hash if the caller has it (a lookup
 * across files), else NULL.
 */
extern FstSstReader *forst_sst_reader_for_key(const RelFileNode *rnode,
											  const FstFileMeta *file,
											  FstSlice user_part,
											  const uint64 *bloom_hash);

/*
 * Whether a file may hold user parts whose prefix under the SST filters'
 * rule prefix_id is prefix (lsm/sst.h fst_sst_may_contain_prefix); opens
 * its reader.  A file written without the rule may.
 */
extern bool forst_sst_may_hold_prefix(const RelFileNode *rnode,
									  const FstFileMeta *file,
									  uint32 prefix_id, FstSlice prefix);

/*
 * A reader for a level iterator (read/cursor_build.c): pinned, it stays open
 * until released; released, and unused otherwise in this transaction, it
 * may be closed at once when the open readers exceed
 * forst.sst_reader_memory (see read/sst_readers.c).
 */
extern FstSstReader *forst_sst_reader_pin(const RelFileNode *rnode,
										  const FstFileMeta *file);
extern void forst_sst_reader_release(const RelFileNode *rnode, uint64 file_id);

/*
 * Whether this backend has file_id's reader open; and that reader pinned
 * (release it with forst_sst_reader_release), or NULL if it is not open:
 * fetches by TID read one entry and let go, and files a TID names may have
 * left the current manifest (compacted away) meanwhile.
 */
extern bool forst_sst_reader_is_open(const RelFileNode *rnode, uint64 file_id);
extern FstSstReader *forst_sst_reader_pin_open(const RelFileNode *rnode,
											   uint64 file_id);

/*
 * _forget closes one file's reader (a compaction's inputs); it may not run
 * while the reader is in use.  _usage: open readers, their bytes, and
 * readers closed by the forst.sst_reader_memory bound.
 */
extern void forst_sst_reader_forget(const RelFileNode *rnode, uint64 file_id);

/* The id of a file's blocks in the block caches (FstSstReadOptions.cache_id). */
extern uint64 forst_sst_cache_id(const RelFileNode *rnode, const FstFileMeta *file);
extern void forst_sst_readers_usage(int64 *readers, int64 *bytes,
									int64 *evictions);

/*
 * SST file slots of TIDs (per transaction), with the manifest version the
 * file was found in: a TID's file may have been compacted away and its
 * reader closed since, and that manifest still describes it.
 */
extern int	forst_tid_file_slot(const RelFileNode *rnode, uint64 file_id,
							uint64 manifest_version);
extern bool forst_tid_file_slot_get(int slot, RelFileNode *rnode, uint64 *file_id,
								uint64 *manifest_version);

#endif							/* FORST_READ_SST_READERS_H */
