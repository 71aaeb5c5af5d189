/*-------------------------------------------------------------------------
 *
 * keys/numeric_key.h
 *	  The memcomparable encoding of numeric key columns (see
 *	  keys/numeric_key.c); used by keys/keycodec.c and
 *	  keys/keycodec_decode.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_NUMERIC_KEY_H
#define FORST_NUMERIC_KEY_H

#include "lib/stringinfo.h"

/* Appends the encoding of a (non-null) numeric. */
extern void forst_key_encode_numeric(StringInfo out, Datum value);

/*
 * Decodes one numeric at *p (before end) and moves *p past it; buf is
 * scratch space.  Malformed bytes raise ERRCODE_DATA_CORRUPTED.
 */
extern Datum forst_key_decode_numeric(const char **p, const char *end,
									  StringInfo buf);

#endif							/* FORST_NUMERIC_KEY_H */
