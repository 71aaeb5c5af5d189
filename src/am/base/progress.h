/*-------------------------------------------------------------------------
 *
 * progress.h
 *	  Progress of long forst operations (checkpoint, garbage collection,
 *	  savepoint), per backend, for the forst.progress view.
 *
 * A process reports at most one operation at a time: start, then updates
 * (phase, done of total in a unit), then end.  An operation that fails is
 * ended by the error cleanup (transaction abort and process exit), so the
 * view never shows a dead operation.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_PROGRESS_H
#define FORST_PROGRESS_H

/* Registers the shared memory (from _PG_init). */
extern void forst_progress_init(void);

extern void forst_progress_start(const char *command, const char *target);
extern void forst_progress_update(const char *phase, int64 done, int64 total,
								  const char *unit);
extern void forst_progress_end(void);

#endif							/* FORST_PROGRESS_H */
