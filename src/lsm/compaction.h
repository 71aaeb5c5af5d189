/*-------------------------------------------------------------------------
 *
 * compaction.h
 *	  The compaction merge: rewriting a sorted stream of versions into new
 *	  SST files, dropping what no snapshot can see any more.
 *
 * The input is any iterator in fst_ikey_cmp order (usually a merging
 * iterator over the input files, newest first).  For each user part the
 * versions arrive newest first and are judged by the drop policy:
 *
 *	- a version outside the key-group filter is dropped (rescaled tables);
 *	- the custom hook, if any, may force KEEP or DROP; DEFAULT applies:
 *	- every version with seq > horizon_seq is kept (some snapshot may see it);
 *	- the first version with seq <= horizon_seq is what the oldest snapshot
 *	  sees and is kept, except that a tombstone at the bottom level (no older
 *	  data below the output) is dropped, and a row whose TTL expired
 *	  (ttl < ttl_cutoff) is dropped at the bottom level or replaced by a
 *	  tombstone of the same key and sequence above it (so that older
 *	  versions in lower levels stay hidden);
 *	- every older version is shadowed and dropped.
 *
 * A TOMBSTONE from the hook keeps the version's key and sequence with an
 * empty tombstone value (counted in expired_to_tombstone).
 * A FREEZE from the hook keeps the version frozen: its header gets the
 * frozen and committed flags and a zero xid and command id (counted in
 * frozen).  The hook says so of versions every snapshot sees; their xids
 * then need no clog and the zeros compress.
 * A DROP from the hook removes only that version; when at or below the
 * horizon it still counts as the key's first such version, so older
 * versions are dropped as shadowed (and may reappear from lower levels:
 * hooks that mean "delete the row" above the bottom level should be used
 * only where nothing older exists).  A second entry with the very internal
 * key already seen (an older source's duplicate) is dropped as shadowed.
 *
 * Outputs are opened through the caller's factory (memory in tests, object
 * storage in the server) and finished when they reach target_file_size or
 * max_file_blocks data blocks (a reader that addresses blocks with a fixed
 * number of bits, as the server's TIDs do, sets the latter), but only
 * between two user parts: a key's versions never straddle two files,
 * so the outputs of one level have disjoint user-key ranges.  No output is
 * opened for an empty result.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_COMPACTION_H
#define FST_COMPACTION_H

#include "compaction_pick.h"
#include "iter.h"
#include "manifest.h"
#include "sst.h"

typedef enum FstDropDecision
{
	FST_DROP_DEFAULT = 0,		/* apply the rules above */
	FST_DROP_KEEP,				/* keep this version as it is */
	FST_DROP_DROP,				/* drop this version */
	FST_DROP_TOMBSTONE,			/* replace it by a tombstone of the same key
								 * and sequence (an expired row above the
								 * bottom level: older versions below stay
								 * hidden) */
	FST_DROP_FREEZE				/* keep it, frozen (visible to everyone) */
} FstDropDecision;

typedef struct FstDropPolicy
{
	uint64		horizon_seq;	/* oldest snapshot's sequence */
	bool		bottom_level;	/* no older data below the output */

	/* TTL: ttl_of extracts a row's TTL column (false: the row has none) */
	bool		ttl_enabled;
	int64		ttl_cutoff;		/* rows with ttl < cutoff are expired */
	bool		(*ttl_of) (void *arg, FstSlice payload, int64 *ttl);
	void	   *ttl_arg;

	/* optional hook; newest_of_key: first version of its user part seen */
	FstDropDecision (*custom) (void *arg, const FstEntry *e,
							   bool newest_of_key);
	void	   *custom_arg;

	/* key-group filter: keep only key groups in [kg_lo, kg_hi] */
	bool		kg_filter;
	uint16		kg_lo;
	uint16		kg_hi;
} FstDropPolicy;

/* Zeroes everything: keep all, no TTL, no hook, no filter. */
extern void fst_drop_policy_init(FstDropPolicy *p, uint64 horizon_seq,
								 bool bottom_level);

/* Where output files go. */
typedef struct FstOutputFactory
{
	/* a new output: its file id and a sink for its bytes */
	FstCode		(*open_output) (void *arg, uint64 *file_id,
								FstWriteSink **sink, FstError *err);
	/* every byte of file_id was appended; make it durable */
	FstCode		(*finish_output) (void *arg, uint64 file_id,
								  const FstSstProps *props, FstError *err);
	/* optional: an opened output will never be finished (on failure) */
	void		(*abandon_output) (void *arg, uint64 file_id);
	void	   *arg;
} FstOutputFactory;

typedef struct FstCompactionParams
{
	FstDropPolicy policy;
	FstSstOptions sst;
	uint64		target_file_size;	/* finish an output at this size */
	uint64		max_file_blocks;	/* ... or this many data blocks; 0: any */
	int			output_level;	/* stored in the outputs' FstFileMeta */
	FstOutputFactory output;
	/* optional interrupt check, every check_interval input entries */
	bool		(*should_stop) (void *arg);
	void	   *stop_arg;
	int			check_interval; /* <= 0: 1024 */
} FstCompactionParams;

typedef struct FstCompactionStats
{
	uint64		entries_in;
	uint64		entries_out;
	uint64		index_entries_out;	/* of them, of FST_KG_INDEX */
	uint64		dropped_shadowed;	/* older than the horizon's version */
	uint64		dropped_tombstones; /* bottom-level tombstones */
	uint64		dropped_expired;	/* TTL, at the bottom level */
	uint64		expired_to_tombstone;	/* TTL, above it (counted in out) */
	uint64		dropped_key_group;	/* outside the key-group filter */
	uint64		dropped_custom; /* the hook said DROP */
	uint64		frozen;			/* the hook said FREEZE (counted in out) */
	uint64		bytes_in;		/* key + value bytes read */
	uint64		bytes_out;		/* key + value bytes written */
	uint64		file_bytes_out; /* size of the finished files */
} FstCompactionStats;

typedef struct FstCompactionResult
{
	FstFileMeta *files;			/* outputs in key order */
	int			nfiles;
	int			capacity;
	FstCompactionStats stats;
} FstCompactionResult;

extern void fst_compaction_result_init(FstCompactionResult *r);
extern void fst_compaction_result_free(FstCompactionResult *r);

/*
 * Runs the merge from input's first entry to its end (input stays the
 * caller's).  On failure the outputs finished so far stay listed in result
 * (the caller discards them) and an unfinished one is abandoned; errors
 * are the input's, the writer's or the factory's, FST_INTERRUPTED when
 * should_stop said so, FST_CORRUPT for an input entry without a valid
 * header, FST_INVALID_ARGUMENT for input out of order.
 */
extern FstCode fst_compaction_run(FstIter *input,
								  const FstCompactionParams *params,
								  FstCompactionResult *result, FstError *err);

/* --- the compaction job ------------------------------------------------ */

/*
 * MVCC garbage collection with transaction status from the caller (the
 * table AM asks the clog and the snapshots).  Walking a key's versions
 * newest first, the first one that every present and future snapshot sees
 * -- frozen, or committed before the oldest snapshot's horizon -- is kept
 * frozen (a tombstone is dropped at the bottom level; an expired row is
 * dropped there and replaced by a tombstone above it) and everything older
 * is dropped.  Versions of aborted transactions are dropped; versions of
 * running ones are kept, and their xids make the outputs' pending range.
 */
typedef enum FstXidState
{
	FST_XID_COMMITTED = 0,		/* committed: before_horizon decides */
	FST_XID_RUNNING,			/* running, or committed too late to tell:
								 * keep as it is */
	FST_XID_ABORTED				/* aborted, or crashed before committing */
} FstXidState;

typedef struct FstMvccRules
{
	/* the state of a version's xid, not marked committed or frozen */
	FstXidState (*xid_state) (void *arg, uint32 xid);
	/* whether committed xid committed before every snapshot */
	bool		(*before_horizon) (void *arg, uint32 xid);
	/* optional: whether a row (payload) is expired */
	bool		(*expired) (void *arg, FstSlice payload);
	/* optional: a row's TTL column for the outputs' TTL range */
	bool		(*ttl_of) (void *arg, FstSlice payload, int64 *ttl);
	void	   *arg;
} FstMvccRules;

/* The open reader of an input file (borrowed until the job returns). */
typedef FstCode (*FstCompactionReaderFn) (void *arg, const FstFileMeta *f,
										  FstSstReader **r, FstError *err);

typedef struct FstCompactionJob
{
	const FstCompactionPick *pick;	/* inputs in FstManifestFile records */
	FstCompactionParams params;	/* sst, sizes, output; policy set by the job */
	FstMvccRules mvcc;
	FstCompactionReaderFn reader;
	void	   *reader_arg;

	/* results */
	FstCompactionResult result; /* outputs (empty for a trivial move) */
	uint64		expired_rows;	/* rows expiry removed or turned tombstone */
	uint64		expired_bytes;
	uint32		pending_xid_min;	/* of versions kept unmarked */
	uint32		pending_xid_max;
} FstCompactionJob;

extern void fst_compaction_job_init(FstCompactionJob *job,
									const FstCompactionPick *pick);
extern void fst_compaction_job_free(FstCompactionJob *job);

/*
 * Runs the picked compaction: removes the inputs in edit and adds the
 * outputs (a trivial move: the input itself at the output level, its owner
 * kept), every output with the pending xid range of all of them.  Each
 * input's reader is asked for before any is read.  On failure edit is
 * incomplete (the caller frees it) and finished outputs are in
 * job->result.
 */
extern FstCode fst_compaction_job_run(FstCompactionJob *job,
									  FstManifestEdit *edit, FstError *err);

/*
 * Expiry of whole files: adds to edit the removal of every file of m whose
 * rows are all expired (a TTL range wholly below cutoff, no tombstones)
 * and that may go without being read: in any level when the TTL column is
 * a key column (every version of a key has the same TTL value, so nothing
 * older can reappear), else only in the deepest level with files, not
 * level 0 (nothing older exists).  Returns how many in *nfiles, with their
 * bytes and entries in *bytes and *rows.
 */
extern FstCode fst_compaction_expired_files(const FstManifest *m, int64 cutoff,
											bool ttl_is_key,
											FstManifestEdit *edit, int *nfiles,
											uint64 *bytes, uint64 *rows,
											FstError *err);

#endif							/* FST_COMPACTION_H */
