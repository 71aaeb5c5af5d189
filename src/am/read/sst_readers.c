/*-------------------------------------------------------------------------
 *
 * sst_readers.c
 *	  Reading SST files in one backend (see objects/store.h): open SST
 *	  readers over the object store and the disk cache with the block
 *	  caches above them, and the file slots of SST TIDs.  Manifests and
 *	  views of a table are in objects/manifests.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "lsm/blockcache.h"
#include "am/forst.h"
#include "am/read/shared_blocks.h"
#include "am/read/shared_meta.h"
#include "am/objects/disk_cache.h"
#include "store/diskcache.h"
#include "am/base/stats.h"
#include "am/objects/store.h"
#include "store/objstore_source.h"
#include "am/shmem/shmem.h"
#include "am/read/prefetch.h"
#include "am/read/sst_readers.h"
#include "am/read/stage.h"

static FstBlockCache *block_cache = NULL;

/*
 * The visibility rules of a borrowed file: the owner string's "<n>[+<m>]:"
 * names entries of the rule list, which only grows, so the table's
 * current manifest has them.
 */
static void
borrowed_vis(const RelFileNode *rnode, const char *owner, ForstVisSet *set)
{
	ForstTableShared *ts = forst_table_shared(rnode, true);
	uint64		version;
	const ForstVisList *vl;

	forst_table_load(ts);
	LWLockAcquire(&ts->lock, LW_SHARED);
	version = ts->manifest_version;
	LWLockRelease(&ts->lock);
	vl = version > 0 ? forst_manifest_vis(forst_manifest_at(rnode, version)) : NULL;
	if (forst_vis_owner(owner, vl, set) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: borrowed file \"%s\" names visibility rules that the table's manifest lacks",
						owner)));
}

/* ---------------------------------------------------------------------- */
/* SST readers: (rnode, file id) -> open reader                            */

typedef struct ReaderKey
{
	RelFileNode rnode;
	uint64		file_id;
} ReaderKey;

typedef struct ReaderEntry
{
	ReaderKey	key;
	FstRangeSource *src;
	FstSstReader *reader;
	ForstVisSet *vis;			/* borrowed files: their rules */
	uint64		last_used;		/* reader_clock at the last use */
	size_t		mem;			/* bytes counted in reader_mem */
	int			pins;			/* level iterators positioned in the file */
	LocalTransactionId plain_lxid;	/* of the last use without a pin */
} ReaderEntry;

static HTAB *reader_cache = NULL;

/*
 * A direct-mapped front for reader_cache: point lookups ask for the same
 * few files again and again, and a dynahash probe (hashing the 20-byte
 * key) was a twentieth of a warm point read's instructions.  A slot holds
 * an entry of the hash table, whose memory stays where it is while the
 * entry exists; reader_entry_close clears the entry's slot.
 */
#define READER_FRONT_SLOTS	64
static ReaderEntry *reader_front[READER_FRONT_SLOTS];

static inline int
reader_front_slot(const RelFileNode *rnode, uint64 file_id)
{
	uint64		h = file_id ^ ((uint64) rnode->relNode << 32) ^ rnode->dbNode;

	return (int) ((h * UINT64CONST(0x9E3779B97F4A7C15)) >> 58);
}

static inline ReaderEntry *
reader_front_get(const RelFileNode *rnode, uint64 file_id)
{
	ReaderEntry *e = reader_front[reader_front_slot(rnode, file_id)];

	if (e != NULL && e->key.file_id == file_id &&
		RelFileNodeEquals(e->key.rnode, *rnode))
		return e;
	return NULL;
}

/*
 * The open readers' memory (index blocks, bloom filters, read windows) is
 * bounded by forst.sst_reader_memory.
 *
 * Between transactions: the first use of the readers in a transaction
 * closes the least recently used ones until the rest fit.  Not earlier for
 * readers used without a pin: whoever used one may still point into it
 * (the previous transaction's scans hold readers until its cleanup is
 * over, as portals are dropped after the transaction callbacks have run).
 *
 * Within a transaction: a scan reads the files of each level >= 1 through
 * a level iterator, which pins a file's reader while it is positioned in
 * the file (forst_sst_reader_pin) and releases it when it moves on.  A
 * reader that is released, and that nothing used without a pin in this
 * transaction, has no user left: when the open readers exceed the bound,
 * those are closed, least recently used first, at once.  So a scan over
 * any number of files holds the level 0 files, one file per level and
 * what the bound allows.  A TID may still name a closed file: fetching it
 * opens the file again, through the manifest the TID's slot recorded.
 */
static uint64 reader_clock = 0;
static size_t reader_mem = 0;
static LocalTransactionId readers_lxid = InvalidLocalTransactionId;
static uint64 reader_evictions = 0;
static bool released_since_trim = false;	/* a reader became closable */
static int	pins_held = 0;		/* the entries' pins, summed */
static uint64 readers_swept_at = 0; /* forst_manifests_decoded() then */

/*
 * A reader's read window: through the disk cache, one chunk
 * (forst_cache_chunk_bytes), so that a point read caches only the chunk it
 * needs, not its neighbours; straight from the store, 32 kB, so that a
 * scan of consecutive data blocks makes one request for several.
 */
static size_t
reader_window(void)
{
	if (forst_disk_cache() != NULL)
		return (size_t) forst_cache_chunk_bytes();
	return FST_DISKCACHE_DEFAULT_CHUNK;
}

/* What a reader costs: its metadata and its read window. */
static size_t
reader_entry_mem(const ReaderEntry *e)
{
	return fst_sst_memory(e->reader) + reader_window() + sizeof(ReaderEntry);
}

static void
reader_entry_close(ReaderEntry *e)
{
	ReaderKey	key = e->key;
	int			slot = reader_front_slot(&key.rnode, key.file_id);

	if (reader_front[slot] == e)
		reader_front[slot] = NULL;
	reader_mem -= Min(reader_mem, e->mem);
	pins_held -= Min(pins_held, e->pins);
	fst_sst_close(e->reader);
	fst_range_close(e->src);
	if (e->vis != NULL)
		forst_vis_set_free(e->vis);
	hash_search(reader_cache, &key, HASH_REMOVE, NULL);
}

static int
entry_lru_cmp(const void *a, const void *b)
{
	uint64		x = (*(ReaderEntry *const *) a)->last_used;
	uint64		y = (*(ReaderEntry *const *) b)->last_used;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Closes unpinned readers, least recently used first, until the open ones
 * hold at most target bytes or none is left; with released_only, only
 * those nothing used without a pin in this transaction (see above).
 */
static void
close_lru(size_t target, bool released_only)
{
	HASH_SEQ_STATUS seq;
	ReaderEntry *e;
	ReaderEntry **cand;
	long		n = 0,
				i;
	LocalTransactionId lxid = MyProc ? MyProc->lxid : InvalidLocalTransactionId;

	cand = palloc(sizeof(ReaderEntry *) * Max(1, hash_get_num_entries(reader_cache)));
	hash_seq_init(&seq, reader_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->pins == 0 && !(released_only && e->plain_lxid == lxid))
			cand[n++] = e;
	qsort(cand, n, sizeof(ReaderEntry *), entry_lru_cmp);
	for (i = 0; i < n && reader_mem > target; i++)
	{
		reader_entry_close(cand[i]);
		reader_evictions++;
	}
	pfree(cand);
}

static void
forst_sst_readers_trim(size_t limit)
{
	HASH_SEQ_STATUS seq;
	ReaderEntry *e;

	if (reader_cache == NULL)
		return;
	/* recount: bloom filters are read after open */
	reader_mem = 0;
	hash_seq_init(&seq, reader_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		e->mem = reader_entry_mem(e);
		reader_mem += e->mem;
	}
	if (reader_mem <= limit)
		return;
	/* down to three quarters, so that the next transactions need not trim */
	close_lru(limit - limit / 4, false);
}

void
forst_sst_reader_forget(const RelFileNode *rnode, uint64 file_id)
{
	ReaderKey	key;
	ReaderEntry *e;

	if (reader_cache == NULL)
		return;
	memset(&key, 0, sizeof(key));
	key.rnode = *rnode;
	key.file_id = file_id;
	e = hash_search(reader_cache, &key, HASH_FIND, NULL);
	if (e != NULL)
		reader_entry_close(e);
}

void
forst_sst_readers_usage(int64 *readers, int64 *bytes, int64 *evictions)
{
	*readers = reader_cache ? hash_get_num_entries(reader_cache) : 0;
	*bytes = (int64) reader_mem;
	*evictions = (int64) reader_evictions;
}

/*
 * Closes released readers (see above), least recently used first, until
 * the open readers fit in the bound or none is left.
 */
static void
readers_trim_released(void)
{
	size_t		limit = (size_t) forst_sst_reader_memory_kb * 1024;

	if (reader_cache == NULL || reader_mem <= limit || !released_since_trim)
		return;
	released_since_trim = false;
	close_lru(limit, true);
}

static int
entry_rnode_cmp(const void *a, const void *b)
{
	return memcmp(&(*(ReaderEntry *const *) a)->key.rnode,
				  &(*(ReaderEntry *const *) b)->key.rnode, sizeof(RelFileNode));
}

/*
 * Closes the readers of files that a flush or compaction has taken out of
 * their table: those of the newest manifest this process has of the table
 * (its views read no older one from now on) that lacks the file, and all
 * of a table that was dropped (also by TRUNCATE or a rewrite).  Without
 * this they stayed open until the bound closed them, and every backend of
 * a table under compaction kept both its old and its new files' filters
 * and indexes: forst.sst_reader_memory each.  A file that a restore or an
 * old TID brings back is simply opened again.  Called between
 * transactions (nothing points into a reader then), once for each batch
 * of manifests this process decoded.
 */
static void
readers_close_replaced(void)
{
	HASH_SEQ_STATUS seq;
	ReaderEntry *e;
	ReaderEntry **all;
	long		n = 0,
				i;
	RelFileNode table = {0, 0, 0};
	const FstManifest *m = NULL;
	bool		dropped = false;

	/* by table, so that each table's manifest is looked for once */
	all = palloc(sizeof(ReaderEntry *) * Max(1, hash_get_num_entries(reader_cache)));
	hash_seq_init(&seq, reader_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		all[n++] = e;
	qsort(all, n, sizeof(ReaderEntry *), entry_rnode_cmp);
	for (i = 0; i < n; i++)
	{
		e = all[i];
		if (i == 0 || !RelFileNodeEquals(table, e->key.rnode))
		{
			table = e->key.rnode;
			dropped = !forst_table_registered(&table);
			m = dropped ? NULL : forst_manifest_newest_cached(&table);
		}
		if (e->pins == 0 &&
			(dropped ||
			 (m != NULL && forst_manifest_file_by_id(m, e->key.file_id) == NULL)))
			reader_entry_close(e);
	}
	pfree(all);
}

/*
 * The first use of the readers in a transaction: close the readers of
 * replaced files, apply the bound.
 */
static inline void
readers_new_xact(void)
{
	if (MyProc != NULL && MyProc->lxid != readers_lxid)
	{
		HASH_SEQ_STATUS seq;
		ReaderEntry *e;

		/*
		 * No level iterator outlives its transaction: a pin left now is one
		 * an error skipped the release of.
		 */
		if (pins_held > 0)
		{
			hash_seq_init(&seq, reader_cache);
			while ((e = hash_seq_search(&seq)) != NULL)
				e->pins = 0;
			pins_held = 0;
		}
		readers_lxid = MyProc->lxid;
		if (forst_manifests_decoded() != readers_swept_at)
		{
			readers_swept_at = forst_manifests_decoded();
			readers_close_replaced();
		}
		if (reader_mem > (size_t) forst_sst_reader_memory_kb * 1024)
			forst_sst_readers_trim((size_t) forst_sst_reader_memory_kb * 1024);
	}
}

/* Reports a failure to read r's bloom filter; counts the filter's answer. */
static bool
filter_answer(const RelFileNode *rnode, const FstFileMeta *file, FstCode rc,
			  FstError *err, bool may)
{
	if (rc != FST_OK)
		forst_report(rc, err, psprintf("reading the bloom filter of SST file " UINT64_FORMAT
									   " of relation %u", file->file_id, rnode->relNode));
	forst_local_bloom_checks++;
	if (!may)
		forst_local_bloom_negatives++;
	return may;
}

FstSstReader *
forst_sst_reader_for_key(const RelFileNode *rnode, const FstFileMeta *file,
						 FstSlice user_part, const uint64 *bloom_hash)
{
	FstSstReader *r;
	bool		may;
	FstError	err;
	FstCode		rc;

	if (fst_slice_cmp(user_part, fst_ikey_user_part(fst_filemeta_smallest(file))) < 0 ||
		fst_slice_cmp(user_part, fst_ikey_user_part(fst_filemeta_largest(file))) > 0)
		return NULL;
	r = forst_sst_reader(rnode, file);
	rc = bloom_hash ? fst_sst_may_contain_hash(r, *bloom_hash, &may, &err) :
		fst_sst_may_contain(r, user_part, &may, &err);
	return filter_answer(rnode, file, rc, &err, may) ? r : NULL;
}

bool
forst_sst_may_hold_prefix(const RelFileNode *rnode, const FstFileMeta *file,
						  uint32 prefix_id, FstSlice prefix)
{
	FstSstReader *r = forst_sst_reader(rnode, file);
	bool		may;
	FstError	err;
	FstCode		rc;

	rc = fst_sst_may_contain_prefix(r, prefix_id, prefix, &may, &err);
	/* a file written without the rule cannot tell: no check to count */
	if (rc == FST_OK && fst_sst_props(r)->prefix_id != prefix_id)
		return true;
	return filter_answer(rnode, file, rc, &err, may);
}

/* The cache entry of an open file's reader, or NULL. */
static ReaderEntry *
reader_entry_find(const RelFileNode *rnode, uint64 file_id)
{
	ReaderKey	key;

	ReaderEntry *e;

	if (reader_cache == NULL)
		return NULL;
	readers_new_xact();
	if ((e = reader_front_get(rnode, file_id)) != NULL)
		return e;
	memset(&key, 0, sizeof(key));
	key.rnode = *rnode;
	key.file_id = file_id;
	e = hash_search(reader_cache, &key, HASH_FIND, NULL);
	if (e != NULL)
		reader_front[reader_front_slot(rnode, file_id)] = e;
	return e;
}

bool
forst_sst_reader_is_open(const RelFileNode *rnode, uint64 file_id)
{
	return reader_entry_find(rnode, file_id) != NULL;
}

FstSstReader *
forst_sst_reader_pin_open(const RelFileNode *rnode, uint64 file_id)
{
	ReaderEntry *e = reader_entry_find(rnode, file_id);

	if (e == NULL)
		return NULL;
	e->last_used = ++reader_clock;
	e->pins++;
	pins_held++;
	return e->reader;
}

/*
 * The id under which the block caches know a file's blocks: its object
 * key's hash; for a borrowed file, whose blocks are rewritten by this
 * table's rules (its owner string names them), one of its own.
 */
static uint64
file_cache_id(const RelFileNode *rnode, const FstManifestFile *mf,
			  const char *okey)
{
	if (mf->owner)
		return hash_bytes_extended((const unsigned char *) rnode,
								   sizeof(RelFileNode),
								   hash_bytes_extended((const unsigned char *) mf->owner,
													   strlen(mf->owner), 1));
	return hash_bytes_extended((const unsigned char *) okey, strlen(okey), 0);
}

uint64
forst_sst_cache_id(const RelFileNode *rnode, const FstFileMeta *file)
{
	const FstManifestFile *mf = forst_mfile(file);
	char		okey[FORST_KEY_LEN];

	forst_file_object_key(rnode, mf, okey, sizeof(okey));
	return file_cache_id(rnode, mf, okey);
}

/* FstSstReadOptions.meta_region: arg is the reader's disk cache source. */
static void
reader_meta_region(void *arg, uint64 offset)
{
	fst_range_source_cached_admit_from((FstRangeSource *) arg, offset);
}

/* The cache entry of file's reader, opened if need be. */
static ReaderEntry *
reader_entry_get(const RelFileNode *rnode, const FstFileMeta *file)
{
	ReaderKey	key;
	ReaderEntry *e;
	bool		found;
	char		okey[FORST_KEY_LEN];
	FstRangeSource *cached = NULL;
	FstSstReadOptions ro;
	FstError	err;
	FstCode		rc;
	const FstManifestFile *mf;
	ForstVisSet *vis = NULL;

	if (reader_cache == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(ReaderKey);
		ctl.entrysize = sizeof(ReaderEntry);
		ctl.hcxt = TopMemoryContext;
		reader_cache = hash_create("forst SST readers", 256, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

		/*
		 * Only backends keep blocks of their own.  Compaction reads each
		 * block of its inputs once, just before the files go, and the
		 * other workers (flush, checkpoints, autovacuum's ANALYZE,
		 * parallel workers) read little or only once: a cache there
		 * only held up to forst.block_cache_size of dead blocks for the
		 * life of the process.
		 */
		if (MyBackendType == B_BACKEND)
		{
			block_cache = fst_block_cache_create((size_t) forst_block_cache_size_kb * 1024);
			if (block_cache == NULL)
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
	}
	readers_new_xact();
	if ((e = reader_front_get(rnode, file->file_id)) != NULL)
	{
		e->last_used = ++reader_clock;
		return e;
	}
	memset(&key, 0, sizeof(key));
	key.rnode = *rnode;
	key.file_id = file->file_id;
	e = hash_search(reader_cache, &key, HASH_FIND, NULL);
	if (e)
	{
		reader_front[reader_front_slot(rnode, file->file_id)] = e;
		e->last_used = ++reader_clock;
		return e;
	}

	mf = forst_mfile(file);
	forst_file_object_key(rnode, mf, okey, sizeof(okey));
	if (mf->owner)
	{
		vis = MemoryContextAlloc(TopMemoryContext, sizeof(ForstVisSet));
		borrowed_vis(rnode, mf->owner, vis);
		/* the reader outlives the manifest entry its rules are in */
		forst_vis_set_own(vis, TopMemoryContext);
	}
	e = hash_search(reader_cache, &key, HASH_ENTER, &found);
	e->src = NULL;
	e->reader = NULL;
	e->vis = vis;
	e->last_used = ++reader_clock;
	e->mem = 0;
	e->pins = 0;
	e->plain_lxid = InvalidLocalTransactionId;
	rc = fst_range_source_object(forst_objstore(), okey, file->size, &e->src, &err);
	if (rc == FST_OK && forst_disk_cache() != NULL)
	{
		/* read through the local disk cache (it owns the origin then) */
		rc = fst_range_source_cached(forst_disk_cache(), e->src, okey,
									 file->size, &cached, &err);
		if (rc == FST_OK)
			e->src = cached;
	}
	if (rc == FST_OK)
	{
		e->src = fst_range_source_window(e->src, reader_window());
		if (e->src == NULL)
		{
			reader_entry_close(e);
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
	}
	if (rc == FST_OK && forst_prefetch_possible())
	{
		/*
		 * batches of lookups and range scans may hold ranges of it in
		 * memory: above the window, which would widen a block's read to
		 * aligned pieces the stage may not hold
		 */
		e->src = forst_stage_source(e->src, okey);
		if (e->src == NULL)
		{
			reader_entry_close(e);
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
	}
	if (rc == FST_OK)
	{
		fst_sst_read_options_default(&ro);
		ro.cache = block_cache;
		ro.cache_id = file_cache_id(rnode, mf, okey);
		if (forst_blockshare_enabled())
		{
			ro.shared_get = forst_blockshare_get;
			ro.shared_put = forst_blockshare_put;
			ro.shared_peek = forst_blockshare_peek;
		}
		if (forst_sharedmeta_enabled())
		{
			ro.meta_get = forst_sharedmeta_get;
			ro.meta_put = forst_sharedmeta_put;
			ro.meta_release = forst_sharedmeta_release;
		}
		if (cached != NULL)
		{
			/*
			 * the metadata goes into the disk cache at its first miss: the
			 * shared store spares later readers the second one
			 */
			ro.meta_region = reader_meta_region;
			ro.meta_region_arg = cached;
		}
		if (vis != NULL)
		{
			/*
			 * entries rewritten by this table's rule: blocks of their own
			 * (the owner string names the rule; one file may be read with
			 * two rules in one table, after a merge)
			 */
			ro.rewrite_entry = forst_vis_rewrite;
			ro.rewrite_arg = e->vis;
		}
		rc = fst_sst_open(e->src, &ro, &e->reader, &err);
	}
	if (rc != FST_OK)
	{
		reader_entry_close(e);
		forst_report(rc, &err, psprintf("opening SST \"%s\"", okey));
	}
	e->mem = reader_entry_mem(e);
	reader_mem += e->mem;
	return e;
}

FstSstReader *
forst_sst_reader(const RelFileNode *rnode, const FstFileMeta *file)
{
	ReaderEntry *e = reader_entry_get(rnode, file);

	e->plain_lxid = MyProc ? MyProc->lxid : InvalidLocalTransactionId;
	return e->reader;
}

FstSstReader *
forst_sst_reader_pin(const RelFileNode *rnode, const FstFileMeta *file)
{
	ReaderEntry *e;

	/* a new reader may take the place of released ones */
	readers_trim_released();
	e = reader_entry_get(rnode, file);
	e->pins++;
	pins_held++;
	return e->reader;
}

void
forst_sst_reader_release(const RelFileNode *rnode, uint64 file_id)
{
	ReaderEntry *e = reader_entry_find(rnode, file_id);

	if (e == NULL || e->pins <= 0)
		return;
	pins_held--;
	if (--e->pins == 0 && (MyProc == NULL || e->plain_lxid != MyProc->lxid))
		released_since_trim = true;
}

FstBlockCache *
forst_block_cache_if_open(void)
{
	return block_cache;
}

/* ---------------------------------------------------------------------- */
/* File slots: the SST part of TIDs names files by a per-transaction slot  */

#define MAX_FILE_SLOTS 4096

typedef struct FileSlot
{
	RelFileNode rnode;
	uint64		file_id;
	uint64		manifest_version;	/* the first that listed it for us */
} FileSlot;

static FileSlot *file_slots = NULL;
static int	nfile_slots = 0;
static LocalTransactionId slots_lxid = InvalidLocalTransactionId;

int
forst_tid_file_slot(const RelFileNode *rnode, uint64 file_id,
				uint64 manifest_version)
{
	int			i;

	if (file_slots == NULL)
		file_slots = MemoryContextAlloc(TopMemoryContext, sizeof(FileSlot) * MAX_FILE_SLOTS);
	if (slots_lxid != MyProc->lxid)
	{
		nfile_slots = 0;
		slots_lxid = MyProc->lxid;
	}
	for (i = nfile_slots - 1; i >= 0; i--)
	{
		if (file_slots[i].file_id == file_id &&
			RelFileNodeEquals(file_slots[i].rnode, *rnode))
			return i;
	}
	if (nfile_slots >= MAX_FILE_SLOTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("forst: one transaction read more than %d SST files", MAX_FILE_SLOTS),
				 errhint("Split the work into several transactions.")));
	file_slots[nfile_slots].rnode = *rnode;
	file_slots[nfile_slots].file_id = file_id;
	file_slots[nfile_slots].manifest_version = manifest_version;
	return nfile_slots++;
}

bool
forst_tid_file_slot_get(int slot, RelFileNode *rnode, uint64 *file_id,
					uint64 *manifest_version)
{
	if (slots_lxid != MyProc->lxid || slot < 0 || slot >= nfile_slots)
		return false;
	*rnode = file_slots[slot].rnode;
	*file_id = file_slots[slot].file_id;
	if (manifest_version)
		*manifest_version = file_slots[slot].manifest_version;
	return true;
}
