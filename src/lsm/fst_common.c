/*-------------------------------------------------------------------------
 *
 * fst_common.c
 *	  Error carrier, byte buffers and allocation wrappers of the engine.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

FstCode
fst_error(FstError *err, FstCode code, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return code;
	err->code = code;
	err->cause = FST_CAUSE_NONE;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void
fst_error_prefix(FstError *err, const char *fmt,...)
{
	char		prefix[FST_ERRMSG_LEN];
	char		old[FST_ERRMSG_LEN];
	va_list		ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
}

void
fst_error_clear(FstError *err)
{
	if (err)
	{
		err->code = FST_OK;
		err->cause = FST_CAUSE_NONE;
		err->msg[0] = '\0';
	}
}

FstCode
fst_error_cause(FstError *err, FstCause cause)
{
	if (err == NULL)
		return FST_OK;
	err->cause = cause;
	return err->code;
}

const char *
fst_code_name(FstCode code)
{
	switch (code)
	{
		case FST_OK:
			return "ok";
		case FST_NOT_FOUND:
			return "not found";
		case FST_ALREADY_EXISTS:
			return "already exists";
		case FST_CORRUPT:
			return "corrupt";
		case FST_IO_ERROR:
			return "I/O error";
		case FST_ACCESS_DENIED:
			return "access denied";
		case FST_TRANSIENT:
			return "transient";
		case FST_INVALID_ARGUMENT:
			return "invalid argument";
		case FST_NO_MEMORY:
			return "out of memory";
		case FST_NOT_SUPPORTED:
			return "not supported";
		case FST_INTERRUPTED:
			return "interrupted";
		case FST_FULL:
			return "full";
	}
	return "unknown";
}

void *
fst_malloc(size_t n)
{
	return malloc(n ? n : 1);
}

void *
fst_calloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size ? size : 1);
}

void *
fst_realloc(void *p, size_t n)
{
	return realloc(p, n ? n : 1);
}

char *
fst_strdup(const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *r = malloc(n);

	if (r)
		memcpy(r, s, n);
	return r;
}

void
fst_free(void *p)
{
	free(p);
}

void
fst_buf_init(FstBuf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->oom = false;
}

void
fst_buf_free(FstBuf *b)
{
	free(b->data);
	fst_buf_init(b);
}

void
fst_buf_reset(FstBuf *b)
{
	b->len = 0;
	b->oom = false;
}

bool
fst_buf_reserve(FstBuf *b, size_t extra)
{
	size_t		need;
	size_t		ncap;
	char	   *p;

	if (b->oom)
		return false;
	need = b->len + extra;
	if (need <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 256;
	while (ncap < need)
		ncap *= 2;
	p = realloc(b->data, ncap);
	if (p == NULL)
	{
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = ncap;
	return true;
}

void
fst_buf_append(FstBuf *b, const void *p, size_t n)
{
	if (n == 0 || !fst_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}
