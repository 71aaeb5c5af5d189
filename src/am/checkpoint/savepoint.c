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

#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

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
	const char *p;

	if (name[0] == '\0' || strlen(name) > 100)
		goto bad;
	for (p = name; *p; p++)
		if (!(isalnum((unsigned char) *p) || *p == '_' || *p == '-' || *p == '.'))
			goto bad;
	if (name[0] == '.')
		goto bad;
	return;
bad:
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("forst: invalid savepoint name \"%s\"", name),
			 errhint("Use 1 to 100 letters, digits, '_', '-' and '.', not starting with '.'.")));
}

static char *
savepoint_prefix(const char *cluster, const char *name)
{
	return psprintf("%s/savepoints/%s", cluster ? cluster : forst_cluster_id(), name);
}

static void
copy_object(const char *from, const char *to)
{
	FstBuf		buf;
	FstError	err;
	FstCode		rc;

	fst_buf_init(&buf);
	rc = fst_objstore_get(forst_objstore(), from, &buf, &err);
	if (rc == FST_OK)
		rc = fst_objstore_put(forst_objstore(), to, buf.data, buf.len, &err);
	fst_buf_free(&buf);
	if (rc != FST_OK)
		forst_report(rc, &err, psprintf("copying \"%s\" to \"%s\"", from, to));
}

static char *
sst_key(const char *prefix, uint64 id)
{
	return psprintf("%s/sst/%02x/%020" INT64_MODIFIER "u.sst", prefix,
					(unsigned) ((id * 0x9E3779B1U) >> 24) & 0xff, id);
}

/* Replaces every occurrence of from by to in s (palloc'd result). */
static char *
replace_all(const char *s, const char *from, const char *to)
{
	StringInfoData out;
	size_t		flen = strlen(from);
	const char *p;

	initStringInfo(&out);
	while ((p = strstr(s, from)) != NULL)
	{
		appendBinaryStringInfo(&out, s, p - s);
		appendStringInfoString(&out, to);
		s = p + flen;
	}
	appendStringInfoString(&out, s);
	return out.data;
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
	sp = savepoint_prefix(NULL, name);
	if (forst_checkpoint_get(psprintf("%s/checkpoint", sp), true) != NULL)
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
			np = psprintf("%s/tables/%s", sp, strrchr(t->prefix, '/') + 1);
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
				char		mname[FST_MANIFEST_OBJECT_NAME_SIZE];

				fst_manifest_object_name(m.version, mname, sizeof(mname));
				fst_buf_init(&enc);
				rc = fst_manifest_encode(&m, &enc, &err);
				if (rc == FST_OK)
					rc = fst_objstore_put(forst_objstore(), psprintf("%s/%s", np, mname),
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
	foreach(lc, tables)
	{
		ForstCkptTableRef *t = lfirst(lc);

		json = replace_all(json, psprintf("\"prefix\": \"%s\"", t->prefix),
						   psprintf("\"prefix\": \"%s/tables/%s\"", sp, strrchr(t->prefix, '/') + 1));
		json = replace_all(json, psprintf("\"prefix\":\"%s\"", t->prefix),
						   psprintf("\"prefix\":\"%s/tables/%s\"", sp, strrchr(t->prefix, '/') + 1));
	}
	if (strncmp(json, "{", 1) == 0)
		json = psprintf("{\"savepoint\":\"%s\",%s", name, json + 1);
	if (forst_checkpoint_put(psprintf("%s/checkpoint", sp), json) == 0)
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
	char	   *json;

	forst_require_role(ROLE_PG_READ_ALL_STATS, "pg_read_all_stats",
					   "forst.savepoint_read", "read savepoint objects");
	check_name(name);
	json = forst_checkpoint_get(psprintf("%s/checkpoint", savepoint_prefix(cluster, name)), true);
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
	char	   *sp;
	ForstObjKeys keys;
	int			i;

	forst_require_superuser("forst.drop_savepoint", "drop savepoints");
	check_name(name);
	sp = psprintf("%s/", savepoint_prefix(NULL, name));
	forst_list_objects(psprintf("%spins/", sp), &keys);
	if (keys.n > 0 && !force)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("forst: savepoint \"%s\" is in use by %d attached tables", name, keys.n),
				 errdetail("First pin: %s.", keys.keys[0]),
				 errhint("Drop the tables attached from it (their server's forst.gc() then removes the pins), or pass force => true.")));
	forst_list_objects(sp, &keys);
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
