/*-------------------------------------------------------------------------
 *
 * attach.c
 *	  Attaching the files of a checkpointed table to a table of this
 *	  server: restore, clone, time travel and rescale by key groups
 *	  (docs/checkpoints.md), without copying a byte of state.
 *
 * forst._attach_files(target, cluster, checkpoint, prefix, version, kg_lo,
 * kg_hi, lo, xmax, ranges, claim) builds the target's next manifest from
 * the source table's manifest "<prefix>/manifest/<version>" as named by
 * the checkpoint:
 *
 *	- every file of the source is borrowed: it keeps its object key, gets a
 *	  file id of the target (so ids stay unique when files of two sources
 *	  meet, in a merge) and an owner string "<rule>:<object key>" naming
 *	  the visibility rule it is read with (objects/borrowed.h): the checkpoint's
 *	  snapshot for the source's own files, limited to [kg_lo, kg_hi]; the
 *	  source's own rules (narrowed the same way) for files it borrowed;
 *	- an empty target takes the source's levels as they are; a target that
 *	  has files already (a merge of another key-group range) gets the new
 *	  files in level 0, newest level first, which readers merge by sequence
 *	  and compaction sorts into levels later;
 *	- the target owns [kg_lo, kg_hi] (joined to its range in a merge, which
 *	  must stay one interval); writes of other key groups are refused;
 *	- sequence numbers continue above the source's.
 *
 * Then the source is protected: no_claim writes a pin object
 * "<source cluster>/pins/<this cluster>.<target prefix>" naming the
 * checkpoint, which the source's retention keeps (and so its garbage
 * collection the files), or, for a savepoint, "<savepoint>/pins/..." which
 * forst.drop_savepoint honours; and a record of the pin under
 * "<this cluster>/pinned/", by which this cluster's garbage collection
 * removes the pin once the table is gone; claim fences the source's writer instead by a
 * manifest version with a higher writer epoch, so that a server still
 * writing the source fails at its next publish (objects/store.c).
 *
 * The SQL function forst.attach (forst--1.0.sql) reads the checkpoint,
 * creates the table from its stored definition and calls this.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/lsyscache.h"

#include "access/relation.h"
#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/array.h"
#include "catalog/pg_type.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/base/privileges.h"
#include "am/shmem/shmem.h"
#include "am/objects/store.h"
#include "am/objects/borrowed.h"
#include "am/wal/wal.h"
#include "am/keys/rel.h"

PG_FUNCTION_INFO_V1(forst_attach_files);

/* Reads a manifest of a table prefix, with its rules. */
static void
read_manifest(const char *prefix, uint64 version, FstManifest *m, ForstVisList *vis)
{
	(void) forst_manifest_read(prefix, version, m, false);
	if (!forst_vis_parse(m->schema, m->schema_len, vis, CurrentMemoryContext))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: manifest version " UINT64_FORMAT " under \"%s\" has a malformed table description",
						version, prefix)));
}

/* Appends a deep copy of a file (new id, owner) to level l of m. */
static void
add_file(FstManifest *m, int l, const FstFileMeta *meta, uint64 id,
		 const char *owner)
{
	FstFileMeta copy = *meta;
	FstError	err;
	FstCode		rc;

	copy.file_id = id;
	rc = fst_manifest_append_file(m, l, &copy, owner, &err);
	if (rc != FST_OK)
		forst_report(rc, &err, "building a manifest");
}

/* The object key of a borrowed file's owner string (after the rules). */
static const char *
owner_key(const char *owner)
{
	const char *colon = owner ? strchr(owner, ':') : NULL;

	return colon ? colon + 1 : NULL;
}

/*
 * Copies every file of base into m, level by level; files listed in
 * extend[] (by level * stride + index) get the extra rules given there and
 * a new id, so that no backend keeps reading them with the old rules.
 */
static void
copy_files(FstManifest *m, const FstManifest *base, char **extend, int stride,
		   ForstTableShared *ts)
{
	int			l,
				i;

	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < base->levels[l].nfiles; i++)
		{
			const FstManifestFile *f = &base->levels[l].files[i];
			char	   *more = extend ? extend[l * stride + i] : NULL;

			if (more == NULL)
				add_file(m, l, &f->meta, f->meta.file_id, f->owner);
			else
			{
				const char *key = owner_key(f->owner);

				add_file(m, l, &f->meta, forst_table_new_file_id(ts),
						 psprintf("%.*s%s:%s", (int) (key - 1 - f->owner), f->owner,
								  more, key));
			}
		}
}

/* Where base borrows the object key, or false. */
static bool
find_borrowed(const FstManifest *base, const char *key, int *level, int *index)
{
	int			l,
				i;

	for (l = 0; base && l < FST_NUM_LEVELS; l++)
		for (i = 0; i < base->levels[l].nfiles; i++)
		{
			const char *k = owner_key(base->levels[l].files[i].owner);

			if (k && strcmp(k, key) == 0)
			{
				*level = l;
				*index = i;
				return true;
			}
		}
	return false;
}

static void
write_object(const char *key, const char *data, bool if_absent)
{
	forst_object_put(key, data, strlen(data), if_absent);
}

/*
 * Publishes next (built on the table's current version, which the caller
 * read under ts->manifest_lock, held) and switches the table to it: the
 * shared state, and a standby through a MANIFEST_ROWS record.
 */
static void
install_manifest(ForstTableShared *ts, FstManifest *next)
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
	/* the attached rows are in no PUT record: see wal.h */
	forst_wal_log_manifest_rows(&rnode, next->version, covered);
}

/*
 * Fences the source: its newest manifest again, as the next version, with
 * a higher writer epoch and a note of who claimed it.
 */
static void
fence_source(const char *prefix, const char *claimer)
{
	uint64		newest = forst_newest_manifest_version(prefix);
	FstObjKey	mkey;
	FstManifest m;
	ForstVisList vis;
	StringInfoData schema;
	int			attempt;

	forst_parse_table_prefix(prefix, &mkey);
	mkey.kind = FST_OBJKEY_MANIFEST;
	if (newest == 0)
		return;
	read_manifest(prefix, newest, &m, &vis);
	initStringInfo(&schema);
	appendBinaryStringInfo(&schema, m.schema ? m.schema : "", m.schema_len);
	if (schema.len == 0)
		appendStringInfoString(&schema, "forst-table 1\n");
	appendStringInfo(&schema, "claimed-by %s\n", claimer);
	{
		FstError	err;

		if (fst_manifest_set_schema(&m, schema.data, schema.len, &err) != FST_OK)
			forst_report(FST_NO_MEMORY, &err, "building a manifest");
	}
	m.writer_epoch++;
	for (attempt = 0; attempt < 100; attempt++)
	{
		FstBuf		enc;
		FstError	err;
		FstCode		rc;

		m.version = newest + 1 + attempt;
		mkey.version = m.version;
		fst_buf_init(&enc);
		rc = fst_manifest_encode(&m, &enc, &err);
		if (rc == FST_OK)
			rc = fst_objstore_put_if_absent(forst_objstore(), forst_objkey(&mkey),
											enc.data, enc.len, &err);
		fst_buf_free(&enc);
		if (rc == FST_OK)
			break;
		if (rc != FST_ALREADY_EXISTS)
			forst_report(rc, &err, "fencing the source table");
	}
	fst_manifest_free(&m);
}

/* The entry ids of rel's secondary indexes, in *ids (any order). */
static int
target_entry_ids(Relation rel, uint32 **ids)
{
	ForstRelInfo *info = forst_relinfo(rel);
	int			n = info->nsecondary;

	*ids = palloc(sizeof(uint32) * Max(n, 1));
	for (int i = 0; i < n; i++)
		(*ids)[i] = info->secondary[i].entry_id;
	return n;
}

/* forst_attach_manifest's work, under ts->manifest_lock. */
static uint64
attach_locked(Relation rel, ForstTableShared *ts, const FstManifest *srcp,
			  const ForstVisList *src_visp, const FstObjKey *src_keyp,
			  int kg_lo, int kg_hi, TransactionId lo, TransactionId xmax,
			  const char *ranges, bool replace, const char *prefix)
{
	FstManifest next;
	const ForstVisList *base_vis = NULL;
	const FstManifest *base = NULL;
	uint64		base_version;
	StringInfoData schema;
	ForstVis	rule;
	int		   *rule_map;
	int			nrules;
	int			own_rule;
	int			l,
				i;
	bool		merge;
	char	  **extend;
	int			stride;
	FstError	err;
	uint64		attached = 0;
	uint32	   *ids;
	int			nids;

	LWLockAcquire(&ts->lock, LW_SHARED);
	base_version = ts->manifest_version;
	merge = !replace &&
		(ts->active >= 0 || ts->nimmutable > 0 || base_version > 0);
	LWLockRelease(&ts->lock);
	if (base_version > 0)
	{
		base = forst_manifest_at(&rel->rd_node, base_version);
		/* replace: the base gives the header only, not files or rules */
		base_vis = replace ? NULL : forst_manifest_vis(base);
	}
	if (merge)
	{
		uint16		cur_lo = base ? base->kg_lo : 0;
		uint16		cur_hi = base ? base->kg_hi : srcp->max_key_groups - 1;

		if (base && base->max_key_groups != srcp->max_key_groups)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("forst: the tables have %d and %d key groups",
							base->max_key_groups, srcp->max_key_groups)));
		if (!(kg_hi < cur_lo || kg_lo > cur_hi))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("forst: \"%s\" owns key groups %d..%d already, which %d..%d overlaps",
							RelationGetRelationName(rel), cur_lo, cur_hi, kg_lo, kg_hi),
					 errhint("Attach into an empty table, or a key-group range the table does not own.")));
		if (kg_hi + 1 != cur_lo && cur_hi + 1 != kg_lo)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst: key groups %d..%d do not adjoin the %d..%d that \"%s\" owns",
							kg_lo, kg_hi, cur_lo, cur_hi, RelationGetRelationName(rel)),
					 errhint("A table owns one interval of key groups; merge adjoining ranges.")));
	}

	/*
	 * The rules: the target's, then the checkpoint's, then the source's.
	 * The new ones show the entries of the target's secondary indexes
	 * (their entry ids are the source's: forst_attach_files).
	 */
	nids = target_entry_ids(rel, &ids);
	initStringInfo(&schema);
	appendStringInfoString(&schema, "forst-table 1\n");
	nrules = 0;
	if (base_vis)
		for (i = 0; i < base_vis->n; i++, nrules++)
			forst_vis_format(&schema, &base_vis->items[i]);
	forst_vis_build(&rule, (uint16) kg_lo, (uint16) kg_hi, (TransactionId) lo,
					(TransactionId) xmax, ranges, ids, nids);
	forst_vis_format(&schema, &rule);
	own_rule = nrules++;
	rule_map = palloc(sizeof(int) * Max(src_visp->n, 1));
	for (i = 0; i < src_visp->n; i++)
	{
		ForstVis	r = src_visp->items[i];

		r.kg_lo = Max(r.kg_lo, kg_lo);
		r.kg_hi = Min(r.kg_hi, kg_hi);
		if (r.kg_lo > r.kg_hi)
		{
			rule_map[i] = -1;	/* none of its rows is wanted */
			continue;
		}
		forst_vis_keep_indexes(&r, ids, nids);
		forst_vis_format(&schema, &r);
		rule_map[i] = nrules++;
	}

	forst_manifest_init_new(&next, &rel->rd_node);
	if (base)
	{
		memcpy(next.table_uuid, base->table_uuid, FST_MANIFEST_UUID_LEN);
		next.writer_epoch = base->writer_epoch;
		next.lsn_covered = base->lsn_covered;
		next.next_file_id = base->next_file_id;
		next.last_seq = base->last_seq;
		next.ttl_attnum = base->ttl_attnum;
		next.ttl_interval_us = base->ttl_interval_us;
	}
	next.created_at = (int64) GetCurrentTimestamp() +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
	next.max_key_groups = srcp->max_key_groups;
	next.kg_lo = merge ? Min(kg_lo, base ? base->kg_lo : kg_lo) : kg_lo;
	next.kg_hi = merge ? Max(kg_hi, base ? base->kg_hi : kg_hi) : kg_hi;
	if (replace && prefix == NULL && base)
	{
		/* emptied: it keeps the key groups it owned */
		next.max_key_groups = base->max_key_groups;
		next.kg_lo = base->kg_lo;
		next.kg_hi = base->kg_hi;
	}
	if (merge && base == NULL)
	{
		/* rows in memtables only: the table owned everything */
		next.kg_lo = 0;
		next.kg_hi = srcp->max_key_groups - 1;
	}
	next.last_seq = Max(next.last_seq, srcp->last_seq);
	if (fst_manifest_set_schema(&next, schema.data, schema.len, &err) != FST_OK)
		forst_report(FST_NO_MEMORY, &err, "building a manifest");

	/*
	 * The new files: in their levels, or (merge) all in level 0.  A file
	 * the target borrows already (the two tables were split from one)
	 * is not added twice: the target's entry gets the new rule as well,
	 * for the new key groups.
	 */
	stride = 1;
	if (base && !replace)
		for (l = 0; l < FST_NUM_LEVELS; l++)
			stride = Max(stride, base->levels[l].nfiles);
	extend = base && !replace ? palloc0(sizeof(char *) * FST_NUM_LEVELS * stride) : NULL;
	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < srcp->levels[l].nfiles; i++)
		{
			const FstManifestFile *f = &srcp->levels[l].files[i];
			const char *key;
			char	   *rules;
			int			bl,
						bi;
			char		okey[FORST_KEY_LEN];

			/* holds no wanted key group (nor index entries, if shown) */
			if ((f->meta.kg_max < kg_lo || f->meta.kg_min > kg_hi) &&
				!(nids > 0 && f->meta.kg_max == FST_KG_INDEX))
				continue;
			if (f->owner == NULL)
			{
				FstObjKey	k = *src_keyp;

				k.kind = FST_OBJKEY_SST;
				k.file_id = f->meta.file_id;
				strlcpy(okey, forst_objkey(&k), sizeof(okey));
				key = okey;
				rules = psprintf("%d", own_rule);
			}
			else
			{
				/* "<k>[+<k>...]:key": the source's rules, renumbered */
				const char *p = f->owner;
				StringInfoData rs;

				initStringInfo(&rs);
				for (;;)
				{
					char	   *end;
					long		k = strtol(p, &end, 10);

					if (end == p || k < 0 || k >= src_visp->n || (*end != ':' && *end != '+'))
						ereport(ERROR,
								(errcode(ERRCODE_DATA_CORRUPTED),
								 errmsg("forst: malformed borrowed file \"%s\" in the source", f->owner)));
					if (rule_map[k] >= 0)
						appendStringInfo(&rs, "%s%d", rs.len ? "+" : "", rule_map[k]);
					p = end + 1;
					if (*end == ':')
						break;
				}
				if (rs.len == 0)
					continue;	/* none of its rules covers wanted groups */
				key = p;
				rules = rs.data;
			}
			if (merge && find_borrowed(base, key, &bl, &bi))
			{
				char	  **slot = &extend[bl * stride + bi];

				*slot = psprintf("%s+%s", *slot ? *slot : "", rules);
			}
			else
				add_file(&next, merge ? 0 : l, &f->meta, forst_table_new_file_id(ts),
						 psprintf("%s:%s", rules, key));
			attached++;
		}
	if (base && !replace)
		copy_files(&next, base, extend, stride, ts);
	next.next_file_id = Max(next.next_file_id, pg_atomic_read_u64(&ts->next_file_id));
	next.version = base_version + 1;
	if (fst_manifest_validate(&next, FST_INVALID_ARGUMENT, &err) != FST_OK)
		forst_report(FST_INVALID_ARGUMENT, &err, "building the attached manifest");
	{
		uint64		cur = pg_atomic_read_u64(&forst_shared->next_seq);

		while (cur < next.last_seq &&
			   !pg_atomic_compare_exchange_u64(&forst_shared->next_seq, &cur, next.last_seq))
			;
	}
	install_manifest(ts, &next);
	fst_manifest_free(&next);
	return attached;
}

/* attach_locked under ts->manifest_lock, released on error too. */
static void
attach_under_lock(Relation rel, ForstTableShared *ts, const FstManifest *src,
				  const ForstVisList *src_vis, const FstObjKey *src_key,
				  int kg_lo, int kg_hi, TransactionId lo, TransactionId xmax,
				  const char *ranges, bool replace, const char *prefix,
				  uint64 *attached)
{
	LWLockAcquire(&ts->manifest_lock, LW_EXCLUSIVE);
	PG_TRY();
	{
		*attached = attach_locked(rel, ts, src, src_vis, src_key, kg_lo,
								  kg_hi, lo, xmax, ranges, replace, prefix);
	}
	PG_FINALLY();
	{
		LWLockRelease(&ts->manifest_lock);
	}
	PG_END_TRY();
}

/*
 * Builds and installs rel's next manifest with the files of the source
 * manifest "<prefix>/manifest/<version>" borrowed under the checkpoint's
 * rule (lo, xmax, ranges) for key groups [kg_lo, kg_hi], and returns how
 * many files it attached.  Without replace, the files join the table's
 * own (a merge when it has some); with replace, they take the place of
 * the table's files and rules, and a NULL prefix leaves it none.
 */
uint64
forst_attach_manifest(Relation rel, const char *prefix, uint64 version,
					  int kg_lo, int kg_hi, TransactionId lo,
					  TransactionId xmax, const char *ranges, bool replace)
{
	ForstTableShared *ts;
	FstManifest src;
	ForstVisList src_vis;
	FstObjKey	src_key;
	uint64		attached;

	if (prefix != NULL)
	{
		forst_parse_table_prefix(prefix, &src_key);
		read_manifest(prefix, version, &src, &src_vis);
		if (kg_lo < 0)
		{
			/* the key groups the source owns */
			kg_lo = src.kg_lo;
			kg_hi = src.kg_hi;
		}
	}
	else
	{
		/* nothing to attach: an empty table of the same key groups */
		fst_manifest_init(&src);
		src_vis.n = 0;
		src_vis.items = NULL;
		src.max_key_groups = FORST_MAX_KEY_GROUPS_DEFAULT;
		kg_lo = 0;
		kg_hi = src.max_key_groups - 1;
		src.kg_lo = 0;
		src.kg_hi = kg_hi;
		memset(&src_key, 0, sizeof(src_key));
	}
	if (kg_lo < 0 || kg_hi >= src.max_key_groups || kg_lo > kg_hi)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst: key groups %d..%d are not within the table's 0..%d",
						kg_lo, kg_hi, src.max_key_groups - 1)));
	if (kg_lo < src.kg_lo || kg_hi > src.kg_hi)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst: the source owns key groups %d..%d only, not %d..%d",
						src.kg_lo, src.kg_hi, kg_lo, kg_hi)));

	ts = forst_table_shared(&rel->rd_node, true);
	forst_table_load(ts);
	attach_under_lock(rel, ts, &src, &src_vis, &src_key, kg_lo, kg_hi, lo,
					  xmax, ranges, replace, prefix, &attached);
	fst_manifest_free(&src);
	return attached;
}

/*
 * The secondary indexes of the target must be among those of the
 * checkpoint (entries: their entry ids, a bigint[], or NULL from the SQL
 * of an extension version before 1.5, which creates none): each reads the
 * entries the attached files hold for it, and another index would have no
 * entries for the attached rows.  The checkpoint's other indexes' entries
 * stay hidden (objects/borrowed.h).
 */
static void
check_carried_indexes(Relation rel, ArrayType *entries)
{
	ForstRelInfo *info = forst_relinfo(rel);
	Datum	   *elems = NULL;
	bool	   *nulls;
	int			n = 0;

	if (entries != NULL)
		deconstruct_array(entries, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &elems, &nulls, &n);
	for (int i = 0; i < info->nsecondary; i++)
	{
		bool		found = false;

		for (int j = 0; j < n && !found; j++)
			found = !nulls[j] && DatumGetInt64(elems[j]) == (int64) info->secondary[i].entry_id;
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot attach a checkpoint to forst table \"%s\" because it has index \"%s\", which the checkpoint does not have",
							RelationGetRelationName(rel),
							get_rel_name(info->secondary[i].indexoid)),
					 errdetail("The attached rows would have no entries in that index."),
					 errhint("Attach into a table whose indexes are the checkpoint's (forst.attach creates them), or drop the index, attach, and create it again.")));
	}
}

Datum
forst_attach_files(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *cluster = text_to_cstring(PG_GETARG_TEXT_PP(1));
	int64		checkpoint = PG_GETARG_INT64(2);
	char	   *prefix = text_to_cstring(PG_GETARG_TEXT_PP(3));
	int64		version = PG_GETARG_INT64(4);
	int32		kg_lo = PG_GETARG_INT32(5);
	int32		kg_hi = PG_GETARG_INT32(6);
	int64		lo = PG_GETARG_INT64(7);
	int64		xmax = PG_GETARG_INT64(8);
	char	   *ranges = text_to_cstring(PG_GETARG_TEXT_PP(9));
	bool		claim = PG_GETARG_BOOL(10);
	Relation	rel;
	char		tprefix[FORST_KEY_LEN];
	FstObjKey	src_key;
	uint64		attached;

	forst_require_superuser("forst._attach_files", "attach files of a checkpoint to a table");
	rel = relation_open(relid, ExclusiveLock);
	if (!forst_is_forst_relation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a forst table", RelationGetRelationName(rel))));
	check_carried_indexes(rel, PG_NARGS() > 11 && !PG_ARGISNULL(11) ?
						  PG_GETARG_ARRAYTYPE_P(11) : NULL);
	if (version <= 0)
	{
		/* the table was empty at the checkpoint: nothing to attach */
		relation_close(rel, NoLock);
		PG_RETURN_INT64(0);
	}
	forst_parse_table_prefix(prefix, &src_key);
	attached = forst_attach_manifest(rel, prefix, (uint64) version, kg_lo, kg_hi,
									 (TransactionId) lo, (TransactionId) xmax,
									 ranges, false);

	forst_table_prefix(&rel->rd_node, tprefix, sizeof(tprefix));
	if (claim)
		fence_source(prefix, psprintf("%s %s", forst_cluster_id(), tprefix));
	else
	{
		/*
		 * The pin: in the source cluster's namespace for a checkpoint (its
		 * retention keeps the checkpoint), in the savepoint's own prefix for
		 * a savepoint (forst.drop_savepoint refuses while pinned).
		 */
		FstObjKey	pk;
		FstObjKey	pinned;
		uint64		source_cluster;
		char	   *pin;

		if (!fst_objkey_parse_cluster(cluster, &source_cluster))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("forst: \"%s\" is not a cluster id", cluster)));
		/* "<this cluster>.<target table>.<source table>" */
		forst_objkey_init(&pinned, FST_OBJKEY_PINNED);
		pinned.other_cluster = source_cluster;
		pinned.db = rel->rd_node.dbNode;
		pinned.rel = rel->rd_node.relNode;
		pinned.src_db = src_key.db;
		pinned.src_rel = src_key.rel;
		pk = pinned;
		pk.kind = FST_OBJKEY_PIN;
		pk.other_cluster = pinned.cluster;
		if (checkpoint > 0)
			pk.cluster = source_cluster;
		else
		{
			pk.cluster = src_key.cluster;
			strlcpy(pk.savepoint, src_key.savepoint, sizeof(pk.savepoint));
		}
		pin = forst_objkey(&pk);

		write_object(pin, psprintf("checkpoint " INT64_FORMAT "\nsource %s\nby %s %s\n",
								   checkpoint, prefix, forst_cluster_id(), tprefix), false);
		/* our record of it, so that our GC removes it with the clone */
		write_object(forst_objkey(&pinned),
					 psprintf("pin %s\nby %s\n", pin, tprefix), false);
	}
	relation_close(rel, NoLock);
	PG_RETURN_INT64((int64) attached);
}
