/*-------------------------------------------------------------------------
 *
 * keys/numeric_key.c
 *	  The memcomparable encoding of numeric key columns (keys/keycodec.c
 *	  has the other types).
 *
 * A class byte: 0x01 -Infinity, 0x02 negative, 0x03 zero, 0x04 positive,
 * 0x05 +Infinity, 0x06 NaN (PostgreSQL orders NaN above +Infinity).  A
 * finite nonzero value is 0.d1d2...dn x 10^e with d1 != 0 and dn != 0 (no
 * leading or trailing zeros, so 1.0 and 1.00 encode alike, as they are
 * equal): then e as 4 bytes big-endian with the sign bit flipped, each
 * digit as the byte d + 1, and the terminator 0x00, which sorts a mantissa
 * before every longer one it is a prefix of.  A negative value has every
 * byte after the class inverted, so that a larger magnitude sorts first.
 * Like every key encoding, it is on-disk format: it must never change.
 *
 * The digits come from numeric's text form (its digit array is private to
 * numeric.c), and go back through numeric_in when a key is shown.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bswap.h"
#include "utils/builtins.h"

#include "am/keys/numeric_key.h"

/* numeric encoding: class bytes, and the mantissa's terminator */
#define KEY_NUM_NEG_INF		0x01
#define KEY_NUM_NEG			0x02
#define KEY_NUM_ZERO		0x03
#define KEY_NUM_POS			0x04
#define KEY_NUM_POS_INF		0x05
#define KEY_NUM_NAN			0x06
#define KEY_NUM_END			0x00

static void key_corrupted(const char *what) pg_attribute_noreturn();

static void
key_corrupted(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("forst: malformed key: %s", what)));
}

static uint8
take_byte(const char **p, const char *end)
{
	if (*p >= end)
		key_corrupted("it ends within a column");
	return (uint8) *(*p)++;
}

/*
 * numeric, from its text form (numeric's digits are not public): the sign,
 * the significant digits and the decimal exponent (see the header).
 */
void
forst_key_encode_numeric(StringInfo out, Datum value)
{
	char	   *txt = DatumGetCString(DirectFunctionCall1(numeric_out, value));
	const char *p = txt;
	bool		neg = false;
	int			point = -1;		/* digits before the decimal point */
	int			ndig = 0;
	int			lead = 0;		/* leading zeros among all digits */
	bool		seen_nonzero = false;
	int			last_nonzero = -1;
	char	   *digits;
	int			exp;
	int			i;

	if (strcmp(txt, "NaN") == 0 || strcmp(txt, "Infinity") == 0 ||
		strcmp(txt, "-Infinity") == 0)
	{
		appendStringInfoCharMacro(out, txt[0] == 'N' ? KEY_NUM_NAN :
								  txt[0] == '-' ? KEY_NUM_NEG_INF : KEY_NUM_POS_INF);
		pfree(txt);
		return;
	}
	if (*p == '-')
	{
		neg = true;
		p++;
	}
	digits = palloc(strlen(p) + 1);
	for (; *p; p++)
	{
		if (*p == '.')
		{
			point = ndig;
			continue;
		}
		if (*p < '0' || *p > '9')
			elog(ERROR, "forst: unexpected numeric output \"%s\"", txt);
		if (*p != '0')
		{
			seen_nonzero = true;
			last_nonzero = ndig;
		}
		else if (!seen_nonzero)
			lead++;
		digits[ndig++] = *p;
	}
	if (point < 0)
		point = ndig;
	if (!seen_nonzero)
	{
		appendStringInfoCharMacro(out, KEY_NUM_ZERO);
		pfree(digits);
		pfree(txt);
		return;
	}
	/* value = 0.(digits[lead..last_nonzero]) x 10^(point - lead) */
	exp = point - lead;
	appendStringInfoCharMacro(out, neg ? KEY_NUM_NEG : KEY_NUM_POS);
	{
		uint32		e = pg_hton32((((uint32) exp) ^ UINT32_C(0x80000000)) ^
								  (neg ? UINT32_MAX : 0));

		appendBinaryStringInfo(out, (char *) &e, sizeof(e));
	}
	for (i = lead; i <= last_nonzero; i++)
	{
		uint8		b = (uint8) (digits[i] - '0' + 1);

		appendStringInfoCharMacro(out, (char) (neg ? (uint8) ~b : b));
	}
	appendStringInfoCharMacro(out, (char) (neg ? (uint8) ~KEY_NUM_END : KEY_NUM_END));
	pfree(digits);
	pfree(txt);
}

static Datum
numeric_from_cstring(const char *s)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum(s),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* numeric: back to "[-]d1.d2...dnEe-1", through numeric_in */
Datum
forst_key_decode_numeric(const char **p, const char *end, StringInfo buf)
{
	uint8		cls = take_byte(p, end);
	bool		neg = (cls == KEY_NUM_NEG);
	uint32		e;
	int			n = 0;

	switch (cls)
	{
		case KEY_NUM_NEG_INF:
			return numeric_from_cstring("-Infinity");
		case KEY_NUM_POS_INF:
			return numeric_from_cstring("Infinity");
		case KEY_NUM_NAN:
			return numeric_from_cstring("NaN");
		case KEY_NUM_ZERO:
			return numeric_from_cstring("0");
		case KEY_NUM_NEG:
		case KEY_NUM_POS:
			break;
		default:
			key_corrupted("invalid numeric class");
	}
	if (end - *p < (ptrdiff_t) sizeof(e))
		key_corrupted("it ends within a column");
	memcpy(&e, *p, sizeof(e));
	*p += sizeof(e);
	e = pg_ntoh32(e);
	if (neg)
		e = ~e;
	resetStringInfo(buf);
	if (neg)
		appendStringInfoChar(buf, '-');
	for (;;)
	{
		uint8		b = take_byte(p, end);

		if (neg)
			b = (uint8) ~b;
		if (b == KEY_NUM_END)
			break;
		if (b < 1 || b > 10)
			key_corrupted("invalid numeric digit");
		appendStringInfoChar(buf, (char) ('0' + b - 1));
		if (n++ == 0)
			appendStringInfoChar(buf, '.');
	}
	if (n == 0)
		key_corrupted("numeric without digits");
	appendStringInfo(buf, "e%d", (int) (int32) (e ^ UINT32_C(0x80000000)) - 1);
	return numeric_from_cstring(buf->data);
}
