/*-------------------------------------------------------------------------
 *
 * s3_internal.h
 *	  Internals of the s3:// object store, shared by its three parts:
 *		s3_http.c		one signed HTTP request with retries, timeouts,
 *						interrupts and the mapping of failures to FstCodes
 *		s3_xml.c		libxml2 parsing of S3's XML replies
 *		objstore_s3.c	the FstObjStoreOps vtable built on the two
 *
 * Not for callers outside src/store (and the unit tests).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_S3_INTERNAL_H
#define FST_S3_INTERNAL_H

#include "objstore_s3.h"
#include "sigv4.h"

#define S3_ERRBODY_MAX	(64 * 1024) /* error bodies kept, bytes */
#define S3_DELETE_MAX	1000	/* keys per DeleteObjects request */
#define S3_WRITER_META	"x-amz-meta-forst-writer"
#define WRITER_ID_BYTES 16		/* random bytes of a writer id */
#define MD5_B64_LEN		25		/* Content-MD5 value, with NUL */
#define MD5_HEX_LEN		33		/* hex MD5 (single-part ETag), with NUL */

typedef struct S3Store
{
	FstObjStore base;
	char	   *bucket;
	char	   *prefix;			/* "" or "dir/" prepended to every key */
	char	   *base_url;		/* "https://host[:port]" (with bucket. when
								 * virtual-hosted) */
	char	   *host;			/* Host header, as signed */
	char	   *path_base;		/* "/bucket" (path-style) or "" */
	char	   *endpoint;		/* for messages: the endpoint as given */
	char	   *region;
	char	   *access_key;		/* NULL: anonymous, unsigned requests */
	char	   *secret_key;
	char	   *session_token;
	char	   *ca_file;
	char	   *ca_path;
	int			connect_timeout_ms;
	int			request_timeout_ms;
	int			low_speed_time_s;
	int			max_retries;
	int			parallel_gets;	/* ranged GETs in flight in get_ranges */
	int			retry_base_ms;
	int			retry_max_ms;
	uint64		multipart_threshold;
	uint64		part_size;
	void	   *curl;			/* CURL *, reused: keeps connections alive */
	void	   *multi;			/* CURLM * of get_ranges (s3_multi.c), and */
	void	   *easies[FST_S3_MAX_PARALLEL_GETS];	/* its easy handles, created
													 * lazily, parallel_gets of
													 * them */
	uint64		rng;			/* backoff jitter */
} S3Store;

/* One logical request; s3_request() may send it several times. */
typedef struct S3Request
{
	const char *method;			/* GET, PUT, HEAD, POST, DELETE */
	const char *key;			/* full object key (with the store prefix);
								 * NULL addresses the bucket */
	const FstSigV4Pair *query;	/* raw names and values */
	int			nquery;
	const FstSigV4Pair *headers;	/* extra headers, all signed */
	int			nheaders;
	const char *body;			/* PUT/POST body */
	size_t		body_len;
	const FstPutSource *body_src;	/* a PUT body read in pieces instead
									 * (body_len its length; body NULL) */
	const char *body_sha256;	/* hex; NULL: computed here */

	/* where the body of a 2xx reply goes (neither: discarded) */
	FstBuf	   *out;			/* replaced by each attempt */
	char	   *out_buf;		/* fixed buffer of out_cap bytes */
	size_t		out_cap;
	uint64		range_offset;	/* with out_buf: the offset asked for, to
								 * slice a 200 reply to a ranged GET */
	const char *what;			/* names the request in messages */
} S3Request;

typedef struct S3Response
{
	long		status;			/* HTTP status of the last attempt */
	int			attempts;		/* attempts made (1 = no retry) */
	int64		content_length; /* -1 if absent */
	size_t		received;		/* body bytes delivered to out/out_buf */
	int64		last_modified;	/* seconds since epoch, -1 if absent */
	int64		range_start;	/* Content-Range first byte, -1 if absent */
	int64		range_total;	/* Content-Range total size, -1 if absent */
	char		etag[80];		/* without quotes; "" if absent */
	char		writer[80];		/* x-amz-meta-forst-writer, "" if absent */
	char		code[64];		/* S3 error Code, "" if none */
	char		message[160];	/* S3 error Message, "" if none */
	FstBuf		errbody;		/* body of a non-2xx reply (bounded) */
} S3Response;

/* ---- objstore_s3.c, s3_config.c, s3_multipart.c ------------------------ */

extern const FstObjStoreOps s3_store_ops;
extern void s3_store_close(FstObjStore *store);

/* "<prefix><key>", malloc'ed (NULL when out of memory) */
extern char *s3_full_key(S3Store *s, const char *key);

/* "s3 <op> "<key>"" for messages, a long key shortened */
extern void s3_describe(char *dst, size_t size, const char *op,
						const char *key);

/*
 * A create-if-absent found the object existing after a retry: FST_OK if
 * it carries writer_id (an earlier attempt of ours created it), else
 * FST_ALREADY_EXISTS.
 */
extern FstCode s3_resolve_lost_reply(S3Store *s, const char *full,
									 const char *key, const char *writer_id,
									 FstError *err);

/* Upload data as object full in parts (aborting the upload on failure). */
extern FstCode s3_put_multipart(S3Store *s, const char *key,
								const char *full, const char *data,
								size_t len, FstError *err);

/* A ranged GET of bytes [offset, offset + len) of full into buf. */
typedef struct S3RangeGet
{
	S3Request	req;
	FstSigV4Pair header;
	char		range[64];
	char		what[128];
} S3RangeGet;

/* Fills g (which must not move afterwards: req points into it). */
extern void s3_range_get_init(S3RangeGet *g, const char *full, const char *key,
							  uint64 offset, size_t len, char *buf);

/* ---- s3_multi.c -------------------------------------------------------- */

/* get_ranges: up to parallel_gets ranged GETs at once over curl multi. */
extern FstCode s3_get_ranges(FstObjStore *store, FstObjRange *ranges, int n,
							 FstError *err);
extern FstCode s3_get_range(FstObjStore *store, const char *key, uint64 offset,
							size_t len, char *buf, size_t *got, FstError *err);
/* frees the multi handle and its easy handles */
extern void s3_multi_close(S3Store *s);

/* ---- s3_http.c --------------------------------------------------------- */

/*
 * Send req until it gets a reply that is not worth retrying, at most
 * 1 + max_retries times, with backoff (exponential, full jitter) between
 * attempts.  Retried: connection failures and resets, timeouts, 5xx, 429,
 * SlowDown and the like, and 2xx GET bodies shorter than Content-Length.
 *
 * FST_OK means a reply arrived: resp->status tells which (the caller maps
 * non-2xx statuses, usually with s3_status_error).  Otherwise the request
 * failed: FST_INTERRUPTED, FST_TRANSIENT (retries exhausted on a retriable
 * failure), FST_IO_ERROR (host unknown, connection refused, TLS), or
 * FST_CORRUPT (a reply larger than the buffer).  resp must be freed with
 * s3_response_free in every case.
 */
extern FstCode s3_request(S3Store *s, const S3Request *req, S3Response *resp,
						  FstError *err);
extern void s3_response_free(S3Response *resp);

/*
 * One attempt of a request on a given easy handle, for callers that drive
 * several at once (s3_multi.c): s3_attempt_start signs and configures it
 * (NULL on failure, with err set), the caller runs the handle (curl multi),
 * and s3_attempt_finish takes the handle's CURLcode, judges the reply as
 * s3_request does for each attempt, and frees the attempt.  The caller
 * initializes resp (zeroed, errbody initialized) and frees it.
 */
typedef struct S3Attempt S3Attempt;

typedef enum AttemptResult
{
	ATTEMPT_DONE,				/* a reply the caller handles */
	ATTEMPT_RETRY,				/* retriable failure, message in err */
	ATTEMPT_FAIL				/* final failure, code in err */
} AttemptResult;

extern S3Attempt *s3_attempt_start(S3Store *s, void *curl,
								   const S3Request *req, S3Response *resp,
								   FstError *err);
extern AttemptResult s3_attempt_finish(S3Attempt *a, int curl_code,
									   FstError *err);
extern void s3_attempt_free(S3Attempt *a);

/* Map a non-2xx reply to an FstCode and a message (no secrets). */
extern FstCode s3_status_error(S3Store *s, const S3Request *req,
							   const S3Response *resp, FstError *err);

/* Backoff sleep before retry number "attempt" (0-based); interruptible. */
extern FstCode s3_backoff(S3Store *s, int attempt, FstError *err);

/* s3_retry.c: does an S3 error code (with its HTTP status) say "try again"? */
extern bool s3_retriable_status(long status, const char *code);

/* Is the store's interrupt callback asking to stop? */
extern bool s3_interrupted(S3Store *s);

/* nbytes random bytes as hex into out[2 * nbytes + 1]. */
extern void s3_random_hex(char *out, int nbytes);

/* ---- s3_xml.c ---------------------------------------------------------- */

typedef struct S3ListPage
{
	FstObjEntry *entries;		/* full keys (with the store prefix) */
	int			nentries;
	bool		truncated;
	char	   *next_token;		/* NextContinuationToken or NULL */
} S3ListPage;

typedef struct S3DeleteError
{
	char	   *key;
	char		code[64];
	char		message[160];
} S3DeleteError;

/*
 * Every parser returns FST_CORRUPT (with a message) for malformed XML or
 * an unexpected document, FST_NO_MEMORY when out of memory.
 */

/* <Error><Code/><Message/></Error>: FST_OK when such a document parsed. */
extern FstCode s3_xml_error(const char *body, size_t len, char *code,
							size_t codesz, char *message, size_t msgsz,
							FstError *err);

/* ListObjectsV2's <ListBucketResult>; free with s3_list_page_free. */
extern FstCode s3_xml_list(const char *body, size_t len, S3ListPage *page,
						   FstError *err);
extern void s3_list_page_free(S3ListPage *page);

/* DeleteObjects' <DeleteResult>: its <Error> entries (malloc'ed array). */
extern FstCode s3_xml_delete_result(const char *body, size_t len,
									S3DeleteError **errors, int *nerrors,
									FstError *err);
extern void s3_delete_errors_free(S3DeleteError *errors, int nerrors);

/* <InitiateMultipartUploadResult>'s UploadId (malloc'ed). */
extern FstCode s3_xml_upload_id(const char *body, size_t len,
								char **upload_id, FstError *err);

/*
 * The reply to CompleteMultipartUpload, which can be an <Error> despite
 * HTTP 200: FST_OK for <CompleteMultipartUploadResult>; for <Error>,
 * FST_OK too with code/message filled in (code[0] != '\0').
 */
extern FstCode s3_xml_complete(const char *body, size_t len, char *code,
							   size_t codesz, char *message, size_t msgsz,
							   FstError *err);

/* Append s to out with XML's five special characters escaped. */
extern void s3_xml_escape(FstBuf *out, const char *s);

#endif							/* FST_S3_INTERNAL_H */
