/*-------------------------------------------------------------------------
 *
 * funcs.c
 *	  SQL-callable functions of schema forst that report on the module.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "am/forst.h"
#include "am/base/privileges.h"
#include "am/objects/store.h"
#include "am/read/sst_readers.h"

PG_FUNCTION_INFO_V1(forst_check_preloaded);
PG_FUNCTION_INFO_V1(forst_version);
PG_FUNCTION_INFO_V1(forst_remote_dir_fn);
PG_FUNCTION_INFO_V1(forst_session_sst_readers);

/*
 * forst._check_preloaded() -- called by the extension script, so that
 * CREATE EXTENSION fails unless the module came in through
 * shared_preload_libraries.
 */
Datum
forst_check_preloaded(PG_FUNCTION_ARGS)
{
	if (!forst_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("forst must be loaded via shared_preload_libraries"),
				 errhint("Add forst to shared_preload_libraries in postgresql.conf and restart the server.")));
	PG_RETURN_VOID();
}

/*
 * forst.version() -- version of the loaded module.
 */
Datum
forst_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(FORST_VERSION));
}

/*
 * forst.remote_dir() -- the object-store URL in effect, with the default
 * (an empty forst.remote_dir) resolved against the data directory.
 */
Datum
forst_remote_dir_fn(PG_FUNCTION_ARGS)
{
	forst_require_role(ROLE_PG_READ_ALL_SETTINGS, "pg_read_all_settings",
					   "forst.remote_dir", "read the object-store location");
	PG_RETURN_TEXT_P(cstring_to_text(forst_remote_dir_url()));
}

/*
 * forst.session_sst_readers() -- this backend's open SST readers, the
 * bytes they hold, how many forst.sst_reader_memory has closed, and how
 * many table manifests (versions) the backend has decoded and keeps.
 */
Datum
forst_session_sst_readers(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {0};
	int64		readers,
				bytes,
				closed;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	forst_sst_readers_usage(&readers, &bytes, &closed);
	values[0] = Int64GetDatum(readers);
	values[1] = Int64GetDatum(bytes);
	values[2] = Int64GetDatum(closed);
	values[3] = Int64GetDatum(forst_manifests_cached());
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
