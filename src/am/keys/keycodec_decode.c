/*-------------------------------------------------------------------------
 *
 * keys/keycodec_decode.c
 *	  Decoding of forst primary keys, to show them as text.
 *
 * The inverse of the encodings of keys/keycodec.c (see its header for the
 * bytes of each type; numeric's decoder is in keys/numeric_key.c).  Keys
 * are decoded only to show them (error details, views): forst_key_to_text
 * turns a full user key into "(v1, v2)" through the types' output
 * functions.  Decoding never trusts the bytes: a column that runs past the
 * end, an invalid boolean, a bad string escape or encoding, a name too
 * long, or bytes after the last column raise ERRCODE_DATA_CORRUPTED.
 * Everything is palloc'ed in CurrentMemoryContext.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"

#include "am/keys/keycodec.h"
#include "am/keys/keycodec_internal.h"
#include "am/keys/numeric_key.h"

static void key_corrupted(const char *what) pg_attribute_noreturn();

static void
key_corrupted(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("forst: malformed key: %s", what)));
}

static const char *
take(const char **p, const char *end, size_t n)
{
	const char *r = *p;

	if ((size_t) (end - r) < n)
		key_corrupted("it ends within a column");
	*p = r + n;
	return r;
}

static uint16
get_u16(const char **p, const char *end)
{
	uint16		v;

	memcpy(&v, take(p, end, sizeof(v)), sizeof(v));
	return pg_ntoh16(v);
}

static uint32
get_u32(const char **p, const char *end)
{
	uint32		v;

	memcpy(&v, take(p, end, sizeof(v)), sizeof(v));
	return pg_ntoh32(v);
}

static uint64
get_u64(const char **p, const char *end)
{
	uint64		v;

	memcpy(&v, take(p, end, sizeof(v)), sizeof(v));
	return pg_ntoh64(v);
}

/*
 * Reads an escaped string into buf (reset first).  nul_ok: whether the type
 * can hold 0x00 bytes (bytea).
 */
static void
get_escaped(const char **p, const char *end, StringInfo buf, bool nul_ok)
{
	const char *s = *p;

	resetStringInfo(buf);
	for (;;)
	{
		const char *nul = memchr(s, 0, end - s);

		if (nul == NULL || nul + 1 >= end)
			key_corrupted("unterminated string");
		appendBinaryStringInfo(buf, s, nul - s);
		if ((unsigned char) nul[1] == KEY_STR_END)
		{
			*p = nul + 2;
			return;
		}
		if ((unsigned char) nul[1] != KEY_STR_ESC_NUL || !nul_ok)
			key_corrupted("invalid escape in a string");
		appendStringInfoCharMacro(buf, '\0');
		s = nul + 2;
	}
}

static Datum
decode_column(ForstKeyColumn *col, const char **p, const char *end,
			  StringInfo buf)
{
	switch (col->kind)
	{
		case FORST_KEY_BOOL:
			{
				uint8		b = (uint8) *take(p, end, 1);

				if (b > 1)
					key_corrupted("invalid boolean");
				return BoolGetDatum(b == 1);
			}
		case FORST_KEY_INT2:
			return Int16GetDatum((int16) (get_u16(p, end) ^ UINT16_C(0x8000)));
		case FORST_KEY_INT4:
			return Int32GetDatum((int32) (get_u32(p, end) ^ UINT32_C(0x80000000)));
		case FORST_KEY_INT8:
			return Int64GetDatum((int64) (get_u64(p, end) ^
										  UINT64CONST(0x8000000000000000)));
		case FORST_KEY_OID:
			return ObjectIdGetDatum((Oid) get_u32(p, end));
		case FORST_KEY_FLOAT4:
			{
				uint32		u = get_u32(p, end);
				float4		f;

				if (u & UINT32_C(0x80000000))
					u &= ~UINT32_C(0x80000000);
				else
					u = ~u;
				memcpy(&f, &u, sizeof(f));
				return Float4GetDatum(f);
			}
		case FORST_KEY_FLOAT8:
			{
				uint64		u = get_u64(p, end);
				float8		f;

				if (u & UINT64CONST(0x8000000000000000))
					u &= ~UINT64CONST(0x8000000000000000);
				else
					u = ~u;
				memcpy(&f, &u, sizeof(f));
				return Float8GetDatum(f);
			}
		case FORST_KEY_UUID:
			{
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				memcpy(u->data, take(p, end, UUID_LEN), UUID_LEN);
				return UUIDPGetDatum(u);
			}
		case FORST_KEY_CHAR:
			return CharGetDatum(*take(p, end, 1));
		case FORST_KEY_NAME:
			{
				Name		n;

				get_escaped(p, end, buf, false);
				if (buf->len >= NAMEDATALEN)
					key_corrupted("name too long");
				if (!pg_verifymbstr(buf->data, buf->len, true))
					key_corrupted("invalid encoding in a string");
				n = palloc0(NAMEDATALEN);
				memcpy(NameStr(*n), buf->data, buf->len);
				return NameGetDatum(n);
			}
		case FORST_KEY_TEXT:
		case FORST_KEY_BPCHAR:
			get_escaped(p, end, buf, false);
			if (!pg_verifymbstr(buf->data, buf->len, true))
				key_corrupted("invalid encoding in a string");
			return PointerGetDatum(cstring_to_text_with_len(buf->data, buf->len));
		case FORST_KEY_BYTEA:
			{
				bytea	   *b;

				get_escaped(p, end, buf, true);
				b = palloc(VARHDRSZ + buf->len);
				SET_VARSIZE(b, VARHDRSZ + buf->len);
				memcpy(VARDATA(b), buf->data, buf->len);
				return PointerGetDatum(b);
			}
		case FORST_KEY_NUMERIC:
			return forst_key_decode_numeric(p, end, buf);
	}
	elog(ERROR, "forst: unknown key kind %d", (int) col->kind);
	return (Datum) 0;			/* keep compiler quiet */
}

/*
 * Decodes a full key (user key, without key group) into keyvals[0..nkeys),
 * palloc'ed in CurrentMemoryContext.  Malformed keys raise
 * ERRCODE_DATA_CORRUPTED.
 */
static void
forst_key_decode(ForstKeyCodec *codec, const char *key, size_t len,
				 Datum *keyvals)
{
	const char *p = key;
	const char *end = key + len;
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < codec->nkeys; i++)
		keyvals[i] = decode_column(&codec->cols[i], &p, end, &buf);
	if (p != end)
		key_corrupted("bytes after the last column");
	pfree(buf.data);
}

/*
 * A full key as text, "(v1, v2)", with the types' output functions: for
 * error details ("Key (k)=(42) already exists.") and views.
 */
char *
forst_key_to_text(ForstKeyCodec *codec, const char *key, size_t len)
{
	Datum	   *vals = palloc(codec->nkeys * sizeof(Datum));
	StringInfoData s;

	forst_key_decode(codec, key, len, vals);
	initStringInfo(&s);
	appendStringInfoChar(&s, '(');
	for (int i = 0; i < codec->nkeys; i++)
	{
		ForstKeyColumn *col = &codec->cols[i];

		if (!OidIsValid(col->typoutput))
		{
			bool		isvarlena;

			getTypeOutputInfo(col->basetypid, &col->typoutput, &isvarlena);
		}
		if (i > 0)
			appendStringInfoString(&s, ", ");
		appendStringInfoString(&s, OidOutputFunctionCall(col->typoutput, vals[i]));
	}
	appendStringInfoChar(&s, ')');
	pfree(vals);
	return s.data;
}
