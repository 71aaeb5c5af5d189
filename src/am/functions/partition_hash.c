/*-------------------------------------------------------------------------
 *
 * functions/partition_hash.c
 *	  Hash partitioning by key group: the support functions of the hash
 *	  operator classes forst.key_group_<type>_ops, and the partition bound
 *	  that holds a range of key groups.
 *
 * A table spread over several servers is, on the server that routes to
 * them, a table partitioned BY HASH on its first key column with one of
 * these operator classes, whose partitions are postgres_fdw foreign tables.
 * PostgreSQL then routes rows, prunes partitions for a key and pushes work
 * down to the servers by itself; all it needs is that a partition holds
 * exactly the rows of a range of key groups.
 *
 * PostgreSQL places a row in the hash partition (modulus m, remainder r)
 * when rowHash % m == r, where, for a one-column key,
 *
 *		rowHash = hash_combine64(0, h) = h + 0x49a0f4dd15e5a8e3
 *
 * and h is what support function 2 returns for the key (partbounds.c).  The
 * support function returns h such that rowHash is the row's key group with
 * its 7 bits in reverse order.  With a modulus of 2^j, rowHash % 2^j is then
 * the row's top j key-group bits (reversed), so a partition (2^j, r) holds
 * one aligned range of 128 / 2^j key groups, and partitions of different
 * moduli (each a factor of the next, as PostgreSQL requires) nest as the
 * ranges do.  forst.key_group_bound() gives the (modulus, remainder) of a
 * range; a range that is not aligned to its own power-of-two size has none.
 *
 * The seed PostgreSQL passes is ignored: the key group does not depend on
 * it.  The operator classes have no support function 1 on purpose: their
 * hash has only 128 values, and PostgreSQL looks for function 1 of any hash
 * family an equality operator belongs to when it hashes for joins and
 * aggregates.  Without it, these families serve partitioning only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/lsyscache.h"
#include "utils/rangetypes.h"
#include "utils/syscache.h"

#include "am/keys/keycodec.h"
#include "am/keys/rel.h"

PG_FUNCTION_INFO_V1(forst_key_group_hash);
PG_FUNCTION_INFO_V1(forst_key_group_hash_as_int2);
PG_FUNCTION_INFO_V1(forst_key_group_hash_as_int4);
PG_FUNCTION_INFO_V1(forst_key_group_hash_as_int8);
PG_FUNCTION_INFO_V1(forst_key_group_bound);

/* The number of key groups hash partitioning by key group assumes. */
#define KG_BITS		7
#define KG_COUNT	(1 << KG_BITS)

StaticAssertDecl(KG_COUNT == FORST_MAX_KEY_GROUPS_DEFAULT,
				 "hash partitioning assumes the default number of key groups");

/* What partbounds.c's hash_combine64(0, h) adds to h. */
#define PARTITION_HASH_COMBINE_ADD	UINT64CONST(0x49a0f4dd15e5a8e3)

static uint32
reverse_bits(uint32 v, int nbits)
{
	uint32		r = 0;

	for (int i = 0; i < nbits; i++)
	{
		r = (r << 1) | (v & 1);
		v >>= 1;
	}
	return r;
}

/* Support function 2's answer for a key in key group kg. */
static Datum
partition_hash_of(uint16 kg)
{
	uint64		row_hash = reverse_bits(kg, KG_BITS);

	return UInt64GetDatum(row_hash - PARTITION_HASH_COMBINE_ADD);
}

/*
 * The declared type of the first argument of the SQL function being called,
 * cached in fn_extra: one C function serves the support functions of every
 * key type.
 */
static Oid
declared_arg_type(FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;

	if (flinfo->fn_extra == NULL)
	{
		HeapTuple	tup;
		Oid		   *typid;

		tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(flinfo->fn_oid));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for function %u", flinfo->fn_oid);
		typid = MemoryContextAlloc(flinfo->fn_mcxt, sizeof(Oid));
		*typid = ((Form_pg_proc) GETSTRUCT(tup))->proargtypes.values[0];
		ReleaseSysCache(tup);
		flinfo->fn_extra = typid;
	}
	return *(Oid *) flinfo->fn_extra;
}

/*
 * Refuse a collation under which strings that differ in their bytes can be
 * equal: they would have different key groups.
 */
static void
check_collation(Oid collid)
{
	if (OidIsValid(collid) && !get_collation_isdeterministic(collid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("forst: cannot partition by key group under nondeterministic collation \"%s\"",
						get_collation_name(collid)),
				 errhint("Partition on a column with a deterministic collation, as forst keys have.")));
}

static Datum
hash_value_as(Oid typid, Datum value)
{
	StringInfoData buf;
	uint16		kg;

	initStringInfo(&buf);
	forst_key_encode_value(typid, value, &buf);
	kg = forst_key_group_of_bytes(buf.data, buf.len, KG_COUNT);
	pfree(buf.data);
	return partition_hash_of(kg);
}

/*
 * forst.key_group_hash(key <type>, seed bigint) -- support function 2 of
 * forst.key_group_<type>_ops: places a key by its key group.
 */
Datum
forst_key_group_hash(PG_FUNCTION_ARGS)
{
	check_collation(PG_GET_COLLATION());
	return hash_value_as(declared_arg_type(fcinfo), PG_GETARG_DATUM(0));
}

/*
 * An integer of the declared argument type as an int64.  The argument is
 * never null: support functions are strict.
 */
static int64
integer_arg(FunctionCallInfo fcinfo)
{
	switch (declared_arg_type(fcinfo))
	{
		case INT2OID:
			return PG_GETARG_INT16(0);
		case INT4OID:
			return PG_GETARG_INT32(0);
		case INT8OID:
			return PG_GETARG_INT64(0);
		default:
			elog(ERROR, "forst: key_group_hash_as_int* declared for a type that is not an integer");
			return 0;			/* keep compiler quiet */
	}
}

/*
 * The cross-type members of the integer families: a value of another
 * integer type compared with a key column of type int2, int4 or int8 is
 * placed as that column's value would be.  A value out of the column's
 * range equals no key, so any partition is right for it; it is placed in
 * key group 0's.
 */
Datum
forst_key_group_hash_as_int2(PG_FUNCTION_ARGS)
{
	int64		v = integer_arg(fcinfo);

	if (v < PG_INT16_MIN || v > PG_INT16_MAX)
		return partition_hash_of(0);
	return hash_value_as(INT2OID, Int16GetDatum((int16) v));
}

Datum
forst_key_group_hash_as_int4(PG_FUNCTION_ARGS)
{
	int64		v = integer_arg(fcinfo);

	if (v < PG_INT32_MIN || v > PG_INT32_MAX)
		return partition_hash_of(0);
	return hash_value_as(INT4OID, Int32GetDatum((int32) v));
}

Datum
forst_key_group_hash_as_int8(PG_FUNCTION_ARGS)
{
	return hash_value_as(INT8OID, Int64GetDatum(integer_arg(fcinfo)));
}

/*
 * forst.key_group_bound(key_groups int4range, OUT modulus int,
 * OUT remainder int) -- the hash partition bound that holds exactly the
 * given key groups under forst.key_group_<type>_ops.
 */
Datum
forst_key_group_bound(PG_FUNCTION_ARGS)
{
	RangeType  *range = PG_GETARG_RANGE_P(0);
	TypeCacheEntry *typcache;
	RangeBound	lower,
				upper;
	bool		empty;
	int32		lo,
				hi,
				size;
	int			bits;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	typcache = lookup_type_cache(RangeTypeGetOid(range), TYPECACHE_RANGE_INFO);
	range_deserialize(typcache, range, &lower, &upper, &empty);
	if (empty || lower.infinite || upper.infinite)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst: key_groups must be a bounded, non-empty range such as '[0,64)'")));
	/* int4range is canonical: [lo, hi) */
	lo = DatumGetInt32(lower.val);
	hi = DatumGetInt32(upper.val);
	size = hi - lo;
	if (lo < 0 || hi > KG_COUNT || (size & (size - 1)) != 0 || lo % size != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst: key groups [%d,%d) are not one hash partition", lo, hi),
				 errdetail("A hash partition by key group holds a power-of-two number of key groups out of %d, starting at a multiple of that number.",
						   KG_COUNT),
				 errhint("Split the range into such parts, e.g. [0,64), [64,96), [96,128).")));
	bits = 0;
	while ((1 << bits) < KG_COUNT / size)
		bits++;
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int32GetDatum(1 << bits);
	values[1] = Int32GetDatum((int32) reverse_bits((uint32) (lo / size), bits));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}
