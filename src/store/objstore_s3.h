/*-------------------------------------------------------------------------
 *
 * objstore_s3.h
 *	  The s3:// object store: settings and opening.
 *
 * s3://bucket/prefix names a bucket and a key prefix; the store's key "k"
 * is the object "prefix/k" (just "k" when the prefix is empty).  Requests
 * go to an endpoint over HTTP(S) with SigV4 authentication; one libcurl
 * handle per store keeps its connection alive between requests.
 *
 * Settings come from an FstS3Config.  fst_objstore_open("s3://...") builds
 * one with fst_s3_config_defaults + fst_s3_config_from_env, then applies
 * the URL's query parameters:
 *		endpoint=http://127.0.0.1:9000		(as AWS_ENDPOINT_URL)
 *		region=eu-west-1
 *		path_style=true|false
 * Credentials are never taken from URLs (they would end up in logs).  The
 * server passes its (superuser-only) settings to fst_objstore_s3_open.
 *
 * Secrets (secret key, session token) never appear in error messages.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_OBJSTORE_S3_H
#define FST_OBJSTORE_S3_H

#include "objstore.h"

typedef struct FstS3Config
{
	/*
	 * "http[s]://host[:port]" without a path; NULL or "" means AWS,
	 * https://s3.<region>.amazonaws.com.
	 */
	const char *endpoint;
	const char *region;			/* NULL or "": "us-east-1" */

	/*
	 * Path-style ("endpoint/bucket/key") or virtual-hosted
	 * ("bucket.endpoint/key") addressing.  -1 = automatic: virtual-hosted
	 * for AWS's endpoint, path-style for any explicit endpoint (S3
	 * compatibles, local servers).
	 */
	int			path_style;

	const char *access_key;		/* NULL or "": anonymous requests */
	const char *secret_key;
	const char *session_token;	/* NULL or "": none */

	/* TLS: peers are always verified; these replace the system CAs */
	const char *ca_file;
	const char *ca_path;

	int			connect_timeout_ms; /* per attempt (default 5000) */
	int			request_timeout_ms; /* per attempt, whole request (default
									 * 60000) */
	int			low_speed_time_s;	/* abort an attempt that moves less than
									 * 1 KiB/s for this long (default 15) */
	int			max_retries;	/* retries after the first attempt (5) */
	int			parallel_gets;	/* ranged GETs in flight in one batch (16;
								 * 1 .. FST_S3_MAX_PARALLEL_GETS) */
	int			retry_base_ms;	/* first backoff cap (100) */
	int			retry_max_ms;	/* largest backoff cap (5000) */

	/* objects of at least this size use multipart upload (16 MiB) */
	uint64		multipart_threshold;
	uint64		part_size;		/* 5 MiB .. 5 GiB (default 8 MiB) */
} FstS3Config;

#define FST_S3_MAX_PARALLEL_GETS 64

/* The defaults documented above; all strings NULL. */
extern void fst_s3_config_defaults(FstS3Config *cfg);

/*
 * Fill unset (NULL) strings of cfg from AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION (or
 * AWS_DEFAULT_REGION), AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) and
 * AWS_CA_BUNDLE.  The strings point into the environment.
 */
extern void fst_s3_config_from_env(FstS3Config *cfg);

/*
 * Open an s3 store.  url is the parsed url_text; cfg's strings are copied.
 * No request is made: a missing bucket or bad credentials show up at the
 * first request.
 */
extern FstCode fst_objstore_s3_open(const FstObjUrl *url,
									const char *url_text,
									const FstS3Config *cfg,
									FstObjStore **out, FstError *err);

/*
 * Replace the settings of an open s3 store (credentials rotated, timeouts
 * changed) with those of cfg, keeping its URL, counters and interrupt
 * callback, so that objects holding the handle (SST readers) stay valid.
 * On failure the store keeps its old settings.
 */
extern FstCode fst_objstore_s3_reconfigure(FstObjStore *store,
										   const FstS3Config *cfg,
										   FstError *err);

/* What fst_objstore_open calls: environment defaults + URL parameters. */
extern FstCode fst_objstore_s3_open_url(const FstObjUrl *url,
										const char *url_text,
										FstObjStore **out, FstError *err);

#endif							/* FST_OBJSTORE_S3_H */
