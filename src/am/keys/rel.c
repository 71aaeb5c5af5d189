/*-------------------------------------------------------------------------
 *
 * rel.c
 *	  Backend-local facts about forst relations (key columns, codec), and
 *	  building the user part of a row.
 *
 * The facts come from the relation's forst_key primary-key index and are
 * cached per relation OID until a relcache invalidation says otherwise.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_index.h"
#include "commands/defrem.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

#include "am/keys/rel.h"
#include "am/read/mvcc.h"
#include "am/objects/store.h"

static HTAB *relinfo_cache = NULL;

/* The table AM's routine (set by _PG_init from tableam/tableam.c). */
const TableAmRoutine *forst_table_am = NULL;

/*
 * Who may lend a transient table its primary key (ddl/migrate.c while a
 * migration to forst runs, ddl/rekey.c while a forst table is rewritten):
 * registered at load, consulted in order when a table has no key of its own.
 */
#define MAX_KEY_LENDERS 4
static ForstKeyLender key_lenders[MAX_KEY_LENDERS];
static int	n_key_lenders = 0;

void
forst_register_key_lender(ForstKeyLender lender)
{
	if (n_key_lenders >= MAX_KEY_LENDERS)
		elog(ERROR, "forst: too many key lenders");
	key_lenders[n_key_lenders++] = lender;
}

bool
forst_is_forst_relation(Relation rel)
{
	return forst_table_am != NULL && rel->rd_tableam == forst_table_am;
}

static void free_retired(XactEvent event, void *arg);

static void
relinfo_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	ForstRelInfo *info;

	if (relinfo_cache == NULL)
		return;
	hash_seq_init(&status, relinfo_cache);
	while ((info = hash_seq_search(&status)) != NULL)
	{
		if (relid == InvalidOid || info->relid == relid)
			info->valid = false;
	}
}

void
forst_relinfo_init(void)
{
	CacheRegisterRelcacheCallback(relinfo_invalidate, (Datum) 0);
	RegisterXactCallback(free_retired, NULL);
}

/*
 * What a rebuilt entry held is freed at the end of the transaction, not at
 * once: a writer may be in the middle of using it (the index list, an
 * index's prepared predicate and expressions, the key codec) when an
 * invalidation makes a nested call rebuild the entry, e.g. while an index
 * expression or predicate looks something up in the catalogs.
 */
typedef struct RetiredInfo
{
	char	   *pkname;
	void	   *codec;
	ForstSecondary *secondary;
	int			nsecondary;
} RetiredInfo;

static List *retired = NIL;		/* of RetiredInfo, in TopMemoryContext */

static void
retire(ForstRelInfo *info)
{
	MemoryContext old;
	RetiredInfo *r;

	if (info->pkname == NULL && info->codec == NULL && info->secondary == NULL)
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	r = palloc(sizeof(RetiredInfo));
	r->pkname = info->pkname;
	r->codec = info->codec;
	r->secondary = info->secondary;
	r->nsecondary = info->nsecondary;
	retired = lappend(retired, r);
	MemoryContextSwitchTo(old);
}

static void
free_retired(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT &&
		event != XACT_EVENT_PARALLEL_ABORT && event != XACT_EVENT_PREPARE)
		return;
	foreach(lc, retired)
	{
		RetiredInfo *r = lfirst(lc);

		if (r->pkname)
			pfree(r->pkname);
		if (r->codec)
			pfree(r->codec);
		forst_secondaries_free(r->secondary, r->nsecondary);
		pfree(r);
	}
	list_free(retired);
	retired = NIL;
}

/*
 * Marked valid before it reads the catalogs: an invalidation that arrives
 * meanwhile (opening an index takes a lock, which accepts them) marks it
 * invalid again, and forst_relinfo builds it once more.  Marked valid at
 * the end instead, such an invalidation was lost, and a writer kept an
 * index list without an index that CREATE INDEX CONCURRENTLY had just
 * added, beyond PostgreSQL's wait for the writers of the moment.
 */
static void
relinfo_build(ForstRelInfo *info, Relation rel)
{
	MemoryContext old = MemoryContextSwitchTo(CacheMemoryContext);
	Oid			pk;

	info->valid = true;

	info->rnode = rel->rd_node;
	info->pkindex = InvalidOid;
	info->pkname = NULL;
	info->nkeys = 0;
	info->codec = NULL;
	info->max_key_groups = FORST_MAX_KEY_GROUPS_DEFAULT;

	(void) RelationGetIndexList(rel);	/* computes rd_pkindex */
	pk = rel->rd_pkindex;
	/*
	 * The transient table of a migration to forst (the migrated table's key)
	 * or of a rewrite of a forst table (that table's key).
	 */
	for (int i = 0; i < n_key_lenders && !OidIsValid(pk); i++)
		pk = key_lenders[i] (rel);
	if (OidIsValid(pk))
	{
		Relation	idx = index_open(pk, AccessShareLock);
		int			i;

		info->pkindex = pk;
		info->pkname = pstrdup(RelationGetRelationName(idx));
		info->nkeys = idx->rd_index->indnkeyatts;
		for (i = 0; i < info->nkeys; i++)
			info->keyattrs[i] = idx->rd_index->indkey.values[i];
		index_close(idx, AccessShareLock);
		info->codec = forst_keycodec_create(RelationGetDescr(rel), info->nkeys,
											info->keyattrs, info->max_key_groups);
	}
	info->nsecondary = forst_secondaries_of(rel, pk, CacheMemoryContext,
											&info->secondary);
	MemoryContextSwitchTo(old);
}

ForstRelInfo *
forst_relinfo(Relation rel)
{
	ForstRelInfo *info;
	Oid			relid = RelationGetRelid(rel);
	bool		found;

	if (relinfo_cache == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(ForstRelInfo);
		ctl.hcxt = CacheMemoryContext;
		relinfo_cache = hash_create("forst relation info", 64, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	info = hash_search(relinfo_cache, &relid, HASH_ENTER, &found);
	if (!found)
	{
		memset(info, 0, sizeof(*info));
		info->relid = relid;
	}
	/* again if an invalidation arrived while it was built */
	while (!info->valid || !RelFileNodeEquals(info->rnode, rel->rd_node))
	{
		retire(info);
		info->pkname = NULL;
		info->codec = NULL;
		info->secondary = NULL;
		info->nsecondary = 0;
		relinfo_build(info, rel);
	}
	return info;
}

void
forst_row_user_part(ForstRelInfo *info, TupleTableSlot *slot,
					ForstTableShared *ts, StringInfo out)
{
	uint16		kg;

	resetStringInfo(out);
	appendBinaryStringInfo(out, "\0\0", FST_KG_BYTES);
	if (info->codec)
	{
		slot_getallattrs(slot);
		forst_key_encode_row(info->codec, slot->tts_values, slot->tts_isnull,
							 out, &kg);
		if (ts != NULL)
		{
			if (!ts->loaded)
				forst_table_load(ts);
			if (ts->fenced)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("forst: this table was claimed by another server and takes no writes here"),
						 errhint("Write to the table on the server that attached it with mode => 'claim'.")));
			if (kg < ts->kg_lo || kg > ts->kg_hi)
				ereport(ERROR,
						(errcode(ERRCODE_CHECK_VIOLATION),
						 errmsg("forst: key %s belongs to key group %u, which this table does not own",
								forst_key_to_text(info->codec, out->data + FST_KG_BYTES,
												  out->len - FST_KG_BYTES), kg),
						 errdetail("The table owns key groups %u..%u (it was attached from a part of a table).",
								   ts->kg_lo, ts->kg_hi),
						 errhint("Route the row to the server that owns its key group: forst.key_group() tells which.")));
		}
	}
	else
	{
		int64		rowid;

		/*
		 * Hidden row ids are sequence numbers: unique and increasing across
		 * restarts (shmem/seq.c), so past every row id in the table's files
		 * (earlier row ids were sequence numbers of their time, or smaller).
		 * A counter of their own would start again after a restart.
		 */
		rowid = (int64) forst_next_seq();

		forst_key_encode_value(INT8OID, Int64GetDatum(rowid), out);
		kg = forst_key_group_of_bytes(out->data + FST_KG_BYTES,
									  out->len - FST_KG_BYTES,
									  info->max_key_groups);
	}
	fst_put_be16(out->data, kg);
}

char *
forst_user_part_to_text(ForstRelInfo *info, const char *up, int len)
{
	if (info->codec == NULL || len < FST_KG_BYTES)
		return pstrdup("(row id)");
	return forst_key_to_text(info->codec, up + FST_KG_BYTES, len - FST_KG_BYTES);
}

Oid
forst_partitioned_key(Relation rel)
{
	Oid			forst_key_am;
	ListCell   *lc;

	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return InvalidOid;
	forst_key_am = get_index_am_oid("forst_key", true);
	if (!OidIsValid(forst_key_am))
		return InvalidOid;
	foreach(lc, RelationGetIndexList(rel))
	{
		Oid			indexoid = lfirst_oid(lc);
		HeapTuple	tup;
		bool		primary;

		tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
		if (!HeapTupleIsValid(tup))
			continue;
		primary = ((Form_pg_index) GETSTRUCT(tup))->indisprimary;
		ReleaseSysCache(tup);
		if (!primary)
			continue;
		return forst_index_am(indexoid) == forst_key_am ? indexoid : InvalidOid;
	}
	return InvalidOid;
}

Oid
forst_index_am(Oid indexoid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	Oid			am;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", indexoid);
	am = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
	return am;
}

/* Whether a foreign key (of another table or of itself) references relid. */
bool
forst_rel_is_referenced(Oid relid)
{
	Relation	conrel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	bool		found = false;

	conrel = table_open(ConstraintRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_constraint_confrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(conrel, InvalidOid, false, NULL, 1, &key);
	while (!found && (tup = systable_getnext(scan)) != NULL)
		found = ((Form_pg_constraint) GETSTRUCT(tup))->contype == CONSTRAINT_FOREIGN;
	systable_endscan(scan);
	table_close(conrel, AccessShareLock);
	return found;
}
