/*-------------------------------------------------------------------------
 *
 * functions/keycodec_funcs.c
 *	  SQL-callable functions of schema forst around the key encoding
 *	  (keys/keycodec.c): key groups, encoding and decoding of keys.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/tupdesc.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "am/keys/keycodec.h"

PG_FUNCTION_INFO_V1(forst_key_group_fn);
PG_FUNCTION_INFO_V1(forst_encode_key);
PG_FUNCTION_INFO_V1(forst_decode_key);
PG_FUNCTION_INFO_V1(forst_check_key_columns_fn);

static void
null_key_value(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("forst: a key value cannot be null"),
			 errdetail("A forst table is keyed by its primary key, whose columns are NOT NULL.")));
}

/*
 * forst.key_group(key anyelement, max_key_groups int DEFAULT 128) -- the key
 * group of a key whose first column has the given value.
 */
Datum
forst_key_group_fn(PG_FUNCTION_ARGS)
{
	Oid			typid = get_fn_expr_argtype(fcinfo->flinfo, 0);
	int32		max_key_groups = PG_GETARG_INT32(1);
	StringInfoData buf;
	uint16		kg;

	if (!OidIsValid(typid))
		elog(ERROR, "forst: could not determine the type of the key");
	forst_check_max_key_groups(max_key_groups);
	initStringInfo(&buf);
	forst_key_encode_value(typid, PG_GETARG_DATUM(0), &buf);
	kg = forst_key_group_of_bytes(buf.data, buf.len, (uint16) max_key_groups);
	pfree(buf.data);
	PG_RETURN_INT32((int32) kg);
}

/* The encoding of buf as a bytea. */
static bytea *
buf_to_bytea(StringInfo buf)
{
	bytea	   *result = palloc(VARHDRSZ + buf->len);

	SET_VARSIZE(result, VARHDRSZ + buf->len);
	memcpy(VARDATA(result), buf->data, buf->len);
	return result;
}

/*
 * forst.encode_key(VARIADIC "any") -- the user key (without key group) of a
 * key with the given column values.
 */
Datum
forst_encode_key(PG_FUNCTION_ARGS)
{
	StringInfoData buf;

	initStringInfo(&buf);
	if (get_fn_expr_variadic(fcinfo->flinfo))
	{
		/* called as encode_key(VARIADIC array): one array of values */
		ArrayType  *arr;
		Oid			elemtype;
		int16		elmlen;
		bool		elmbyval;
		char		elmalign;
		Datum	   *elems;
		bool	   *nulls;
		int			nelems;

		if (PG_ARGISNULL(0))
			null_key_value();
		arr = PG_GETARG_ARRAYTYPE_P(0);
		elemtype = ARR_ELEMTYPE(arr);
		get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
		deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
						  &elems, &nulls, &nelems);
		for (int i = 0; i < nelems; i++)
		{
			if (nulls[i])
				null_key_value();
			forst_key_encode_value(elemtype, elems[i], &buf);
		}
	}
	else
	{
		for (int i = 0; i < PG_NARGS(); i++)
		{
			Oid			typid = get_fn_expr_argtype(fcinfo->flinfo, i);

			if (!OidIsValid(typid))
				elog(ERROR, "forst: could not determine the type of key column %d",
					 i + 1);
			if (PG_ARGISNULL(i))
				null_key_value();
			forst_key_encode_value(typid, PG_GETARG_DATUM(i), &buf);
		}
	}
	PG_RETURN_BYTEA_P(buf_to_bytea(&buf));
}

/*
 * forst.decode_key(key bytea, VARIADIC types regtype[]) -- a key encoded
 * with columns of the given types, as text "(v1, v2)".
 */
Datum
forst_decode_key(PG_FUNCTION_ARGS)
{
	bytea	   *key = PG_GETARG_BYTEA_PP(0);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *elems;
	bool	   *nulls;
	int			ntypes;
	TupleDesc	desc;
	AttrNumber *attnums;
	ForstKeyCodec *codec;

	deconstruct_array(arr, REGTYPEOID, sizeof(Oid), true, TYPALIGN_INT,
					  &elems, &nulls, &ntypes);
	if (ntypes < 1 || ntypes > INDEX_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst: a key must have between 1 and %d columns, not %d",
						INDEX_MAX_KEYS, ntypes)));
	desc = CreateTemplateTupleDesc(ntypes);
	attnums = palloc(ntypes * sizeof(AttrNumber));
	for (int i = 0; i < ntypes; i++)
	{
		Oid			typid;
		char		attname[NAMEDATALEN];

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("forst: key column types cannot be null")));
		typid = DatumGetObjectId(elems[i]);
		snprintf(attname, sizeof(attname), "column%d", i + 1);
		TupleDescInitEntry(desc, i + 1, attname, typid, -1, 0);
		/* keys of text-like columns are in "C" order, whatever the type says */
		if (type_is_collatable(typid))
			TupleDescInitEntryCollation(desc, i + 1, C_COLLATION_OID);
		attnums[i] = i + 1;
	}
	codec = forst_keycodec_create(desc, ntypes, attnums,
								  FORST_DEFAULT_KEY_GROUPS);
	PG_RETURN_TEXT_P(cstring_to_text(forst_key_to_text(codec,
													   VARDATA_ANY(key),
													   VARSIZE_ANY_EXHDR(key))));
}

/*
 * forst._check_key_columns(rel regclass, VARIADIC columns name[]) -- runs
 * the check that CREATE TABLE applies to a forst table's key on columns of
 * an existing table (for tests).
 */
Datum
forst_check_key_columns_fn(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *elems;
	bool	   *nulls;
	int			ncols;
	AttrNumber *attnums;
	Relation	rel;

	deconstruct_array(arr, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
					  &elems, &nulls, &ncols);
	rel = relation_open(relid, AccessShareLock);
	attnums = palloc(Max(ncols, 1) * sizeof(AttrNumber));
	for (int i = 0; i < ncols; i++)
	{
		const char *colname;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("forst: key column names cannot be null")));
		colname = NameStr(*DatumGetName(elems[i]));
		attnums[i] = get_attnum(relid, colname);
		if (attnums[i] == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of relation \"%s\" does not exist",
							colname, RelationGetRelationName(rel))));
	}
	forst_check_key_columns(RelationGetDescr(rel), ncols, attnums);
	relation_close(rel, AccessShareLock);
	PG_RETURN_VOID();
}
