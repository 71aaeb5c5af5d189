/*-------------------------------------------------------------------------
 *
 * foreign_keys.h
 *	  Foreign keys that reference a forst table.
 *
 * PostgreSQL adds a foreign key through a unique index on the referenced
 * columns whose operator classes belong to btree.  Before such a key is
 * added, forst_prepare_referenced() relabels the referenced table's
 * primary key to the btree operator classes that order their columns
 * as forst's do; everything else about those indexes stays forst's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_DDL_FOREIGN_KEYS_H
#define FORST_DDL_FOREIGN_KEYS_H

#include "nodes/parsenodes.h"

/*
 * For a FOREIGN KEY constraint con whose referenced table is a forst table
 * (or a partitioned table keyed by forst): takes ShareRowExclusiveLock on
 * it, as adding the key does, and relabels its primary key in the current
 * transaction.  Refused (0A000): referencing other columns than the key, a
 * table whose rows expire, a partitioned table keyed by forst or a forst
 * partition.  Anything else: nothing.
 */
extern void forst_prepare_referenced(Constraint *con);

/*
 * The btree operator class that orders values as forst_key operator class
 * opclass does (same input type, same comparison function), or InvalidOid.
 */
extern Oid	forst_btree_twin_class(Oid opclass);

/*
 * Records index indexoid's dependencies on its nkeys operator classes, and
 * on its access method am when a class belongs to another (btree's twins
 * on a forst_key index: without it, DROP EXTENSION forst would drop
 * forst_key before the index).  Replaces those it had.
 */
extern void forst_record_index_classes(Oid indexoid, Oid am,
									   const Oid *opclasses, int nkeys);

/*
 * A forst table relid is to become a partition: its forst_key indexes get
 * forst's operator classes back, as its parent's key has them; refused
 * while foreign keys reference it.
 */
extern void forst_prepare_partition(Oid relid);

/*
 * The same for a table (forst, or partitioned keyed by forst) about to be
 * attached to partitioned table parent: when foreign keys reference parent
 * (its key has btree's twin classes), the table's key and its partitions'
 * get the twins instead, to match it.
 */
extern void forst_prepare_partition_of(Oid relid, Oid parent);

/* Whether foreign keys reference partitioned table relid (keyed by forst). */
extern bool forst_partitioned_key_referenced(Oid relid);

/* Gives the keys of relid and of all its partitions btree's twin classes. */
extern void forst_partition_tree_twins(Oid relid);

#endif							/* FORST_DDL_FOREIGN_KEYS_H */
