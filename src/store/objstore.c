/*-------------------------------------------------------------------------
 *
 * objstore.c
 *	  The backend-independent part of the object-store interface: URL
 *	  parsing, key validation, the scheme dispatcher, request wrappers
 *	  with their counters, and list-result management.
 *
 * The wrappers are the only entry points callers use; they make sure every
 * backend sees validated arguments and that the counters mean the same
 * thing whatever the backend.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "objstore.h"
#include "objstore_s3.h"

static const char *const op_names[FST_OBJ_NUM_OPS] = {
	"put", "put_if_absent", "get", "get_range", "head", "list", "delete"
};

const char *
fst_objstore_op_name(FstObjOp op)
{
	if ((int) op < 0 || op >= FST_OBJ_NUM_OPS)
		return "unknown";
	return op_names[op];
}

/* ---- errors ------------------------------------------------------------ */

FstCode
fst_objstore_errno(FstError *err, int errnum, const char *fmt,...)
{
	char		what[FST_ERRMSG_LEN];
	va_list		ap;
	FstCode		code;

	switch (errnum)
	{
		case EACCES:
		case EPERM:
			code = FST_ACCESS_DENIED;
			break;
		case EINTR:
		case EAGAIN:
#if defined(EWOULDBLOCK) && EWOULDBLOCK != EAGAIN
		case EWOULDBLOCK:
#endif
			code = FST_TRANSIENT;
			break;
		case ENOENT:
			code = FST_NOT_FOUND;
			break;
		case ENOMEM:
			code = FST_NO_MEMORY;
			break;
		default:
			code = FST_IO_ERROR;
			break;
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return fst_error(err, code, "%s: %s", what, strerror(errnum));
}

/* ---- URLs -------------------------------------------------------------- */

static bool
has_control_char(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *) s; *p; p++)
	{
		if (*p < 0x20 || *p == 0x7f)
			return true;
	}
	return false;
}

/* Copy [s, s + n) into dst of size dstsize; false if it doesn't fit. */
static bool
copy_part(char *dst, size_t dstsize, const char *s, size_t n)
{
	if (n >= dstsize)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

FstCode
fst_objstore_parse_url(const char *url, FstObjUrl *out, FstError *err)
{
	const char *sep;
	const char *auth;
	const char *auth_end;
	const char *path;
	const char *query;
	size_t		i;
	size_t		n;

	memset(out, 0, sizeof(*out));
	if (url == NULL || *url == '\0')
		return fst_error(err, FST_INVALID_ARGUMENT, "empty object store URL");
	if (has_control_char(url))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object store URL contains control characters");
	sep = strstr(url, "://");
	if (sep == NULL || sep == url)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object store URL \"%s\" has no scheme (expected file:///dir or s3://bucket/prefix)",
						 url);
	n = sep - url;
	if (n >= sizeof(out->scheme))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object store URL \"%s\" has an invalid scheme", url);
	for (i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) url[i];

		if (!isalnum(c) && c != '+' && c != '-' && c != '.')
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "object store URL \"%s\" has an invalid scheme",
							 url);
		out->scheme[i] = (char) tolower(c);
	}
	out->scheme[n] = '\0';

	/* authority: up to the first '/' or '?' */
	auth = sep + 3;
	auth_end = auth + strcspn(auth, "/?");
	query = strchr(auth_end, '?');
	path = auth_end;
	if (!copy_part(out->host, sizeof(out->host), auth, auth_end - auth))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object store URL host is too long");
	n = query ? (size_t) (query - path) : strlen(path);
	if (!copy_part(out->path, sizeof(out->path), path, n))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object store URL path is too long");
	if (query && !copy_part(out->query, sizeof(out->query), query + 1,
							strlen(query + 1)))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object store URL query is too long");

	if (strcmp(out->scheme, "file") == 0)
	{
		if (out->host[0] != '\0' && strcmp(out->host, "localhost") != 0)
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "file URL \"%s\" must name an absolute directory, as in file:///var/lib/forst/remote",
							 url);
		if (out->path[0] != '/')
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "file URL \"%s\" must name an absolute directory, as in file:///var/lib/forst/remote",
							 url);
		/* drop trailing slashes, but keep "/" itself */
		n = strlen(out->path);
		while (n > 1 && out->path[n - 1] == '/')
			out->path[--n] = '\0';
	}
	else if (strcmp(out->scheme, "s3") == 0)
	{
		char	   *p = out->path;

		if (out->host[0] == '\0')
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "s3 URL \"%s\" has no bucket, as in s3://bucket/prefix",
							 url);
		/* the prefix is relative, without leading or trailing '/' */
		while (*p == '/')
			p++;
		memmove(out->path, p, strlen(p) + 1);
		n = strlen(out->path);
		while (n > 0 && out->path[n - 1] == '/')
			out->path[--n] = '\0';
	}
	else
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "unsupported object store scheme \"%s\" (expected file or s3)",
						 out->scheme);
	return FST_OK;
}

/* ---- keys -------------------------------------------------------------- */

/*
 * Check the components of s; when "partial_tail" is true, the text after
 * the last '/' is an incomplete component (a list prefix) and is only
 * checked for control characters.  "what" names the string in messages.
 */
static FstCode
validate_path(const char *s, bool partial_tail, const char *what,
			  FstError *err)
{
	size_t		len = strlen(s);
	const char *p = s;

	if (len > FST_OBJ_KEY_MAX)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object %s is too long (%zu bytes, at most %d)",
						 what, len, FST_OBJ_KEY_MAX);
	if (has_control_char(s))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object %s contains control characters", what);
	if (s[0] == '/')
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object %s \"%s\" must not begin with '/'", what, s);
	for (;;)
	{
		const char *slash = strchr(p, '/');
		size_t		clen = slash ? (size_t) (slash - p) : strlen(p);

		if (slash == NULL && partial_tail)
			break;
		if (clen == 0)
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "object %s \"%s\" has an empty component",
							 what, s);
		if (clen > FST_OBJ_COMPONENT_MAX)
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "object %s \"%s\" has a component longer than %d bytes",
							 what, s, FST_OBJ_COMPONENT_MAX);
		if (p[0] == '.')
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "object %s \"%s\" has a component beginning with '.' (\".\", \"..\" and dot-names are not allowed)",
							 what, s);
		if (slash == NULL)
			break;
		p = slash + 1;
	}
	return FST_OK;
}

FstCode
fst_objstore_validate_key(const char *key, FstError *err)
{
	if (key == NULL || key[0] == '\0')
		return fst_error(err, FST_INVALID_ARGUMENT, "empty object key");
	return validate_path(key, false, "key", err);
}

FstCode
fst_objstore_validate_prefix(const char *prefix, FstError *err)
{
	if (prefix == NULL)
		return fst_error(err, FST_INVALID_ARGUMENT, "NULL list prefix");
	return validate_path(prefix, true, "prefix", err);
}

/* ---- opening ----------------------------------------------------------- */

bool
fst_objstore_init_base(FstObjStore *store, const FstObjStoreOps *ops,
					   const char *url)
{
	memset(store, 0, sizeof(*store));
	store->ops = ops;
	store->url = fst_strdup(url);
	return store->url != NULL;
}

FstCode
fst_objstore_open(const char *url, FstObjStore **out, FstError *err)
{
	FstObjUrl  *u;
	FstCode		code;

	fst_error_clear(err);
	*out = NULL;
	u = fst_malloc(sizeof(FstObjUrl));
	if (u == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	code = fst_objstore_parse_url(url, u, err);
	if (code == FST_OK)
	{
		if (strcmp(u->scheme, "file") == 0)
			code = fst_objstore_file_open(u, url, out, err);
		else if (strcmp(u->scheme, "s3") == 0)
			code = fst_objstore_s3_open_url(u, url, out, err);
		else
			code = fst_error(err, FST_INVALID_ARGUMENT,
							 "unsupported object store scheme \"%s\"",
							 u->scheme);
	}
	fst_free(u);
	return code;
}

void
fst_objstore_close(FstObjStore *store)
{
	char	   *url;

	if (store == NULL)
		return;
	url = store->url;
	store->ops->close(store);
	fst_free(url);
}

void
fst_objstore_set_interrupt(FstObjStore *store, FstObjInterruptFn fn,
						   void *arg)
{
	store->interrupt_fn = fn;
	store->interrupt_arg = arg;
}

const FstObjStats *
fst_objstore_stats(const FstObjStore *store)
{
	return &store->stats;
}

/* ---- request wrappers -------------------------------------------------- */

/* Monotonic microseconds, for request times. */
static uint64
now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64) ts.tv_sec * 1000000 + (uint64) ts.tv_nsec / 1000;
}

/* Count a finished request (begun at store->op_start_usec); returns code. */
static FstCode
count(FstObjStore *store, FstObjOp op, FstCode code)
{
	store->stats.requests[op]++;
	store->stats.request_usec[op] += now_usec() - store->op_start_usec;
	if (code == FST_NOT_FOUND)
		store->stats.not_found++;
	else if (code == FST_ALREADY_EXISTS)
		store->stats.already_exists++;
	else if (code != FST_OK)
		store->stats.errors[op]++;
	return code;
}

FstCode
fst_objstore_put(FstObjStore *store, const char *key, const void *data,
				 size_t len, FstError *err)
{
	FstCode		code;

	fst_error_clear(err);
	store->op_start_usec = now_usec();
	code = fst_objstore_validate_key(key, err);
	if (code == FST_OK && data == NULL && len > 0)
		code = fst_error(err, FST_INVALID_ARGUMENT, "NULL data for put");
	if (code == FST_OK)
		code = store->ops->put(store, key, data, len, err);
	if (code == FST_OK)
		store->stats.bytes_written += len;
	return count(store, FST_OBJ_OP_PUT, code);
}

FstCode
fst_objstore_put_if_absent(FstObjStore *store, const char *key,
						   const void *data, size_t len, FstError *err)
{
	FstCode		code;

	fst_error_clear(err);
	store->op_start_usec = now_usec();
	code = fst_objstore_validate_key(key, err);
	if (code == FST_OK && data == NULL && len > 0)
		code = fst_error(err, FST_INVALID_ARGUMENT, "NULL data for put");
	if (code == FST_OK)
		code = store->ops->put_if_absent(store, key, data, len, err);
	if (code == FST_OK)
		store->stats.bytes_written += len;
	return count(store, FST_OBJ_OP_PUT_IF_ABSENT, code);
}

static FstCode
memory_source_read(void *arg, uint64 offset, char *buf, size_t n,
				   FstError *err)
{
	memcpy(buf, (const char *) arg + offset, n);
	return FST_OK;
}

void
fst_put_source_memory(FstPutSource *src, const void *data, size_t len)
{
	src->len = len;
	src->read = memory_source_read;
	src->arg = (void *) (data ? data : "");
}

/* The whole body of src in memory, for a backend that cannot stream it. */
static FstCode
put_source_whole(FstObjStore *store, const char *key, const FstPutSource *src,
				 FstError *err)
{
	char	   *data;
	FstCode		code;

	if (src->len > (uint64) SIZE_MAX)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	data = fst_malloc(src->len ? (size_t) src->len : 1);
	if (data == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	code = src->len ? src->read(src->arg, 0, data, (size_t) src->len, err) : FST_OK;
	if (code == FST_OK)
		code = store->ops->put_if_absent(store, key, data, (size_t) src->len, err);
	fst_free(data);
	return code;
}

FstCode
fst_objstore_put_if_absent_source(FstObjStore *store, const char *key,
								  const FstPutSource *src, FstError *err)
{
	FstCode		code;

	fst_error_clear(err);
	store->op_start_usec = now_usec();
	code = fst_objstore_validate_key(key, err);
	if (code == FST_OK && (src == NULL || (src->read == NULL && src->len > 0)))
		code = fst_error(err, FST_INVALID_ARGUMENT, "no source for put");
	if (code == FST_OK)
	{
		if (store->ops->put_if_absent_source != NULL)
			code = store->ops->put_if_absent_source(store, key, src, err);
		else
			code = put_source_whole(store, key, src, err);
	}
	if (code == FST_OK)
		store->stats.bytes_written += src->len;
	return count(store, FST_OBJ_OP_PUT_IF_ABSENT, code);
}

FstCode
fst_objstore_get(FstObjStore *store, const char *key, FstBuf *out,
				 FstError *err)
{
	FstCode		code;

	fst_error_clear(err);
	store->op_start_usec = now_usec();
	fst_buf_reset(out);
	code = fst_objstore_validate_key(key, err);
	if (code == FST_OK)
		code = store->ops->get(store, key, out, err);
	if (code == FST_OK)
		store->stats.bytes_read += out->len;
	else
		fst_buf_reset(out);
	return count(store, FST_OBJ_OP_GET, code);
}

FstCode
fst_objstore_get_range(FstObjStore *store, const char *key, uint64 offset,
					   size_t len, char *buf, size_t *got, FstError *err)
{
	FstCode		code;

	fst_error_clear(err);
	store->op_start_usec = now_usec();
	*got = 0;
	code = fst_objstore_validate_key(key, err);
	if (code == FST_OK && buf == NULL && len > 0)
		code = fst_error(err, FST_INVALID_ARGUMENT, "NULL buffer for get_range");
	if (code == FST_OK)
		code = store->ops->get_range(store, key, offset, len, buf, got, err);
	if (code == FST_OK)
		store->stats.bytes_read += *got;
	else
		*got = 0;
	return count(store, FST_OBJ_OP_GET_RANGE, code);
}

bool
fst_objstore_parallel_reads(const FstObjStore *store)
{
	return store->ops->get_ranges != NULL;
}

FstCode
fst_objstore_get_ranges(FstObjStore *store, FstObjRange *ranges, int n,
						FstError *err)
{
	FstCode		code = FST_OK;
	FstCode		first = FST_OK;
	uint64		start = now_usec();
	int			i;

	fst_error_clear(err);
	for (i = 0; i < n; i++)
	{
		ranges[i].got = 0;
		ranges[i].code = fst_objstore_validate_key(ranges[i].key, err);
		if (ranges[i].code == FST_OK && ranges[i].buf == NULL && ranges[i].len > 0)
			ranges[i].code = fst_error(err, FST_INVALID_ARGUMENT,
									   "NULL buffer for get_ranges");
		if (ranges[i].code != FST_OK)
			return ranges[i].code;
	}
	if (store->ops->get_ranges != NULL && n > 1)
		code = store->ops->get_ranges(store, ranges, n, err);
	else
	{
		for (i = 0; i < n; i++)
		{
			FstError	e;

			fst_error_clear(&e);
			ranges[i].code = store->ops->get_range(store, ranges[i].key,
												   ranges[i].offset, ranges[i].len,
												   ranges[i].buf, &ranges[i].got, &e);
			if (ranges[i].code != FST_OK && first == FST_OK)
			{
				first = ranges[i].code;
				*err = e;
			}
			if (ranges[i].code == FST_INTERRUPTED)
			{
				code = FST_INTERRUPTED;
				break;
			}
		}
		for (i++; i < n; i++)
			if (code != FST_OK)
				ranges[i].code = code;
	}
	first = FST_OK;
	for (i = 0; i < n; i++)
	{
		if (ranges[i].code != FST_OK)
			ranges[i].got = 0;
		else
			store->stats.bytes_read += ranges[i].got;
		if (ranges[i].code != FST_OK && first == FST_OK)
			first = ranges[i].code;
		store->stats.requests[FST_OBJ_OP_GET_RANGE]++;
		if (ranges[i].code == FST_NOT_FOUND)
			store->stats.not_found++;
		else if (ranges[i].code != FST_OK)
			store->stats.errors[FST_OBJ_OP_GET_RANGE]++;
	}
	store->stats.request_usec[FST_OBJ_OP_GET_RANGE] += now_usec() - start;
	return code != FST_OK ? code : first;
}

FstCode
fst_objstore_head(FstObjStore *store, const char *key, FstObjInfo *info,
				  FstError *err)
{
	FstCode		code;

	fst_error_clear(err);
	store->op_start_usec = now_usec();
	memset(info, 0, sizeof(*info));
	code = fst_objstore_validate_key(key, err);
	if (code == FST_OK)
		code = store->ops->head(store, key, info, err);
	return count(store, FST_OBJ_OP_HEAD, code);
}

FstCode
fst_objstore_list(FstObjStore *store, const char *prefix,
				  const char *start_after, int max_keys, FstObjList *out,
				  FstError *err)
{
	FstCode		code;

	fst_error_clear(err);
	store->op_start_usec = now_usec();
	memset(out, 0, sizeof(*out));
	if (prefix == NULL)
		prefix = "";
	if (start_after == NULL)
		start_after = "";
	if (max_keys <= 0)
		max_keys = FST_OBJ_LIST_DEFAULT;
	code = fst_objstore_validate_prefix(prefix, err);
	if (code == FST_OK && has_control_char(start_after))
		code = fst_error(err, FST_INVALID_ARGUMENT,
						 "list start_after contains control characters");
	if (code == FST_OK)
		code = store->ops->list(store, prefix, start_after, max_keys, out,
								err);
	if (code == FST_OK)
		store->stats.keys_listed += out->nentries;
	else
	{
		fst_objstore_list_free(out);
		memset(out, 0, sizeof(*out));
	}
	return count(store, FST_OBJ_OP_LIST, code);
}

void
fst_objstore_list_free(FstObjList *list)
{
	int			i;

	if (list == NULL)
		return;
	for (i = 0; i < list->nentries; i++)
		fst_free(list->entries[i].key);
	fst_free(list->entries);
	fst_free(list->next);
	list->entries = NULL;
	list->nentries = 0;
	list->next = NULL;
	list->truncated = false;
}

FstCode
fst_objstore_delete_batch(FstObjStore *store, const char *const *keys,
						  int nkeys, FstCode *codes, FstError *err)
{
	FstCode    *own = NULL;
	FstCode		code = FST_OK;
	int			i;

	fst_error_clear(err);
	store->op_start_usec = now_usec();
	if (nkeys < 0 || (nkeys > 0 && keys == NULL))
		return count(store, FST_OBJ_OP_DELETE,
					 fst_error(err, FST_INVALID_ARGUMENT,
							   "invalid key array for delete_batch"));
	if (nkeys == 0)
		return count(store, FST_OBJ_OP_DELETE, FST_OK);
	for (i = 0; i < nkeys; i++)
	{
		code = fst_objstore_validate_key(keys[i], err);
		if (code != FST_OK)
			break;
	}
	if (code != FST_OK)
	{
		/* the whole batch is refused; nothing was deleted */
		if (codes)
		{
			int			j;

			for (j = 0; j < nkeys; j++)
				codes[j] = code;
		}
		fst_error_prefix(err, "delete_batch key %d", i);
		return count(store, FST_OBJ_OP_DELETE, code);
	}
	if (codes == NULL)
	{
		own = fst_malloc(sizeof(FstCode) * nkeys);
		if (own == NULL)
			return count(store, FST_OBJ_OP_DELETE,
						 fst_error(err, FST_NO_MEMORY, "out of memory"));
		codes = own;
	}
	for (i = 0; i < nkeys; i++)
		codes[i] = FST_OK;
	code = store->ops->delete_batch(store, keys, nkeys, codes, err);
	for (i = 0; i < nkeys; i++)
	{
		if (codes[i] == FST_OK)
			store->stats.keys_deleted++;
	}
	fst_free(own);
	return count(store, FST_OBJ_OP_DELETE, code);
}
