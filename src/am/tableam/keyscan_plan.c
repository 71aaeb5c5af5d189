/*-------------------------------------------------------------------------
 *
 * keyscan_plan.c
 *	  From a forst_key scan's keys to the key ranges it reads (see
 *	  tableam/keyscan_plan.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/skey.h"
#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/expiry/expiry.h"
#include "am/tableam/keyscan_plan.h"

/*
 * The combinations of array elements an array scan may read one by one:
 * at least 65,536, or as many as its largest array has elements (that
 * array is in memory anyway).  Past that, the later key columns are left to
 * the recheck.
 */
#define FKEY_MIN_PREFIX_LIMIT	65536

void
forst_keyrange_init(ForstKeyRange *r)
{
	memset(r, 0, sizeof(*r));
	/* a key or two: start small (ON CONFLICT begins a scan per row) */
	r->lo.maxlen = r->hi.maxlen = 64;
	r->lo.data = palloc(64);
	r->hi.data = palloc(64);
	resetStringInfo(&r->lo);
	resetStringInfo(&r->hi);
	r->kg = -1;
}

void
forst_keyrange_free(ForstKeyRange *r)
{
	if (r->prefix_cxt)
		MemoryContextDelete(r->prefix_cxt);
	r->prefix_cxt = NULL;
	pfree(r->lo.data);
	pfree(r->hi.data);
}

/* What value_for_column made of a value */
typedef enum ColValue
{
	COLVAL_OK,					/* *out is the value as the column's type */
	COLVAL_OUT_OF_RANGE,		/* no value of the column's type equals it */
	COLVAL_UNSUPPORTED			/* a type this code does not convert */
} ColValue;

/*
 * Converts a value of argtype (a scan key's argument or an element of its
 * array) to the key column's type where the opfamily compares across
 * types (integers).
 */
static ColValue
value_for_column(Datum value, Oid argtype, Oid coltype, Datum *out)
{
	int64		v;

	if (argtype == coltype)
	{
		*out = value;
		return COLVAL_OK;
	}
	switch (argtype)
	{
		case INT2OID:
			v = DatumGetInt16(value);
			break;
		case INT4OID:
			v = DatumGetInt32(value);
			break;
		case INT8OID:
			v = DatumGetInt64(value);
			break;
		default:
			return COLVAL_UNSUPPORTED;
	}
	switch (coltype)
	{
		case INT2OID:
			if (v < PG_INT16_MIN || v > PG_INT16_MAX)
				return COLVAL_OUT_OF_RANGE;
			*out = Int16GetDatum((int16) v);
			return COLVAL_OK;
		case INT4OID:
			if (v < PG_INT32_MIN || v > PG_INT32_MAX)
				return COLVAL_OUT_OF_RANGE;
			*out = Int32GetDatum((int32) v);
			return COLVAL_OK;
		case INT8OID:
			*out = Int64GetDatum(v);
			return COLVAL_OK;
	}
	return COLVAL_UNSUPPORTED;
}

static inline Oid
key_argtype(ScanKey key, Oid coltype)
{
	return OidIsValid(key->sk_subtype) ? key->sk_subtype : coltype;
}

/*
 * A scalar scan key's argument as the key column's type; false when it
 * cannot be represented (the key is then left to the recheck).
 */
static bool
arg_for_column(ScanKey key, Oid coltype, Datum *out)
{
	if (key->sk_flags & SK_SEARCHARRAY)
		return false;
	return value_for_column(key->sk_argument, key_argtype(key, coltype),
							coltype, out) == COLVAL_OK;
}

/*
 * The elements of an "= ANY(array)" key as the column's type, NULLs and
 * values no column value can equal left out (they match nothing).  False
 * if the elements' type cannot be converted (the key is left to the
 * recheck).  The array is detoasted into the current memory context.
 */
static bool
array_for_column(ScanKey key, Oid coltype, Datum **vals, int *nvals)
{
	ArrayType  *arr = DatumGetArrayTypeP(key->sk_argument);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	int			i;
	int			n = 0;

	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
					  &elems, &nulls, &nelems);
	for (i = 0; i < nelems; i++)
	{
		if (nulls[i])
			continue;
		switch (value_for_column(elems[i], key_argtype(key, coltype), coltype,
								 &elems[n]))
		{
			case COLVAL_OK:
				n++;
				break;
			case COLVAL_OUT_OF_RANGE:
				break;
			case COLVAL_UNSUPPORTED:
				return false;
		}
	}
	pfree(nulls);
	*vals = elems;
	*nvals = n;
	return true;
}

static int
prefix_cmp(const void *a, const void *b)
{
	const ForstKeyPrefix *x = a;
	const ForstKeyPrefix *y = b;

	return fst_slice_cmp(fst_slice(x->data, x->len), fst_slice(y->data, y->len));
}

/*
 * The prefixes of an array scan: every combination of the first ncols
 * columns' values (vals[c], nvals[c] each), encoded, in key order, each
 * once.  In r->prefix_cxt.
 */
static void
plan_prefixes(ForstRelInfo *info, ForstKeyRange *r, int ncols,
			  Datum **vals, int *nvals, int64 total)
{
	int			idx[INDEX_MAX_KEYS];
	Datum		cur[INDEX_MAX_KEYS];
	StringInfoData b;
	MemoryContext old = MemoryContextSwitchTo(r->prefix_cxt);
	int64		n = 0;
	int			c;
	int			i;

	r->prefixes = palloc_extended(sizeof(ForstKeyPrefix) * total, MCXT_ALLOC_HUGE);
	memset(idx, 0, sizeof(idx));
	initStringInfo(&b);
	for (;;)
	{
		for (c = 0; c < ncols; c++)
			cur[c] = vals[c][idx[c]];
		resetStringInfo(&b);
		forst_key_encode_prefix(info->codec, ncols, cur, &b, &r->prefixes[n].kg);
		r->prefixes[n].data = palloc(b.len);
		memcpy(r->prefixes[n].data, b.data, b.len);
		r->prefixes[n].len = b.len;
		n++;
		/* the next combination, the last column fastest */
		for (c = ncols - 1; c >= 0; c--)
		{
			if (++idx[c] < nvals[c])
				break;
			idx[c] = 0;
		}
		if (c < 0)
			break;
		if ((n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(b.data);
	qsort(r->prefixes, n, sizeof(ForstKeyPrefix), prefix_cmp);
	r->nprefixes = 0;
	for (i = 0; i < n; i++)
	{
		if (r->nprefixes > 0 &&
			prefix_cmp(&r->prefixes[r->nprefixes - 1], &r->prefixes[i]) == 0)
			continue;
		r->prefixes[r->nprefixes++] = r->prefixes[i];
	}
	MemoryContextSwitchTo(old);
}

void
forst_keyrange_use_prefix(ForstKeyRange *r, int i)
{
	ForstKeyPrefix *p = &r->prefixes[i];

	r->curprefix = i;
	resetStringInfo(&r->lo);
	appendBinaryStringInfo(&r->lo, p->data, p->len);
	r->kg = p->kg;
	resetStringInfo(&r->hi);
	appendBinaryStringInfo(&r->hi, p->data, p->len);
	if (!forst_key_successor_prefix(&r->hi))
		resetStringInfo(&r->hi);
}

/*
 * A range over a table whose TTL column is its first key column starts at
 * the expiry cutoff: every key below it belongs to an expired row, which
 * no read returns (expiry/expiry.h), so the scan need not read through
 * what compaction has not removed yet.  A streaming job's emission of
 * closed windows ("window_start <= watermark") then reads the windows
 * still live, not every window since the last compaction.
 */
static void
skip_expired(IndexScanDesc scan, ForstRelInfo *info, ForstKeyRange *r)
{
	ForstExpiry x;
	Datum		cutoff;
	StringInfoData b;

	forst_expiry_get(scan->heapRelation, &x);
	if (!x.active || x.attnum != info->keyattrs[0])
		return;
	cutoff = Int64GetDatum(x.cutoff);	/* timestamp or timestamptz */
	initStringInfo(&b);
	forst_key_encode_prefix(info->codec, 1, &cutoff, &b, NULL);
	if (r->lo.len == 0 ||
		fst_slice_cmp(fst_slice(b.data, b.len), fst_slice(r->lo.data, r->lo.len)) > 0)
	{
		resetStringInfo(&r->lo);
		appendBinaryStringInfo(&r->lo, b.data, b.len);
		if (r->hi.len > 0 &&
			fst_slice_cmp(fst_slice(r->lo.data, r->lo.len),
						  fst_slice(r->hi.data, r->hi.len)) >= 0)
			r->empty = true;
	}
	pfree(b.data);
}

void
forst_keyrange_plan(IndexScanDesc scan, ForstRelInfo *info, ForstKeyRange *r)
{
	Datum		eq[INDEX_MAX_KEYS];
	Datum	   *vals[INDEX_MAX_KEYS];
	int			nvals[INDEX_MAX_KEYS];
	int			neq = 0;
	int			col;
	uint16		kg;
	bool		arrays = false;
	int64		total = 1;
	int64		limit = FKEY_MIN_PREFIX_LIMIT;

	resetStringInfo(&r->lo);
	resetStringInfo(&r->hi);
	r->empty = false;
	r->kg = -1;
	r->point = false;
	r->prefixes = NULL;
	r->nprefixes = r->curprefix = 0;
	if (r->prefix_cxt)
		MemoryContextReset(r->prefix_cxt);
	if (info->codec == NULL)
		return;

	for (col = 1; col <= info->nkeys; col++)
	{
		Oid			coltype = TupleDescAttr(RelationGetDescr(scan->heapRelation),
											info->keyattrs[col - 1] - 1)->atttypid;
		ScanKey		akey = NULL;
		bool		found = false;
		MemoryContext old;
		bool		ok;
		int			i;

		for (i = 0; i < scan->numberOfKeys; i++)
		{
			ScanKey		key = &scan->keyData[i];

			if (key->sk_flags & SK_ISNULL)
			{
				r->empty = true;	/* key columns are never NULL */
				return;
			}
			if (key->sk_attno != col || key->sk_strategy != BTEqualStrategyNumber)
				continue;
			if (key->sk_flags & SK_SEARCHARRAY)
			{
				if (akey == NULL)
					akey = key;
				continue;
			}
			if (arg_for_column(key, coltype, &eq[neq]))
			{
				found = true;
				break;
			}
		}
		if (found)
		{
			vals[neq] = &eq[neq];
			nvals[neq] = 1;
			neq++;
			continue;
		}
		if (akey == NULL)
			break;

		/* "= ANY(array)": the column takes each of its elements in turn */
		if (r->prefix_cxt == NULL)
			r->prefix_cxt = AllocSetContextCreate(CurrentMemoryContext,
												   "forst key array scan",
												   ALLOCSET_SMALL_SIZES);
		old = MemoryContextSwitchTo(r->prefix_cxt);
		ok = array_for_column(akey, coltype, &vals[neq], &nvals[neq]);
		MemoryContextSwitchTo(old);
		if (!ok)
			break;
		if (nvals[neq] == 0)
		{
			r->empty = true;	/* an empty array, or only NULLs */
			return;
		}
		limit = Max(limit, nvals[neq]);
		if (total * nvals[neq] > limit)
			break;
		total *= nvals[neq];
		arrays = true;
		neq++;
	}
	if (arrays)
	{
		plan_prefixes(info, r, neq, vals, nvals, total);
		r->point = (neq == info->nkeys);
		forst_keyrange_use_prefix(r, 0);
		return;
	}
	if (neq > 0)
	{
		forst_key_encode_prefix(info->codec, neq, eq, &r->lo, &kg);
		r->kg = kg;
		r->point = (neq == info->nkeys);
		appendBinaryStringInfo(&r->hi, r->lo.data, r->lo.len);
		if (!forst_key_successor_prefix(&r->hi))
			resetStringInfo(&r->hi);
	}
	else if (scan->numberOfKeys > 0)
	{
		/* bounds on the first column only; everything else is rechecked */
		Oid			coltype = TupleDescAttr(RelationGetDescr(scan->heapRelation),
											info->keyattrs[0] - 1)->atttypid;
		int			i;

		for (i = 0; i < scan->numberOfKeys; i++)
		{
			ScanKey		key = &scan->keyData[i];
			Datum		arg;
			StringInfoData b;

			if (key->sk_attno != 1 || !arg_for_column(key, coltype, &arg))
				continue;
			initStringInfo(&b);
			forst_key_encode_prefix(info->codec, 1, &arg, &b, NULL);
			switch (key->sk_strategy)
			{
				case BTGreaterEqualStrategyNumber:
				case BTGreaterStrategyNumber:
					if (key->sk_strategy == BTGreaterStrategyNumber &&
						!forst_key_successor_prefix(&b))
					{
						r->empty = true;
						return;
					}
					if (r->lo.len == 0 ||
						fst_slice_cmp(fst_slice(b.data, b.len),
									  fst_slice(r->lo.data, r->lo.len)) > 0)
					{
						resetStringInfo(&r->lo);
						appendBinaryStringInfo(&r->lo, b.data, b.len);
					}
					break;
				case BTLessStrategyNumber:
				case BTLessEqualStrategyNumber:
					if (key->sk_strategy == BTLessEqualStrategyNumber &&
						!forst_key_successor_prefix(&b))
						break;	/* no upper bound */
					if (r->hi.len == 0 ||
						fst_slice_cmp(fst_slice(b.data, b.len),
									  fst_slice(r->hi.data, r->hi.len)) < 0)
					{
						resetStringInfo(&r->hi);
						appendBinaryStringInfo(&r->hi, b.data, b.len);
					}
					break;
				default:
					break;
			}
			pfree(b.data);
		}
	}
	if (neq == 0 && !r->empty)
		skip_expired(scan, info, r);
}
