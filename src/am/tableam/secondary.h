/*-------------------------------------------------------------------------
 *
 * secondary.h
 *	  Secondary indexes of forst tables: the build and the scans of a
 *	  forst_key index that is not the table's primary key.
 *
 * tableam/keyindex.c hands these the indexes whose rd_index says they are
 * not the primary key.  Their entries are in the table's own LSM tree
 * (keys/index_entry.h), kept by the write path (write/index_entries.h).
 *
 * The build writes an entry for every row the latest snapshot sees, under
 * the building transaction's id, and marks the index (indcheckxmin) so that
 * no snapshot older than that transaction uses it: such a snapshot may see
 * rows deleted since, which have no entries.
 *
 * A scan reads the entries of one range of encoded values (equality on
 * leading columns, then bounds on the next one; other keys are left to the
 * executor's recheck), in the index's order or backward, and for each
 * fetches the row it names under the scan's snapshot.  An entry is returned
 * only if the row's columns still encode to the entry's (they do, as both
 * were written together; this keeps a stale entry from ever giving a row
 * twice or out of order).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_SECONDARY_H
#define FORST_SECONDARY_H

#include "access/genam.h"
#include "access/relscan.h"
#include "nodes/execnodes.h"

extern IndexBuildResult *forst_secondary_build(Relation heap, Relation index,
											   IndexInfo *indexInfo);
extern void forst_secondary_beginscan(IndexScanDesc scan);
extern void forst_secondary_rescan(IndexScanDesc scan);
extern bool forst_secondary_gettuple(IndexScanDesc scan, ScanDirection dir);
extern void forst_secondary_endscan(IndexScanDesc scan);

/* the index tuple an index-only scan wants (of NULLs: it reads no column) */
extern void forst_index_only_tuple(IndexScanDesc scan);

/* _PG_init: the planner hook (no order from non-"C" string columns) */
extern void forst_secondary_init(void);

#endif							/* FORST_SECONDARY_H */
