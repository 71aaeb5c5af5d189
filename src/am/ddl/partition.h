/*-------------------------------------------------------------------------
 *
 * partition.h
 *	  forst partitions under a partitioned table with a primary key
 *	  (ddl/partition.c).
 *
 * A partitioned table's primary key is "forst's" when its index uses
 * access method forst_key; then every partition is a forst table whose own
 * key is a forst_key index attached to it, and INSERT ... ON CONFLICT
 * through the partitioned table finds its arbiter in each partition.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_DDL_PARTITION_H
#define FORST_DDL_PARTITION_H

#include "nodes/parsenodes.h"
#include "utils/relcache.h"

/*
 * The forst_key index behind partitioned table relid's primary key, or
 * InvalidOid (not partitioned, no key, or a btree key).
 */
extern Oid	forst_partitioned_key_index(Oid relid);

/*
 * Whether partitioned table relid's partitions must be forst tables: its
 * key is forst's or it has a forst_key index besides its key (every
 * partition gets a copy of each).
 */
extern bool forst_partitioned_is_forst(Oid relid);

/*
 * Whether an index created on partitioned table relid is to be a forst_key
 * index: its partitions must be forst tables, or it has partitions and
 * they all are, or it has none and default_table_access_method is forst.
 */
extern bool forst_partitioned_index_is_forst(Oid relid);

/* Whether default_table_access_method is forst. */
extern bool forst_default_am_is_forst(void);

/*
 * Whether every leaf partition of relid is a forst table (true with none),
 * and whether it has any partition at all.
 */
extern bool forst_partition_leaves_all_forst(Oid relid, bool *any);

/* rel's unique indexes (its key too) of access method am. */
extern List *forst_partitioned_unique_indexes(Relation rel, Oid am);

/*
 * Relabels unique index indexoid of partitioned table parent (or of a
 * partitioned partition) to access method to_am (forst_key, or btree) and
 * its key columns' operator classes to to_am's defaults: PostgreSQL 15
 * creates a partitioned unique index as a btree only.
 */
extern void forst_relabel_partitioned_index(Relation parent, Oid indexoid,
											Oid to_am);

/*
 * CREATE UNIQUE INDEX on a partitioned table whose partitions are forst
 * tables (ddl/partition_unique.c): before, the statement is made to create
 * a btree on the partitioned table alone; after (stmt the same statement),
 * the index is relabelled forst_key, and without ONLY each partition gets
 * a forst_key unique index attached to it.
 */
extern void forst_partition_unique_before(IndexStmt *stmt, Oid relid);
extern void forst_partition_unique_after(Node *stmt);

/*
 * Before partitioned table child is attached to partitioned table parent:
 * refuses (0A000, with the CREATE UNIQUE INDEX to run) when child lacks a
 * copy of one of parent's unique forst_key indexes, which PostgreSQL would
 * try to create and cannot.
 */
extern void forst_partition_unique_check_attach(Oid parent, Oid child);

/*
 * Before CREATE TABLE ... PARTITION OF: under a parent keyed by forst, a
 * partition without USING becomes a forst table (*is_forst set) and one of
 * another access method is refused; a forst partition of a parent whose
 * only index is a btree primary key with no partitions yet makes that key
 * forst's; other parents with indexes are refused.
 */
extern void forst_partition_before_create(CreateStmt *stmt, bool *is_forst);

/*
 * Before CREATE TABLE (LIKE t INCLUDING INDEXES) without USING: a copy of a
 * forst table's key, or of a partitioned table's that is forst's, is a
 * forst_key index, so the new table is a forst table (*is_forst set), as
 * pg_partman's partitions made this way must be.
 */
extern void forst_like_before_create(CreateStmt *stmt, bool *is_forst);

/*
 * After CREATE TABLE ... PARTITION BY under default_table_access_method =
 * forst: the new table's primary key becomes forst's.
 */
extern void forst_partition_after_create(CreateStmt *stmt);

/*
 * Around ALTER TABLE on a partitioned table: ATTACH PARTITION is checked
 * (and may make the parent's key forst's, as for CREATE); ADD PRIMARY KEY
 * on a table with forst partitions is made to add the key to the
 * partitioned table alone (before), which is made forst's, and then to each
 * partition, attached (after); a key added to a table without partitions
 * becomes forst's when default_table_access_method is forst.
 */
extern void forst_partition_before_alter(AlterTableStmt *stmt);
extern void forst_partition_after_alter(AlterTableStmt *stmt);

#endif							/* FORST_DDL_PARTITION_H */
