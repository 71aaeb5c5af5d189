/*-------------------------------------------------------------------------
 *
 * forst_store.c
 *	  Object names, manifests and SST readers of forst tables, per backend
 *	  (see forst_store.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "common/hashfn.h"
#include "storage/proc.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "blockcache.h"
#include "forst.h"
#include "forst_cache.h"
#include "forst_stats.h"
#include "forst_store.h"
#include "objstore_s3.h"
#include "objstore_source.h"

static FstObjStore *store = NULL;
static FstBlockCache *block_cache = NULL;

/*
 * SQLSTATE and hint for a failure whose cause the store could tell.
 * Returns false when the cause says nothing beyond the FstCode.
 */
static bool
cause_sqlstate(FstCause cause, int *sqlstate, const char **hint)
{
	switch (cause)
	{
		case FST_CAUSE_CREDENTIALS:
			*sqlstate = ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
			*hint = "Check forst.s3_access_key_id and forst.s3_secret_access_key "
				"(or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the server's "
				"environment) and reload the configuration.";
			return true;
		case FST_CAUSE_DENIED:
			*sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
			*hint = "The object store refused the request: grant the credentials "
				"access to the bucket and prefix of forst.remote_dir.";
			return true;
		case FST_CAUSE_NO_BUCKET:
			*sqlstate = ERRCODE_UNDEFINED_OBJECT;
			*hint = "Create the bucket, or correct forst.remote_dir and forst.s3_endpoint.";
			return true;
		case FST_CAUSE_UNREACHABLE:
			*sqlstate = ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION;
			*hint = "Check that the object store is running and that forst.s3_endpoint "
				"names it.";
			return true;
		case FST_CAUSE_CLOCK_SKEW:
			*sqlstate = ERRCODE_SYSTEM_ERROR;
			*hint = "Synchronize this machine's clock (NTP): S3 rejects requests "
				"signed more than 15 minutes off.";
			return true;
		case FST_CAUSE_THROTTLED:
			*sqlstate = ERRCODE_CONNECTION_FAILURE;
			*hint = "The object store kept asking to slow down; retry later, or raise "
				"forst.s3_max_retries.";
			return true;
		case FST_CAUSE_TIMEOUT:
			*sqlstate = ERRCODE_CONNECTION_FAILURE;
			*hint = "The object store did not answer in time; check it and the network, "
				"or raise forst.s3_request_timeout.";
			return true;
		case FST_CAUSE_TLS:
			*sqlstate = ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION;
			*hint = "Set forst.s3_ca_file or forst.s3_ca_path to the CA that signed "
				"the endpoint's certificate.";
			return true;
		case FST_CAUSE_REGION:
			*sqlstate = ERRCODE_CONFIG_FILE_ERROR;
			*hint = "Check forst.s3_region and forst.s3_endpoint for the bucket.";
			return true;
		case FST_CAUSE_NONE:
			break;
	}
	return false;
}

void
forst_report(FstCode code, FstError *err, const char *what)
{
	int			sqlstate;
	const char *hint = NULL;

	if (code == FST_INTERRUPTED)
	{
		/* the store gave up because an interrupt is pending: raise it */
		CHECK_FOR_INTERRUPTS();
	}
	if (err == NULL || !cause_sqlstate(err->cause, &sqlstate, &hint))
	{
		switch (code)
		{
			case FST_CORRUPT:
			case FST_NOT_FOUND:
				sqlstate = ERRCODE_DATA_CORRUPTED;
				break;
			case FST_IO_ERROR:
				sqlstate = ERRCODE_IO_ERROR;
				break;
			case FST_ACCESS_DENIED:
				sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
				break;
			case FST_TRANSIENT:
				sqlstate = ERRCODE_CONNECTION_FAILURE;
				hint = "The object store kept failing; the request was retried "
					"(forst.s3_max_retries).";
				break;
			case FST_NO_MEMORY:
				sqlstate = ERRCODE_OUT_OF_MEMORY;
				break;
			case FST_INTERRUPTED:
				sqlstate = ERRCODE_QUERY_CANCELED;
				break;
			case FST_NOT_SUPPORTED:
				sqlstate = ERRCODE_FEATURE_NOT_SUPPORTED;
				break;
			case FST_FULL:
				sqlstate = ERRCODE_PROGRAM_LIMIT_EXCEEDED;
				break;
			case FST_ALREADY_EXISTS:
				sqlstate = ERRCODE_DUPLICATE_OBJECT;
				break;
			case FST_INVALID_ARGUMENT:
				sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
				break;
			default:
				sqlstate = ERRCODE_INTERNAL_ERROR;
				break;
		}
	}
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("forst: %s: %s", what, err && err->msg[0] ? err->msg : fst_code_name(code)),
			 hint ? errhint("%s", hint) : 0));
	pg_unreachable();
}

/*
 * The store's interrupt callback: stop waiting for the object store when
 * CHECK_FOR_INTERRUPTS would raise an error (cancel, statement_timeout,
 * termination); forst_report then raises it.  Runs inside libcurl, so it
 * only looks at flags.
 */
static bool
store_interrupted(void *arg)
{
	if (InterruptHoldoffCount != 0 || CritSectionCount != 0)
		return false;
	return ProcDiePending || (QueryCancelPending && QueryCancelHoldoffCount == 0);
}

/* Where the handle's s3 settings came from (forst_s3_settings_generation). */
static uint32 store_generation = 0;

/* Open the s3 store of url with the server's settings. */
static FstCode
open_s3(const char *url, FstObjStore **out, FstError *err)
{
	FstObjUrl	parsed;
	FstS3Config cfg;
	FstCode		rc;

	rc = fst_objstore_parse_url(url, &parsed, err);
	if (rc != FST_OK)
		return rc;
	forst_s3_config(&cfg);
	return fst_objstore_s3_open(&parsed, url, &cfg, out, err);
}

FstObjStore *
forst_objstore(void)
{
	FstError	err;
	FstCode		rc;

	if (store != NULL && store_generation != forst_s3_settings_generation &&
		strcmp(store->ops->name, "s3") == 0)
	{
		FstS3Config cfg;
		uint32		gen = forst_s3_settings_generation;

		/* settings reloaded: apply them to the open handle (readers keep it) */
		forst_s3_config(&cfg);
		rc = fst_objstore_s3_reconfigure(store, &cfg, &err);
		if (rc != FST_OK)
			forst_report(rc, &err, "applying the forst.s3_* settings");
		store_generation = gen;
	}
	if (store == NULL)
	{
		char	   *url = forst_remote_dir_url();
		uint32		gen = forst_s3_settings_generation;

		/* the embedded default lives in the data directory: create it */
		if (forst_remote_dir == NULL || forst_remote_dir[0] == '\0')
		{
			char	   *dir = psprintf("%s/forst/remote", DataDir);

			if (pg_mkdir_p(dir, pg_dir_create_mode) != 0 && errno != EEXIST)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not create directory \"%s\": %m", dir)));
			pfree(dir);
		}

		if (strncmp(url, "s3://", 5) == 0)
			rc = open_s3(url, &store, &err);
		else
			rc = fst_objstore_open(url, &store, &err);
		if (rc != FST_OK)
		{
			store = NULL;
			forst_report(rc, &err, psprintf("cannot open object store \"%s\"", url));
		}
		fst_objstore_set_interrupt(store, store_interrupted, NULL);
		store_generation = gen;
		pfree(url);
	}
	return store;
}

void
forst_table_prefix(const RelFileNode *rnode, char *buf, size_t len)
{
	snprintf(buf, len, UINT64_FORMAT "/tables/%u.%u", GetSystemIdentifier(),
			 rnode->dbNode, rnode->relNode);
}

void
forst_sst_object_key(const RelFileNode *rnode, uint64 file_id, char *buf,
					 size_t len)
{
	char		prefix[FORST_KEY_LEN];

	forst_table_prefix(rnode, prefix, sizeof(prefix));
	snprintf(buf, len, "%s/sst/%02x/%020" INT64_MODIFIER "u.sst", prefix,
			 (unsigned) ((file_id * 0x9E3779B1U) >> 24) & 0xff, file_id);
}

void
forst_manifest_object_key(const RelFileNode *rnode, uint64 version, char *buf,
						  size_t len)
{
	char		prefix[FORST_KEY_LEN];
	char		name[FST_MANIFEST_OBJECT_NAME_SIZE];

	forst_table_prefix(rnode, prefix, sizeof(prefix));
	fst_manifest_object_name(version, name, sizeof(name));
	snprintf(buf, len, "%s/%s", prefix, name);
}

void
forst_table_load(ForstTableShared *ts)
{
	char		prefix[FORST_KEY_LEN];
	char	   *start_after = NULL;
	uint64		newest = 0;
	FstError	err;

	if (ts->loaded)
		return;
	forst_table_prefix(&ts->rnode, prefix, sizeof(prefix));
	strlcat(prefix, "/manifest/", sizeof(prefix));
	for (;;)
	{
		FstObjList	list;
		FstCode		rc;
		int			i;

		rc = fst_objstore_list(forst_objstore(), prefix, start_after, 1000, &list, &err);
		if (rc != FST_OK)
		{
			fst_objstore_list_free(&list);
			forst_report(rc, &err, "listing a table's manifests");
		}
		for (i = 0; i < list.nentries; i++)
		{
			uint64		v;
			const char *name = strstr(list.entries[i].key, "manifest/");

			if (name && fst_manifest_parse_object_name(name, &v) && v > newest)
				newest = v;
		}
		if (start_after)
			pfree(start_after);
		start_after = list.truncated && list.next ? pstrdup(list.next) : NULL;
		fst_objstore_list_free(&list);
		if (start_after == NULL)
			break;
	}

	elog(DEBUG1, "forst: table %u/%u has manifest version " UINT64_FORMAT,
		 ts->rnode.dbNode, ts->rnode.relNode, newest);
	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	if (!ts->loaded)
	{
		ts->manifest_version = newest;
		ts->loaded = true;
	}
	LWLockRelease(&ts->lock);

	/* new versions must sort after every flushed one */
	if (newest > 0)
	{
		const FstManifest *m = forst_manifest_at(&ts->rnode, newest);
		uint64		cur = pg_atomic_read_u64(&forst_shared->next_seq);

		while (cur < m->last_seq &&
			   !pg_atomic_compare_exchange_u64(&forst_shared->next_seq, &cur, m->last_seq))
			;
	}
}

/*
 * A new SST file id of the table: ids come from a shared counter, so that
 * a flush and a compaction running at the same time never pick the same
 * one; the counter starts after the current manifest's next_file_id.
 */
uint64
forst_table_new_file_id(ForstTableShared *ts)
{
	uint64		cur;

	forst_table_load(ts);
	cur = pg_atomic_read_u64(&ts->next_file_id);
	if (cur == 0)
	{
		uint64		version;
		uint64		first = 1;

		LWLockAcquire(&ts->lock, LW_SHARED);
		version = ts->manifest_version;
		LWLockRelease(&ts->lock);
		if (version > 0)
			first = Max(first, forst_manifest_at(&ts->rnode, version)->next_file_id);
		(void) pg_atomic_compare_exchange_u64(&ts->next_file_id, &cur, first);
	}
	return pg_atomic_fetch_add_u64(&ts->next_file_id, 1);
}

/*
 * Publishes manifest m (create-if-absent) as version m->version or, if
 * that name is taken, the next free one; sets m->version to the version
 * written.  A taken name means another writer made that version without
 * this server knowing: a primary that kept flushing after the WAL this
 * server (a promoted standby) replayed, or a write whose reply was lost.
 * Its contents are not ours to build on (it may hold rows of transactions
 * this server never saw), so ours is written after it; being the newer
 * version, ours is the one that a restart finds.
 */
void
forst_manifest_publish(const RelFileNode *rnode, FstManifest *m)
{
	int			attempt;

	for (attempt = 0; attempt < 1000; attempt++)
	{
		FstBuf		enc;
		FstError	err;
		FstCode		rc;
		char		okey[FORST_KEY_LEN];

		fst_buf_init(&enc);
		rc = fst_manifest_encode(m, &enc, &err);
		if (rc == FST_OK)
		{
			forst_manifest_object_key(rnode, m->version, okey, sizeof(okey));
			rc = fst_objstore_put_if_absent(forst_objstore(), okey, enc.data,
											enc.len, &err);
		}
		if (rc == FST_OK)
			forst_cache_admit(okey, enc.data, enc.len);
		fst_buf_free(&enc);
		if (rc == FST_OK)
			return;
		if (rc != FST_ALREADY_EXISTS)
			forst_report(rc, &err, "writing a manifest");
		ereport(WARNING,
				(errmsg("forst: manifest version " UINT64_FORMAT " of table %u/%u/%u exists already; writing version " UINT64_FORMAT " instead",
						m->version, rnode->spcNode, rnode->dbNode,
						rnode->relNode, m->version + 1),
				 errdetail("Another server wrote it, for example a primary that went on writing after this server's WAL ended.")));
		m->version++;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DUPLICATE_OBJECT),
			 errmsg("forst: could not find a free manifest version for table %u/%u/%u",
					rnode->spcNode, rnode->dbNode, rnode->relNode),
			 errhint("Another server may be writing this table's objects; check forst.remote_dir.")));
}

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
} ManifestEntry;

static HTAB *manifest_cache = NULL;

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
	memset(&key, 0, sizeof(key));
	key.rnode = *rnode;
	key.version = version;
	e = hash_search(manifest_cache, &key, HASH_FIND, NULL);
	if (e)
		return &e->manifest;

	forst_manifest_object_key(rnode, version, okey, sizeof(okey));
	fst_buf_init(&buf);

	/*
	 * Manifests are immutable: the local disk cache keeps a copy, so that
	 * new backends open tables without the store (an outage) and without a
	 * request each.
	 */
	e = hash_search(manifest_cache, &key, HASH_ENTER, &found);
	if (forst_disk_cache() != NULL &&
		fst_diskcache_get(forst_disk_cache(), okey, &buf, &err) == FST_OK &&
		fst_manifest_decode(buf.data, buf.len, &e->manifest, &err) == FST_OK)
	{
		fst_buf_free(&buf);
		return &e->manifest;
	}
	hash_search(manifest_cache, &key, HASH_REMOVE, NULL);
	rc = fst_objstore_get(forst_objstore(), okey, &buf, &err);
	if (rc != FST_OK)
	{
		fst_buf_free(&buf);
		forst_report(rc, &err, psprintf("reading manifest \"%s\"", okey));
	}
	e = hash_search(manifest_cache, &key, HASH_ENTER, &found);
	rc = fst_manifest_decode(buf.data, buf.len, &e->manifest, &err);
	if (rc == FST_OK)
		forst_cache_admit(okey, buf.data, buf.len);
	fst_buf_free(&buf);
	if (rc != FST_OK)
	{
		hash_search(manifest_cache, &key, HASH_REMOVE, NULL);
		forst_report(rc, &err, psprintf("decoding manifest \"%s\"", okey));
	}
	return &e->manifest;
}

void
forst_table_view(ForstTableShared *ts, const RelFileNode *rnode,
				 ForstTableView *view)
{
	memset(view, 0, sizeof(*view));
	view->rnode = *rnode;
	if (ts == NULL)
		return;
	/* before the view: its slabs stay until this backend unpins */
	forst_pin();
	forst_table_load(ts);
	LWLockAcquire(&ts->lock, LW_SHARED);
	if (ts->active >= 0)
		view->slabs[view->nslabs++] = ts->active;
	memcpy(&view->slabs[view->nslabs], ts->immutable, sizeof(int) * ts->nimmutable);
	view->nslabs += ts->nimmutable;
	view->manifest_version = ts->manifest_version;
	LWLockRelease(&ts->lock);
	if (view->manifest_version > 0)
		view->manifest = forst_manifest_at(rnode, view->manifest_version);
}

/* ---------------------------------------------------------------------- */
/* SST readers: (rnode, file id) -> open reader                            */

typedef struct ReaderKey
{
	RelFileNode rnode;
	uint64		file_id;
} ReaderKey;

typedef struct ReaderEntry
{
	ReaderKey	key;
	FstRangeSource *src;
	FstSstReader *reader;
} ReaderEntry;

static HTAB *reader_cache = NULL;

FstSstReader *
forst_sst_reader_for_key(const RelFileNode *rnode, const FstFileMeta *file,
						 FstSlice user_part)
{
	FstSstReader *r;

	if (fst_slice_cmp(user_part, fst_ikey_user_part(fst_filemeta_smallest(file))) < 0 ||
		fst_slice_cmp(user_part, fst_ikey_user_part(fst_filemeta_largest(file))) > 0)
		return NULL;
	r = forst_sst_reader(rnode, file);
	forst_local_bloom_checks++;
	if (!fst_sst_may_contain(r, user_part))
	{
		forst_local_bloom_negatives++;
		return NULL;
	}
	return r;
}

FstSstReader *
forst_sst_reader_lookup(const RelFileNode *rnode, uint64 file_id)
{
	ReaderKey	key;
	ReaderEntry *e;

	if (reader_cache == NULL)
		return NULL;
	memset(&key, 0, sizeof(key));
	key.rnode = *rnode;
	key.file_id = file_id;
	e = hash_search(reader_cache, &key, HASH_FIND, NULL);
	return e ? e->reader : NULL;
}

FstSstReader *
forst_sst_reader(const RelFileNode *rnode, const FstFileMeta *file)
{
	ReaderKey	key;
	ReaderEntry *e;
	bool		found;
	char		okey[FORST_KEY_LEN];
	FstSstReadOptions ro;
	FstError	err;
	FstCode		rc;

	if (reader_cache == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(ReaderKey);
		ctl.entrysize = sizeof(ReaderEntry);
		ctl.hcxt = TopMemoryContext;
		reader_cache = hash_create("forst SST readers", 256, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		block_cache = fst_block_cache_create((size_t) forst_block_cache_size_kb * 1024);
		if (block_cache == NULL)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	}
	memset(&key, 0, sizeof(key));
	key.rnode = *rnode;
	key.file_id = file->file_id;
	e = hash_search(reader_cache, &key, HASH_FIND, NULL);
	if (e)
		return e->reader;

	forst_sst_object_key(rnode, file->file_id, okey, sizeof(okey));
	e = hash_search(reader_cache, &key, HASH_ENTER, &found);
	e->src = NULL;
	e->reader = NULL;
	rc = fst_range_source_object(forst_objstore(), okey, file->size, &e->src, &err);
	if (rc == FST_OK && forst_disk_cache() != NULL)
	{
		/* read through the local disk cache (it owns the origin then) */
		FstRangeSource *cached;

		rc = fst_range_source_cached(forst_disk_cache(), e->src, okey,
									 file->size, &cached, &err);
		if (rc == FST_OK)
			e->src = cached;
	}
	if (rc == FST_OK)
	{
		fst_sst_read_options_default(&ro);
		ro.cache = block_cache;
		ro.cache_id = hash_bytes_extended((const unsigned char *) okey, strlen(okey), 0);
		rc = fst_sst_open(e->src, &ro, &e->reader, &err);
	}
	if (rc != FST_OK)
	{
		fst_range_close(e->src);
		hash_search(reader_cache, &key, HASH_REMOVE, NULL);
		forst_report(rc, &err, psprintf("opening SST \"%s\"", okey));
	}
	return e->reader;
}

FstObjStore *
forst_objstore_if_open(void)
{
	return store;
}

FstBlockCache *
forst_block_cache_if_open(void)
{
	return block_cache;
}

/* ---------------------------------------------------------------------- */
/* File slots: the SST part of TIDs names files by a per-transaction slot  */

#define MAX_FILE_SLOTS 4096

typedef struct FileSlot
{
	RelFileNode rnode;
	uint64		file_id;
} FileSlot;

static FileSlot *file_slots = NULL;
static int	nfile_slots = 0;
static LocalTransactionId slots_lxid = InvalidLocalTransactionId;

int
forst_file_slot(const RelFileNode *rnode, uint64 file_id)
{
	int			i;

	if (file_slots == NULL)
		file_slots = MemoryContextAlloc(TopMemoryContext, sizeof(FileSlot) * MAX_FILE_SLOTS);
	if (slots_lxid != MyProc->lxid)
	{
		nfile_slots = 0;
		slots_lxid = MyProc->lxid;
	}
	for (i = nfile_slots - 1; i >= 0; i--)
	{
		if (file_slots[i].file_id == file_id &&
			RelFileNodeEquals(file_slots[i].rnode, *rnode))
			return i;
	}
	if (nfile_slots >= MAX_FILE_SLOTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("forst: one transaction read more than %d SST files", MAX_FILE_SLOTS),
				 errhint("Split the work into several transactions.")));
	file_slots[nfile_slots].rnode = *rnode;
	file_slots[nfile_slots].file_id = file_id;
	return nfile_slots++;
}

bool
forst_file_slot_get(int slot, RelFileNode *rnode, uint64 *file_id)
{
	if (slots_lxid != MyProc->lxid || slot < 0 || slot >= nfile_slots)
		return false;
	*rnode = file_slots[slot].rnode;
	*file_id = file_slots[slot].file_id;
	return true;
}
