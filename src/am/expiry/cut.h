/*-------------------------------------------------------------------------
 *
 * cut.h
 *	  Watermarks at a checkpoint's cut: recorded by each checkpoint, and
 *	  returned there with the unlogged tables after a crash.
 *
 * A checkpoint records, per table, the watermark that its snapshot sees in
 * forst.expiry.  Expiry is not MVCC (expiry.h), but the checkpoint's
 * files hold every row that watermark leaves live: compactions and
 * flushes compute their rule inside the checkpoint's gate
 * (checkpoint.c), so no rule newer than the snapshot removes a row from
 * the files the checkpoint names.
 *
 * After an unclean stop, the unlogged tables of a database return to its
 * newest checkpoint (checkpoint/crash_restore.h), and so must their
 * watermarks: a streaming job that replays its source from the
 * checkpoint's offset emits the windows closed since then again, and
 * their rows must not be hidden by a watermark that a later, lost batch
 * had set.  forst.expiry is an ordinary (logged) table, and the restore
 * runs inside whatever transaction first touched a forst table, which may
 * still abort; so the watermarks are set back by a short-lived background
 * worker in a transaction of its own, which the restoring backend waits
 * for.  Setting a watermark back is idempotent: a restore that fails
 * after it simply runs again.  The worker locks no user table (it checks
 * each table's relfilenode in the syscache), only rows of forst.expiry,
 * with a lock timeout: the backend waiting for it may hold locks.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_EXPIRY_CUT_H
#define FORST_EXPIRY_CUT_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/snapshot.h"
#include "datatype/timestamp.h"
#include "utils/timestamp.h"

/* A table's watermark: at a cut, or to return to; and its TTL settings. */
typedef struct ForstWatermark
{
	Oid			relid;
	Oid			relfilenode;	/* for a reset: the table it was recorded for */
	bool		has_watermark;	/* false: NULL (none) */
	TimestampTz watermark;
	AttrNumber	attnum;			/* the TTL column (0 for a reset) */
	bool		has_ttl;		/* false: NULL (none) */
	Interval	ttl;
} ForstWatermark;

/*
 * Every row of forst.expiry as snap sees it (ForstWatermark list; empty
 * if the extension's catalog is absent).  Reads the table directly: row
 * security does not hide rows.  Inside a transaction.
 */
extern List *forst_expiry_watermarks_at(Snapshot snap);

/*
 * Sets each table's watermark in forst.expiry to the given one (and bumps
 * its version, so that every backend reloads it), in a committed
 * transaction of a background worker of this database, and waits for it.
 * Tables dropped or rewritten meanwhile are skipped.  ERROR (with the
 * worker's error) if it could not run or failed.
 */
extern void forst_expiry_reset_watermarks(List *resets);

/*
 * Appends the members of a checkpoint's table that hold relid's expiry
 * settings in watermarks (a list from forst_expiry_watermarks_at):
 * "watermark_us", in PostgreSQL's microseconds since 2000-01-01 UTC, or
 * null; and "expiry": {"column": the TTL column's name, "ttl_days",
 * "ttl_us": the TTL's day and time parts, or null}, or null when the table
 * has no TTL column.  forst.attach sets them on the table it creates.
 */
extern void forst_expiry_append_watermark(StringInfo buf, List *watermarks,
										  Oid relid);

/* The worker's entry point (bgw_function_name). */
extern PGDLLEXPORT void forst_watermark_reset_main(Datum arg);

#endif							/* FORST_EXPIRY_CUT_H */
