/*-------------------------------------------------------------------------
 *
 * unlogged.h
 *	  Whether the unlogged (checkpoint-durable) forst tables of this server
 *	  are whole in the store, or must return to a checkpoint first.
 *
 * An UNLOGGED forst table writes no WAL for its rows: its memtables are
 * not replayed after a restart.  Its state is whole in the store in two
 * cases only: at a completed forst checkpoint (one cut over the database,
 * checkpoint/crash_restore.h), and after a clean shutdown, whose flush
 * worker flushed every unlogged memtable before it exited.
 *
 * The second case is the file $PGDATA/forst/unlogged_clean, written (and
 * synced) by the flush worker at a clean shutdown once no unlogged
 * memtable holds entries, and removed (durably) before the first write to
 * an unlogged table after start-up, and when a base backup starts (a copy
 * must not claim a state it does not hold).  Its second line is "all", or,
 * when some databases had not yet restored their tables after an earlier
 * crash, "databases <oid> ..." naming those that had: the others still
 * must, at their first use after the next start.  At start-up the file says
 * "clean", unless the server starts as a standby or for archive recovery
 * (standby.signal, recovery.signal): their tables are the primary's, as of
 * some checkpoint.  Otherwise -- a crash, an immediate shutdown, a flush
 * that could not finish, a promoted standby, a restored backup -- every
 * database must bring its unlogged tables back to its newest checkpoint
 * before they are used ("restore pending"); checkpoint/crash_restore.c
 * does it and records here which databases are done.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_WAL_UNLOGGED_H
#define FORST_WAL_UNLOGGED_H

#define FORST_UNLOGGED_CLEAN_FILE "forst/unlogged_clean"

/* Registers the shared state (from _PG_init). */
extern void forst_unlogged_init(void);

/* Whether databases must restore their unlogged tables before use. */
extern bool forst_unlogged_restore_pending(void);

/* Whether database db has restored them (or needs not); set when done. */
extern bool forst_unlogged_db_restored(Oid db);
extern void forst_unlogged_set_db_restored(Oid db);

/*
 * Before a write to an unlogged table: the first one after a clean start
 * removes forst/unlogged_clean (ERROR if it cannot).  Cheap afterwards.
 */
extern void forst_unlogged_dirty(void);

/*
 * The flush worker at a clean shutdown, once no unlogged memtable holds
 * entries: writes forst/unlogged_clean.  Returns false (with a LOG) if it
 * could not.
 */
extern bool forst_unlogged_mark_clean(void);

#endif							/* FORST_WAL_UNLOGGED_H */
