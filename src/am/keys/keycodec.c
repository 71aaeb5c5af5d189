/*-------------------------------------------------------------------------
 *
 * keys/keycodec.c
 *	  Memcomparable encoding of forst primary keys, and key groups.
 *
 * Encodings, per (base) type of a key column.  All are order-preserving
 * under memcmp and prefix-free, so columns concatenate:
 *
 *	bool			1 byte: 0x00 false, 0x01 true
 *	int2			2 bytes big-endian, sign bit flipped
 *	int4, date		4 bytes big-endian, sign bit flipped
 *	int8, time, timestamp, timestamptz
 *					8 bytes big-endian, sign bit flipped (the infinities of
 *					date and the timestamps are the extreme integers, so
 *					they sort first and last by themselves)
 *	oid				4 bytes big-endian (unsigned)
 *	float4, float8	IEEE bits, big-endian: a value with the sign bit clear
 *					gets it set, a negative value has all bits inverted.
 *					-0 is encoded as +0 (they are equal in PostgreSQL), and
 *					every NaN as the canonical quiet NaN 0x7fc00000 /
 *					0x7ff8000000000000, which then sorts above +Infinity,
 *					as PostgreSQL orders NaN
 *	uuid			the 16 bytes as they are (uuid compares with memcmp)
 *	"char"			1 byte (it compares as an unsigned byte)
 *	text, varchar, name, bytea, bpchar
 *					the bytes with every 0x00 written as 0x00 0xFF, then the
 *					terminator 0x00 0x01.  A string sorts before every
 *					longer string it is a prefix of, since the terminator
 *					is smaller than any byte that can follow (0x00 0x01 <
 *					0x00 0xFF, and 0x00 < any other byte).  This is the
 *					"C" collation order (memcmp, then length).  bpchar
 *					first loses its trailing spaces, which PostgreSQL
 *					ignores when comparing.
 *
 * The key group of a key is
 *
 *		hash_bytes_extended(encoding of the first key column, seed 0)
 *			% max_key_groups
 *
 * over the first column's encoding as above (terminator included).  Hashing
 * the encoding rather than the value makes it independent of how types hash
 * and equal for equal values (-0.0 and 0.0).  It is part of the on-disk
 * format and of how tables are split between servers: it must never change.
 * (PostgreSQL's hash_bytes_extended reads words in native byte order, so the
 * key groups assume a little-endian machine, as every supported platform
 * of forst is.)
 *
 * Decoding, only to show keys (error details, views), moved to
 * keys/keycodec_decode.c; numeric's encoding is in keys/numeric_key.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/uuid.h"

#include "am/keys/keycodec.h"
#include "am/keys/keycodec_internal.h"
#include "am/keys/numeric_key.h"

#define KEY_TYPES_HINT \
	"forst keys can have types boolean, smallint, integer, bigint, numeric, " \
	"oid, real, double precision, date, time, timestamp, timestamptz, " \
	"uuid, text, varchar, char(n), name, bytea and \"char\", or domains " \
	"over them."


/* ------------------------------------------------------------------------
 * Encoders
 * ------------------------------------------------------------------------
 */

static inline void
put_u16(StringInfo out, uint16 v)
{
	v = pg_hton16(v);
	appendBinaryStringInfo(out, (char *) &v, sizeof(v));
}

static inline void
put_u32(StringInfo out, uint32 v)
{
	v = pg_hton32(v);
	appendBinaryStringInfo(out, (char *) &v, sizeof(v));
}

static inline void
put_u64(StringInfo out, uint64 v)
{
	v = pg_hton64(v);
	appendBinaryStringInfo(out, (char *) &v, sizeof(v));
}

static void
enc_bool(StringInfo out, Datum value)
{
	appendStringInfoCharMacro(out, DatumGetBool(value) ? 1 : 0);
}

static void
enc_int2(StringInfo out, Datum value)
{
	put_u16(out, ((uint16) DatumGetInt16(value)) ^ UINT16_C(0x8000));
}

static void
enc_int4(StringInfo out, Datum value)
{
	put_u32(out, ((uint32) DatumGetInt32(value)) ^ UINT32_C(0x80000000));
}

static void
enc_int8(StringInfo out, Datum value)
{
	put_u64(out, ((uint64) DatumGetInt64(value)) ^ UINT64CONST(0x8000000000000000));
}

static void
enc_oid(StringInfo out, Datum value)
{
	put_u32(out, (uint32) DatumGetObjectId(value));
}

static void
enc_float4(StringInfo out, Datum value)
{
	float4		f = DatumGetFloat4(value);
	uint32		u;

	if (isnan(f))
		u = UINT32_C(0x7fc00000);
	else
	{
		if (f == 0)
			f = 0;				/* -0 becomes +0 */
		memcpy(&u, &f, sizeof(u));
	}
	if (u & UINT32_C(0x80000000))
		u = ~u;
	else
		u |= UINT32_C(0x80000000);
	put_u32(out, u);
}

static void
enc_float8(StringInfo out, Datum value)
{
	float8		f = DatumGetFloat8(value);
	uint64		u;

	if (isnan(f))
		u = UINT64CONST(0x7ff8000000000000);
	else
	{
		if (f == 0)
			f = 0;				/* -0 becomes +0 */
		memcpy(&u, &f, sizeof(u));
	}
	if (u & UINT64CONST(0x8000000000000000))
		u = ~u;
	else
		u |= UINT64CONST(0x8000000000000000);
	put_u64(out, u);
}

static void
enc_uuid(StringInfo out, Datum value)
{
	pg_uuid_t  *u = DatumGetUUIDP(value);

	appendBinaryStringInfo(out, (char *) u->data, UUID_LEN);
}

static void
enc_char(StringInfo out, Datum value)
{
	appendStringInfoCharMacro(out, DatumGetChar(value));
}

/* Appends bytes with 0x00 escaped, then the terminator. */
static void
put_escaped(StringInfo out, const char *p, size_t len)
{
	const char *end = p + len;

	while (p < end)
	{
		const char *nul = memchr(p, 0, end - p);

		if (nul == NULL)
		{
			appendBinaryStringInfo(out, p, end - p);
			break;
		}
		appendBinaryStringInfo(out, p, nul - p);
		appendStringInfoCharMacro(out, (char) KEY_STR_ESC);
		appendStringInfoCharMacro(out, (char) KEY_STR_ESC_NUL);
		p = nul + 1;
	}
	appendStringInfoCharMacro(out, (char) KEY_STR_ESC);
	appendStringInfoCharMacro(out, (char) KEY_STR_END);
}

/* text, varchar, bytea */
static void
enc_varlena(StringInfo out, Datum value)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(value);

	put_escaped(out, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
	if ((Pointer) v != DatumGetPointer(value))
		pfree(v);
}

static void
enc_bpchar(StringInfo out, Datum value)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
	const char *p = VARDATA_ANY(v);
	size_t		len = VARSIZE_ANY_EXHDR(v);

	while (len > 0 && p[len - 1] == ' ')
		len--;
	put_escaped(out, p, len);
	if ((Pointer) v != DatumGetPointer(value))
		pfree(v);
}

static void
enc_name(StringInfo out, Datum value)
{
	const char *s = NameStr(*DatumGetName(value));

	put_escaped(out, s, strnlen(s, NAMEDATALEN));
}

/* ------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------
 */

/*
 * The encoding of a base type: false if forst cannot use it in a key.
 */
static bool
key_kind_of(Oid basetypid, ForstKeyKind *kind, ForstKeyEncodeFn *encode)
{
	ForstKeyKind k;
	ForstKeyEncodeFn e;

	switch (basetypid)
	{
		case BOOLOID:
			k = FORST_KEY_BOOL;
			e = enc_bool;
			break;
		case INT2OID:
			k = FORST_KEY_INT2;
			e = enc_int2;
			break;
		case INT4OID:
		case DATEOID:
			k = FORST_KEY_INT4;
			e = enc_int4;
			break;
		case INT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			k = FORST_KEY_INT8;
			e = enc_int8;
			break;
		case OIDOID:
			k = FORST_KEY_OID;
			e = enc_oid;
			break;
		case FLOAT4OID:
			k = FORST_KEY_FLOAT4;
			e = enc_float4;
			break;
		case FLOAT8OID:
			k = FORST_KEY_FLOAT8;
			e = enc_float8;
			break;
		case UUIDOID:
			k = FORST_KEY_UUID;
			e = enc_uuid;
			break;
		case CHAROID:
			k = FORST_KEY_CHAR;
			e = enc_char;
			break;
		case NAMEOID:
			k = FORST_KEY_NAME;
			e = enc_name;
			break;
		case TEXTOID:
		case VARCHAROID:
			k = FORST_KEY_TEXT;
			e = enc_varlena;
			break;
		case BPCHAROID:
			k = FORST_KEY_BPCHAR;
			e = enc_bpchar;
			break;
		case BYTEAOID:
			k = FORST_KEY_BYTEA;
			e = enc_varlena;
			break;
		case NUMERICOID:
			k = FORST_KEY_NUMERIC;
			e = forst_key_encode_numeric;
			break;
		default:
			return false;
	}
	if (kind)
		*kind = k;
	if (encode)
		*encode = e;
	return true;
}

/*
 * Whether forst can use a column of type typid (or a domain over it) in a
 * key.
 */
bool
forst_key_type_supported(Oid typid)
{
	return key_kind_of(getBaseType(typid), NULL, NULL);
}

/* The hint for an unsupported key type. */
static int
errhint_key_type(Oid basetypid)
{
	return errhint(KEY_TYPES_HINT);
}

/* Whether a collation orders strings as memcmp does, on every server. */
bool
forst_collation_is_bytewise(Oid collid)
{
	if (collid == C_COLLATION_OID || collid == POSIX_COLLATION_OID)
		return true;
	/* the database default depends on the database: not good enough */
	if (collid == DEFAULT_COLLATION_OID || !OidIsValid(collid))
		return false;
	return lc_collate_is_c(collid);
}

/*
 * Refuses key columns that forst cannot encode: unsupported types,
 * collations other than "C" / "POSIX", expressions, system columns.
 */
void
forst_check_key_columns(TupleDesc tupdesc, int nkeys, const AttrNumber *attnums)
{
	if (nkeys < 1 || nkeys > INDEX_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("forst: a key must have between 1 and %d columns, not %d",
						INDEX_MAX_KEYS, nkeys)));

	for (int i = 0; i < nkeys; i++)
	{
		AttrNumber	attnum = attnums[i];
		Form_pg_attribute att;
		Oid			basetypid;

		if (attnum <= 0 || attnum > tupdesc->natts)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst: a primary key can only consist of plain table columns"),
					 errdetail("Key column %d is an expression or a system column.", i + 1)));
		att = TupleDescAttr(tupdesc, attnum - 1);
		if (att->attisdropped)
			elog(ERROR, "forst: key column %d is a dropped column", attnum);

		basetypid = getBaseType(att->atttypid);
		if (!key_kind_of(basetypid, NULL, NULL))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst: primary key column \"%s\" has type %s, which forst cannot use as a key",
							NameStr(att->attname),
							format_type_be(att->atttypid)),
					 errhint_key_type(basetypid)));

		if (OidIsValid(att->attcollation) &&
			!forst_collation_is_bytewise(att->attcollation))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst: primary key column \"%s\" has collation \"%s\", which forst cannot use in a key",
							NameStr(att->attname),
							get_collation_name(att->attcollation)),
					 errdetail("Key columns of collatable types must use collation \"C\" or \"POSIX\"."),
					 errhint("Declare the column COLLATE \"C\"; forst keys compare bytes.")));
	}
}

void
forst_check_max_key_groups(int max_key_groups)
{
	if (max_key_groups < FORST_MIN_KEY_GROUPS ||
		max_key_groups > FORST_MAX_KEY_GROUPS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst: max_key_groups must be between %d and %d, not %d",
						FORST_MIN_KEY_GROUPS, FORST_MAX_KEY_GROUPS,
						max_key_groups)));
}

/* ------------------------------------------------------------------------
 * Codec
 * ------------------------------------------------------------------------
 */

/*
 * Builds the key codec of a relation whose key columns are attnums[0..nkeys)
 * of tupdesc, in CurrentMemoryContext.  Refuses keys forst cannot encode.
 */
ForstKeyCodec *
forst_keycodec_create(TupleDesc tupdesc, int nkeys, const AttrNumber *attnums,
					  uint16 max_key_groups)
{
	ForstKeyCodec *codec;

	forst_check_key_columns(tupdesc, nkeys, attnums);
	forst_check_max_key_groups(max_key_groups);

	codec = palloc0(offsetof(ForstKeyCodec, cols) +
					nkeys * sizeof(ForstKeyColumn));
	codec->nkeys = nkeys;
	codec->max_key_groups = max_key_groups;
	for (int i = 0; i < nkeys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, attnums[i] - 1);
		ForstKeyColumn *col = &codec->cols[i];
		bool		found PG_USED_FOR_ASSERTS_ONLY;

		col->attnum = attnums[i];
		namestrcpy(&col->attname, NameStr(att->attname));
		col->typid = att->atttypid;
		col->basetypid = getBaseType(att->atttypid);
		col->typlen = att->attlen;
		col->typbyval = att->attbyval;
		found = key_kind_of(col->basetypid, &col->kind, &col->encode);
		Assert(found);
		col->typoutput = InvalidOid;	/* looked up when first needed */
	}
	return codec;
}

/*
 * The key group of a key whose first column encodes as the given bytes.
 * Part of the on-disk format: never to change (see the file header).
 */
uint16
forst_key_group_of_bytes(const char *encoded_first_col, size_t len,
						 uint16 max_key_groups)
{
	uint64		h;

	Assert(max_key_groups >= FORST_MIN_KEY_GROUPS &&
		   max_key_groups <= FORST_MAX_KEY_GROUPS);
	if (len > (size_t) PG_INT32_MAX)
		elog(ERROR, "forst: key column of %zu bytes is too long", len);
	h = hash_bytes_extended((const unsigned char *) encoded_first_col,
							(int) len, 0);
	return (uint16) (h % max_key_groups);
}

void
forst_key_encode_row(ForstKeyCodec *codec, Datum *values, bool *isnull,
					 StringInfo out, uint16 *key_group)
{
	int			start = out->len;

	for (int i = 0; i < codec->nkeys; i++)
	{
		ForstKeyColumn *col = &codec->cols[i];
		int			a = col->attnum - 1;

		if (isnull[a])
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("forst: primary key column \"%s\" cannot be null",
							NameStr(col->attname)),
					 errdetail("A forst table is keyed by its primary key, whose columns are NOT NULL.")));
		col->encode(out, values[a]);
		if (i == 0 && key_group)
			*key_group = forst_key_group_of_bytes(out->data + start,
												  out->len - start,
												  codec->max_key_groups);
	}
}

void
forst_key_encode_prefix(ForstKeyCodec *codec, int ncols, Datum *keyvals,
						StringInfo out, uint16 *key_group)
{
	int			start = out->len;

	Assert(ncols >= 0 && ncols <= codec->nkeys);
	for (int i = 0; i < ncols; i++)
	{
		codec->cols[i].encode(out, keyvals[i]);
		if (i == 0 && key_group)
			*key_group = forst_key_group_of_bytes(out->data + start,
												  out->len - start,
												  codec->max_key_groups);
	}
}

/*
 * Appends the encoding of one value of type typid (or a domain over it), as
 * it would be encoded in a key column of that type.
 */
void
forst_key_encode_value(Oid typid, Datum value, StringInfo out)
{
	Oid			basetypid = getBaseType(typid);
	ForstKeyEncodeFn encode;

	if (!key_kind_of(basetypid, NULL, &encode))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("forst: type %s cannot be used in a forst key",
						format_type_be(typid)),
				 errhint_key_type(basetypid)));
	encode(out, value);
}

/* The encoder of values of type typid, or NULL if forst cannot encode it. */
ForstKeyEncodeFn
forst_key_encoder(Oid typid)
{
	ForstKeyEncodeFn encode;

	if (!key_kind_of(getBaseType(typid), NULL, &encode))
		return NULL;
	return encode;
}

/*
 * Turns key into the smallest byte string greater than every string that
 * has key as a prefix: increments its last byte that is not 0xFF and cuts
 * off what follows.  Returns false (key unchanged) if there is none, when
 * key is empty or all 0xFF: then no upper bound exists.
 */
bool
forst_key_successor_prefix(StringInfo key)
{
	for (int i = key->len - 1; i >= 0; i--)
	{
		unsigned char c = (unsigned char) key->data[i];

		if (c != 0xFF)
		{
			key->data[i] = (char) (c + 1);
			key->len = i + 1;
			key->data[key->len] = '\0';
			return true;
		}
	}
	return false;
}
