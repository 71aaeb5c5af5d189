/*-------------------------------------------------------------------------
 *
 * store.c
 *	  The object store of this backend, object names, error reports, file
 *	  ids and publishing manifests of forst tables (see objects/store.h;
 *	  reading them -- manifests by version, views, SST readers -- is in
 *	  read/sst_readers.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "common/hashfn.h"
#include "storage/proc.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "lsm/blockcache.h"
#include "am/forst.h"
#include "am/objects/disk_cache.h"
#include "am/base/stats.h"
#include "am/objects/store.h"
#include "store/objstore_s3.h"
#include "store/objstore_source.h"
#include "am/wal/wal.h"
#include "am/shmem/shmem.h"

static bool forst_backup_restored(void);

static FstObjStore *store = NULL;

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
		else
			forst_prepare_remote_dir(url);

		if (strncmp(url, "s3://", 5) == 0)
			rc = open_s3(url, &store, &err);
		else
			rc = fst_objstore_open(url, &store, &err);
		if (rc == FST_NOT_FOUND)
		{
			/* the directory went away since forst_prepare_remote_dir */
			store = NULL;
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FILE),
					 errmsg("forst: could not open object store \"%s\": %s", url, err.msg),
					 errhint("Create the directory, or correct forst.remote_dir and restart the server.")));
		}
		if (rc != FST_OK)
		{
			store = NULL;
			forst_report(rc, &err, psprintf("could not open object store \"%s\"", url));
		}
		fst_objstore_set_interrupt(store, store_interrupted, NULL);
		store_generation = gen;
		pfree(url);
	}
	return store;
}

void
forst_objkey_init(FstObjKey *k, FstObjKeyKind kind)
{
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->cluster = GetSystemIdentifier();
}

/* ERROR for fields that make no key (a bug: callers pass valid fields). */
static void
objkey_failed(const FstObjKey *k)
{
	elog(ERROR, "forst: no object key of kind %d for cluster " UINT64_FORMAT
		 ", savepoint \"%s\", table %u.%u",
		 (int) k->kind, k->cluster, k->savepoint, k->db, k->rel);
}

char *
forst_objkey(const FstObjKey *k)
{
	char		buf[FORST_KEY_LEN];

	if (fst_objkey_build(k, buf, sizeof(buf)) < 0)
		objkey_failed(k);
	return pstrdup(buf);
}

char *
forst_objkey_dir(FstObjKeyDir dir, const FstObjKey *k)
{
	char		buf[FORST_KEY_LEN];

	if (fst_objkey_dir(dir, k, buf, sizeof(buf)) < 0)
		objkey_failed(k);
	return pstrdup(buf);
}

void
forst_parse_table_prefix(const char *prefix, FstObjKey *k)
{
	if (!fst_objkey_parse(prefix, k) || k->kind != FST_OBJKEY_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst: \"%s\" is not the prefix of a table in the store", prefix)));
}

/* The TABLE key of a relation of this cluster. */
static void
table_objkey(const RelFileNode *rnode, FstObjKey *k)
{
	forst_objkey_init(k, FST_OBJKEY_TABLE);
	k->db = rnode->dbNode;
	k->rel = rnode->relNode;
}

void
forst_table_prefix(const RelFileNode *rnode, char *buf, size_t len)
{
	FstObjKey	k;

	table_objkey(rnode, &k);
	if (fst_objkey_build(&k, buf, len) < 0)
		objkey_failed(&k);
}

void
forst_check_prefix_unused(const RelFileNode *rnode)
{
	char		prefix[FORST_KEY_LEN];
	FstObjKey	k;
	FstObjList	list;
	FstError	err;
	FstCode		rc;
	bool		used;

	table_objkey(rnode, &k);
	if (fst_objkey_dir(FST_OBJDIR_TABLE, &k, prefix, sizeof(prefix)) < 0)
		objkey_failed(&k);
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
	FstObjKey	k;

	table_objkey(rnode, &k);
	k.kind = FST_OBJKEY_SST;
	k.file_id = file_id;
	if (fst_objkey_build(&k, buf, len) < 0)
		objkey_failed(&k);
}

void
forst_manifest_object_key(const RelFileNode *rnode, uint64 version, char *buf,
						  size_t len)
{
	FstObjKey	k;

	table_objkey(rnode, &k);
	k.kind = FST_OBJKEY_MANIFEST;
	k.version = version;
	if (fst_objkey_build(&k, buf, len) < 0)
		objkey_failed(&k);
}

uint64
forst_newest_manifest_version(const char *table_prefix)
{
	ForstObjKeys keys;
	FstObjKey	t;
	uint64		newest = 0;
	int			i;

	forst_parse_table_prefix(table_prefix, &t);
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_MANIFESTS, &t), &keys);
	for (i = 0; i < keys.n; i++)
	{
		FstObjKey	k;

		if (fst_objkey_parse(keys.keys[i], &k) && k.kind == FST_OBJKEY_MANIFEST &&
			k.version > newest)
			newest = k.version;
	}
	return newest;
}

bool
forst_manifest_read(const char *table_prefix, uint64 version, FstManifest *m,
					bool missing_ok)
{
	FstObjKey	k;
	char	   *key;
	FstBuf		buf;
	FstError	err;
	FstCode		rc;

	forst_parse_table_prefix(table_prefix, &k);
	k.kind = FST_OBJKEY_MANIFEST;
	k.version = version;
	key = forst_objkey(&k);
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

static int
cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * In a server started from a base backup: the newest version, at most
 * "newest", whose own SST files are all in the store.  A base backup copies
 * a store inside the data directory file by file while the server flushes:
 * the copy may hold a manifest written after the copy of its SST directory.
 * (Elsewhere a missing file is an error when it is read: falling back
 * would hide rows whose WAL forst's slot no longer keeps.)  The older version is complete
 * (forst.gc() deletes nothing during a backup, and a backup starts with
 * every row before its redo pointer in SST files), and the replay from the
 * backup's redo pointer rebuilds the rest into memtables.  Borrowed files
 * (other tables' prefixes) are not checked.
 */
static uint64
newest_complete_version(const RelFileNode *rnode, const char *prefix,
						uint64 newest)
{
	ForstObjKeys ssts;
	FstObjKey	t;
	uint64		v;

	forst_parse_table_prefix(prefix, &t);
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_SSTS, &t), &ssts);
	qsort(ssts.keys, ssts.n, sizeof(char *), cmp_key);
	for (v = newest; v > 0; v--)
	{
		FstManifest m;
		int			level;
		const char *missing = NULL;

		if (!forst_manifest_read(prefix, v, &m, true))
			continue;
		for (level = 0; level < FST_NUM_LEVELS && missing == NULL; level++)
		{
			int			i;

			for (i = 0; i < m.levels[level].nfiles && missing == NULL; i++)
			{
				const FstManifestFile *f = &m.levels[level].files[i];
				char		key[FORST_KEY_LEN];
				char	   *kp = key;

				if (f->owner != NULL)
					continue;
				forst_sst_object_key(rnode, f->meta.file_id, key, sizeof(key));
				if (bsearch(&kp, ssts.keys, ssts.n, sizeof(char *), cmp_key) == NULL)
					missing = pstrdup(key);
			}
		}
		fst_manifest_free(&m);
		if (missing == NULL)
			return v;
		ereport(WARNING,
				(errmsg("forst: manifest version " UINT64_FORMAT " of table %u/%u/%u lists SST file \"%s\", which the store lacks; trying version " UINT64_FORMAT,
						v, rnode->spcNode, rnode->dbNode, rnode->relNode,
						missing, v - 1),
				 errdetail("A base backup copies the store while the server writes to it; WAL replay restores the rows of later versions.")));
	}
	return newest;
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
	if (newest > 0 && forst_backup_restored())
		newest = newest_complete_version(&ts->rnode, prefix, newest);

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

bool
forst_object_get(const char *key, FstBuf *buf, bool missing_ok)
{
	FstError	err;
	FstCode		rc;

	fst_buf_init(buf);
	rc = fst_objstore_get(forst_objstore(), key, buf, &err);
	if (rc == FST_OK)
		return true;
	fst_buf_free(buf);
	if (rc == FST_NOT_FOUND && missing_ok)
		return false;
	forst_report(rc, &err, psprintf("reading \"%s\"", key));
	return false;				/* not reached */
}

void
forst_object_put(const char *key, const void *data, size_t len, bool if_absent)
{
	FstError	err;
	FstCode		rc;

	if (if_absent)
		rc = fst_objstore_put_if_absent(forst_objstore(), key, data, len, &err);
	else
		rc = fst_objstore_put(forst_objstore(), key, data, len, &err);
	if (rc != FST_OK)
		forst_report(rc, &err, psprintf("writing \"%s\"", key));
}

/*
 * Whether this server was started from a base backup (wal/backup.c keeps
 * the backup's start file under this name): its copy of the store may hold
 * manifests whose SST files it lacks.
 */
static bool
forst_backup_restored(void)
{
	return access(FORST_RESTORED_FILE, F_OK) == 0;
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

FstObjStore *
forst_objstore_if_open(void)
{
	return store;
}
