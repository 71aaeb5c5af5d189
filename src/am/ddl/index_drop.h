/*-------------------------------------------------------------------------
 *
 * index_drop.h
 *	  Tombstones over the entries of a dropped secondary index of a forst
 *	  table (ddl/index_drop.c).
 *
 * forst_note_dropped_index is called when a drop reaches an index (the
 * object access hook, ddl/pending.c), with the drop's flags;
 * forst_dropped_indexes_apply at the end of every utility statement: it
 * writes a tombstone over each entry of every noted index whose pg_class
 * row is gone, if its table stays, and keeps the notes of indexes that
 * still exist.  Notes are forgotten when the top transaction ends, except
 * those of a DROP INDEX CONCURRENTLY, which commits between its steps.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_DDL_INDEX_DROP_H
#define FORST_DDL_INDEX_DROP_H

#include "utils/relcache.h"

extern void forst_index_drop_init(void);
extern void forst_note_dropped_index(Relation index, int dropflags);
extern void forst_dropped_indexes_apply(void);

#endif							/* FORST_DDL_INDEX_DROP_H */
