/*-------------------------------------------------------------------------
 *
 * manifests.c
 *	  A table's manifests in one backend (see objects/store.h): decoded
 *	  manifests by version, and consistent views of a table (its memtables
 *	  plus the manifest of the same moment).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "am/forst.h"
#include "am/objects/disk_cache.h"
#include "am/objects/store.h"
#include "store/diskcache.h"
#include "am/shmem/shmem.h"

/* ---------------------------------------------------------------------- */
/* Manifest cache: (rnode, version) -> decoded manifest                    */

typedef struct ManifestKey
{
	RelFileNode rnode;
	uint64		version;
} ManifestKey;

typedef struct ManifestEntry
{
	ManifestKey key;
	FstManifest manifest;
	ForstVisList vis;			/* parsed from the manifest's schema blob */
	MemoryContext vis_cxt;		/* holds vis; NULL if it is empty */
	LocalTransactionId used_lxid;	/* the last transaction that asked */
} ManifestEntry;

/*
 * Every flush and compaction makes a new version, and a backend (or a
 * worker) asks for each version it meets.  Entries are freed at the first
 * request of a later transaction, unless they hold a table's newest
 * version cached here: pointers into them are kept only by views, which
 * last at most as long as their transaction (a TID names a file by its
 * version only within one), while SST readers, which outlive it, copy
 * their visibility rules.  Sweeps run when the cache has grown to twice
 * its size after the last one, so their cost is constant per version.
 */
static HTAB *manifest_cache = NULL;
static ManifestEntry *manifest_last = NULL; /* the last one asked for */
static LocalTransactionId manifests_lxid = InvalidLocalTransactionId;
static long manifests_after_sweep = 0;
static uint64 manifests_decoded = 0;

static void
manifest_entry_free(ManifestEntry *e)
{
	ManifestKey key = e->key;

	if (manifest_last == e)
		manifest_last = NULL;
	fst_manifest_free(&e->manifest);
	if (e->vis_cxt != NULL)
		MemoryContextDelete(e->vis_cxt);
	hash_search(manifest_cache, &key, HASH_REMOVE, NULL);
}

static int
manifest_entry_cmp(const void *a, const void *b)
{
	const ManifestEntry *x = *(ManifestEntry *const *) a;
	const ManifestEntry *y = *(ManifestEntry *const *) b;
	int			r = memcmp(&x->key.rnode, &y->key.rnode, sizeof(RelFileNode));

	if (r != 0)
		return r;
	/* newest first */
	return x->key.version > y->key.version ? -1 : x->key.version < y->key.version ? 1 : 0;
}

/* Frees every entry but the newest of each table and this transaction's. */
static void
manifests_sweep(void)
{
	HASH_SEQ_STATUS seq;
	ManifestEntry *e;
	ManifestEntry **all;
	long		n = 0,
				i;

	all = palloc(sizeof(ManifestEntry *) * hash_get_num_entries(manifest_cache));
	hash_seq_init(&seq, manifest_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		all[n++] = e;
	qsort(all, n, sizeof(ManifestEntry *), manifest_entry_cmp);
	for (i = 0; i < n; i++)
	{
		bool		newest = i == 0 ||
			!RelFileNodeEquals(all[i - 1]->key.rnode, all[i]->key.rnode);

		if (!newest && all[i]->used_lxid != manifests_lxid)
			manifest_entry_free(all[i]);
	}
	pfree(all);
	manifests_after_sweep = hash_get_num_entries(manifest_cache);
}

int64
forst_manifests_cached(void)
{
	return manifest_cache ? hash_get_num_entries(manifest_cache) : 0;
}

uint64
forst_manifests_decoded(void)
{
	return manifests_decoded;
}

const FstManifest *
forst_manifest_newest_cached(const RelFileNode *rnode)
{
	HASH_SEQ_STATUS seq;
	ManifestEntry *e;
	ManifestEntry *newest = NULL;

	if (manifest_cache == NULL)
		return NULL;
	hash_seq_init(&seq, manifest_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (RelFileNodeEquals(e->key.rnode, *rnode) &&
			(newest == NULL || e->key.version > newest->key.version))
			newest = e;
	return newest ? &newest->manifest : NULL;
}

void
forst_manifest_init_new(FstManifest *m, const RelFileNode *rnode)
{
	fst_manifest_init(m);
	memcpy(m->table_uuid, &rnode->dbNode, sizeof(Oid));
	memcpy(m->table_uuid + 4, &rnode->relNode, sizeof(Oid));
	m->next_file_id = 1;
}

const FstManifest *
forst_manifest_at(const RelFileNode *rnode, uint64 version)
{
	ManifestKey key;
	ManifestEntry *e;
	bool		found;
	char		okey[FORST_KEY_LEN];
	FstBuf		buf;
	FstError	err;
	FstCode		rc;
	bool		from_store = false;

	if (manifest_cache == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(ManifestKey);
		ctl.entrysize = sizeof(ManifestEntry);
		ctl.hcxt = TopMemoryContext;
		manifest_cache = hash_create("forst manifests", 64, &ctl,
									 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	if (MyProc != NULL && MyProc->lxid != manifests_lxid)
	{
		manifests_lxid = MyProc->lxid;
		if (hash_get_num_entries(manifest_cache) > 2 * manifests_after_sweep + 4)
			manifests_sweep();
	}
	if (manifest_last != NULL && manifest_last->key.version == version &&
		RelFileNodeEquals(manifest_last->key.rnode, *rnode))
	{
		manifest_last->used_lxid = manifests_lxid;
		return &manifest_last->manifest;
	}
	memset(&key, 0, sizeof(key));
	key.rnode = *rnode;
	key.version = version;
	e = hash_search(manifest_cache, &key, HASH_FIND, NULL);
	if (e)
	{
		e->used_lxid = manifests_lxid;
		manifest_last = e;
		return &e->manifest;
	}

	forst_manifest_object_key(rnode, version, okey, sizeof(okey));
	fst_buf_init(&buf);

	/*
	 * Manifests are immutable: the local disk cache keeps a copy, so that
	 * new backends open tables without the store (an outage) and without a
	 * request each.
	 */
	if (forst_disk_cache() != NULL &&
		fst_diskcache_get(forst_disk_cache(), okey, &buf, &err) == FST_OK)
		rc = FST_OK;
	else
	{
		fst_buf_reset(&buf);
		rc = fst_objstore_get(forst_objstore(), okey, &buf, &err);
		if (rc != FST_OK)
		{
			fst_buf_free(&buf);
			forst_report(rc, &err, psprintf("reading manifest \"%s\"", okey));
		}
		from_store = true;
	}
	e = hash_search(manifest_cache, &key, HASH_ENTER, &found);
	e->used_lxid = manifests_lxid;
	e->vis_cxt = NULL;
	e->vis.n = 0;
	e->vis.items = NULL;
	rc = fst_manifest_decode(buf.data, buf.len, &e->manifest, &err);
	manifests_decoded++;
	if (rc == FST_OK && from_store)
		forst_cache_admit(okey, buf.data, buf.len);
	fst_buf_free(&buf);
	if (rc == FST_OK && e->manifest.schema_len > 0)
	{
		e->vis_cxt = AllocSetContextCreate(TopMemoryContext, "forst manifest rules",
										   ALLOCSET_SMALL_SIZES);
		if (!forst_vis_parse(e->manifest.schema, e->manifest.schema_len, &e->vis,
							 e->vis_cxt))
		{
			fst_manifest_free(&e->manifest);
			rc = fst_error(&err, FST_CORRUPT, "malformed table description");
		}
	}
	if (rc != FST_OK)
	{
		if (e->vis_cxt != NULL)
			MemoryContextDelete(e->vis_cxt);
		hash_search(manifest_cache, &key, HASH_REMOVE, NULL);
		forst_report(rc, &err, psprintf("decoding manifest \"%s\"", okey));
	}
	return &e->manifest;
}

const ForstVisList *
forst_manifest_vis(const FstManifest *m)
{
	/* m is the manifest member of a cache entry (forst_manifest_at) */
	return &((const ManifestEntry *) ((const char *) m - offsetof(ManifestEntry, manifest)))->vis;
}

const FstManifestFile *
forst_manifest_file_by_id(const FstManifest *m, uint64 file_id)
{
	int			l,
				i;

	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < m->levels[l].nfiles; i++)
			if (m->levels[l].files[i].meta.file_id == file_id)
				return &m->levels[l].files[i];
	return NULL;
}

void
forst_file_object_key(const RelFileNode *rnode, const FstManifestFile *f,
					  char *buf, size_t len)
{
	const char *colon;

	if (f->owner == NULL)
		forst_sst_object_key(rnode, f->meta.file_id, buf, len);
	else if ((colon = strchr(f->owner, ':')) != NULL)
		strlcpy(buf, colon + 1, len);
	else
		strlcpy(buf, f->owner, len);
}

void
forst_table_view(ForstTableShared *ts, const RelFileNode *rnode,
				 ForstTableView *view)
{
	int			i;

	memset(view, 0, sizeof(*view));
	view->rnode = *rnode;
	if (ts == NULL)
		return;
	/* before the view: its slabs stay until this backend unpins */
	forst_slab_pin();
	forst_table_load(ts);
	LWLockAcquire(&ts->lock, LW_SHARED);
	if (ts->active >= 0)
		view->slabs[view->nslabs++] = ts->active;
	memcpy(&view->slabs[view->nslabs], ts->immutable, sizeof(int) * ts->nimmutable);
	view->nslabs += ts->nimmutable;
	view->manifest_version = ts->manifest_version;
	/* replay itself reads on, into the memtables (wal/replay.c) */
	if (unlikely(ts->unreadable_rows_version != 0) && !AmStartupProcess())
	{
		uint64		v = ts->unreadable_rows_version;

		LWLockRelease(&ts->lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst: this standby cannot read version " UINT64_FORMAT " of table %u/%u/%u, whose rows are only in the primary's object store",
						v, rnode->spcNode, rnode->dbNode, rnode->relNode),
				 errdetail("VACUUM FULL or forst.attach on the primary wrote the table's rows as files, without WAL records of the rows."),
				 errhint("Set forst.remote_dir on the standby to the primary's object store.")));
	}
	/* a slab's generation changes only when it is freed, which our pin stops */
	for (i = 0; i < view->nslabs; i++)
		view->generations[i] = forst_shared->slabs[view->slabs[i]].generation;
	LWLockRelease(&ts->lock);
	if (view->manifest_version > 0)
		view->manifest = forst_manifest_at(rnode, view->manifest_version);
}

bool
forst_table_view_stale(const ForstTableView *view)
{
	int			i;

	pg_read_barrier();
	for (i = 0; i < view->nslabs; i++)
		if (forst_shared->slabs[view->slabs[i]].generation != view->generations[i])
			return true;
	return false;
}

