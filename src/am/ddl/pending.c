/*-------------------------------------------------------------------------
 *
 * pending.c
 *	  Dropping a table's forst state when its storage goes away: after a
 *	  committed DROP TABLE or TRUNCATE (the old relfilenode), or after an
 *	  aborted CREATE TABLE or TRUNCATE (the new one).
 *
 * This mirrors PostgreSQL's pendingDeletes for relation files: actions are
 * registered with the (sub)transaction nesting level that asked for them,
 * moved to the parent when a subtransaction commits, and carried out or
 * forgotten when the top transaction ends.
 *
 * DROP DATABASE drops no table one by one: an entry whose relNode is
 * InvalidOid stands for every forst table of database dbNode.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "am/ddl/pending.h"
#include "am/ddl/index_drop.h"
#include "am/keys/rel.h"
#include "am/ddl/migrate.h"
#include "am/wal/wal.h"

typedef struct PendingDrop
{
	RelFileNode rnode;
	bool		at_commit;		/* drop at commit (else at abort) */
	int			nest_level;
	struct PendingDrop *next;
} PendingDrop;

static PendingDrop *pending = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

void
forst_drop_storage_at(const RelFileNode *rnode, bool at_commit)
{
	PendingDrop *p = MemoryContextAlloc(TopMemoryContext, sizeof(PendingDrop));

	p->rnode = *rnode;
	p->at_commit = at_commit;
	p->nest_level = GetCurrentTransactionNestLevel();
	p->next = pending;
	pending = p;
}

static void
forst_xact_callback(XactEvent event, void *arg)
{
	bool		commit;
	PendingDrop *p;

	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
		commit = true;
	else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		commit = false;
	else
		return;
	p = pending;
	pending = NULL;
	while (p)
	{
		PendingDrop *next = p->next;

		if (p->at_commit == commit && !OidIsValid(p->rnode.relNode))
		{
			RelFileNode rnodes[FORST_TABLES_BATCH];
			ForstTableScan scan;
			int			n,
						i;

			/*
			 * A dropped database: all its tables, in rounds.  Before the
			 * WAL catch-up (the first statement after a start, say) the
			 * registry does not list the tables whose rows the catch-up
			 * will replay, so one record also says "the whole database"
			 * (relNode InvalidOid): replay drops every table of it.
			 */
			forst_wal_log_rel(XLOG_FORST_DROP, &p->rnode);
			forst_tables_scan_begin(&scan, 0);
			while ((n = forst_tables_of_database(&scan, p->rnode.dbNode, rnodes,
												 lengthof(rnodes))) > 0)
				for (i = 0; i < n; i++)
				{
					forst_wal_log_rel(XLOG_FORST_DROP, &rnodes[i]);
					forst_table_shared_drop(&rnodes[i]);
				}
		}
		else if (p->at_commit == commit)
		{
			/*
			 * Logged after the commit or abort record: a replay must neither
			 * resurrect a dropped table's rows nor keep an aborted new
			 * relfilenode's rows in memtable memory the primary freed.
			 */
			forst_wal_log_rel(XLOG_FORST_DROP, &p->rnode);
			forst_table_shared_drop(&p->rnode);
		}
		pfree(p);
		p = next;
	}
}

static void
forst_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	PendingDrop **pp = &pending;

	while (*pp)
	{
		PendingDrop *p = *pp;

		if (p->nest_level < level)
		{
			pp = &p->next;
			continue;
		}
		if (event == SUBXACT_EVENT_COMMIT_SUB)
		{
			p->nest_level = level - 1;
			pp = &p->next;
		}
		else if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			if (!p->at_commit)
			{
				forst_wal_log_rel(XLOG_FORST_DROP, &p->rnode);
				forst_table_shared_drop(&p->rnode);
			}
			*pp = p->next;
			pfree(p);
		}
		else
			pp = &p->next;
	}
}

/*
 * DROP TABLE of a forst table: its state goes when the drop commits.  The
 * drop of a secondary index is noted for ddl/index_drop.c.
 */
static void
forst_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	/* ALTER TABLE ... SET ACCESS METHOD swapping a table's storage */
	if (access == OAT_POST_ALTER && classId == RelationRelationId && subId == 0)
		forst_migrate_post_alter(objectId);
	if (access == OAT_DROP && classId == RelationRelationId && subId == 0)
	{
		Relation	rel = RelationIdGetRelation(objectId);

		if (RelationIsValid(rel))
		{
			if (rel->rd_rel->relkind == RELKIND_RELATION &&
				forst_is_forst_relation(rel))
				forst_drop_storage_at(&rel->rd_node, true);
			else if (rel->rd_rel->relkind == RELKIND_INDEX &&
					 !rel->rd_index->indisprimary)
				forst_note_dropped_index(rel, arg ? ((ObjectAccessDrop *) arg)->dropflags : 0);
			RelationClose(rel);
		}
	}
}

/* DROP DATABASE: the state of its forst tables goes when it commits. */
void
forst_drop_database_at_commit(Oid dbid)
{
	RelFileNode rnode;

	rnode.spcNode = InvalidOid;
	rnode.dbNode = dbid;
	rnode.relNode = InvalidOid;
	forst_drop_storage_at(&rnode, true);
}

void
forst_pending_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = forst_object_access;
	RegisterXactCallback(forst_xact_callback, NULL);
	forst_index_drop_init();
	RegisterSubXactCallback(forst_subxact_callback, NULL);
}
