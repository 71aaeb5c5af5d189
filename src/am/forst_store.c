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
#include "forst_blockshare.h"
#include "forst_cache.h"
#include "forst_stats.h"
#include "forst_store.h"
#include "objstore_s3.h"
#include "objstore_source.h"
#include "forst_wal.h"
#include "forst_shmem.h"

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
forst_check_prefix_unused(const RelFileNode *rnode)
{
	char		prefix[FORST_KEY_LEN];
	FstObjList	list;
	FstError	err;
	FstCode		rc;
	bool		used;

	forst_table_prefix(rnode, prefix, sizeof(prefix));
	strlcat(prefix, "/", sizeof(prefix));
	rc = fst_objstore_list(forst_objstore(), prefix, NULL, 1, &list, &err);
	used = rc == FST_OK && list.nentries > 0;
	fst_objstore_list_free(&list);
	if (rc != FST_OK)
	{
		ereport(DEBUG1,
				(errmsg("forst: could not check \"%s\" for objects of an earlier table: %s",
						prefix, err.msg)));
		return;
	}
	if (used)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst: the object store still holds objects of an earlier table with relfilenode %u",
						rnode->relNode),
				 errdetail("Objects under \"%s\" are kept for a retained checkpoint or a clone of a dropped table.",
						   prefix),
				 errhint("Run the command again: it gets another relfilenode.")));
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

uint64
forst_newest_manifest_version(const char *table_prefix)
{
	ForstObjKeys keys;
	uint64		newest = 0;
	int			i;

	forst_list_objects(psprintf("%s/manifest/", table_prefix), &keys);
	for (i = 0; i < keys.n; i++)
	{
		uint64		v;
		const char *name = strstr(keys.keys[i], "manifest/");

		if (name && fst_manifest_parse_object_name(name, &v) && v > newest)
			newest = v;
	}
	return newest;
}

bool
forst_manifest_read(const char *table_prefix, uint64 version, FstManifest *m,
					bool missing_ok)
{
	char		name[FST_MANIFEST_OBJECT_NAME_SIZE];
	char	   *key;
	FstBuf		buf;
	FstError	err;
	FstCode		rc;

	fst_manifest_object_name(version, name, sizeof(name));
	key = psprintf("%s/%s", table_prefix, name);
	fst_buf_init(&buf);
	rc = fst_objstore_get(forst_objstore(), key, &buf, &err);
	if (rc == FST_NOT_FOUND && missing_ok)
	{
		fst_buf_free(&buf);
		return false;
	}
	if (rc == FST_NOT_FOUND)
	{
		fst_buf_free(&buf);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("forst: manifest \"%s\" does not exist", key),
				 errhint("Its files may have been collected; use a newer checkpoint.")));
	}
	if (rc == FST_OK)
		rc = fst_manifest_decode(buf.data, buf.len, m, &err);
	fst_buf_free(&buf);
	if (rc != FST_OK)
		forst_report(rc, &err, psprintf("reading manifest \"%s\"", key));
	return true;
}

void
forst_table_load(ForstTableShared *ts)
{
	char		prefix[FORST_KEY_LEN];
	uint64		newest;

	if (ts->loaded)
		return;
	forst_table_prefix(&ts->rnode, prefix, sizeof(prefix));
	newest = forst_newest_manifest_version(prefix);

	elog(DEBUG1, "forst: table %u/%u has manifest version " UINT64_FORMAT,
		 ts->rnode.dbNode, ts->rnode.relNode, newest);
	{
		const FstManifest *m = newest > 0 ? forst_manifest_at(&ts->rnode, newest) : NULL;

		LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
		if (!ts->loaded)
		{
			ts->manifest_version = newest;
			if (m != NULL)
			{
				ts->kg_lo = m->kg_lo;
				ts->kg_hi = m->kg_hi;
			}
			ts->loaded = true;
		}
		LWLockRelease(&ts->lock);
	}

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
	/* in flight until this process publishes a manifest of the table */
	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	{
		int			i,
					free_slot = -1,
					mine = -1;

		for (i = 0; i < FORST_INFLIGHT_SLOTS; i++)
		{
			if (ts->inflight_pid[i] == MyProcPid)
				mine = i;
			else if (ts->inflight_pid[i] == 0 ||
					 (kill(ts->inflight_pid[i], 0) != 0 && errno == ESRCH))
				free_slot = i;
		}
		if (mine < 0 && free_slot < 0)
		{
			LWLockRelease(&ts->lock);
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("forst: too many processes write files of one table at once")));
		}
		if (mine < 0)
		{
			mine = free_slot;
			ts->inflight_pid[mine] = MyProcPid;
			ts->inflight_low[mine] = PG_UINT64_MAX;
		}
		cur = pg_atomic_fetch_add_u64(&ts->next_file_id, 1);
		ts->inflight_low[mine] = Min(ts->inflight_low[mine], cur);
	}
	LWLockRelease(&ts->lock);
	return cur;
}

uint64
forst_table_inflight_low(ForstTableShared *ts)
{
	uint64		low = PG_UINT64_MAX;
	int			i;

	LWLockAcquire(&ts->lock, LW_SHARED);
	for (i = 0; i < FORST_INFLIGHT_SLOTS; i++)
		if (ts->inflight_pid[i] != 0)
			low = Min(low, ts->inflight_low[i]);
	LWLockRelease(&ts->lock);
	return low;
}

/* This process published a manifest of the table: its files are in it. */
static void
inflight_done(const RelFileNode *rnode)
{
	ForstTableShared *ts = forst_table_shared(rnode, false);
	int			i;

	if (ts == NULL)
		return;
	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	for (i = 0; i < FORST_INFLIGHT_SLOTS; i++)
		if (ts->inflight_pid[i] == MyProcPid)
			ts->inflight_pid[i] = 0;
	LWLockRelease(&ts->lock);
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
/*
 * Writer fencing.  Every server that writes manifests has a writer epoch:
 * the time of its first manifest write since start-up (so a promoted
 * standby, or a copy of a data directory started later, is newer than the
 * server it replaces), above any epoch it has seen.  A manifest version
 * written with a higher epoch than ours means that a newer writer has the
 * table -- it was claimed (forst.attach mode claim), or another server with
 * this cluster id writes it -- and this server must not write it any more;
 * a lower one is an older writer's, which we write after.
 */
static uint64
writer_epoch(uint64 at_least)
{
	uint64		cur = pg_atomic_read_u64(&forst_shared->writer_epoch);

	if (cur == 0)
	{
		uint64		now = (uint64) GetCurrentTimestamp() +
			(uint64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;

		(void) pg_atomic_compare_exchange_u64(&forst_shared->writer_epoch, &cur,
											  Max(now, at_least));
		cur = pg_atomic_read_u64(&forst_shared->writer_epoch);
	}
	return cur;
}

static void fenced_error(const RelFileNode *rnode, const char *okey,
						 uint64 theirs, uint64 ours) pg_attribute_noreturn();

static void
fenced_error(const RelFileNode *rnode, const char *okey, uint64 theirs, uint64 ours)
{
	ForstTableShared *ts = forst_table_shared(rnode, false);

	if (ts != NULL)
		ts->fenced = true;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("forst: table %u/%u/%u was claimed by another server; this server may no longer write it",
					rnode->spcNode, rnode->dbNode, rnode->relNode),
			 errdetail("Manifest \"%s\" has writer epoch " UINT64_FORMAT ", above this server's " UINT64_FORMAT ".",
					   okey, theirs, ours),
			 errhint("Write to the table on the server that claimed it (forst.attach with mode => 'claim'), and drop it here; a copy of a data directory needs a forst.remote_dir of its own.")));
}

static void
check_fenced(const RelFileNode *rnode, const char *okey, uint64 our_epoch)
{
	FstBuf		buf;
	FstError	err;
	FstManifest other;

	fst_buf_init(&buf);
	if (fst_objstore_get(forst_objstore(), okey, &buf, &err) != FST_OK ||
		fst_manifest_decode(buf.data, buf.len, &other, &err) != FST_OK)
	{
		fst_buf_free(&buf);
		return;					/* unreadable: not evidence of a claim */
	}
	fst_buf_free(&buf);
	if (other.writer_epoch > our_epoch)
	{
		uint64		theirs = other.writer_epoch;

		fst_manifest_free(&other);
		fenced_error(rnode, okey, theirs, our_epoch);
	}
	fst_manifest_free(&other);
}

void
forst_manifest_publish(const RelFileNode *rnode, FstManifest *m)
{
	int			attempt;

	/*
	 * Built on a newer writer's version: that writer has the table.  The
	 * first write after start-up takes an epoch above the base's unless
	 * the base is more than a minute in the future (this server's clock
	 * going back across a restart must not fence its own tables).
	 */
	{
		uint64		now = (uint64) GetCurrentTimestamp() +
			(uint64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
		uint64		ours = writer_epoch(m->writer_epoch <= now + 60 * USECS_PER_SEC ?
										m->writer_epoch + 1 : 0);

		if (m->writer_epoch > ours)
		{
			char		okey[FORST_KEY_LEN];

			forst_manifest_object_key(rnode, m->version - 1, okey, sizeof(okey));
			fenced_error(rnode, okey, m->writer_epoch, ours);
		}
		m->writer_epoch = ours;
	}
	for (attempt = 0; attempt < 1000; attempt++)
	{
		FstBuf		enc;
		FstError	err;
		FstCode		rc;
		char		okey[FORST_KEY_LEN];

		fst_buf_init(&enc);
		/* when this version replaced the last: garbage collection's clock */
		m->created_at = (int64) GetCurrentTimestamp() +
			(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
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
		{
			inflight_done(rnode);
			return;
		}
		if (rc != FST_ALREADY_EXISTS)
			forst_report(rc, &err, "writing a manifest");
		check_fenced(rnode, okey, m->writer_epoch);
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

void
forst_manifest_install(ForstTableShared *ts, FstManifest *next)
{
	RelFileNode rnode = ts->rnode;
	XLogRecPtr	covered;

	forst_manifest_publish(&rnode, next);
	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	ts->manifest_version = next->version;
	ts->kg_lo = next->kg_lo;
	ts->kg_hi = next->kg_hi;
	ts->loaded = true;
	covered = forst_table_unflushed_lsn(ts);
	LWLockRelease(&ts->lock);
	forst_wal_log_manifest(&rnode, next->version, covered);
}

void
forst_list_objects(const char *prefix, ForstObjKeys *out)
{
	char	   *start_after = NULL;
	int			cap = 64;

	out->n = 0;
	out->keys = palloc(sizeof(char *) * cap);
	out->sizes = palloc(sizeof(uint64) * cap);
	for (;;)
	{
		FstObjList	list;
		FstError	err;
		FstCode		rc;
		int			i;

		CHECK_FOR_INTERRUPTS();
		rc = fst_objstore_list(forst_objstore(), prefix, start_after, 1000, &list, &err);
		if (rc != FST_OK)
		{
			fst_objstore_list_free(&list);
			forst_report(rc, &err, psprintf("listing \"%s\"", prefix));
		}
		for (i = 0; i < list.nentries; i++)
		{
			if (out->n == cap)
			{
				cap *= 2;
				out->keys = repalloc(out->keys, sizeof(char *) * cap);
				out->sizes = repalloc(out->sizes, sizeof(uint64) * cap);
			}
			out->keys[out->n] = pstrdup(list.entries[i].key);
			out->sizes[out->n] = list.entries[i].size;
			out->n++;
		}
		if (start_after)
			pfree(start_after);
		start_after = list.truncated && list.next ? pstrdup(list.next) : NULL;
		fst_objstore_list_free(&list);
		if (start_after == NULL)
			break;
	}
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
	ForstVisList vis;			/* parsed from the manifest's schema blob */
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
	rc = fst_manifest_decode(buf.data, buf.len, &e->manifest, &err);
	if (rc == FST_OK && from_store)
		forst_cache_admit(okey, buf.data, buf.len);
	fst_buf_free(&buf);
	if (rc == FST_OK &&
		!forst_vis_parse(e->manifest.schema, e->manifest.schema_len, &e->vis))
	{
		fst_manifest_free(&e->manifest);
		rc = fst_error(&err, FST_CORRUPT, "malformed table description");
	}
	if (rc != FST_OK)
	{
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

/*
 * The visibility rules of a borrowed file: the owner string's "<n>[+<m>]:"
 * names entries of the rule list, which only grows, so the table's
 * current manifest has them.
 */
static void
borrowed_vis(const RelFileNode *rnode, const char *owner, ForstVisSet *set)
{
	ForstTableShared *ts = forst_table_shared(rnode, true);
	uint64		version;
	const ForstVisList *vl;

	forst_table_load(ts);
	LWLockAcquire(&ts->lock, LW_SHARED);
	version = ts->manifest_version;
	LWLockRelease(&ts->lock);
	vl = version > 0 ? forst_manifest_vis(forst_manifest_at(rnode, version)) : NULL;
	if (forst_vis_owner(owner, vl, set) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: borrowed file \"%s\" names visibility rules that the table's manifest lacks",
						owner)));
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
	forst_pin();
	forst_table_load(ts);
	LWLockAcquire(&ts->lock, LW_SHARED);
	if (ts->active >= 0)
		view->slabs[view->nslabs++] = ts->active;
	memcpy(&view->slabs[view->nslabs], ts->immutable, sizeof(int) * ts->nimmutable);
	view->nslabs += ts->nimmutable;
	view->manifest_version = ts->manifest_version;
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
	ForstVisSet *vis;			/* borrowed files: their rules */
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
	const FstManifestFile *mf;
	ForstVisSet *vis = NULL;

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

	mf = forst_mfile(file);
	forst_file_object_key(rnode, mf, okey, sizeof(okey));
	if (mf->owner)
	{
		vis = MemoryContextAlloc(TopMemoryContext, sizeof(ForstVisSet));
		borrowed_vis(rnode, mf->owner, vis);
	}
	e = hash_search(reader_cache, &key, HASH_ENTER, &found);
	e->src = NULL;
	e->reader = NULL;
	e->vis = NULL;
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
		if (forst_blockshare_enabled())
		{
			ro.shared_get = forst_blockshare_get;
			ro.shared_put = forst_blockshare_put;
		}
		if (vis != NULL)
		{
			/*
			 * entries rewritten by this table's rule: blocks of their own
			 * (the owner string names the rule; one file may be read with
			 * two rules in one table, after a merge)
			 */
			e->vis = vis;
			ro.rewrite_entry = forst_vis_rewrite;
			ro.rewrite_arg = e->vis;
			ro.cache_id = hash_bytes_extended((const unsigned char *) rnode,
											  sizeof(RelFileNode),
											  hash_bytes_extended((const unsigned char *) mf->owner,
																  strlen(mf->owner), 1));
		}
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
