/*-------------------------------------------------------------------------
 *
 * views.c
 *	  SQL functions behind the forst.tables and forst.files views: a
 *	  table's memtables, manifest version and SST files per level.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/keys/rel.h"
#include "am/base/privileges.h"
#include "am/objects/store.h"

PG_FUNCTION_INFO_V1(forst_table_info);
PG_FUNCTION_INFO_V1(forst_table_files);

/* Opens relid as a forst table and takes its current view. */
static Relation
open_forst(Oid relid, ForstTableView *view)
{
	Relation	rel = relation_open(relid, AccessShareLock);

	if (!forst_is_forst_relation(rel))
	{
		relation_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a forst table", get_rel_name(relid))));
	}
	forst_table_view(forst_table_shared(&rel->rd_node, true), &rel->rd_node, view);
	return rel;
}

Datum
forst_table_info(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ForstTableView view;
	Relation	rel;
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8] = {0};
	Datum		lfiles[FST_NUM_LEVELS];
	Datum		lbytes[FST_NUM_LEVELS];
	uint64		mt_bytes = 0,
				mt_entries = 0,
				sst_bytes = 0;
	int			nfiles = 0;
	int			i;

	forst_require_table_read(relid, "forst.table_info");
	rel = open_forst(relid, &view);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	for (i = 0; i < view.nslabs; i++)
	{
		FstMemtableStats st;

		fst_memtable_stats(forst_slab_memtable(view.slabs[i]), &st);
		mt_bytes += st.bytes_used;
		mt_entries += st.entries;
	}
	for (i = 0; i < FST_NUM_LEVELS; i++)
	{
		int			n = view.manifest ? view.manifest->levels[i].nfiles : 0;
		uint64		b = view.manifest ? fst_manifest_level_bytes(view.manifest, i) : 0;

		nfiles += n;
		sst_bytes += b;
		lfiles[i] = Int32GetDatum(n);
		lbytes[i] = Int64GetDatum((int64) b);
	}
	values[0] = Int32GetDatum(view.nslabs);
	values[1] = Int64GetDatum((int64) mt_bytes);
	values[2] = Int64GetDatum((int64) mt_entries);
	values[3] = Int64GetDatum((int64) view.manifest_version);
	values[4] = Int32GetDatum(nfiles);
	values[5] = Int64GetDatum((int64) sst_bytes);
	values[6] = PointerGetDatum(construct_array(lfiles, FST_NUM_LEVELS, INT4OID, 4, true, TYPALIGN_INT));
	values[7] = PointerGetDatum(construct_array(lbytes, FST_NUM_LEVELS, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
forst_table_files(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ForstTableView view;
	Relation	rel;
	int			level,
				i;

	forst_require_table_read(relid, "forst.table_files");
	InitMaterializedSRF(fcinfo, 0);
	rel = open_forst(relid, &view);
	for (level = 0; view.manifest && level < FST_NUM_LEVELS; level++)
	{
		for (i = 0; i < view.manifest->levels[level].nfiles; i++)
		{
			const FstManifestFile *mf = &view.manifest->levels[level].files[i];
			const FstFileMeta *f = &mf->meta;
			Datum		values[13];
			bool		nulls[13] = {0};
			char		okey[FORST_KEY_LEN];

			values[0] = Int32GetDatum(level);
			values[1] = Int64GetDatum((int64) f->file_id);
			values[2] = Int64GetDatum((int64) f->size);
			values[3] = Int64GetDatum((int64) f->num_entries);
			values[4] = Int64GetDatum((int64) f->num_tombstones);
			values[5] = Int32GetDatum(f->kg_min);
			values[6] = Int32GetDatum(f->kg_max);
			values[7] = Int64GetDatum((int64) f->seq_min);
			values[8] = Int64GetDatum((int64) f->seq_max);
			values[9] = BoolGetDatum(mf->owner != NULL);
			forst_file_object_key(&rel->rd_node, mf, okey, sizeof(okey));
			values[10] = CStringGetTextDatum(okey);
			/* the range of unfrozen xids; NULL when every entry is frozen */
			values[11] = TransactionIdGetDatum(f->xid_min);
			values[12] = TransactionIdGetDatum(f->xid_max);
			nulls[11] = nulls[12] = (f->xid_min == 0 || mf->owner != NULL);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * forst.memory(): the shared memtable pool of the whole server (all
 * databases): slabs by state, and the tables that have shared state.
 */
PG_FUNCTION_INFO_V1(forst_memory);

Datum
forst_memory(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[7];
	bool		nulls[7] = {0};
	int			counts[FORST_SLAB_RETIRING + 1] = {0};
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	LWLockAcquire(forst_shared->lock, LW_SHARED);
	for (i = 0; i < forst_shared->nslabs; i++)
		counts[forst_shared->slabs[i].state]++;
	values[6] = Int32GetDatum(forst_tables_count());
	LWLockRelease(forst_shared->lock);
	/* the pool; replay's reserve shows only in what is in use */
	values[0] = Int32GetDatum(forst_shared->pool_slabs);
	values[1] = Int64GetDatum((int64) forst_shared->slab_size);
	values[2] = Int32GetDatum(Max(0, forst_shared->pool_slabs -
								  (forst_shared->nslabs - counts[FORST_SLAB_FREE])));
	values[3] = Int32GetDatum(counts[FORST_SLAB_ACTIVE]);
	values[4] = Int32GetDatum(counts[FORST_SLAB_IMMUTABLE]);
	values[5] = Int32GetDatum(counts[FORST_SLAB_RETIRING]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
