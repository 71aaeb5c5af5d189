/*-------------------------------------------------------------------------
 *
 * shared_meta.h
 *	  The shared metadata store: the bloom filters, block indexes and index
 *	  fences of SST files in shared memory, one copy for all processes
 *	  instead of one in every backend that reads the file
 *	  (forst.shared_metadata_memory; 0 turns it off).
 *
 * A reader of a file asks the store for the file's metadata when it needs
 * it (FstSstReadOptions.meta_get, sst.h); if no process put it there yet,
 * it reads (or builds) it and offers it (meta_put).  Either way it gets a
 * pointer into shared memory and a pin: pinned metadata neither moves nor
 * changes, and lookups read it without a lock.  The reader gives the pin
 * back when it closes (meta_release), and a process gives back whatever
 * pins it still holds when it exits.
 *
 * When the store is full, the least recently used entries that no reader
 * pins make room; when only pinned ones are left, the reader keeps its own
 * copy (as without the store).  The metadata of files that compaction
 * replaced goes when its last pin does.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_SHARED_META_H
#define FORST_SHARED_META_H

#include "lsm/fst_common.h"

/* Hooks shared memory (from _PG_init). */
extern void forst_sharedmeta_init(void);

/* Whether the store exists (its size is not 0). */
extern bool forst_sharedmeta_enabled(void);

/* FstSstReadOptions.meta_get / meta_put / meta_release (arg unused). */
extern const char *forst_sharedmeta_get(void *arg, uint64 cache_id, int kind,
										uint64 check, size_t len,
										uint64 *handle);
extern const char *forst_sharedmeta_put(void *arg, uint64 cache_id, int kind,
										uint64 check, const char *data,
										size_t len, uint64 *handle);
extern void forst_sharedmeta_release(void *arg, uint64 handle);

/*
 * The files of these cache ids are gone: their metadata is found no more,
 * and goes when no reader pins it.
 */
extern void forst_sharedmeta_forget_files(const uint64 *cache_ids, int n);

#endif							/* FORST_SHARED_META_H */
