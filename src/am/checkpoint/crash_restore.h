/*-------------------------------------------------------------------------
 *
 * crash_restore.h
 *	  Checkpoint-durable tables: after an unclean stop, the UNLOGGED forst
 *	  tables of a database return together to its newest checkpoint.
 *
 * An UNLOGGED forst table logs no WAL for its rows (write/dml.c): its
 * writes cost a memtable insert, and a transaction that writes only such
 * tables commits without waiting for a WAL flush.  It is durable at forst
 * checkpoints, which include it like any forst table, and after a clean
 * shutdown (wal/unlogged.h).  After any other stop, the first backend
 * that uses a forst table of a database -- before it reads or writes
 * anything -- returns every unlogged forst table of that database to the
 * newest completed checkpoint of the database, in one pass under a lock
 * that the database's other backends wait for:
 *
 *	- a table the checkpoint holds (same relfilenode) gets a manifest whose
 *	  files are the checkpoint's, read through the checkpoint's visibility
 *	  rule as attach reads them (checkpoint/attach.c): rows of transactions
 *	  the checkpoint did not see are not there, whatever clog says now;
 *	- a table it does not hold (created, truncated or rewritten after it)
 *	  is left empty: DDL is WAL-logged and stays;
 *	- the watermark of a table it holds returns to the one the checkpoint
 *	  recorded (expiry/cut.h), committed by a short-lived worker before the
 *	  database counts as restored.
 *
 * All of a database's unlogged tables come from one checkpoint: one cut,
 * including, say, a streaming job's stored source offset.  Logged forst
 * tables and heap tables keep everything their WAL holds.  Nothing runs
 * during recovery (a standby cannot read unlogged tables at all); a
 * promoted standby restores at the first use after promotion.  If the
 * restore fails (the store is down), the statement that triggered it fails
 * with the cause, and the next use tries again: nothing is served before.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_CRASH_RESTORE_H
#define FORST_CRASH_RESTORE_H

/* Installs the gate into forst_table_shared (from _PG_init). */
extern void forst_crash_restore_init(void);

#endif							/* FORST_CRASH_RESTORE_H */
