/*-------------------------------------------------------------------------
 *
 * sigv4.h
 *	  AWS Signature Version 4 for S3 requests (header authorization), with
 *	  OpenSSL's SHA-256 and HMAC-SHA256.
 *
 * The caller builds the request from parts that this module encodes, so
 * that what is signed is byte for byte what goes on the wire:
 *	  - the path: fst_sigv4_uri_encode(key, keep_slash = true) of each
 *		object key, '/'-joined by the caller ("/bucket/key" or "/key");
 *	  - the query: fst_sigv4_query(), which %-encodes every name and value
 *		and sorts the pairs; its result is both the canonical query string
 *		and the query sent ("?lifecycle" is sent as "?lifecycle=");
 *	  - the headers: every header that is sent and signed, including
 *		"host", "x-amz-date" and "x-amz-content-sha256"; names in any case,
 *		values trimmed and inner runs of spaces collapsed when signing.
 *
 * URI encoding follows AWS's rules: every byte except the unreserved
 * characters A-Z a-z 0-9 '-' '.' '_' '~' becomes %XX (upper-case hex);
 * '/' is kept in paths and encoded in query names and values.
 *
 * Nothing here ever logs or copies the secret key into a message.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_SIGV4_H
#define FST_SIGV4_H

#include "fst_common.h"
#include "objstore.h"

#define FST_SHA256_HEX_LEN	64	/* hex digits of a SHA-256, excluding NUL */
#define FST_AMZ_DATE_LEN	16	/* "YYYYMMDDTHHMMSSZ" */

/* The SHA-256 of the empty string, the payload hash of bodiless requests. */
#define FST_SHA256_EMPTY \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* A header or a query parameter: raw (not yet encoded) name and value. */
typedef struct FstSigV4Pair
{
	const char *name;
	const char *value;
} FstSigV4Pair;

/* What is signed. */
typedef struct FstSigV4Request
{
	const char *method;			/* "GET", "PUT", ... */
	const char *path;			/* encoded absolute path, e.g. "/test.txt" */
	const char *query;			/* from fst_sigv4_query(); "" if none */
	const FstSigV4Pair *headers;	/* every signed header (with host) */
	int			nheaders;
	const char *payload_hash;	/* hex SHA-256 of the body (also sent as
								 * x-amz-content-sha256) */
} FstSigV4Request;

/* Who signs, where. */
typedef struct FstSigV4Key
{
	const char *access_key;
	const char *secret_key;
	const char *region;			/* "us-east-1" */
	const char *service;		/* "s3" */
} FstSigV4Key;

/* Lower-case hex SHA-256 of data into out[FST_SHA256_HEX_LEN + 1]. */
extern void fst_sha256_hex(const void *data, size_t len, char *out);

/* Base64 of the MD5 of data (a Content-MD5 value) into out[25]. */
extern void fst_md5_base64(const void *data, size_t len, char *out);

/* Lower-case hex MD5 of data into out[33] (an S3 single-part ETag). */
extern void fst_md5_hex(const void *data, size_t len, char *out);

/*
 * Both of the above from one MD5 pass (uploads need the header and the
 * expected ETag; hashing an 8 MB body twice cost a quarter of a PUT).
 */
extern void fst_md5_base64_hex(const void *data, size_t len, char *b64,
							   char *hex);

/*
 * The SHA-256 (hex, as x-amz-content-sha256 wants it) and the MD5 (base64
 * and hex) of a body read from src in pieces of at most chunk bytes, in
 * one pass through a buffer of that size.
 */
extern FstCode fst_body_digests(const FstPutSource *src, size_t chunk,
								char *sha256_hex, char *md5_b64,
								char *md5_hex, FstError *err);

/* "YYYYMMDDTHHMMSSZ" of t (UTC) into out[FST_AMZ_DATE_LEN + 1]. */
extern void fst_sigv4_amz_date(int64 t, char *out);

/* Append the AWS URI encoding of s[0..len) to out. */
extern void fst_sigv4_uri_encode(FstBuf *out, const char *s, size_t len,
								 bool keep_slash);

/*
 * Build the canonical (sorted, encoded) query string of params into out
 * (replacing its contents, NUL-terminated).  Returns false when out of
 * memory.
 */
extern bool fst_sigv4_query(const FstSigV4Pair *params, int nparams,
							FstBuf *out);

/*
 * The canonical request of req and its signed-header list ("host;range;
 * x-amz-date"), both NUL-terminated; either output may be NULL.
 */
extern FstCode fst_sigv4_canonical_request(const FstSigV4Request *req,
										   FstBuf *creq,
										   FstBuf *signed_headers,
										   FstError *err);

/*
 * The string to sign of a canonical request made at amz_date, in region
 * and service (NUL-terminated in out).
 */
extern FstCode fst_sigv4_string_to_sign(const char *amz_date,
										const char *region,
										const char *service,
										const char *creq, FstBuf *out,
										FstError *err);

/* The signing key: HMAC chain over date (YYYYMMDD), region, service. */
extern void fst_sigv4_signing_key(const char *secret_key, const char *date8,
								  const char *region, const char *service,
								  uint8 *key32);

/*
 * The Authorization header value of req signed by key at amz_date
 * ("AWS4-HMAC-SHA256 Credential=...,SignedHeaders=...,Signature=..."),
 * NUL-terminated in out.  The signature alone goes to signature[65] when
 * that is not NULL.
 */
extern FstCode fst_sigv4_authorization(const FstSigV4Request *req,
									   const FstSigV4Key *key,
									   const char *amz_date, FstBuf *out,
									   char *signature, FstError *err);

#endif							/* FST_SIGV4_H */
