/*-------------------------------------------------------------------------
 *
 * gc.c
 *	  Garbage collection of this cluster's objects (docs/checkpoints.md).
 *
 * forst.gc() deletes the objects under "<cluster>/tables/" that nothing
 * needs any more, for the tables of the current database and of dropped
 * databases.  An object is needed when
 *
 *	- it is the newest manifest of a live table, or a manifest whose
 *	  successor is younger than forst.gc_grace (readers, and a standby,
 *	  may still use it), or a manifest a retained checkpoint names
 *	  (retention keeps the checkpoints that clones pin); or
 *	- it is an SST file such a manifest lists, whichever prefix it lives
 *	  under (clones borrow files across tables); or
 *	- it is an SST file of a live table at or above the table's lowest
 *	  file id in flight (an upload whose manifest is not written yet).
 *
 * A table is live when the catalog has its relfilenode or the server's
 * shared state knows it (a table created by a transaction not yet
 * committed).  Tables of other live databases are left alone, but their
 * manifests count as references (a clone in another database may borrow
 * files of this one).
 *
 * Order (never racing an upload): list the objects first, then read the
 * in-flight watermarks, then list and read the manifests.  A file listed
 * in step one either was in flight at step two (kept), or was published
 * before it (so the manifests read after it list it), or is garbage.
 *
 * A table found dead in step two may have published a manifest and files
 * after step one (a flush or compaction that ended while it was dropped).
 * Its prefix is listed again after step two and collected from that
 * listing: once its shared state is gone, nothing publishes there again,
 * so no manifest is left naming files that were deleted.
 *
 * A table that another server claimed is left alone: its files are the
 * claimer's now (which does not collect them either: a known leak).
 *
 * Pins this cluster wrote for its clones (<cluster>/pinned/ records of
 * pins in a source cluster's namespace) are removed, with the pin, once
 * the clone's table is gone and no retained checkpoint reads through the
 * pin any more (checkpoint/gc_pins.c).  The keys kept are gathered with
 * checkpoint/gc_refs.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_database.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "commands/dbcommands.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/checkpoint/gc.h"
#include "am/checkpoint/gc_pins.h"
#include "am/checkpoint/gc_refs.h"
#include "am/base/privileges.h"
#include "am/base/progress.h"
#include "am/shmem/shmem.h"
#include "am/objects/store.h"
#include "am/wal/wal.h"

int			forst_gc_grace_s = 600;

/* How long a collection waits for a table being dropped (see step 2). */
#define GC_DROP_WAIT_MS 10000

/* One table prefix "<cluster>/tables/<db>.<relfilenode>". */
typedef struct GcTable
{
	Oid			db;
	Oid			rel;
	char	   *prefix;
	bool		ours;			/* of this database or a dropped one */
	bool		live;
	uint64		inflight_low;	/* PG_UINT64_MAX: none */
	List	   *manifests;		/* listed versions (uint64 as pointers) */
	List	   *objects;		/* indexes into the listing */
} GcTable;

/* An object to delete. */
typedef struct GcDoomed
{
	const char *key;
	uint64		size;
} GcDoomed;

void
forst_gc_init(void)
{
	DefineCustomIntVariable("forst.gc_grace",
							"Seconds a manifest version and its files are kept after a newer version replaced them.",
							"Readers and standbys may still use older versions for this long.",
							&forst_gc_grace_s, 600, 0, 86400 * 7,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);
}

static int64
unix_now_us(void)
{
	return (int64) GetCurrentTimestamp() +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
}

static GcTable *
find_table(List *tables, Oid db, Oid rel)
{
	ListCell   *lc;

	foreach(lc, tables)
	{
		GcTable    *t = lfirst(lc);

		if (t->db == db && t->rel == rel)
			return t;
	}
	return NULL;
}

/* Relfilenodes of the forst tables of this database (catalog). */
static List *
live_relfilenodes(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	List	   *out = NIL;
	uint64		i;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT pg_relation_filenode(c.oid) FROM pg_class c JOIN pg_am a ON a.oid = c.relam"
					" WHERE a.amname = 'forst' AND c.relkind = 'r'", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "forst: listing forst tables failed");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
		{
			/* in the caller's context: SPI_finish frees SPI's */
			MemoryContext old = MemoryContextSwitchTo(cxt);

			out = lappend_oid(out, DatumGetObjectId(d));
			MemoryContextSwitchTo(old);
		}
	}
	SPI_finish();
	return out;
}

static int
cmp_u64_desc(const ListCell *a, const ListCell *b)
{
	uint64		x = (uint64) (uintptr_t) lfirst(a);
	uint64		y = (uint64) (uintptr_t) lfirst(b);

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The manifests of a live table that stay: the newest, and each older one
 * whose successor is younger than the grace period.
 */
static void
keep_live_manifests(HTAB *refs, GcTable *t)
{
	ForstObjKeys keys;
	FstObjKey	tk;
	List	   *versions = NIL;
	ListCell   *lc;
	int64		cutoff = unix_now_us() - (int64) forst_gc_grace_s * USECS_PER_SEC;
	int64		successor_created = PG_INT64_MAX;
	int			i;

	/* listed again now: newer than the first listing (see the header) */
	forst_parse_table_prefix(t->prefix, &tk);
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_MANIFESTS, &tk), &keys);
	for (i = 0; i < keys.n; i++)
	{
		FstObjKey	k;

		if (fst_objkey_parse(keys.keys[i], &k) && k.kind == FST_OBJKEY_MANIFEST)
			versions = lappend(versions, (void *) (uintptr_t) k.version);
	}
	list_sort(versions, cmp_u64_desc);
	foreach(lc, versions)
	{
		uint64		v = (uint64) (uintptr_t) lfirst(lc);
		FstManifest m;

		if (successor_created < cutoff)
			break;				/* this and older ones were replaced long ago */
		if (!forst_manifest_read(t->prefix, v, &m, true))
			continue;
		forst_gc_keep_manifest(refs, t->prefix, v, &m);
		successor_created = m.created_at;
		fst_manifest_free(&m);
	}
}

/* Whether the table's newest manifest says another server claimed it. */
static bool
table_claimed(GcTable *t)
{
	uint64		newest = forst_newest_manifest_version(t->prefix);
	FstManifest m;
	bool		claimed = false;

	if (newest > 0 && forst_manifest_read(t->prefix, newest, &m, true))
	{
		claimed = m.schema_len > 0 &&
			strstr(pnstrdup(m.schema, m.schema_len), "\nclaimed-by ") != NULL;
		fst_manifest_free(&m);
	}
	return claimed;
}

/*
 * The manifests that retained checkpoints name (their tables may be dead);
 * returns the checkpoints' tables (ForstCkptTableRef), for the pins.
 */
static List *
keep_checkpoint_manifests(HTAB *refs)
{
	uint64	   *ids;
	int			n = forst_checkpoint_list(NULL, &ids);
	List	   *named = NIL;
	int			i;

	for (i = 0; i < n; i++)
	{
		ListCell   *lc;

		foreach(lc, forst_checkpoint_tables(forst_checkpoint_fetch(NULL, ids[i])))
		{
			ForstCkptTableRef *r = lfirst(lc);
			FstManifest m;

			if (r->version > 0 && forst_manifest_read(r->prefix, r->version, &m, true))
			{
				forst_gc_keep_manifest(refs, r->prefix, r->version, &m);
				fst_manifest_free(&m);
				named = lappend(named, r);
			}
		}
	}
	return named;
}

static void
doom(List **doomed, const char *key, uint64 size)
{
	GcDoomed   *d = palloc(sizeof(GcDoomed));

	d->key = key;
	d->size = size;
	*doomed = lappend(*doomed, d);
}

/*
 * A dead table's objects go, except those a retained checkpoint's manifest
 * names (or a clone borrows), listed again now: a flush or compaction that
 * ended while the table was dropped may have published after step one.
 */
static void
collect_dead_table(GcTable *t, HTAB *refs, List **doomed, ForstGcResult *res)
{
	FstObjKey	tk;
	ForstObjKeys keys;
	int			i;

	forst_parse_table_prefix(t->prefix, &tk);
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_TABLE, &tk), &keys);
	for (i = 0; i < keys.n; i++)
	{
		if (forst_gc_ref_has(refs, keys.keys[i]))
			res->objects_kept++;
		else
			doom(doomed, keys.keys[i], keys.sizes[i]);
	}
}

/*
 * ForstGcCloneGone for the pins: a clone of this database or of a dropped
 * one that is not live (tables: this collection's GcTables).
 */
static bool
clone_gone(Oid db, Oid rel, void *arg)
{
	GcTable    *t = find_table((List *) arg, db, rel);

	if (t != NULL)
		return t->ours && !t->live;
	/* another live database's clone is its collection's to judge */
	return db == MyDatabaseId ||
		!SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(db));
}

/* Waits for the developer option forst.debug_gc_lock's lock (tests). */
static void
debug_wait_for_lock(void)
{
	Datum		key = Int64GetDatum((int64) forst_debug_gc_lock);

	(void) DirectFunctionCall1(pg_advisory_lock_int8, key);
	(void) DirectFunctionCall1(pg_advisory_unlock_int8, key);
}

void
forst_gc_run(ForstGcResult *res)
{
	FstObjKey	dir;
	char	   *tables_prefix;
	ForstObjKeys objs;
	List	   *tables = NIL;
	List	   *live;
	HTAB	   *refs;
	ListCell   *lc;
	int			i;
	List	   *doomed = NIL;
	List	   *named;
	int			backup_pid;

	memset(res, 0, sizeof(*res));
	forst_objkey_init(&dir, FST_OBJKEY_TABLE);
	tables_prefix = forst_objkey_dir(FST_OBJDIR_TABLES, &dir);
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("forst: garbage collection cannot run during recovery"),
				 errhint("Run forst.gc() on the primary.")));

	/* 1. list every object */
	forst_progress_start("gc", get_database_name(MyDatabaseId));
	forst_progress_update("listing objects", 0, 0, "objects");
	forst_list_objects(tables_prefix, &objs);
	res->objects_listed = objs.n;
	for (i = 0; i < objs.n; i++)
	{
		FstObjKey	table;
		Oid			db,
					rel;
		GcTable    *t;

		/* every object under a table's prefix: its manifests, files, ... */
		if (!fst_objkey_parse_table_of(objs.keys[i], &table) ||
			table.cluster != dir.cluster || table.savepoint[0] != '\0')
			continue;
		db = table.db;
		rel = table.rel;
		t = find_table(tables, db, rel);
		if (t == NULL)
		{
			t = palloc0(sizeof(GcTable));
			t->db = db;
			t->rel = rel;
			t->prefix = forst_objkey(&table);
			t->ours = db == MyDatabaseId ||
				!SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(db));
			t->inflight_low = PG_UINT64_MAX;
			tables = lappend(tables, t);
		}
		t->objects = lappend_int(t->objects, i);
	}

	if (forst_debug_gc_lock > 0)
		debug_wait_for_lock();

	/* 2. which tables live, and their files in flight (after the listing) */
	live = live_relfilenodes();
	foreach(lc, tables)
	{
		GcTable    *t = lfirst(lc);
		ForstTableShared *ts;
		RelFileNode rnode;
		bool		in_catalog;

		res->tables++;
		if (!t->ours)
		{
			t->live = true;
			continue;
		}
		rnode.spcNode = InvalidOid;
		rnode.dbNode = t->db;
		rnode.relNode = t->rel;

		/*
		 * A table dropped while a flush or compaction of it ran keeps its
		 * shared state until that ends; wait a little for it, so that a
		 * collection right after a DROP TABLE sees the table dead (and
		 * drops its pins).  Still being dropped after that, it counts as
		 * live: the next collection takes it.
		 */
		in_catalog = t->db == MyDatabaseId && list_member_oid(live, t->rel);
		if (!in_catalog)
			(void) forst_table_wait_dropped(&rnode, GC_DROP_WAIT_MS);
		ts = forst_table_shared_any_spc(&rnode);
		t->live = in_catalog || ts != NULL;
		if (ts != NULL)
			t->inflight_low = forst_table_inflight_low(ts);
		if (!t->live)
			res->dead_tables++;
	}

	/*
	 * A table another server claimed (forst.attach mode claim) owns its
	 * files no more: they are the claimer's, and nothing here deletes them.
	 */
	foreach(lc, tables)
	{
		GcTable    *t = lfirst(lc);

		if (t->ours && table_claimed(t))
		{
			t->ours = false;
			t->live = true;
		}
	}

	/* 3. what is referenced, from manifests read now */
	refs = forst_gc_refs_create("forst gc references");
	i = 0;
	foreach(lc, tables)
	{
		GcTable    *t = lfirst(lc);

		CHECK_FOR_INTERRUPTS();
		forst_progress_update("reading manifests", i++, list_length(tables), "tables");
		if (t->live)
			keep_live_manifests(refs, t);
	}
	named = keep_checkpoint_manifests(refs);

	/* 4. the rest of our tables' objects goes */
	foreach(lc, tables)
	{
		GcTable    *t = lfirst(lc);
		ListCell   *oc;

		if (!t->ours)
			continue;
		if (!t->live)
		{
			collect_dead_table(t, refs, &doomed, res);
			continue;
		}
		foreach(oc, t->objects)
		{
			int			idx = lfirst_int(oc);
			const char *key = objs.keys[idx];

			if (forst_gc_ref_has(refs, key))
			{
				res->objects_kept++;
				continue;
			}
			if (t->inflight_low != PG_UINT64_MAX)
			{
				FstObjKey	k;

				if (fst_objkey_parse(key, &k) && k.kind == FST_OBJKEY_SST &&
					k.file_id >= t->inflight_low)
				{
					res->objects_kept++;
					continue;
				}
			}
			doom(&doomed, key, objs.sizes[idx]);
		}
	}

	/*
	 * A base backup copies a store inside the data directory file by file:
	 * its manifests must keep their SST files until it ends (checkpoint/backup.c).
	 */
	if ((backup_pid = forst_backup_in_progress()) != 0)
	{
		ereport(NOTICE,
				(errmsg("forst: garbage collection deletes nothing while a base backup runs"),
				 errdetail("The backup runs in process %d; %d objects are kept until the next collection.",
						   backup_pid, list_length(doomed))));
		res->objects_kept += list_length(doomed);
		doomed = NIL;
	}

	/* delete in batches */
	{
		const char *batch[500];
		int			n = 0;

		foreach(lc, doomed)
		{
			GcDoomed   *d = lfirst(lc);

			batch[n++] = d->key;
			res->objects_deleted++;
			res->bytes_deleted += d->size;
			if (n == lengthof(batch) || lnext(doomed, lc) == NULL)
			{
				FstError	err;
				FstCode		rc;

				CHECK_FOR_INTERRUPTS();
				forst_progress_update("deleting objects", res->objects_deleted,
									  list_length(doomed), "objects");
				rc = fst_objstore_delete_batch(forst_objstore(), batch, n, NULL, &err);
				if (rc != FST_OK)
					forst_report(rc, &err, "deleting garbage");
				n = 0;
			}
		}
	}
	forst_progress_update("dropping stale pins", 0, 0, "pins");
	res->pins_dropped = forst_gc_drop_stale_pins(clone_gone, tables, named);
	forst_progress_end();
}

PG_FUNCTION_INFO_V1(forst_gc_fn);

/* forst.gc() returns one row of counts */
Datum
forst_gc_fn(PG_FUNCTION_ARGS)
{
	ForstGcResult res;
	TupleDesc	desc;
	Datum		v[7];
	bool		nulls[7] = {0};

	forst_require_superuser("forst.gc", "delete objects from the store");
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	forst_gc_run(&res);
	v[0] = Int64GetDatum(res.objects_listed);
	v[1] = Int64GetDatum(res.objects_kept);
	v[2] = Int64GetDatum(res.objects_deleted);
	v[3] = Int64GetDatum(res.bytes_deleted);
	v[4] = Int32GetDatum(res.tables);
	v[5] = Int32GetDatum(res.dead_tables);
	v[6] = Int32GetDatum(res.pins_dropped);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), v, nulls)));
}
