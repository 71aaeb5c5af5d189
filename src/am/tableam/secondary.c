/*-------------------------------------------------------------------------
 *
 * secondary.c
 *	  Secondary indexes of forst tables: the build, and the planner hook
 *	  (tableam/secondary.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "commands/defrem.h"
#include "optimizer/plancat.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "am/keys/index_entry.h"
#include "am/read/cursor.h"
#include "am/expiry/expiry.h"
#include "am/tableam/secondary.h"
#include "am/tableam/vacuum.h"
#include "am/tableam/tableam.h"
#include "am/write/dml.h"
#include "am/write/index_entries.h"
#include "lsm/ikey.h"

/*
 * A UNIQUE index just built: its entries in index order, where equal
 * values are next to each other.  Two live rows with equal values (not
 * counting NULLs, unless NULLS NOT DISTINCT) fail the build, as btree's
 * does.  Entries that are not of a live row with their values (of an
 * expired row, say) do not count; rows are looked up only for runs of
 * equal values.
 */
static void
check_unique_build(Relation heap, Relation index, ForstSecondary *s,
				   ForstTableShared *ts)
{
	SnapshotData dirty;
	StringInfoData lo;
	StringInfoData hi;
	StringInfoData run_cols;	/* the values of the current run */
	StringInfoData run_row;		/* its first row, or the live one */
	int			run_state = 0;	/* of run_row: 0 not known, 1 live, -1 not */
	bool		have_run = false;
	ForstExpiry x;
	ForstCursor *c;

	forst_expiry_get(heap, &x);
	InitDirtySnapshot(dirty);
	initStringInfo(&lo);
	initStringInfo(&hi);
	initStringInfo(&run_cols);
	initStringInfo(&run_row);
	forst_index_entry_head(&lo, s->entry_id);
	appendBinaryStringInfo(&hi, lo.data, lo.len);
	if (!forst_key_successor_prefix(&hi))
		elog(ERROR, "forst: no range for the entries of index %u", s->indexoid);
	c = forst_cursor_open(heap, &dirty, ts, fst_slice(lo.data, lo.len),
						  fst_slice(hi.data, hi.len), false);
	forst_cursor_seek(c, fst_slice(lo.data, lo.len), fst_slice(hi.data, hi.len));
	while (forst_cursor_next(c))
	{
		FstSlice	cols,
					row;
		ForstLoc	loc;
		ForstIndexRow r = {0};

		CHECK_FOR_INTERRUPTS();
		if (!forst_index_entry_split(c->cur.entry.user_key, &cols, &row))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry of index \"%s\"",
							RelationGetRelationName(index))));
		if (!have_run || cols.len != (size_t) run_cols.len ||
			memcmp(cols.data, run_cols.data, cols.len) != 0)
		{
			have_run = true;
			resetStringInfo(&run_cols);
			appendBinaryStringInfo(&run_cols, cols.data, cols.len);
			resetStringInfo(&run_row);
			appendBinaryStringInfo(&run_row, row.data, row.len);
			run_state = 0;
			continue;
		}
		/* one column, NULL: never equal (the common case of many NULLs) */
		if (s->natts == 1 && cols.data[0] == FORST_INDEX_NULL &&
			!s->nulls_not_distinct)
			continue;
		if (run_state == 0)
			run_state = forst_index_row_has(heap, ts, s, &x,
											fst_slice(run_row.data, run_row.len),
											cols, &loc, NULL) ? 1 : -1;
		if (!forst_index_row_has(heap, ts, s, &x, row, cols, &loc, &r))
			continue;
		if (run_state < 0)
		{
			/* the first live row of the run */
			resetStringInfo(&run_row);
			appendBinaryStringInfo(&run_row, row.data, row.len);
			run_state = 1;
			forst_index_row_free(&r);
			continue;
		}
		{
			Datum		values[INDEX_MAX_KEYS];
			bool		isnull[INDEX_MAX_KEYS];
			bool		anynull = false;
			char	   *desc;

			forst_secondary_values(s, r.values, r.isnull, values, isnull);
			for (int i = 0; i < s->natts; i++)
				anynull |= isnull[i];
			if (anynull && !s->nulls_not_distinct)
			{
				forst_index_row_free(&r);
				continue;
			}
			desc = BuildIndexValueDescription(index, values, isnull);
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("could not create unique index \"%s\"",
							RelationGetRelationName(index)),
					 desc ? errdetail("Key %s is duplicated.", desc) :
					 errdetail("Duplicate keys exist."),
					 errtableconstraint(heap, RelationGetRelationName(index))));
		}
	}
	forst_cursor_close(c);
	pfree(lo.data);
	pfree(hi.data);
	pfree(run_cols.data);
	pfree(run_row.data);
}

IndexBuildResult *
forst_secondary_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result = palloc0(sizeof(IndexBuildResult));
	ForstSecondary s;
	ForstTableShared *ts;
	Snapshot	snap;
	TableScanDesc scan;
	TupleTableSlot *slot;
	StringInfoData e;
	StringInfoData up;
	CommandId	cid = GetCurrentCommandId(true);
	double		n = 0;
	double		nheap = 0;
	ForstExpiry x;

	forst_check_index_columns(heap, index);
	forst_check_entry_id(heap, index);

	/*
	 * The rebuild after VACUUM FULL: the rewrite copied the index's entries
	 * with their xids, so that snapshots older than it still find their
	 * rows through the index (a REINDEX does not set indcheckxmin).  Every
	 * entry of a valid index is already there; an invalid one (a failed
	 * CREATE INDEX CONCURRENTLY) may miss some, and is built anew.
	 */
	if (index->rd_index->indisvalid &&
		forst_rewrite_copied_entries(heap, &nheap))
	{
		result->heap_tuples = nheap;
		/* a partial index holds some of them: unknown, left to ANALYZE */
		result->index_tuples = indexInfo->ii_Predicate != NIL ? -1 : nheap;
		return result;
	}
	forst_expiry_get(heap, &x);
	forst_secondary_describe(heap, index, &s);
	forst_secondary_prepare(heap, index, CurrentMemoryContext, &s);

	/*
	 * After a crash an unlogged (checkpoint-durable) table returns to its
	 * last forst checkpoint, which would not hold the entries built here
	 * for its rows, while the index stays.
	 */
	if (heap->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
		forst_relation_has_rows(heap))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot create index \"%s\" on unlogged forst table \"%s\" because it has rows",
						RelationGetRelationName(index), RelationGetRelationName(heap)),
				 errdetail("After a crash the table returns to its last forst checkpoint, which would not hold the index's entries for these rows."),
				 errhint("Create the indexes of an unlogged forst table while it is empty.")));
	ts = forst_table_for_write(heap);
	initStringInfo(&e);
	initStringInfo(&up);

	/*
	 * The table is locked against writers (ShareLock, or more): the rows
	 * the latest snapshot sees are all there are, apart from those deleted
	 * for snapshots older than this transaction, which indcheckxmin keeps
	 * from using the index (below).  The entries sort after every row, so
	 * the scan never meets them.
	 *
	 * Concurrently (CREATE INDEX CONCURRENTLY, ShareUpdateExclusiveLock),
	 * every writer has had the index in its list since PostgreSQL's first
	 * wait, and writes its entries: the rows this snapshot does not see are
	 * theirs.  An entry put here after a writer's tombstone over it names a
	 * row version that is gone, which scans check (fetch_row);
	 * PostgreSQL waits for older snapshots before the index becomes valid.
	 */
	snap = RegisterSnapshot(GetLatestSnapshot());
	scan = table_beginscan(heap, snap, 0, NULL);
	slot = table_slot_create(heap, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		ForstVersion v;
		ForstLoc	loc;
		MinimalTuple payload;

		CHECK_FOR_INTERRUPTS();
		nheap += 1;
		slot_getallattrs(slot);
		/* a partial index holds the rows its predicate is true for */
		if (!forst_secondary_holds(&s, slot->tts_values, slot->tts_isnull))
			continue;
		forst_fetch_or_error(heap, &slot->tts_tid, &v);
		resetStringInfo(&up);
		forst_version_user_part(&v, &up);
		forst_version_free(&v);
		resetStringInfo(&e);
		forst_index_entry_build(&s, slot->tts_values, slot->tts_isnull,
								fst_slice(up.data, up.len), &e);
		payload = forst_index_entry_payload(heap, &x, slot->tts_values,
											slot->tts_isnull);
		forst_put_entry(ts, &e, 0, cid, (const char *) payload,
						payload ? payload->t_len : 0, &loc);
		if (payload)
			pfree(payload);
		n += 1;
		if (((uint64) n) % 1024 == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) n);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	UnregisterSnapshot(snap);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) n);
	pfree(e.data);
	pfree(up.data);
	if (s.unique)
		check_unique_build(heap, index, &s, ts);
	forst_secondary_release(&s);

	/* index_build sets pg_index.indcheckxmin (not for a REINDEX) */
	indexInfo->ii_BrokenHotChain = true;
	result->heap_tuples = nheap;
	result->index_tuples = n;
	return result;
}

/* ---------------------------------------------------------------------- */

static get_relation_info_hook_type prev_get_relation_info = NULL;

/*
 * The operator family the planner is to match column i of forst_key index
 * info with: forst's, also where pg_index names its btree twin (the index
 * backs a foreign key: ddl/foreign_keys.c).  btree's families also compare
 * across types forst's key code does not encode (date with timestamp, name
 * with text); their quals would be left to the recheck of a whole scan.
 * Every operator of forst's family is in the twin's, under the same
 * strategy, so the executor finds the quals in the index's own families.
 */
static void
show_forst_family(IndexOptInfo *info, int i, Oid forst_key_am)
{
	HeapTuple	tup;
	Oid			method;
	Oid			fclass;

	tup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(info->opfamily[i]));
	if (!HeapTupleIsValid(tup))
		return;
	method = ((Form_pg_opfamily) GETSTRUCT(tup))->opfmethod;
	ReleaseSysCache(tup);
	if (method == forst_key_am)
		return;
	fclass = GetDefaultOpClass(info->opcintype[i], forst_key_am);
	if (OidIsValid(fclass))
		info->opfamily[i] = get_opclass_family(fclass);
}

/*
 * A secondary index on a string column of a collation other than "C" has
 * its entries in byte order, not in the collation's: the planner must not
 * take its order for the collation's (no sort operator families, so no
 * path keys).  Equality still uses it.  And forst_key indexes show the
 * planner forst's operator families (show_forst_family).
 */
static void
secondary_get_relation_info(PlannerInfo *root, Oid relid, bool inhparent,
							RelOptInfo *rel)
{
	ListCell   *lc;
	Oid			forst_key_am = InvalidOid;

	if (prev_get_relation_info)
		prev_get_relation_info(root, relid, inhparent, rel);
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *info = lfirst(lc);

		if (!OidIsValid(forst_key_am))
			forst_key_am = get_index_am_oid("forst_key", true);
		if (info->relam != forst_key_am)
			continue;
		if (info->sortopfamily != NULL && info->sortopfamily == info->opfamily)
		{
			info->sortopfamily = palloc(sizeof(Oid) * info->nkeycolumns);
			memcpy(info->sortopfamily, info->opfamily, sizeof(Oid) * info->nkeycolumns);
		}
		for (int i = 0; i < info->nkeycolumns; i++)
			show_forst_family(info, i, forst_key_am);
		if (info->sortopfamily == NULL)
			continue;
		for (int i = 0; i < info->nkeycolumns; i++)
		{
			if (OidIsValid(info->indexcollations[i]) &&
				!forst_collation_is_bytewise(info->indexcollations[i]))
			{
				info->sortopfamily = NULL;
				break;
			}
		}
	}
}

void
forst_secondary_init(void)
{
	prev_get_relation_info = get_relation_info_hook;
	get_relation_info_hook = secondary_get_relation_info;
}
