/*-------------------------------------------------------------------------
 *
 * savepoint.c
 *	  Savepoints: self-contained, portable copies of a checkpoint that stay
 *	  valid after the source and its objects are gone (Flink's savepoints;
 *	  docs/checkpoints.md).
 *
 * forst.savepoint(name) takes a checkpoint, then copies every object its
 * manifests name -- the tables' own files and the files they borrow --
 * under "<cluster>/savepoints/<name>/tables/<db>.<relfilenode>/", writes
 * each manifest there with the files' new keys (borrowed files keep their
 * visibility rules, now pointing at the copies), and last the savepoint
 * object "<cluster>/savepoints/<name>/checkpoint": the checkpoint's JSON
 * with the new prefixes.  forst.attach(..., savepoint => name) restores
 * from it like from a checkpoint.  Garbage collection never looks under
 * savepoints/; forst.drop_savepoint(name) deletes one.
 *
 * Unlike a checkpoint, a savepoint costs O(state): the bytes are copied
 * (object by object through this backend), with progress in forst.progress.
 * It is written last-object-last, so a savepoint whose "checkpoint" object
 * exists is complete; an interrupted one leaves objects that
 * forst.drop_savepoint removes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "common/jsonapi.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonfuncs.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/base/privileges.h"
#include "am/base/progress.h"
#include "am/objects/store.h"

PG_FUNCTION_INFO_V1(forst_savepoint_fn);
PG_FUNCTION_INFO_V1(forst_savepoint_read_fn);
PG_FUNCTION_INFO_V1(forst_drop_savepoint_fn);

static void
check_name(const char *name)
{
	if (fst_objkey_valid_name(name))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("forst: invalid savepoint name \"%s\"", name),
			 errhint("Use 1 to 100 letters, digits, '_', '-' and '.', not starting with '.'.")));
}

/*
 * The key of savepoint name's checkpoint object, of cluster (NULL: this
 * one); NULL if cluster is not a cluster id.
 */
static char *
savepoint_key(const char *cluster, const char *name)
{
	FstObjKey	k;

	forst_objkey_init(&k, FST_OBJKEY_SAVEPOINT);
	if (cluster && !fst_objkey_parse_cluster(cluster, &k.cluster))
		return NULL;
	strlcpy(k.savepoint, name, sizeof(k.savepoint));
	return forst_objkey(&k);
}

/* A table's prefix in this cluster's savepoint name. */
static char *
savepoint_table(const char *name, const char *table_prefix)
{
	FstObjKey	k;

	forst_parse_table_prefix(table_prefix, &k);
	k.cluster = GetSystemIdentifier();
	strlcpy(k.savepoint, name, sizeof(k.savepoint));
	return forst_objkey(&k);
}

static void
copy_object(const char *from, const char *to)
{
	FstBuf		buf;

	(void) forst_object_get(from, &buf, false);
	PG_TRY();
	{
		forst_object_put(to, buf.data, buf.len, false);
	}
	PG_FINALLY();
	{
		fst_buf_free(&buf);
	}
	PG_END_TRY();
}

static char *
sst_key(const char *prefix, uint64 id)
{
	FstObjKey	k;

	forst_parse_table_prefix(prefix, &k);
	k.kind = FST_OBJKEY_SST;
	k.file_id = id;
	return forst_objkey(&k);
}

/* ---------------------------------------------------------------------- */
/* The savepoint's checkpoint document                                     */

/*
 * The checkpoint's JSON is parsed and written out again, value by value,
 * with two edits: a "savepoint" member first in the top-level object, and
 * each table's "prefix" (tables[i].prefix) the table's prefix in the
 * savepoint.  Everything else is written as it was read: members in their
 * order, numbers as their text, strings escaped as checkpoint/checkpoint.c
 * escapes them (escape_json), and no whitespace -- the form the
 * checkpoint was written in, so the result is that document with the two
 * edits, which every reader of checkpoints takes.
 */
#define SP_JSON_MAX_DEPTH 16

typedef struct SavepointJson
{
	StringInfoData out;
	const char *name;			/* the savepoint */
	int			depth;			/* containers open */
	bool		array[SP_JSON_MAX_DEPTH];	/* container at depth is an array */
	bool		first[SP_JSON_MAX_DEPTH];	/* no member written there yet */
	char	   *field[SP_JSON_MAX_DEPTH];	/* member being written there */
	bool		prefix_next;	/* the next scalar is a table's prefix */
} SavepointJson;

static void
sp_open(SavepointJson *st, bool array)
{
	if (st->depth + 1 >= SP_JSON_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: checkpoint document nested too deeply")));
	if (st->prefix_next)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: checkpoint names a table whose prefix is not a string")));
	appendStringInfoChar(&st->out, array ? '[' : '{');
	st->depth++;
	st->array[st->depth] = array;
	st->first[st->depth] = true;
	st->field[st->depth] = NULL;
	if (st->depth == 1 && !array)
	{
		appendStringInfoString(&st->out, "\"savepoint\":");
		escape_json(&st->out, st->name);
		st->first[1] = false;
	}
}

static void
sp_object_start(void *state)
{
	sp_open(state, false);
}

static void
sp_array_start(void *state)
{
	sp_open(state, true);
}

static void
sp_object_end(void *state)
{
	SavepointJson *st = state;

	appendStringInfoChar(&st->out, '}');
	st->depth--;
}

static void
sp_array_end(void *state)
{
	SavepointJson *st = state;

	appendStringInfoChar(&st->out, ']');
	st->depth--;
}

static void
sp_separator(SavepointJson *st)
{
	if (!st->first[st->depth])
		appendStringInfoChar(&st->out, ',');
	st->first[st->depth] = false;
}

static void
sp_field_start(void *state, char *fname, bool isnull)
{
	SavepointJson *st = state;

	sp_separator(st);
	escape_json(&st->out, fname);
	appendStringInfoChar(&st->out, ':');
	st->field[st->depth] = fname;
	/* {"tables":[{..., "prefix":...}]} */
	st->prefix_next = st->depth == 3 && strcmp(fname, "prefix") == 0 &&
		st->array[2] && st->field[1] != NULL && strcmp(st->field[1], "tables") == 0;
}

static void
sp_element_start(void *state, bool isnull)
{
	SavepointJson *st = state;

	sp_separator(st);
	st->prefix_next = false;
}

static void
sp_scalar(void *state, char *token, JsonTokenType type)
{
	SavepointJson *st = state;

	if (type == JSON_TOKEN_STRING)
		escape_json(&st->out, st->prefix_next ? savepoint_table(st->name, token) : token);
	else if (st->prefix_next)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: checkpoint names a table whose prefix is not a string")));
	else
		appendStringInfoString(&st->out, token);
	st->prefix_next = false;
}

/* The checkpoint's JSON as savepoint name's (palloc'd). */
static char *
savepoint_json(const char *json, const char *name)
{
	SavepointJson st;
	JsonSemAction sem;
	JsonLexContext *lex;

	memset(&st, 0, sizeof(st));
	initStringInfo(&st.out);
	st.name = name;
	memset(&sem, 0, sizeof(sem));
	sem.semstate = &st;
	sem.object_start = sp_object_start;
	sem.object_end = sp_object_end;
	sem.array_start = sp_array_start;
	sem.array_end = sp_array_end;
	sem.object_field_start = sp_field_start;
	sem.array_element_start = sp_element_start;
	sem.scalar = sp_scalar;
	if (json[0] != '{')
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: checkpoint document is not a JSON object")));
	lex = makeJsonLexContextCstringLen(pstrdup(json), strlen(json),
									   GetDatabaseEncoding(), true);
	pg_parse_json_or_ereport(lex, &sem);
	return st.out.data;
}

/* forst.savepoint(name text) returns text: the savepoint's prefix */
Datum
forst_savepoint_fn(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *sp = NULL;
	char	   *json;
	List	   *tables;
	ListCell   *lc;
	uint64		id;
	int64		total = 0,
				done = 0;
	int			pass;

	forst_require_superuser("forst.savepoint", "take savepoints");
	check_name(name);
	{
		FstObjKey	k;

		forst_objkey_init(&k, FST_OBJKEY_SAVEPOINT);
		strlcpy(k.savepoint, name, sizeof(k.savepoint));
		sp = forst_objkey_dir(FST_OBJDIR_SAVEPOINT, &k);
		sp[strlen(sp) - 1] = '\0';		/* the prefix, without its '/' */
	}
	if (forst_checkpoint_get(savepoint_key(NULL, name), true) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("forst: savepoint \"%s\" exists already", name),
				 errhint("Choose another name, or drop it: SELECT forst.drop_savepoint('%s').", name)));
	id = forst_checkpoint_run();
	json = forst_checkpoint_fetch(NULL, id);
	tables = forst_checkpoint_tables(json);

	forst_progress_start("savepoint", name);
	/* pass 0 counts the bytes, pass 1 copies */
	for (pass = 0; pass < 2; pass++)
	{
		foreach(lc, tables)
		{
			ForstCkptTableRef *t = lfirst(lc);
			FstManifest m;
			char	   *np;
			int			l,
						i;

			if (t->version == 0)
				continue;
			np = savepoint_table(name, t->prefix);
			(void) forst_manifest_read(t->prefix, t->version, &m, false);
			for (l = 0; l < FST_NUM_LEVELS; l++)
				for (i = 0; i < m.levels[l].nfiles; i++)
				{
					FstManifestFile *f = &m.levels[l].files[i];
					char	   *to = sst_key(np, f->meta.file_id);

					if (pass == 0)
					{
						total += f->meta.size;
						continue;
					}
					CHECK_FOR_INTERRUPTS();
					if (f->owner == NULL)
						copy_object(sst_key(t->prefix, f->meta.file_id), to);
					else
					{
						const char *colon = strchr(f->owner, ':');
						char	   *owner;

						if (colon == NULL)
							ereport(ERROR,
									(errcode(ERRCODE_DATA_CORRUPTED),
									 errmsg("forst: malformed borrowed file \"%s\"", f->owner)));
						copy_object(colon + 1, to);
						/* still read with its rules, from the copy */
						owner = psprintf("%.*s:%s", (int) (colon - f->owner), f->owner, to);
						fst_free(f->owner);
						f->owner = fst_strdup(owner);
						if (f->owner == NULL)
							ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
					}
					done += f->meta.size;
					forst_progress_update("copying files", done, total, "bytes");
				}
			if (pass == 1)
			{
				FstBuf		enc;
				FstError	err;
				FstCode		rc;
				FstObjKey	mk;

				forst_parse_table_prefix(np, &mk);
				mk.kind = FST_OBJKEY_MANIFEST;
				mk.version = m.version;
				fst_buf_init(&enc);
				rc = fst_manifest_encode(&m, &enc, &err);
				if (rc == FST_OK)
					rc = fst_objstore_put(forst_objstore(), forst_objkey(&mk),
										  enc.data, enc.len, &err);
				fst_buf_free(&enc);
				if (rc != FST_OK)
					forst_report(rc, &err, "writing a savepoint manifest");
			}
			fst_manifest_free(&m);
		}
	}

	/* the checkpoint's JSON, with the copies' prefixes; written last */
	forst_progress_update("writing savepoint", done, total, "bytes");
	json = savepoint_json(json, name);
	if (forst_checkpoint_put(savepoint_key(NULL, name), json) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("forst: savepoint \"%s\" was written meanwhile by another session", name)));
	forst_progress_end();
	PG_RETURN_TEXT_P(cstring_to_text(sp));
}

/* forst.savepoint_read(name text, cluster text DEFAULT NULL) returns jsonb */
Datum
forst_savepoint_read_fn(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *cluster = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *key;
	char	   *json;

	forst_require_role(ROLE_PG_READ_ALL_STATS, "pg_read_all_stats",
					   "forst.savepoint_read", "read savepoint objects");
	check_name(name);
	key = savepoint_key(cluster, name);
	json = key ? forst_checkpoint_get(key, true) : NULL;
	if (json == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("forst: savepoint \"%s\" of cluster %s does not exist", name,
						cluster ? cluster : forst_cluster_id())));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/*
 * forst.drop_savepoint(name text, force bool DEFAULT false) returns bigint:
 * objects deleted
 */
Datum
forst_drop_savepoint_fn(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		force = PG_GETARG_BOOL(1);
	FstObjKey	k;
	ForstObjKeys keys;
	int			i;

	forst_require_superuser("forst.drop_savepoint", "drop savepoints");
	check_name(name);
	forst_objkey_init(&k, FST_OBJKEY_SAVEPOINT);
	strlcpy(k.savepoint, name, sizeof(k.savepoint));
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_PINS, &k), &keys);
	if (keys.n > 0 && !force)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("forst: savepoint \"%s\" is in use by %d attached tables", name, keys.n),
				 errdetail("First pin: %s.", keys.keys[0]),
				 errhint("Drop the tables attached from it (their server's forst.gc() then removes the pins), or pass force => true.")));
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_SAVEPOINT, &k), &keys);
	if (keys.n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("forst: savepoint \"%s\" does not exist", name)));
	for (i = 0; i < keys.n; i += 500)
	{
		FstError	err;
		FstCode		rc;

		rc = fst_objstore_delete_batch(forst_objstore(), (const char *const *) keys.keys + i,
									   Min(500, keys.n - i), NULL, &err);
		if (rc != FST_OK)
			forst_report(rc, &err, "dropping a savepoint");
	}
	PG_RETURN_INT64(keys.n);
}
