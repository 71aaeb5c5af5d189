/*-------------------------------------------------------------------------
 *
 * gc_pins.h
 *	  Dropping the pins of clones that are gone (checkpoint/gc_pins.c), a
 *	  step of garbage collection (checkpoint/gc.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_GC_PINS_H
#define FORST_GC_PINS_H

#include "nodes/pg_list.h"

/*
 * Whether the clone table (db, rel) of this cluster is gone, so that its
 * pins may go: the collection's judgement (a table of another live
 * database is that database's collection's to judge).
 */
typedef bool (*ForstGcCloneGone) (Oid db, Oid rel, void *arg);

/*
 * Drops the pins this cluster wrote for clones that are gone, with their
 * records, except those that a retained checkpoint still reads through:
 * one that names the clone with a file of the pinned checkpoint that lives
 * outside this cluster.  named lists the tables of this cluster's retained
 * checkpoints (ForstCkptTableRef).  Returns how many pins went; a record
 * that cannot be read stops the collection (ERROR).
 */
extern int	forst_gc_drop_stale_pins(ForstGcCloneGone gone, void *arg, List *named);

#endif							/* FORST_GC_PINS_H */
