/*-------------------------------------------------------------------------
 *
 * fst_common.h
 *	  Shared vocabulary of the forst engine: status codes, byte slices and
 *	  the error carrier that every engine and store function fills in.
 *
 * The engine (src/lsm) and the store (src/store) are plain C: they never
 * ereport, never longjmp and never allocate in a PostgreSQL memory context.
 * Every fallible function returns an FstCode and, when it fails, writes a
 * human-readable message into the caller's FstError (which may be NULL).
 * The src/am layer maps codes to SQLSTATEs (see fst_code_name for names).
 *
 * Memory is malloc'ed and owned explicitly; every "create"/"open" has a
 * matching "destroy"/"close".  Running out of memory is FST_NO_MEMORY.
 *
 * This header includes PostgreSQL's c.h (postgres.h inside the server, where
 * some of PostgreSQL's headers need Datum), so the same sources build into
 * the server module and into stand-alone test and benchmark programs
 * (compiled with -DFRONTEND, linked with libpgcommon and libpgport).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_COMMON_H
#define FST_COMMON_H

#ifdef FRONTEND
#include "c.h"
#else
#include "postgres.h"
#endif

typedef enum FstCode
{
	FST_OK = 0,
	FST_NOT_FOUND,				/* object or key does not exist */
	FST_ALREADY_EXISTS,			/* create-if-absent lost the race */
	FST_CORRUPT,				/* checksum, magic, bounds or format error */
	FST_IO_ERROR,				/* local I/O failed (errno in the message) */
	FST_ACCESS_DENIED,			/* permission / credentials */
	FST_TRANSIENT,				/* worth retrying: timeouts, 5xx, throttling */
	FST_INVALID_ARGUMENT,		/* caller passed something unusable */
	FST_NO_MEMORY,				/* malloc failed */
	FST_NOT_SUPPORTED,			/* valid request this build/version can't do */
	FST_INTERRUPTED,			/* the caller's interrupt check said stop */
	FST_FULL					/* a bounded structure has no room left */
} FstCode;

#define FST_ERRMSG_LEN 256

/*
 * Why a request to a remote store failed, when the store can tell, beyond
 * its FstCode: the server turns these into SQLSTATEs and hints.  fst_error
 * resets it to FST_CAUSE_NONE; a backend sets it with fst_error_cause after
 * recording its message, and fst_error_prefix keeps it.
 */
typedef enum FstCause
{
	FST_CAUSE_NONE = 0,
	FST_CAUSE_CREDENTIALS,		/* access key unknown, signature rejected */
	FST_CAUSE_DENIED,			/* a known identity is not allowed */
	FST_CAUSE_NO_BUCKET,		/* the bucket does not exist */
	FST_CAUSE_UNREACHABLE,		/* unknown host, connection refused */
	FST_CAUSE_CLOCK_SKEW,		/* the server rejects the local clock */
	FST_CAUSE_THROTTLED,		/* 429/SlowDown until retries ran out */
	FST_CAUSE_TIMEOUT,			/* attempts timed out until retries ran out */
	FST_CAUSE_TLS,				/* certificate not verified */
	FST_CAUSE_REGION,			/* wrong region or endpoint for the bucket */
	FST_CAUSE_NEWER_FORMAT		/* an object in a format version this build
								 * does not know: written by a newer forst */
} FstCause;

typedef struct FstError
{
	FstCode		code;
	FstCause	cause;
	char		msg[FST_ERRMSG_LEN];
} FstError;

/*
 * Record an error in *err (if err is not NULL) and return code, so that a
 * failing path reads "return fst_error(err, FST_CORRUPT, "...", ...);".
 * A message already present is kept if code is the same and the new
 * message is empty.
 */
extern FstCode fst_error(FstError *err, FstCode code, const char *fmt,...)
			pg_attribute_printf(3, 4);

/* Prefix the message already in err with context ("reading file X: ..."). */
extern void fst_error_prefix(FstError *err, const char *fmt,...)
			pg_attribute_printf(2, 3);

extern void fst_error_clear(FstError *err);

/* Set err's cause (if err is not NULL) and return err's code. */
extern FstCode fst_error_cause(FstError *err, FstCause cause);
extern const char *fst_code_name(FstCode code);

/* A borrowed byte range. */
typedef struct FstSlice
{
	const char *data;
	size_t		len;
} FstSlice;

static inline FstSlice
fst_slice(const void *data, size_t len)
{
	FstSlice	s;

	s.data = (const char *) data;
	s.len = len;
	return s;
}

/* memcmp order; a proper prefix sorts first. */
static inline int
fst_slice_cmp(FstSlice a, FstSlice b)
{
	size_t		n = Min(a.len, b.len);
	int			r = n ? memcmp(a.data, b.data, n) : 0;

	if (r != 0)
		return r;
	return (a.len < b.len) ? -1 : (a.len > b.len) ? 1 : 0;
}

/* A growable byte buffer (malloc'ed). */
typedef struct FstBuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		oom;			/* set once an append failed */
} FstBuf;

extern void fst_buf_init(FstBuf *b);
extern void fst_buf_free(FstBuf *b);
extern bool fst_buf_reserve(FstBuf *b, size_t extra);
extern void fst_buf_append(FstBuf *b, const void *p, size_t n);
extern void fst_buf_reset(FstBuf *b);

static inline void
fst_buf_putc(FstBuf *b, uint8 c)
{
	if (b->len < b->cap)
		b->data[b->len++] = (char) c;
	else
		fst_buf_append(b, &c, 1);
}

/* malloc wrappers: NULL on failure, never abort. */
extern void *fst_malloc(size_t n);
extern void *fst_calloc(size_t n, size_t size);
extern void *fst_realloc(void *p, size_t n);
extern char *fst_strdup(const char *s);
extern void fst_free(void *p);

#endif							/* FST_COMMON_H */
