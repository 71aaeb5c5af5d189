/*-------------------------------------------------------------------------
 *
 * bgw_xact.h
 *	  One unit of a background worker's work in a transaction of its own
 *	  (base/bgw_xact.c): what the flush, compaction and checkpoint workers
 *	  share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_BASE_BGW_XACT_H
#define FORST_BASE_BGW_XACT_H

typedef void (*ForstXactWork) (void *arg);

/*
 * Runs work(arg) in a new transaction with an active snapshot, and commits.
 * If work raises an ERROR, the error goes to the server log, the
 * transaction is aborted and false is returned, so that the worker can go
 * on with its next unit.  activity, if not NULL, is what pg_stat_activity
 * shows meanwhile (idle again afterwards).  Not for use inside a
 * transaction.
 */
extern bool forst_run_in_xact(const char *activity, ForstXactWork work,
							  void *arg);

/*
 * Gives the C library's free memory back to the kernel: for a worker after
 * a flush or compaction, whose file buffers (up to a whole output file)
 * the allocator would otherwise keep for the life of the process.
 */
extern void forst_bgw_release_memory(void);

#endif							/* FORST_BASE_BGW_XACT_H */
