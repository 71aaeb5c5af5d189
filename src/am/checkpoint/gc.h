/*-------------------------------------------------------------------------
 *
 * gc.h
 *	  Garbage collection of the objects of this cluster's forst tables
 *	  (forst.gc(); see checkpoint/gc.c for what is kept and why it never races
 *	  an upload).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_GC_H
#define FORST_GC_H

extern int	forst_gc_grace_s;

typedef struct ForstGcResult
{
	int64		objects_listed;
	int64		objects_kept;
	int64		objects_deleted;
	int64		bytes_deleted;
	int			tables;			/* table prefixes seen */
	int			dead_tables;	/* of them, dropped (here or with their db) */
	int			pins_dropped;	/* pins of clones that are gone */
} ForstGcResult;

/* Defines forst.gc_grace (from forst_define_gucs). */
extern void forst_gc_init(void);

/*
 * Collects the garbage of the current database's tables and of dropped
 * databases' (inside a transaction; ERROR if the store fails).
 */
extern void forst_gc_run(ForstGcResult *res);

#endif							/* FORST_GC_H */
