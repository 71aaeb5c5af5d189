/*-------------------------------------------------------------------------
 *
 * checkpoint.h
 *	  Checkpoints: a consistent cut over the forst tables of a database that
 *	  writes only metadata (docs/checkpoints.md).
 *
 * A checkpoint takes a snapshot S, flushes every memtable entry logged
 * before S was taken, and writes one object,
 *
 *	<cluster id>/checkpoints/<20-digit id>
 *
 * naming, per table, the manifest version that holds those entries, the
 * table's definition (to recreate it elsewhere), and what S makes visible.
 * SST files are in the object store already, so a checkpoint writes the
 * memtables and a few KB, never the state.
 *
 * Visibility.  Files also hold entries that S must not see (transactions
 * still running at S, or that began after it), and entries written before
 * their transaction committed carry no committed flag.  Another server
 * cannot ask this one's clog, so the checkpoint settles every xid whose
 * fate a reader would have to look up: the range [lo, S.xmax), lo being
 * the oldest of S.xmin and the pending xids of the files (filemeta.h),
 * with the list of its xids that S sees.  Read elsewhere, an entry is
 * visible iff it is frozen, or its xid is in that list, or its xid is
 * older than lo and it carries the committed flag (checkpoint/attach.c).
 *
 * The object is a header line "forst-checkpoint 1 <length> <crc32c>" and
 * a JSON document (readable with any S3 client).  Checkpoint ids grow;
 * forst.checkpoints_retained newest of each database are kept (plus pinned
 * ones), older objects are deleted, and their files are left to garbage
 * collection.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_CHECKPOINT_H
#define FORST_CHECKPOINT_H

#include "nodes/pg_list.h"
#include "utils/relcache.h"
#include "utils/jsonb.h"

extern int	forst_checkpoint_interval_s;
extern int	forst_checkpoints_retained;

/* Defines forst.checkpoint_* (from forst_define_gucs). */
extern void forst_checkpoint_define_gucs(void);

/* Registers the shared memory (from _PG_init). */
extern void forst_checkpoint_init(void);

/*
 * Runs one checkpoint of the current database (inside a transaction) and
 * returns its id; on failure records it as failed and raises the error.
 */
extern uint64 forst_checkpoint_run(void);

/* The cluster id naming this server's objects (its system identifier). */
extern char *forst_cluster_id(void);

/*
 * First line of a checkpoint object: FORST_CKPT_MAGIC, the format version,
 * its JSON's length and CRC-32C.  Readers take the versions up to
 * FORST_CKPT_FORMAT and refuse newer ones (docs/operations.md); the JSON's
 * "format" member repeats the version.
 */
#define FORST_CKPT_MAGIC "forst-checkpoint"
#define FORST_CKPT_FORMAT 1
#define FORST_CKPT_HEADER FORST_CKPT_MAGIC " " CppAsString2(FORST_CKPT_FORMAT)

/*
 * The object key of checkpoint id of a cluster (palloc'ed), or NULL if
 * cluster is not a cluster id.
 */
extern char *forst_checkpoint_key(const char *cluster, uint64 id);

/*
 * The JSON of a checkpoint of cluster (NULL: this one), verified against
 * its header; ERROR if absent, corrupt or of a newer format.
 */
extern char *forst_checkpoint_fetch(const char *cluster, uint64 id);

/* A table of a checkpoint: its prefix and manifest version (0: empty). */
typedef struct ForstCkptTableRef
{
	char	   *name;
	char	   *prefix;
	uint64		version;
} ForstCkptTableRef;

/* The tables a checkpoint's JSON names (a List of ForstCkptTableRef). */
extern List *forst_checkpoint_tables(const char *json);

/*
 * The database a checkpoint's JSON belongs to, as "oid <oid>" ("dboid"),
 * or "name <name>" for one an older build wrote (palloc'd).
 */
extern char *forst_checkpoint_database(const char *json);

/* Writes / reads a checkpoint-format object (header + JSON) at any key. */
extern uint64 forst_checkpoint_put(const char *key, const char *json);
extern char *forst_checkpoint_get(const char *key, bool missing_ok);

/* Ids of the checkpoints of cluster in the store, ascending (palloc'd). */
extern int	forst_checkpoint_list(const char *cluster, uint64 **ids);

/* Registers the periodic checkpoint worker (src/am/checkpoint/checkpoint_worker.c). */
extern void forst_checkpoint_workers_register(void);

/*
 * The compaction gate: a compaction computes its expiry rule between enter
 * (false: a checkpoint is taking its cut, do not start now) and leave.
 */
extern bool forst_checkpoint_gate_enter(void);
extern void forst_checkpoint_gate_leave(void);

/*
 * checkpoint/attach.c: makes rel's next manifest borrow the files of the
 * manifest "<prefix>/manifest/<version>" (a table of a checkpoint) under
 * the checkpoint's visibility rule (lo, xmax, the "first-last,..." ranges)
 * for key groups [kg_lo, kg_hi] (kg_lo < 0: those the source owns);
 * returns how many files it attached.
 * replace: they take the place of rel's files (a NULL prefix empties it);
 * otherwise they join them.  The caller locks rel against writers.
 */
extern uint64 forst_attach_manifest(Relation rel, const char *prefix,
									uint64 version, int kg_lo, int kg_hi,
									TransactionId lo, TransactionId xmax,
									const char *ranges, bool replace);

/*
 * Deletes each database's checkpoint objects beyond its newest n, except
 * pinned ones.
 */
extern int	forst_checkpoint_retire(int keep);

#endif							/* FORST_CHECKPOINT_H */
