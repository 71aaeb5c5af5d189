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
 * the clone's table is gone and no retained checkpoint names the clone
 * with a file of the pinned checkpoint that lives outside this cluster (a
 * checkpoint of ours may be attached elsewhere and read through the pin
 * after the clone was dropped: see pin_still_needed).
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

typedef struct RefEntry
{
	char		key[FORST_KEY_LEN];
} RefEntry;

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

static void
add_ref(HTAB *refs, const char *key)
{
	RefEntry	e;
	bool		found;

	memset(e.key, 0, sizeof(e.key));
	strlcpy(e.key, key, sizeof(e.key));
	(void) hash_search(refs, e.key, HASH_ENTER, &found);
}

static bool
has_ref(HTAB *refs, const char *key)
{
	char		k[FORST_KEY_LEN];

	memset(k, 0, sizeof(k));
	strlcpy(k, key, sizeof(k));
	return hash_search(refs, k, HASH_FIND, NULL) != NULL;
}

/*
 * The object key of a file that the manifest of the table at prefix lists
 * (tk: that table's key, kind SST): under the table for its own files, the
 * key its owner string names for a borrowed one.
 */
static const char *
manifest_file_key(FstObjKey *tk, const char *prefix, const FstManifestFile *f,
				  char *buf, size_t len)
{
	const char *colon;

	if (f->owner != NULL)
	{
		colon = strchr(f->owner, ':');
		return colon ? colon + 1 : f->owner;
	}
	tk->file_id = f->meta.file_id;
	if (fst_objkey_build(tk, buf, len) < 0)
		elog(ERROR, "forst: no key for file " UINT64_FORMAT " of \"%s\"",
			 tk->file_id, prefix);
	return buf;
}

/* Marks a manifest and every file it lists as needed. */
static void
keep_manifest(HTAB *refs, const char *prefix, uint64 version, const FstManifest *m)
{
	FstObjKey	k;
	char		key[FORST_KEY_LEN];
	int			l,
				i;

	forst_parse_table_prefix(prefix, &k);
	k.kind = FST_OBJKEY_MANIFEST;
	k.version = version;
	add_ref(refs, forst_objkey(&k));
	k.kind = FST_OBJKEY_SST;
	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < m->levels[l].nfiles; i++)
			add_ref(refs, manifest_file_key(&k, prefix, &m->levels[l].files[i],
											key, sizeof(key)));
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
		keep_manifest(refs, t->prefix, v, &m);
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
				keep_manifest(refs, r->prefix, r->version, &m);
				fst_manifest_free(&m);
				named = lappend(named, r);
			}
		}
	}
	return named;
}

/*
 * The keys of the files that a table's manifest lists and that live outside
 * this cluster's own tables (borrowed from another server, or from a
 * savepoint), added to set.
 */
static void
add_foreign_files(HTAB *set, const char *prefix, uint64 version)
{
	FstManifest m;
	FstObjKey	k;
	FstObjKey	owner;
	char		key[FORST_KEY_LEN];
	int			l,
				i;

	if (!forst_manifest_read(prefix, version, &m, true))
		return;
	forst_parse_table_prefix(prefix, &k);
	k.kind = FST_OBJKEY_SST;
	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < m.levels[l].nfiles; i++)
		{
			const char *fk = manifest_file_key(&k, prefix, &m.levels[l].files[i],
											   key, sizeof(key));

			if (!fst_objkey_parse_table_of(fk, &owner) ||
				owner.cluster != k.cluster || owner.savepoint[0] != '\0')
				add_ref(set, fk);
		}
	fst_manifest_free(&m);
}

/*
 * Whether a pin must stay although the clone that wrote it (the table at
 * clone_prefix) is gone: a retained checkpoint of ours names the clone,
 * with a manifest that lists a file of the pinned checkpoint ("checkpoint
 * <id>\nsource <table prefix>\n..."; a savepoint's pin names checkpoint 0
 * and its table's one manifest) that lives outside this cluster.
 *
 * Such a checkpoint can be attached on another server after the clone is
 * dropped (a rescale moves a shard on, and drops it), and it reads those
 * files through the pin: the source keeps its checkpoint, and its own pins
 * on files it borrowed in turn, only while the pin is there.  So a file
 * stays as long as a table or retained checkpoint reads it, however many
 * servers the chain of attaches went through.  Only checkpoints naming the
 * clone count, and only files outside this cluster: a file of ours that
 * the source borrowed from us is kept by our own references, and counting
 * it would let two servers' pins hold each other's checkpoints forever.
 * A source checkpoint or manifest that is gone needs no pin.
 */
static bool
pin_still_needed(List *named, const char *clone_prefix, const char *pin_text)
{
	const char *src;
	char	   *prefix;
	char	   *cluster;
	uint64		version = 0;
	uint64		ckpt;
	HTAB	   *foreign = NULL;
	HASHCTL		ctl;
	FstManifest m;
	FstObjKey	k;
	char		key[FORST_KEY_LEN];
	ListCell   *lc;
	bool		needed = false;
	int			l,
				i;

	if (sscanf(pin_text, "checkpoint " UINT64_FORMAT, &ckpt) != 1 ||
		(src = strstr(pin_text, "\nsource ")) == NULL)
		return true;			/* not understood: kept, as unreadable ones */

	/* the files our retained checkpoints read through the clone */
	foreach(lc, named)
	{
		ForstCkptTableRef *r = lfirst(lc);

		if (strcmp(r->prefix, clone_prefix) != 0)
			continue;
		if (foreign == NULL)
		{
			memset(&ctl, 0, sizeof(ctl));
			ctl.keysize = FORST_KEY_LEN;
			ctl.entrysize = sizeof(RefEntry);
			ctl.hcxt = CurrentMemoryContext;
			foreign = hash_create("forst gc pinned files", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		}
		add_foreign_files(foreign, r->prefix, r->version);
	}
	if (foreign == NULL)
		return false;

	/* the pinned checkpoint's manifest of its table */
	src += strlen("\nsource ");
	prefix = pnstrdup(src, strcspn(src, "\n"));
	cluster = pnstrdup(prefix, strcspn(prefix, "/"));
	if (ckpt > 0)
	{
		char	   *ckey = forst_checkpoint_key(cluster, ckpt);
		char	   *json = ckey ? forst_checkpoint_get(ckey, true) : NULL;

		if (json == NULL)
			return false;
		foreach(lc, forst_checkpoint_tables(json))
		{
			ForstCkptTableRef *r = lfirst(lc);

			if (strcmp(r->prefix, prefix) == 0)
				version = r->version;
		}
	}
	else
		version = forst_newest_manifest_version(prefix);
	if (version == 0 || !forst_manifest_read(prefix, version, &m, true))
		return false;
	forst_parse_table_prefix(prefix, &k);
	k.kind = FST_OBJKEY_SST;
	for (l = 0; l < FST_NUM_LEVELS && !needed; l++)
		for (i = 0; i < m.levels[l].nfiles && !needed; i++)
			needed = has_ref(foreign, manifest_file_key(&k, prefix, &m.levels[l].files[i],
														key, sizeof(key)));
	fst_manifest_free(&m);
	return needed;
}

/*
 * Removes pins this cluster wrote for clones whose tables are gone, unless
 * a retained checkpoint still reads through them (pin_still_needed).
 */
static int
drop_stale_pins(List *tables, List *named)
{
	FstObjKey	dir;
	ForstObjKeys keys;
	int			dropped = 0;
	int			i;

	forst_objkey_init(&dir, FST_OBJKEY_PINNED);
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_PINNED, &dir), &keys);
	for (i = 0; i < keys.n; i++)
	{
		FstBuf		buf;
		FstError	err;
		char	   *pin = NULL;
		Oid			db = InvalidOid,
					rel = InvalidOid;
		GcTable    *t;
		FstObjKey	table;
		char	   *text;
		char	   *by;

		/*
		 * A pin deleted since the listing pins nothing; one that cannot be
		 * read stops the collection (what it pins must not go).
		 */
		if (!forst_object_get(keys.keys[i], &buf, true))
			continue;
		text = pnstrdup(buf.data, buf.len);
		fst_buf_free(&buf);
		/* "pin <key>\nby <table prefix>\n" */
		if (strncmp(text, "pin ", 4) != 0 || (by = strstr(text, "\nby ")) == NULL)
			continue;
		pin = pnstrdup(text + 4, by - text - 4);
		by += 4;
		by[strcspn(by, "\n")] = '\0';
		if (!fst_objkey_parse_table_of(by, &table))
			continue;
		db = table.db;
		rel = table.rel;
		t = find_table(tables, db, rel);
		if (t != NULL && (!t->ours || t->live))
			continue;
		if (t == NULL && db != MyDatabaseId &&
			SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(db)))
			continue;			/* another live database's: its GC decides */
		if (forst_object_get(pin, &buf, true))
		{
			bool		needed;

			text = pnstrdup(buf.data, buf.len);
			fst_buf_free(&buf);
			needed = pin_still_needed(named, forst_objkey(&table), text);
			if (needed)
				continue;
		}
		{
			const char *del[2] = {pin, keys.keys[i]};

			if (fst_objstore_delete_batch(forst_objstore(), del, 2, NULL, &err) == FST_OK)
				dropped++;
		}
	}
	return dropped;
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
		if (has_ref(refs, keys.keys[i]))
			res->objects_kept++;
		else
			doom(doomed, keys.keys[i], keys.sizes[i]);
	}
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
	HASHCTL		ctl;
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
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = FORST_KEY_LEN;
	ctl.entrysize = sizeof(RefEntry);
	ctl.hcxt = CurrentMemoryContext;
	refs = hash_create("forst gc references", 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
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

			if (has_ref(refs, key))
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
	res->pins_dropped = drop_stale_pins(tables, named);
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
