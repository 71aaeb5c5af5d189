/*-------------------------------------------------------------------------
 *
 * scaleout/dcheckpoint.c
 *	  Checkpoints of distributed tables as objects in the store:
 *	  <cluster>/distributed/<20-digit id> (store/objkey.h), written by the
 *	  coordinator that took them (forst.checkpoint_distributed), read by
 *	  any server sharing the store (forst.restore_distributed).
 *
 * The object is JSON in the frame of a checkpoint object (first line: the
 * magic, the format version, the length and the CRC-32C of the body;
 * checkpoint/checkpoint_objects.c reads it back and checks all of them).
 * It lists the distributed tables ("tables"; one table at the top level in
 * the objects of extension 1.7), each with its columns and key and, per
 * shard, the range of key groups, the server, the shard's table there,
 * and the server's cluster id and checkpoint id (one checkpoint per server
 * for all the tables).  The SQL functions of the extension script build
 * and read the JSON; this file stores it.  Ids are per coordinator cluster,
 * ascending; writing is create-if-absent, so two coordinators sharing a
 * cluster id take different ids.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "am/base/privileges.h"
#include "am/checkpoint/checkpoint.h"
#include "am/objects/store.h"

PG_FUNCTION_INFO_V1(forst_distributed_put);
PG_FUNCTION_INFO_V1(forst_distributed_read);
PG_FUNCTION_INFO_V1(forst_distributed_ids);

static char *
distributed_key(uint64 cluster, uint64 id)
{
	FstObjKey	k;

	forst_objkey_init(&k, FST_OBJKEY_DISTRIBUTED);
	k.cluster = cluster;
	k.checkpoint_id = id;
	return forst_objkey(&k);
}

static uint64
cluster_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *s = PG_ARGISNULL(argno) ? forst_cluster_id()
		: text_to_cstring(PG_GETARG_TEXT_PP(argno));
	uint64		cluster;

	if (!fst_objkey_parse_cluster(s, &cluster))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst: \"%s\" is not a cluster id", s),
				 errhint("A cluster id is a decimal number, as forst.cluster_id() shows it.")));
	return cluster;
}

/* The ids of cluster's distributed checkpoints, ascending. */
static int
list_ids(uint64 cluster, uint64 **ids)
{
	FstObjKey	dir;
	ForstObjKeys keys;
	int			n = 0;

	forst_objkey_init(&dir, FST_OBJKEY_DISTRIBUTED);
	dir.cluster = cluster;
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_DISTRIBUTED, &dir), &keys);
	*ids = palloc(sizeof(uint64) * Max(keys.n, 1));
	for (int i = 0; i < keys.n; i++)
	{
		FstObjKey	k;

		if (fst_objkey_parse(keys.keys[i], &k) && k.kind == FST_OBJKEY_DISTRIBUTED &&
			k.cluster == cluster && k.checkpoint_id > 0)
			(*ids)[n++] = k.checkpoint_id;
	}
	/* listings are in key order, and ids are zero-padded: ascending */
	return n;
}

/*
 * forst._distributed_put(json text) RETURNS bigint -- internal: records a
 * distributed checkpoint of this cluster under the next free id.
 */
Datum
forst_distributed_put(PG_FUNCTION_ARGS)
{
	char	   *json = text_to_cstring(PG_GETARG_TEXT_PP(0));
	uint64		cluster = cluster_arg(fcinfo, 1);
	uint64	   *ids;
	int			n;
	uint64		id;

	forst_require_superuser("forst._distributed_put", "record distributed checkpoints");
	/* the body must be JSON that jsonb takes */
	(void) DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
	n = list_ids(cluster, &ids);
	id = n > 0 ? ids[n - 1] + 1 : 1;
	for (int attempt = 0; attempt < 100; attempt++, id++)
	{
		if (forst_checkpoint_put(distributed_key(cluster, id), json) > 0)
			PG_RETURN_INT64((int64) id);
	}
	ereport(ERROR,
			(errcode(ERRCODE_DUPLICATE_OBJECT),
			 errmsg("forst: could not find a free distributed checkpoint id")));
	PG_RETURN_NULL();
}

/*
 * forst.distributed_checkpoint_read(id bigint, cluster text DEFAULT NULL)
 * RETURNS jsonb
 */
Datum
forst_distributed_read(PG_FUNCTION_ARGS)
{
	uint64		cluster;
	char	   *json;

	forst_require_role(ROLE_PG_READ_ALL_STATS, "pg_read_all_stats",
					   "forst.distributed_checkpoint_read", "read checkpoint objects");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	cluster = cluster_arg(fcinfo, 1);
	json = forst_checkpoint_get(distributed_key(cluster, (uint64) PG_GETARG_INT64(0)), true);
	if (json == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("forst: distributed checkpoint " INT64_FORMAT " of cluster " UINT64_FORMAT " does not exist",
						PG_GETARG_INT64(0), cluster),
				 errhint("forst.distributed_checkpoint_ids() lists them.")));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/* forst.distributed_checkpoint_ids(cluster text DEFAULT NULL) RETURNS SETOF bigint */
Datum
forst_distributed_ids(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint64	   *ids;
	int			n;

	forst_require_role(ROLE_PG_READ_ALL_STATS, "pg_read_all_stats",
					   "forst.distributed_checkpoint_ids", "list checkpoint objects");
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	n = list_ids(cluster_arg(fcinfo, 0), &ids);
	for (int i = 0; i < n; i++)
	{
		Datum		v = Int64GetDatum((int64) ids[i]);
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &v, &isnull);
	}
	return (Datum) 0;
}
