/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  forst's shared memory: the memtable slab pool, the registry of
 *	  tables that have memtables, and the global sequence counter.
 *
 * Memtables live in fixed-size slabs (forst.memtable_size each) carved at
 * start-up from one block of forst.memtable_memory bytes; the pool never
 * grows.  A table gets a slab when it first writes and another when its
 * active memtable fills; full memtables stay readable (immutable) until
 * a flush writes them to an SST and returns their slabs to the pool.
 *
 * WAL replay may go past the pool into a reserve of as many slabs again
 * (virtual memory: untouched unless replay needs it; at most
 * FORST_MAX_SLABS in all).  A standby frees a memtable only when a
 * MANIFEST record covers all of it, and its memtables do not end where the
 * primary's did, so it holds up to one memtable per table more than the
 * primary: with no more memory than the primary's, its replay would wait
 * for a record that comes after the one it cannot apply.  Everything else
 * takes a slab only while fewer than the pool's are in use, so a server's
 * memtables stay within forst.memtable_memory except during replay.
 *
 * Locking.  ForstShared->lock protects the pool's free list and the
 * registry hash.  Each table's ForstTableShared.lock protects its memtable
 * list; readers take it shared only to copy the list of slabs to read.
 * Inserts into the active memtable hold the table's write_lock instead
 * (the memtable allows one writer and lock-free readers), so that readers
 * never wait for an insert.  Whoever changes which memtable is active, or
 * freezes it, holds both: write_lock first, then lock.  A slab's first_lsn
 * and last_lsn are set by the writer under write_lock alone; readers of
 * them rely on the writers' in-flight marks (shmem/memtable_lsn.c), which
 * cover an insert from before its WAL record until after those stores.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_SHMEM_H
#define FORST_SHMEM_H

#include "access/xlogdefs.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/relfilenode.h"

/* Slabs a memtable TID can name (keys/tid.c: 10 bits). */
#define FORST_MAX_SLABS 1024

#include "lsm/memtable.h"

#define FORST_MAX_IMMUTABLE 16	/* frozen memtables per table */
#define FORST_MAX_COMPACTION_WORKERS 8	/* forst.compaction_workers' maximum */

typedef enum ForstSlabState
{
	FORST_SLAB_FREE = 0,
	FORST_SLAB_ACTIVE,
	FORST_SLAB_IMMUTABLE,
	FORST_SLAB_RETIRING			/* flushed; freed once no reader can hold it */
} ForstSlabState;

typedef struct ForstSlab
{
	ForstSlabState state;
	RelFileNode owner;			/* table whose memtable this is */
	uint32		generation;		/* bumped each time the slab is reused */
	XLogRecPtr	first_lsn;		/* WAL of its first entry (Invalid: empty) */
	XLogRecPtr	last_lsn;		/* WAL of its last entry (Invalid: empty) */
	bool		unlogged;		/* an unlogged table's: the LSNs are WAL
								 * positions at its writes, no records */
	int			next_free;		/* free-list link, -1 at the end */
} ForstSlab;

/*
 * A table's expiry settings as the flush worker needs them (it has no
 * catalog access; expiry/expiry.c pushes them here from the catalog table
 * forst.expiry).  version orders pushes: an older one never overwrites a
 * newer one.  attlen/attalign describe columns 1..attnum so that the TTL
 * column can be found in a stored row without a tuple descriptor.
 * Protected by the table's lock; the counters are atomics.
 */
#define FORST_EXPIRY_MAX_ATTNUM 64

typedef struct ForstExpiryShared
{
	uint64		version;		/* 0: settings not known (yet) */
	int16		attnum;			/* TTL column, 0: no expiry */
	bool		is_key;			/* a primary-key column */
	bool		has_ttl;
	int64		ttl_us;
	bool		has_watermark;
	int64		watermark;		/* TimestampTz */
	int16		attlen[FORST_EXPIRY_MAX_ATTNUM];
	char		attalign[FORST_EXPIRY_MAX_ATTNUM];
	pg_atomic_uint64 reclaimed_bytes;	/* by expiry, since start-up */
	pg_atomic_uint64 reclaimed_rows;
	pg_atomic_uint64 dropped_files;
} ForstExpiryShared;

/* One table with memtables. */
typedef struct ForstTableShared
{
	RelFileNode rnode;			/* hash key */
	LWLock		lock;
	LWLock		write_lock;		/* one inserter of the active memtable */
	int			active;			/* slab of the active memtable, or -1 */
	int			nimmutable;
	int			immutable[FORST_MAX_IMMUTABLE]; /* newest first */
	bool		loaded;			/* manifest_version read from the store */
	uint64		unreadable_rows_version;	/* a standby: a version with rows
											 * no PUT carried that it cannot
											 * read (wal/replay.c); 0: none */
	uint64		manifest_version;	/* 0: nothing flushed yet */
	uint16		kg_lo;			/* key groups the table owns (its manifest's */
	uint16		kg_hi;			/* range; all until a manifest says less) */
	bool		fenced;			/* another server claimed it: no writes */
	bool		unlogged;		/* an UNLOGGED table: no WAL per row, durable
								 * at forst checkpoints (set by its writers) */

	/*
	 * SST file ids in flight: per process that allocated ids for the table
	 * and has not published a manifest since, the lowest of them.  Garbage
	 * collection keeps every file at or above the lowest (uploads not yet
	 * in a manifest).  A process that dies leaves its slot: its files stay
	 * (safe) until its pid is found gone.  Protected by the table's lock.
	 */
#define FORST_INFLIGHT_SLOTS 12
	int			inflight_pid[FORST_INFLIGHT_SLOTS];
	uint64		inflight_low[FORST_INFLIGHT_SLOTS];

	/*
	 * Held by whoever publishes the next manifest version (a flush, a
	 * compaction), from reading the current version to switching to the
	 * new one: versions are built one upon the other.  Never held while
	 * ts->lock is waited for in shared mode by others for long.
	 */
	LWLock		manifest_lock;
	pg_atomic_uint64 next_file_id;	/* SST file ids; 0 until loaded */
	int			busy;			/* workers flushing or compacting it
								 * (forst_shared->lock) */
	bool		compacting;		/* a compaction worker has it */
	bool		drop_pending;	/* dropped meanwhile: the last worker drops it */
	int			slot;			/* its registry slot (forst_tables_next) */
	pg_atomic_uint64 live_estimate; /* inserts - deletes, for the planner */
	pg_atomic_uint32 key_share_spread;	/* a transaction held FOR KEY SHARE
										 * locks by bucket (write/key_locks.c) */
	ForstExpiryShared expiry;	/* TTL / watermark (expiry/expiry.c) */
} ForstTableShared;

/*
 * The words a backend writes on every read or write of a forst table, on a
 * cache line of its own: packed side by side they were shared by up to
 * eight backends, and each write took the line from the others.
 */
typedef union ForstBackendWords
{
	struct
	{
		pg_atomic_uint64 pin;	/* shmem/slab_pins.c */
		pg_atomic_uint64 inflight;	/* a lower bound of the LSN of a record
									 * logged but not yet in a memtable, or 0 */
	}			w;
	char		pad[PG_CACHE_LINE_SIZE];
} ForstBackendWords;

typedef struct ForstShared
{
	LWLock	   *lock;			/* pool free list and registry */
	int			tranche_id;		/* of each table's lock ("forst_table") */
	int			write_tranche_id;	/* of its write_lock ("forst_table_write") */
	int			manifest_tranche_id;	/* of its manifest_lock
										 * ("forst_table_manifest") */
	pg_atomic_uint64 next_seq;	/* global entry sequence */
	pg_atomic_uint64 writer_epoch;	/* this server's as a writer, 0 until its
									 * first manifest (objects/store.c) */
	pg_atomic_uint64 seq_lease;	/* sequence numbers below it may be used */
	int			nslabs;			/* pool and replay reserve */
	int			pool_slabs;		/* forst.memtable_memory's */
	Size		slab_size;
	int			free_head;		/* -1: pool and reserve exhausted */
	int			nfree;			/* of nslabs */
	ConditionVariable slab_cv;	/* signalled when slabs are freed */
	Latch	   *flush_latch;	/* the flush worker's, NULL if not running */
	Latch	   *compact_latch[FORST_MAX_COMPACTION_WORKERS];	/* compaction
															 * workers' */
	bool	   *waiting;		/* per backend id: waits for memtable memory */
	pg_atomic_uint64 retire_epoch;	/* retirements so far (shmem/slab_pins.c) */
	bool	   *victim;			/* per backend id: its wait for memory is in a
								 * deadlock (set by the flush worker) */
	ForstBackendWords *backends;	/* per backend id, see below */
	pg_atomic_uint64 tables_removed;	/* registry entries removed so far:
										 * backends' lookup caches check it */
	ForstSlab	slabs[FLEXIBLE_ARRAY_MEMBER];
} ForstShared;

/* Backend id's pin (shmem/slab_pins.c) and in-flight LSN (ForstBackendWords). */
#define FORST_PIN(id)		(&forst_shared->backends[(id)].w.pin)
#define FORST_INFLIGHT(id)	(&forst_shared->backends[(id)].w.inflight)

extern ForstShared *forst_shared;

/*
 * How many times this backend has waited for memtable memory without
 * holding its slabs (shmem/slab_pins.c): memtable rows it read before may have
 * moved to SST files since (see keys/tid.c).
 */
extern uint64 forst_memory_waits;

extern void forst_shmem_init(void);

/* The memtable in a slab (attached, valid in every backend). */
extern FstMemtable *forst_slab_memtable(int slab);

/* Finds (create = true: or registers) the shared state of a table. */
extern ForstTableShared *forst_table_shared(const RelFileNode *rnode,
											bool create);

/*
 * Whether the table has shared state: false once it was dropped (or
 * truncated or rewritten, which drop its old relfilenode).  Only looks:
 * unlike forst_table_shared, it runs none of the hooks that make a
 * table's state ready.
 */
extern bool forst_table_registered(const RelFileNode *rnode);

/*
 * Forgets a table (after its storage is dropped) and frees its slabs; if
 * the flush worker is working on it, that happens when the flush ends.
 */
extern void forst_table_shared_drop(const RelFileNode *rnode);

/*
 * Every table, in rounds.  Each registry entry has a slot, a number below
 * the most ever registered at once (at most forst.max_tables) that it
 * keeps until it is removed.  A pass looks at every slot once, in order
 * from where it begins and round to where it began, FORST_TABLES_BATCH
 * tables (or any other max) a call: forst_tables_next copies up to max
 * tables for which pred is true (called under forst_shared->lock) from
 * where the pass stopped, and returns 0 once the pass has looked at every
 * slot.  Every table registered throughout a pass is met exactly once,
 * however many there are; one registered or removed meanwhile maybe.
 * The lock is let go between calls (and every few thousand slots), so the
 * caller works on a batch without holding it.  scan->pos is where the next
 * pass may begin, so that rounds continue where the last one stopped.
 */
#define FORST_TABLES_BATCH 256

typedef struct ForstTableScan
{
	int			pos;			/* the slot to look at next */
	int			left;			/* slots the pass has still to look at */
	int			wrap;			/* slots in use when the pass began */
} ForstTableScan;

extern void forst_tables_scan_begin(ForstTableScan *scan, int start);
extern int	forst_tables_next(ForstTableScan *scan,
							  bool (*pred) (ForstTableShared *ts, void *arg),
							  void *arg, RelFileNode *out, int max);

/* Passes over the tables of a database not being dropped, over all. */
extern int	forst_tables_of_database(ForstTableScan *scan, Oid dbid,
									 RelFileNode *out, int max);

/* The shared state of (dbNode, relNode) in any tablespace, or NULL. */
extern ForstTableShared *forst_table_shared_any_spc(const RelFileNode *rnode);

/*
 * Waits up to timeout_ms while (dbNode, relNode) is being dropped in any
 * tablespace (its shared state kept until a flush or compaction of it
 * ends); true once nothing of it is being dropped any more, false at the
 * timeout.  Sleeps interruptibly.
 */
extern bool forst_table_wait_dropped(const RelFileNode *rnode, long timeout_ms);
extern int	forst_tables_count(void);

/* shmem/slab_pins.c: who may hold pointers into retired memtable slabs */
extern void forst_slab_pins_init(void);
extern void forst_slab_pin(void);
extern void forst_slab_pin_until_commit(void);
extern void forst_inflight_set(XLogRecPtr lsn);
extern void forst_inflight_clear(void);
extern bool forst_slab_reusable(uint64 retired_epoch, const bool *skip);
extern int	forst_slab_blocker(uint64 retired_epoch);
extern ForstTableShared *forst_compact_begin(const RelFileNode *rnode);
extern void forst_compact_end(ForstTableShared *ts);
extern int	forst_all_tables(ForstTableScan *scan, RelFileNode *out, int max);

/*
 * The flush worker's hold on a table: between begin and end the table's
 * shared state is not removed (a drop is deferred to end).  begin returns
 * NULL if the table is gone or being dropped.
 */
extern ForstTableShared *forst_flush_begin(const RelFileNode *rnode);
extern void forst_flush_end(ForstTableShared *ts);

/*
 * Inserts an entry into the table's active memtable, switching to a new
 * slab when it is full.  lsn is where its WAL record starts (the slab
 * remembers its first one).  *slab and *ref identify the entry (for TIDs).
 * The caller must not hold the table's lock.
 */
extern void forst_memtable_put(ForstTableShared *ts, FstSlice ikey,
							   FstSlice value, XLogRecPtr lsn,
							   int *slab, uint32 *ref);

/*
 * The oldest WAL position that may hold a forst record whose entry is not
 * yet in an SST file: the flush advances forst's replication slot to it.
 */
extern XLogRecPtr forst_oldest_unflushed_lsn(void);

/*
 * The insert position, or an earlier one where a writer has set its
 * in-flight mark (it is logging a row and has not put it into a memtable).
 */
extern XLogRecPtr forst_oldest_inflight_lsn(void);
extern XLogRecPtr forst_table_unflushed_lsn(ForstTableShared *ts);
extern int	forst_retire_covered(ForstTableShared *ts, XLogRecPtr covered_lsn);

/* shmem/seq.c: the sequence's lease */
extern uint64 forst_seq_lease_read(void);
extern void forst_seq_extend_lease(uint64 seq);

/* Next global sequence number (shmem/seq.c says why under a lease). */
static inline uint64
forst_next_seq(void)
{
	uint64		seq = pg_atomic_fetch_add_u64(&forst_shared->next_seq, 1) + 1;

	if (unlikely(seq >= pg_atomic_read_u64(&forst_shared->seq_lease)))
		forst_seq_extend_lease(seq);
	return seq;
}

/*
 * Copies the table's memtable slabs, newest first, into slabs[] (room for
 * FORST_MAX_IMMUTABLE + 1) and returns how many.
 */
extern int	forst_table_slabs(ForstTableShared *ts, int *slabs);

/* Returns a flushed slab to the pool and wakes waiting writers. */
extern void forst_slab_free(int slab);

/*
 * Frees a slab retired at retired_epoch if no backend can still read it: a
 * backend's pin counts unless the backend waits for memtable memory.  The
 * check and the slab's new generation are under the pool lock, which
 * forst_memory_wait_end takes to end a wait; false if the slab must wait.
 */
extern bool forst_slab_free_retired(int slab, uint64 retired_epoch);
extern void forst_memory_wait_end(void);

/* A pass over the tables with immutable memtables (forst_tables_next). */
extern int	forst_tables_to_flush(ForstTableScan *scan, RelFileNode *out,
								  int max);

/* Set in the flush and compaction workers. */
extern bool forst_in_flush_worker;

/*
 * Set by wal/wal.c while this backend replays the WAL catch-up after a
 * start (not in the startup process): it may take memtables past the
 * pool, and fails rather than wait for memory that only a flush after the
 * catch-up would free.
 */
extern bool forst_in_catchup_replay;

/*
 * Called before anyone uses a table's memtables, which are whole only
 * after the WAL catch-up: wal/wal.c installs its catch-up here at load.
 */
extern void (*forst_memtables_ready_hook) (void);

/*
 * Called by forst_table_shared before it returns a table's state (set by
 * checkpoint/crash_restore.c: a database's unlogged tables return to its
 * newest checkpoint after a crash, before anything reads them).
 */
extern void (*forst_table_gate_hook) (const RelFileNode *rnode);

/* Whether the pool is used up or a writer waits for memtable memory. */
extern bool forst_memory_wanted(void);

extern void forst_freeze_active_locked(ForstTableShared *ts);

/* Whether forst.memtable_memory's slabs are all in use. */
extern bool forst_pool_exhausted(void);

/*
 * Freezes every table's non-empty active memtable so that the flush can
 * free its slab (when memory is wanted: tables that write rarely must not
 * keep slabs forever), or only unlogged tables' (a clean shutdown).
 * Returns how many were frozen.
 */
extern int	forst_freeze_actives(bool unlogged_only);

/* Whether any memtable (of an unlogged table) holds entries. */
extern bool forst_memtables_in_use(bool unlogged_only);

/*
 * For a checkpoint: freezes the table's active memtable if it holds
 * entries logged before lsn, and says whether any of its memtables still
 * does (until the flush worker has written them to SSTs).  Entries still
 * being logged by running transactions are not waited for.
 */
extern bool forst_table_freeze_before(const RelFileNode *rnode, XLogRecPtr lsn);

/* Wakes the flush worker. */
extern void forst_wake_flusher(void);

#endif							/* FORST_SHMEM_H */
