/*-------------------------------------------------------------------------
 *
 * keys/keycodec.h
 *	  Memcomparable encoding of forst primary keys, and key groups.
 *
 * A forst table's rows live in an LSM tree ordered by memcmp of their keys,
 * so a key's encoding must sort as the key does: for any two keys, memcmp
 * of their encodings orders them as the btree default operator classes of
 * the key columns' types do ("C" collation for the text-like types), and
 * equal keys (-0.0 and 0.0, 'ab ' and 'ab' in char(n)) encode identically.
 * Each column's encoding is prefix-free, so the columns of a multi-column
 * key simply concatenate, and the encoding of the first n columns is a byte
 * prefix of the full key's encoding (what prefix and range scans use).
 *
 * The encoding produced here is the "user key" of src/lsm/ikey.h; the
 * internal key puts the 2-byte key group in front of it (computed here as
 * well) and the sequence number after it.
 *
 * Both the encodings and the key-group function are part of the on-disk
 * format: they must never change.  See keys/keycodec.c for the encoding of each
 * type.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_KEYCODEC_H
#define FORST_KEYCODEC_H

#include "access/attnum.h"
#include "access/tupdesc.h"
#include "lib/stringinfo.h"

/* Bounds of a table's max_key_groups (the key group is 2 bytes on disk). */
#define FORST_MIN_KEY_GROUPS		1
#define FORST_MAX_KEY_GROUPS		32768
#define FORST_DEFAULT_KEY_GROUPS	128

/* Kinds of key column, one per encoding (see keys/keycodec.c). */
typedef enum ForstKeyKind
{
	FORST_KEY_BOOL,
	FORST_KEY_INT2,
	FORST_KEY_INT4,				/* int4, date */
	FORST_KEY_INT8,				/* int8, time, timestamp, timestamptz */
	FORST_KEY_OID,
	FORST_KEY_FLOAT4,
	FORST_KEY_FLOAT8,
	FORST_KEY_UUID,
	FORST_KEY_CHAR,				/* "char" */
	FORST_KEY_NAME,
	FORST_KEY_TEXT,				/* text, varchar */
	FORST_KEY_BPCHAR,
	FORST_KEY_BYTEA,
	FORST_KEY_NUMERIC
} ForstKeyKind;

/* Appends the encoding of one (non-null) value of the column's type. */
typedef void (*ForstKeyEncodeFn) (StringInfo out, Datum value);

/* One key column of a ForstKeyCodec. */
typedef struct ForstKeyColumn
{
	AttrNumber	attnum;			/* in the relation, 1-based */
	NameData	attname;		/* for error messages */
	Oid			typid;			/* declared type (maybe a domain) */
	Oid			basetypid;		/* getBaseType(typid): what is encoded */
	int16		typlen;
	bool		typbyval;
	ForstKeyKind kind;
	ForstKeyEncodeFn encode;
	Oid			typoutput;		/* output function of basetypid */
} ForstKeyColumn;

/*
 * The key codec of one relation, built once (forst_keycodec_create) and
 * then used for every row.
 */
typedef struct ForstKeyCodec
{
	int			nkeys;
	uint16		max_key_groups;
	ForstKeyColumn cols[FLEXIBLE_ARRAY_MEMBER];
} ForstKeyCodec;

/* Types */
extern bool forst_key_type_supported(Oid typid);
extern void forst_check_key_columns(TupleDesc tupdesc, int nkeys,
									const AttrNumber *attnums);
extern void forst_check_max_key_groups(int max_key_groups);
extern bool forst_collation_is_bytewise(Oid collid);

/* Codec */
extern ForstKeyCodec *forst_keycodec_create(TupleDesc tupdesc, int nkeys,
											const AttrNumber *attnums,
											uint16 max_key_groups);

/*
 * Encoding.  Both append to out (the caller resets it) and set *key_group
 * unless key_group is NULL.
 *
 * forst_key_encode_row takes a full row, values and isnull indexed by
 * attnum - 1 (as a slot's tts_values); a NULL key column is an error.
 *
 * forst_key_encode_prefix takes the first ncols key columns' values in key
 * order (index scan keys), which must be of the columns' types; ncols may
 * be 0 (empty output, no key group).
 */
extern void forst_key_encode_row(ForstKeyCodec *codec, Datum *values,
								 bool *isnull, StringInfo out,
								 uint16 *key_group);
extern void forst_key_encode_prefix(ForstKeyCodec *codec, int ncols,
									Datum *keyvals, StringInfo out,
									uint16 *key_group);

/* Appends the encoding of one value of type typid (error if unsupported). */
extern void forst_key_encode_value(Oid typid, Datum value, StringInfo out);

/* The encoder of values of type typid, or NULL if unsupported. */
extern ForstKeyEncodeFn forst_key_encoder(Oid typid);

/* Key groups: see keys/keycodec.c; never to change. */
extern uint16 forst_key_group_of_bytes(const char *encoded_first_col,
									   size_t len, uint16 max_key_groups);

/* Range scans */
extern bool forst_key_successor_prefix(StringInfo key);

/* Showing keys (keys/keycodec_decode.c): a full user key as "(v1, v2)". */
extern char *forst_key_to_text(ForstKeyCodec *codec, const char *key,
							   size_t len);

#endif							/* FORST_KEYCODEC_H */
