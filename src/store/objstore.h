/*-------------------------------------------------------------------------
 *
 * objstore.h
 *	  The object-store interface of forst: the contract that every backend
 *	  (file://, s3://) implements and that the engine calls.
 *
 * An object store holds immutable-by-convention byte objects named by keys.
 * A store is opened from a URL:
 *
 *		file:///abs/dir			local directory tree (objstore_file.c)
 *		s3://bucket/prefix		S3 and compatibles (not in this build yet)
 *
 * Callers use the fst_objstore_* functions below, never the vtable
 * directly: the wrappers validate keys (so that every backend accepts
 * exactly the same key set), clear the caller's FstError, count requests,
 * bytes and errors in the store's FstObjStats, and then call the backend.
 *
 * Keys
 *	  A key is a relative, '/'-separated object name such as
 *	  "cluster/tables/<uuid>/sst/ab/000123.sst".  A valid key
 *		- is 1 .. FST_OBJ_KEY_MAX bytes long,
 *		- does not begin with '/' and has no empty component ("a//b", "a/"),
 *		- has no component longer than FST_OBJ_COMPONENT_MAX bytes,
 *		- has no component beginning with '.': this excludes "." and ".."
 *		  and reserves dot-names for backends' own files (temporary files),
 *		- contains no control characters (bytes < 0x20 and 0x7f; so no NUL).
 *	  Anything else is FST_INVALID_ARGUMENT, from every backend alike.
 *
 * Semantics (S3's, which the file backend reproduces)
 *	  put			whole-object write, atomically published: readers see the
 *					old object or the new one, never a partial object.
 *					Overwrites.
 *	  put_if_absent	like put, but FST_ALREADY_EXISTS if the key exists;
 *					atomic between processes and servers (exactly one of
 *					concurrent creators wins).
 *	  get			whole object; FST_NOT_FOUND if absent.
 *	  get_range		bytes [offset, offset + len): *got < len when the object
 *					ends first; an offset at or beyond the end gives *got = 0
 *					and FST_OK (a short read, never an error).  Callers that
 *					need exactly len bytes must check *got.
 *	  head			size and modification time.
 *	  list			keys beginning with a string prefix (not necessarily at a
 *					'/' boundary: "a/b" matches "a/bc/d"), in strictly
 *					increasing byte order (memcmp), each with its size.
 *	  delete_batch	deleting a missing key is success (S3 semantics).
 *
 * Errors (FstCode)
 *	  FST_NOT_FOUND			object absent (get, head, get_range)
 *	  FST_ALREADY_EXISTS	put_if_absent lost
 *	  FST_ACCESS_DENIED		permissions / credentials (EACCES, EPERM, 403)
 *	  FST_TRANSIENT			worth retrying (EINTR/EAGAIN, 5xx, 429, timeouts)
 *	  FST_IO_ERROR			anything else that failed; strerror in the message
 *	  FST_CORRUPT			the store returned something malformed
 *	  FST_INVALID_ARGUMENT	bad key, prefix or URL
 *	  FST_NOT_SUPPORTED		valid request this backend cannot do
 *	  FST_NO_MEMORY			malloc failed
 *	  FST_INTERRUPTED		the store's interrupt callback said stop
 *
 * Concurrency: a store handle is used by one thread at a time (PostgreSQL
 * backends are processes; each opens its own handle).  Different handles,
 * in any processes, may work on the same store concurrently.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_OBJSTORE_H
#define FST_OBJSTORE_H

#include "fst_common.h"

#define FST_OBJ_KEY_MAX			1024	/* bytes, excluding the NUL */
#define FST_OBJ_COMPONENT_MAX	200		/* bytes of one '/'-component */
#define FST_OBJ_LIST_DEFAULT	1000	/* max_keys <= 0 means this */

/* Parsed store URL: scheme://host/path?query (no percent-decoding). */
typedef struct FstObjUrl
{
	char		scheme[16];		/* lower-cased: "file", "s3" */
	char		host[256];		/* file: "" (or "localhost"); s3: bucket */
	char		path[1024];		/* file: absolute directory, no trailing
								 * '/' except for "/"; s3: prefix without
								 * leading '/' (may be "") */
	char		query[1024];	/* after '?', "" if none */
} FstObjUrl;

/* Result of head. */
typedef struct FstObjInfo
{
	uint64		size;			/* bytes */
	int64		mtime;			/* last modification, seconds since epoch */
} FstObjInfo;

/* One listed object. */
typedef struct FstObjEntry
{
	char	   *key;			/* malloc'ed, owned by the FstObjList */
	uint64		size;
} FstObjEntry;

/*
 * One page of a listing.  Pass "next" as start_after of the following call
 * while "truncated" is true.  A page may hold fewer than max_keys entries
 * (even none) and still be truncated.  Free with fst_objstore_list_free.
 */
typedef struct FstObjList
{
	FstObjEntry *entries;
	int			nentries;
	bool		truncated;		/* more keys follow */
	char	   *next;			/* continuation token (the last key), NULL
								 * unless truncated */
} FstObjList;

/* One ranged read of a batch (fst_objstore_get_ranges). */
typedef struct FstObjRange
{
	const char *key;
	uint64		offset;
	size_t		len;
	char	   *buf;			/* room for len bytes */
	size_t		got;			/* out: bytes read (short at the object's end) */
	FstCode		code;			/* out: this read's outcome */
} FstObjRange;

/* Request kinds, for the counters. */
typedef enum FstObjOp
{
	FST_OBJ_OP_PUT = 0,
	FST_OBJ_OP_PUT_IF_ABSENT,
	FST_OBJ_OP_GET,
	FST_OBJ_OP_GET_RANGE,
	FST_OBJ_OP_HEAD,
	FST_OBJ_OP_LIST,
	FST_OBJ_OP_DELETE,
	FST_OBJ_NUM_OPS
} FstObjOp;

/*
 * Per-handle counters, maintained by the fst_objstore_* wrappers.
 * "errors" counts calls that failed with anything but FST_NOT_FOUND and
 * FST_ALREADY_EXISTS, which are ordinary answers, counted on their own.
 */
typedef struct FstObjStats
{
	uint64		requests[FST_OBJ_NUM_OPS];	/* calls, by kind */
	uint64		errors[FST_OBJ_NUM_OPS];	/* failed calls, by kind */
	uint64		not_found;		/* FST_NOT_FOUND answers */
	uint64		already_exists; /* FST_ALREADY_EXISTS answers */
	uint64		bytes_read;		/* object bytes returned by get/get_range */
	uint64		bytes_written;	/* object bytes stored by put* */
	uint64		keys_deleted;	/* keys passed to delete_batch that succeeded */
	uint64		keys_listed;	/* entries returned by list */
	uint64		request_usec[FST_OBJ_NUM_OPS];	/* wall time in calls, by kind */
	uint64		retries;		/* attempts repeated after a retriable
								 * failure (backends that retry) */
} FstObjStats;

typedef struct FstObjStore FstObjStore;

/*
 * The body of a put read piece by piece, so that an object larger than the
 * memory its writer may use (a compaction's output, spooled to a local
 * file) can be stored: len bytes, read(arg, offset, buf, n) fills buf with
 * the n bytes at offset (offset + n <= len), or fails with a code and a
 * message.  Backends may read a piece more than once (a digest pass, a
 * retried request), in any order.
 */
typedef struct FstPutSource
{
	uint64		len;
	FstCode		(*read) (void *arg, uint64 offset, char *buf, size_t n,
						 FstError *err);
	void	   *arg;
} FstPutSource;

/*
 * The backend vtable.  Keys, prefixes and arguments have been validated by
 * the wrappers; err is never NULL and has been cleared; out-parameters are
 * initialized as the wrappers document.  Backends may ignore the stats.
 */
typedef struct FstObjStoreOps
{
	const char *name;			/* "file", "s3" */

	FstCode		(*put) (FstObjStore *store, const char *key,
						const void *data, size_t len, FstError *err);
	FstCode		(*put_if_absent) (FstObjStore *store, const char *key,
								  const void *data, size_t len,
								  FstError *err);
	/*
	 * Optional: put_if_absent of a body read from src in pieces, in
	 * memory bounded by the backend, not by src->len (NULL: the wrapper
	 * reads the body into memory and calls put_if_absent).
	 */
	FstCode		(*put_if_absent_source) (FstObjStore *store, const char *key,
										 const FstPutSource *src,
										 FstError *err);
	FstCode		(*get) (FstObjStore *store, const char *key, FstBuf *out,
						FstError *err);
	FstCode		(*get_range) (FstObjStore *store, const char *key,
							  uint64 offset, size_t len, char *buf,
							  size_t *got, FstError *err);
	FstCode		(*head) (FstObjStore *store, const char *key,
						 FstObjInfo *info, FstError *err);
	FstCode		(*list) (FstObjStore *store, const char *prefix,
						 const char *start_after, int max_keys,
						 FstObjList *out, FstError *err);
	/* codes[i] gets each key's outcome (never NULL here) */
	FstCode		(*delete_batch) (FstObjStore *store, const char *const *keys,
								 int nkeys, FstCode *codes, FstError *err);
	/*
	 * Optional: the reads of a batch, at once (NULL: the wrapper reads one
	 * after another).  Sets every range's code and got, keeping in err the
	 * message of the first range that failed; returns FST_OK, or a code
	 * that stopped the whole batch (FST_INTERRUPTED, FST_NO_MEMORY).
	 */
	FstCode		(*get_ranges) (FstObjStore *store, FstObjRange *ranges,
							   int n, FstError *err);
	void		(*close) (FstObjStore *store);
} FstObjStoreOps;

/* Returns true when the caller wants the current request abandoned. */
typedef bool (*FstObjInterruptFn) (void *arg);

/*
 * The common head of every store handle.  A backend allocates its own
 * struct with this as the first member and fills it with
 * fst_objstore_init_base.
 */
struct FstObjStore
{
	const FstObjStoreOps *ops;
	char	   *url;			/* as opened (malloc'ed) */
	FstObjStats stats;
	FstObjInterruptFn interrupt_fn; /* may be NULL */
	void	   *interrupt_arg;
	uint64		op_start_usec;	/* start of the current call (wrappers) */
};

/* ---- opening and closing ---------------------------------------------- */

/*
 * Open the store named by url, dispatching on its scheme.  Unknown schemes
 * and malformed URLs are FST_INVALID_ARGUMENT; s3:// is FST_NOT_SUPPORTED
 * in this build.  On success *out must later be passed to
 * fst_objstore_close.
 */
extern FstCode fst_objstore_open(const char *url, FstObjStore **out,
								 FstError *err);
extern void fst_objstore_close(FstObjStore *store);

/*
 * Install a callback polled by backends during long requests (network
 * waits, retries' backoff); when it returns true the request fails with
 * FST_INTERRUPTED.  The file backend's requests are short and don't poll.
 */
extern void fst_objstore_set_interrupt(FstObjStore *store,
									   FstObjInterruptFn fn, void *arg);

/* ---- requests (see the semantics at the top of this file) ------------- */

extern FstCode fst_objstore_put(FstObjStore *store, const char *key,
								const void *data, size_t len, FstError *err);
extern FstCode fst_objstore_put_if_absent(FstObjStore *store, const char *key,
										  const void *data, size_t len,
										  FstError *err);
/*
 * put_if_absent of a body read from src in pieces (see FstPutSource): the
 * file backend copies it through a fixed buffer, s3 streams it in one PUT
 * (after a pass that computes its digests).  Counted as a put_if_absent.
 */
extern FstCode fst_objstore_put_if_absent_source(FstObjStore *store,
												 const char *key,
												 const FstPutSource *src,
												 FstError *err);
/* A source over len bytes at data (which must outlive its use). */
extern void fst_put_source_memory(FstPutSource *src, const void *data,
								  size_t len);

/* out must be initialized (fst_buf_init); its contents are replaced. */
extern FstCode fst_objstore_get(FstObjStore *store, const char *key,
								FstBuf *out, FstError *err);

/* buf holds at least len bytes; *got is always set (0 on failure). */
extern FstCode fst_objstore_get_range(FstObjStore *store, const char *key,
									  uint64 offset, size_t len, char *buf,
									  size_t *got, FstError *err);
/*
 * Several ranged reads, of one or several objects, each as get_range; the
 * s3 backend sends them in parallel (s3_multi.c).  Every range gets its
 * own code and got.  Returns FST_OK when all succeeded, else the code of
 * the first that failed (in the array's order) with its message in err.
 * Counted as n GET (range) requests.
 */
/* Whether get_ranges is faster than reads one after another here. */
extern bool fst_objstore_parallel_reads(const FstObjStore *store);
extern FstCode fst_objstore_get_ranges(FstObjStore *store, FstObjRange *ranges,
									   int n, FstError *err);

extern FstCode fst_objstore_head(FstObjStore *store, const char *key,
								 FstObjInfo *info, FstError *err);

/*
 * List keys that begin with prefix ("" lists everything) and sort after
 * start_after (NULL or "" starts at the beginning), at most max_keys of
 * them (<= 0: FST_OBJ_LIST_DEFAULT).  *out is overwritten; free it with
 * fst_objstore_list_free, also after a failure.
 */
extern FstCode fst_objstore_list(FstObjStore *store, const char *prefix,
								 const char *start_after, int max_keys,
								 FstObjList *out, FstError *err);
extern void fst_objstore_list_free(FstObjList *list);

/*
 * Delete nkeys keys.  Missing keys count as deleted.  codes (may be NULL)
 * receives each key's outcome.  Returns FST_OK if every key succeeded,
 * else the first failure's code, with a message naming that key and the
 * number of failures.  All keys are validated before anything is deleted:
 * one invalid key refuses the whole batch (every codes[i] is then
 * FST_INVALID_ARGUMENT and the message gives the bad key's index).
 */
extern FstCode fst_objstore_delete_batch(FstObjStore *store,
										 const char *const *keys, int nkeys,
										 FstCode *codes, FstError *err);

/* The handle's counters (live; valid until close). */
extern const FstObjStats *fst_objstore_stats(const FstObjStore *store);
extern const char *fst_objstore_op_name(FstObjOp op);

/* ---- helpers shared by backends and callers --------------------------- */

extern FstCode fst_objstore_parse_url(const char *url, FstObjUrl *out,
									  FstError *err);
extern FstCode fst_objstore_validate_key(const char *key, FstError *err);

/*
 * A list prefix: "" or a string that is a valid key prefix (no leading '/',
 * no control characters, every complete component valid as in a key).
 */
extern FstCode fst_objstore_validate_prefix(const char *prefix,
											FstError *err);

/*
 * Map an errno to an FstCode (EACCES/EPERM: FST_ACCESS_DENIED, EINTR/EAGAIN:
 * FST_TRANSIENT, ENOENT: FST_NOT_FOUND, ENOMEM: FST_NO_MEMORY, else
 * FST_IO_ERROR) and record "<what>: <strerror>" in err.
 */
extern FstCode fst_objstore_errno(FstError *err, int errnum,
								  const char *fmt,...)
			pg_attribute_printf(3, 4);

/* For backends: fill the common head of a new handle. */
extern bool fst_objstore_init_base(FstObjStore *store,
								   const FstObjStoreOps *ops,
								   const char *url);

/* ---- backends ---------------------------------------------------------- */

/* file://: root is an existing absolute directory. */
extern FstCode fst_objstore_file_open(const FstObjUrl *url,
									  const char *url_text,
									  FstObjStore **out, FstError *err);

#endif							/* FST_OBJSTORE_H */
