/*-------------------------------------------------------------------------
 *
 * tableam_ddl.c
 *	  The table access method's callbacks for DDL: a forst table's storage
 *	  as PostgreSQL creates, truncates, moves and rewrites relations, index
 *	  builds, and its TOAST table (tableam/tableam.h).
 *
 * A new relfilenode (CREATE TABLE, TRUNCATE) gets a registry entry with
 * nothing flushed and an empty main fork, so that PostgreSQL's own storage
 * bookkeeping works as for any relation; forst's state goes if the
 * (sub)transaction aborts, the old relfilenode's when it commits.  A
 * truncate in place (of storage this transaction created) drops the state
 * at once.  Moving to another tablespace and indexes of other access
 * methods are refused (VACUUM FULL's rewrite is in tableam/vacuum.c).  Rows are stored whole, so
 * a table has no TOAST table of its own (but see forst_migrate_wants_toast).
 * tableam/tableam.c puts these callbacks into the TableAmRoutine.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/tableam.h"
#include "catalog/pg_am.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/defrem.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/ddl/migrate.h"
#include "am/ddl/pending.h"
#include "am/objects/store.h"
#include "am/shmem/shmem.h"
#include "am/tableam/tableam.h"
#include "am/wal/wal.h"

/* ---------------------------------------------------------------------- */
/* Storage lifecycle                                                       */

void
forst_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
								char persistence, TransactionId *freezeXid,
								MultiXactId *minmulti)
{
	SMgrRelation srel;

	/* UNLOGGED: durable at forst checkpoints (checkpoint/crash_restore.h) */
	if (persistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("forst tables cannot be temporary"),
				 errhint("Create the table without TEMPORARY, or use the heap access method.")));
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();
	/* a replay forgets any state of an earlier user of this number */
	forst_wal_log_rel(XLOG_FORST_CREATE, newrnode);

	/*
	 * A new relfilenode has nothing flushed.  The store may still hold the
	 * objects of an earlier table with this number, though: dropped, but
	 * kept because a retained checkpoint or a clone names them.  Sharing
	 * their prefix would overwrite them, so the command fails instead (run
	 * again, it gets another number).  While the store is down this check
	 * is skipped, so that creating a table does not need the store.
	 */
	forst_check_prefix_unused(newrnode);
	{
		ForstTableShared *ts = forst_table_shared(newrnode, true);

		LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
		if (!ts->loaded)
		{
			ts->loaded = true;
			ts->manifest_version = 0;
		}
		LWLockRelease(&ts->lock);
	}

	/*
	 * An empty main fork, so that PostgreSQL's own storage bookkeeping
	 * (pending deletes, DROP DATABASE) works as for any relation.
	 */
	srel = RelationCreateStorage(*newrnode, persistence, true);

	/*
	 * An unlogged relation has an init fork (empty here, as the main fork):
	 * PostgreSQL copies it over the main fork after a crash.  The rows are
	 * not there; checkpoint/crash_restore.c brings them back.
	 */
	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(newrnode, INIT_FORKNUM);
		smgrimmedsync(srel, INIT_FORKNUM);
	}
	smgrclose(srel);

	/* the new state goes away if this (sub)transaction aborts ... */
	forst_drop_storage_at(newrnode, false);
	/* ... and a TRUNCATE's old state when it commits */
	if (OidIsValid(rel->rd_node.relNode) && !RelFileNodeEquals(*newrnode, rel->rd_node))
		forst_drop_storage_at(&rel->rd_node, true);
}

void
forst_relation_nontransactional_truncate(Relation rel)
{
	forst_wal_log_rel(XLOG_FORST_DROP, &rel->rd_node);
	forst_table_shared_drop(&rel->rd_node);
}

void
forst_relation_copy_data(Relation rel, const RelFileNode *newrnode)
{
	forst_not_supported("moving to another tablespace");
}

bool
forst_relation_has_rows(Relation rel)
{
	ForstTableShared *ts = forst_table_shared(&rel->rd_node, true);
	int			slabs[FORST_MAX_IMMUTABLE + 1];
	int			n,
				i;

	/* anything flushed counts (even if deleted since: conservative) */
	forst_table_load(ts);
	if (ts->manifest_version > 0)
		return true;
	n = forst_table_slabs(ts, slabs);
	for (i = 0; i < n; i++)
		if (fst_memtable_num_entries(forst_slab_memtable(slabs[i])) > 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------------- */
/* Index builds                                                            */

double
forst_index_build_range_scan(Relation table_rel, Relation index_rel,
							 struct IndexInfo *index_info, bool allow_sync,
							 bool anyvisible, bool progress,
							 BlockNumber start_blockno,
							 BlockNumber numblocks,
							 IndexBuildCallback callback,
							 void *callback_state, TableScanDesc scan)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("index \"%s\" of access method \"%s\" is not supported on forst table \"%s\"",
					RelationGetRelationName(index_rel),
					get_am_name(index_rel->rd_rel->relam),
					RelationGetRelationName(table_rel)),
			 errdetail("Indexes of other access methods store row locations, which forst rows do not have."),
			 table_rel->rd_rel->relkind == RELKIND_MATVIEW ?
			 errhint("A materialized view stored by forst takes no indexes: create it USING heap.") :
			 errhint("Create the index without USING: forst keeps its entries in the table.")));
	return 0;
}

/*
 * The third phase of CREATE INDEX CONCURRENTLY, which on heap inserts the
 * entries of rows written between the build's snapshot and the moment the
 * index became ready for inserts.  A forst writer writes the entries of
 * every index in the table's list, ready or not (keys/index_entry.h), and
 * every writer has had the index in its list since the first wait of the
 * build: those rows' entries are there already.  An entry the build wrote
 * for a row version that a writer replaced meanwhile is harmless: a scan
 * returns a row only if the row still matches its entry
 * (tableam/secondary.c).
 */
void
forst_index_validate_scan(Relation table_rel, Relation index_rel,
						  struct IndexInfo *index_info, Snapshot snapshot,
						  struct ValidateIndexState *state)
{
}

/* ---------------------------------------------------------------------- */
/* TOAST                                                                   */

bool
forst_relation_needs_toast_table(Relation rel)
{
	/* rows are stored whole; but see forst_migrate_wants_toast() */
	return forst_migrate_wants_toast(rel);
}

/* ... and that TOAST table, which forst itself never uses, is a heap */
Oid
forst_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;
}
