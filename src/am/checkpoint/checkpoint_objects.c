/*-------------------------------------------------------------------------
 *
 * checkpoint_objects.c
 *	  Checkpoint objects in the store (see checkpoint/checkpoint.h): listing,
 *	  reading and parsing them, and retiring those beyond the retention
 *	  that no clone pins.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/objects/store.h"

/* ---------------------------------------------------------------------- */
/* Listing and reading                                                     */

int
forst_checkpoint_list(const char *cluster, uint64 **ids)
{
	FstObjKey	dir;
	ForstObjKeys keys;
	int			n = 0;
	int			i;

	forst_objkey_init(&dir, FST_OBJKEY_CHECKPOINT);
	if (cluster && !fst_objkey_parse_cluster(cluster, &dir.cluster))
	{
		/* not a cluster id: no cluster has checkpoints there */
		*ids = palloc(sizeof(uint64));
		return 0;
	}
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_CHECKPOINTS, &dir), &keys);
	*ids = palloc(sizeof(uint64) * Max(keys.n, 1));
	for (i = 0; i < keys.n; i++)
	{
		FstObjKey	k;

		if (fst_objkey_parse(keys.keys[i], &k) && k.kind == FST_OBJKEY_CHECKPOINT &&
			k.cluster == dir.cluster && k.checkpoint_id > 0)
			(*ids)[n++] = k.checkpoint_id;
	}
	/* listings are in key order, and ids are zero-padded: ascending */
	return n;
}

char *
forst_checkpoint_get(const char *key, bool missing_ok)
{
	FstBuf		buf;
	char	   *nl;
	unsigned int version = 0;
	unsigned long len;
	unsigned int crc;
	char	   *body;

	if (!forst_object_get(key, &buf, missing_ok))
		return NULL;
	nl = buf.len > 0 ? memchr(buf.data, '\n', Min(buf.len, 128)) : NULL;
	if (nl != NULL &&
		strncmp(buf.data, FORST_CKPT_MAGIC " ", strlen(FORST_CKPT_MAGIC) + 1) == 0 &&
		sscanf(buf.data + strlen(FORST_CKPT_MAGIC) + 1, "%u", &version) == 1 &&
		version > FORST_CKPT_FORMAT)
	{
		fst_buf_free(&buf);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("forst: checkpoint \"%s\" has format version %u, newer than this build reads (versions 1 to %d)",
						key, version, FORST_CKPT_FORMAT),
				 errhint("A newer version of forst wrote the object: install that version "
						 "or a later one on this server (standbys before their primary).")));
	}
	if (nl == NULL || version == 0 ||
		sscanf(buf.data + strlen(FORST_CKPT_MAGIC) + 1, "%u %lu %x", &version, &len, &crc) != 3 ||
		len != buf.len - (size_t) (nl + 1 - buf.data))
	{
		fst_buf_free(&buf);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: checkpoint \"%s\" is malformed or truncated", key)));
	}
	body = palloc(len + 1);
	memcpy(body, nl + 1, len);
	body[len] = '\0';
	fst_buf_free(&buf);
	{
		pg_crc32c	c;

		INIT_CRC32C(c);
		COMP_CRC32C(c, body, len);
		FIN_CRC32C(c);
		if (c != (pg_crc32c) crc)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: checkpoint \"%s\" fails its checksum", key)));
	}
	return body;
}

char *
forst_checkpoint_fetch(const char *cluster, uint64 id)
{
	char	   *key = forst_checkpoint_key(cluster ? cluster : forst_cluster_id(), id);
	char	   *json = key ? forst_checkpoint_get(key, true) : NULL;

	if (json == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("forst: checkpoint " UINT64_FORMAT " of cluster %s does not exist",
						id, cluster ? cluster : forst_cluster_id()),
				 errhint("forst.checkpoints lists the retained checkpoints; older ones are deleted (forst.checkpoints_retained).")));
	return json;
}

List *
forst_checkpoint_tables(const char *json)
{
	Jsonb	   *doc = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
	JsonbValue *tables;
	JsonbValue	k;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	List	   *out = NIL;
	ForstCkptTableRef *cur = NULL;
	char	   *key = NULL;
	int			depth = 0;

	k.type = jbvString;
	k.val.string.val = "tables";
	k.val.string.len = 6;
	tables = findJsonbValueFromContainer(&doc->root, JB_FOBJECT, &k);
	if (tables == NULL || tables->type != jbvBinary)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: checkpoint without a table list")));
	it = JsonbIteratorInit(tables->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if (tok == WJB_BEGIN_OBJECT)
		{
			if (++depth == 1)
				cur = palloc0(sizeof(ForstCkptTableRef));
		}
		else if (tok == WJB_END_OBJECT)
		{
			if (--depth == 0 && cur && cur->prefix)
				out = lappend(out, cur);
		}
		else if (tok == WJB_KEY && depth == 1)
			key = pnstrdup(v.val.string.val, v.val.string.len);
		else if (tok == WJB_VALUE && depth == 1 && key && cur)
		{
			if (strcmp(key, "prefix") == 0 && v.type == jbvString)
				cur->prefix = pnstrdup(v.val.string.val, v.val.string.len);
			else if (strcmp(key, "name") == 0 && v.type == jbvString)
				cur->name = pnstrdup(v.val.string.val, v.val.string.len);
			else if (strcmp(key, "manifest") == 0 && v.type == jbvNumeric)
				cur->version = (uint64) DatumGetInt64(DirectFunctionCall1(numeric_int8,
																		  NumericGetDatum(v.val.numeric)));
		}
	}
	return out;
}

/* Checkpoint ids pinned by clones (objects <cluster>/pins/<pinner>). */
static List *
pinned_ids(void)
{
	FstObjKey	dir;
	ForstObjKeys keys;
	List	   *out = NIL;
	int			i;

	forst_objkey_init(&dir, FST_OBJKEY_PIN);
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_PINS, &dir), &keys);
	for (i = 0; i < keys.n; i++)
	{
		FstBuf		buf;
		uint64		id;

		/* one deleted since the listing is no longer there */
		if (forst_object_get(keys.keys[i], &buf, true))
		{
			char	   *s = pnstrdup(buf.data, buf.len);

			if (sscanf(s, "checkpoint " UINT64_FORMAT, &id) == 1)
				out = lappend(out, psprintf(UINT64_FORMAT, id));
			fst_buf_free(&buf);
		}
	}
	return out;
}

static bool
id_in(List *ids, uint64 id)
{
	ListCell   *lc;
	char		s[32];

	snprintf(s, sizeof(s), UINT64_FORMAT, id);
	foreach(lc, ids)
		if (strcmp((char *) lfirst(lc), s) == 0)
			return true;
	return false;
}

char *
forst_checkpoint_database(const char *json)
{
	Jsonb	   *doc = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
	JsonbValue	k;
	JsonbValue *v;

	k.type = jbvString;
	k.val.string.val = "dboid";
	k.val.string.len = 5;
	v = findJsonbValueFromContainer(&doc->root, JB_FOBJECT, &k);
	if (v != NULL && v->type == jbvNumeric)
		return psprintf("oid " INT64_FORMAT,
						DatumGetInt64(DirectFunctionCall1(numeric_int8,
														  NumericGetDatum(v->val.numeric))));
	k.val.string.val = "database";
	k.val.string.len = 8;
	v = findJsonbValueFromContainer(&doc->root, JB_FOBJECT, &k);
	if (v != NULL && v->type == jbvString)
		return psprintf("name %.*s", v->val.string.len, v->val.string.val);
	return pstrdup("?");
}

/*
 * Keeps the newest `keep` checkpoints of each database (so that a database
 * checkpointed rarely keeps its own, whatever the others do: unlogged
 * tables return to their database's newest one after a crash), plus the
 * pinned ones.  A checkpoint that cannot be read is left alone.
 */
int
forst_checkpoint_retire(int keep)
{
	uint64	   *ids;
	int			n = forst_checkpoint_list(NULL, &ids);
	List	   *pins;
	List	   *seen = NIL;		/* database names, one per kept checkpoint */
	int			deleted = 0;
	int			i;

	if (n <= keep)
		return 0;
	pins = pinned_ids();
	for (i = n - 1; i >= 0; i--)
	{
		char	   *key = forst_checkpoint_key(forst_cluster_id(), ids[i]);
		char	   *json;
		char	   *db;
		const char *keys[1];
		ListCell   *lc;
		int			newer = 0;
		FstError	err;
		FstCode		rc;

		json = forst_checkpoint_get(key, true);
		if (json == NULL)
			continue;			/* deleted meanwhile */
		db = forst_checkpoint_database(json);
		foreach(lc, seen)
			if (strcmp((char *) lfirst(lc), db) == 0)
				newer++;
		seen = lappend(seen, db);
		if (newer < keep || id_in(pins, ids[i]))
			continue;
		keys[0] = key;
		rc = fst_objstore_delete_batch(forst_objstore(), keys, 1, NULL, &err);
		if (rc != FST_OK)
			forst_report(rc, &err, psprintf("deleting checkpoint \"%s\"", key));
		deleted++;
	}
	return deleted;
}

