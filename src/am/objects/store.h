/*-------------------------------------------------------------------------
 *
 * store.h
 *	  forst tables in object storage: names of their objects, their
 *	  manifests, and cached SST readers, for one backend.
 *
 * Layout under forst.remote_dir (docs/architecture.md):
 *
 *	<system identifier>/tables/<database oid>.<relfilenode>/manifest/<20 digits>
 *	<system identifier>/tables/<database oid>.<relfilenode>/sst/<2 hex>/<20 digits>.sst
 *
 * The system identifier names the cluster (a streaming standby shares it
 * and reads the same objects).  A relfilenode is new for every CREATE and
 * TRUNCATE and is not reused while its storage exists, so a table's prefix
 * never mixes two tables.
 *
 * Manifest versions: version 0 means "no manifest yet" (nothing flushed);
 * the shared ForstTableShared.manifest_version says which version readers
 * use, together with the list of memtables that are not in it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_STORE_H
#define FORST_STORE_H

#include "am/shmem/shmem.h"
#include "lsm/manifest.h"
#include "store/objstore.h"
#include "lsm/sst.h"
#include "am/objects/borrowed.h"

#define FORST_KEY_LEN 256

#include "objkey.h"

/* The backend's object store handle (opened on first use). */
extern FstObjStore *forst_objstore(void);

/* This server was started from a base backup (see wal/backup.c). */
#define FORST_RESTORED_FILE		"forst/restored_from_backup"

/*
 * Reading and writing one object, with the preamble every object store
 * operation of the server shares: this backend's store, and a failure
 * reported as a PostgreSQL error naming the object (base/report.c).
 * forst_object_get fills buf (initialized here; fst_buf_free it) and
 * returns true, or returns false if the object does not exist and
 * missing_ok.  forst_object_put with if_absent fails if the key exists.
 */
extern bool forst_object_get(const char *key, FstBuf *buf, bool missing_ok);
extern void forst_object_put(const char *key, const void *data, size_t len,
							 bool if_absent);

/* The handles this process has opened, or NULL (for statistics). */
extern FstObjStore *forst_objstore_if_open(void);

extern void forst_table_prefix(const RelFileNode *rnode, char *buf, size_t len);

/*
 * Object keys (objkey.h states the layout).  forst_objkey_init zeroes *k
 * and sets its kind and this cluster; forst_objkey and forst_objkey_dir
 * build k, or k's listing prefix (palloc'd; ERROR if k's fields make no
 * key); forst_parse_table_prefix parses a table's prefix (ERROR if it is
 * not one).
 */
extern void forst_objkey_init(FstObjKey *k, FstObjKeyKind kind);
extern char *forst_objkey(const FstObjKey *k);
extern char *forst_objkey_dir(FstObjKeyDir dir, const FstObjKey *k);
extern void forst_parse_table_prefix(const char *prefix, FstObjKey *k);

/*
 * ERROR if the store holds objects under a new relfilenode's prefix (an
 * earlier table's, kept by a checkpoint); nothing if the store is down.
 */
extern void forst_check_prefix_unused(const RelFileNode *rnode);
extern void forst_sst_object_key(const RelFileNode *rnode, uint64 file_id,
								 char *buf, size_t len);
extern void forst_manifest_object_key(const RelFileNode *rnode, uint64 version,
									  char *buf, size_t len);

/*
 * ereport(ERROR) for a failed engine or store call, with a fitting SQLSTATE
 * (the table is in base/report.c), the table the object belongs to and a
 * hint.
 */
extern void forst_report(FstCode code, FstError *err, const char *what) pg_attribute_noreturn();

/* Creates a missing file:// forst.remote_dir whose parent exists, or ERROR. */
extern void forst_prepare_remote_dir(const char *url);

/*
 * Makes sure the table's shared state knows its newest manifest version
 * (listing the store after a restart); caller must not hold ts->lock.
 */
extern void forst_table_load(ForstTableShared *ts);

/*
 * A new, unique SST file id for the table; it counts as in flight (kept by
 * garbage collection) until this process publishes a manifest of the table.
 */
extern uint64 forst_table_new_file_id(ForstTableShared *ts);

/* The lowest file id in flight (PG_UINT64_MAX: none). */
extern uint64 forst_table_inflight_low(ForstTableShared *ts);

/*
 * Writes m as a new manifest version (create-if-absent), at m->version or,
 * if another writer took that name, the next free one (m->version tells).
 */
extern void forst_manifest_publish(const RelFileNode *rnode, FstManifest *m);

/*
 * The manifest before a table's first version: empty (fst_manifest_init),
 * its uuid made of rnode, file ids from 1.
 */
extern void forst_manifest_init_new(FstManifest *m, const RelFileNode *rnode);

/* The manifest of a table at a version (> 0), cached by this backend. */
extern const FstManifest *forst_manifest_at(const RelFileNode *rnode,
											uint64 version);

/* Manifests this process has decoded and keeps (read/sst_readers.c). */
extern int64 forst_manifests_cached(void);

/*
 * How many manifests this process has decoded so far: when it changes, a
 * flush or a compaction may have taken files out of a table.
 */
extern uint64 forst_manifests_decoded(void);

/*
 * The newest manifest of the table that this process has cached (the
 * version its latest view read), or NULL if it has none.  Never reads the
 * store.
 */
extern const FstManifest *forst_manifest_newest_cached(const RelFileNode *rnode);

/* The visibility rules of a manifest that forst_manifest_at returned. */
extern const ForstVisList *forst_manifest_vis(const FstManifest *m);

/*
 * The manifest record a file's metadata belongs to: every FstFileMeta the
 * table AM hands around points into a manifest's file array.
 */
static inline const FstManifestFile *
forst_mfile(const FstFileMeta *meta)
{
	StaticAssertStmt(offsetof(FstManifestFile, meta) == 0,
					 "FstFileMeta must be the first member of FstManifestFile");
	return (const FstManifestFile *) meta;
}

/*
 * A file of the manifest by id.  Ids are unique within a table's manifest
 * whoever owns the file: borrowed files get ids of the borrowing table
 * when they are attached (checkpoint/attach.c).
 */
extern const FstManifestFile *forst_manifest_file_by_id(const FstManifest *m,
														uint64 file_id);

/* The object key of a file of the table, its own or borrowed. */
extern void forst_file_object_key(const RelFileNode *rnode,
								  const FstManifestFile *f, char *buf,
								  size_t len);

/* The newest manifest version under a table prefix (0: none). */
extern uint64 forst_newest_manifest_version(const char *table_prefix);

/*
 * Reads and decodes "<table prefix>/manifest/<version>" into *m (free with
 * fst_manifest_free); false if absent and missing_ok, else ERROR.
 */
extern bool forst_manifest_read(const char *table_prefix, uint64 version,
								FstManifest *m, bool missing_ok);

/* Every key under a prefix (palloc'd). */
typedef struct ForstObjKeys
{
	int			n;
	char	  **keys;
	uint64	   *sizes;
} ForstObjKeys;

extern void forst_list_objects(const char *prefix, ForstObjKeys *out);

/*
 * A consistent view of a table: memtables plus the manifest they complete.
 * Its slabs stay this backend's to read until it unpins (shmem/slab_pins.c) --
 * except while it waits for memtable memory, when the flush worker may
 * reuse them: a view held across a write (an open cursor) must check
 * forst_table_view_stale before it reads its memtables again.
 */
typedef struct ForstTableView
{
	RelFileNode rnode;
	int			nslabs;
	int			slabs[FORST_MAX_IMMUTABLE + 1];
	uint32		generations[FORST_MAX_IMMUTABLE + 1];	/* of slabs[] */
	uint64		manifest_version;
	const FstManifest *manifest;	/* NULL when version is 0 */
} ForstTableView;

extern void forst_table_view(ForstTableShared *ts, const RelFileNode *rnode,
							 ForstTableView *view);

/* Whether a slab of the view has been reused since the view was taken. */
extern bool forst_table_view_stale(const ForstTableView *view);

#endif							/* FORST_STORE_H */
