/*-------------------------------------------------------------------------
 *
 * objstore_s3.c
 *	  The s3:// object store: the FstObjStoreOps of objstore.h on S3's
 *	  REST API (requests go through s3_http.c, replies through s3_xml.c).
 *
 * Mapping of the contract onto S3
 *	  put			PUT with Content-MD5 (the server verifies the body) and
 *					x-amz-content-sha256 (signed); the returned ETag must be
 *					the body's MD5.  At multipart_threshold bytes and more:
 *					a multipart upload of part_size parts (each with its
 *					Content-MD5), aborted if anything fails.
 *	  put_if_absent	a single PUT (whatever the size) with "If-None-Match: *";
 *					412 is FST_ALREADY_EXISTS.
 *					Each call writes a random id in x-amz-meta-forst-writer:
 *					when a retry gets 412 (the first attempt may have created
 *					the object before its reply was lost), a HEAD tells
 *					whether the object is ours (FST_OK) or not.  A server
 *					that does not implement conditional writes (501,
 *					NotImplemented) gives FST_NOT_SUPPORTED.
 *	  get			GET; the body must be as long as Content-Length.
 *	  get_range		GET with "Range: bytes=a-b"; 416 is an empty read.
 *	  head			HEAD: Content-Length and Last-Modified.
 *	  list			ListObjectsV2 with StartAfter = prefix + start_after;
 *					"next" is the last key returned, so the contract's
 *					start_after pagination maps onto StartAfter.  A page
 *					that S3 truncates without any key is followed through
 *					its ContinuationToken before returning.  Keys are
 *					checked to begin with the store prefix (which is
 *					stripped) and to increase strictly.
 *	  delete_batch	DeleteObjects (POST ?delete, Quiet, Content-MD5), at
 *					most 1000 keys per request; per-key errors are parsed.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <stdio.h>
#include <stdlib.h>


#include "s3_internal.h"

/* the piece in which a body read from a source is digested */
#define SOURCE_CHUNK (256 * 1024)

#define LIST_MAX_EMPTY_PAGES 1000
#define DELETE_HEAD \
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>" \
	"<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" \
	"<Quiet>true</Quiet>"

/* "<prefix><key>", malloc'ed */
char *
s3_full_key(S3Store *s, const char *key)
{
	size_t		pl = strlen(s->prefix);
	size_t		kl = strlen(key);
	char	   *k = fst_malloc(pl + kl + 1);

	if (k)
	{
		memcpy(k, s->prefix, pl);
		memcpy(k + pl, key, kl + 1);
	}
	return k;
}

/* "s3 PUT "key"" for messages; the key shortened to fit. */
void
s3_describe(char *dst, size_t size, const char *op, const char *key)
{
	size_t		kl = key ? strlen(key) : 0;

	if (key == NULL)
		snprintf(dst, size, "s3 %s", op);
	else if (kl <= 80)
		snprintf(dst, size, "s3 %s \"%s\"", op, key);
	else
		snprintf(dst, size, "s3 %s \"...%s\"", op, key + kl - 77);
}

/* ---- HEAD, and deciding whose object it is ----------------------------- */

static FstCode
head_full(S3Store *s, const char *full, const char *key, FstObjInfo *info,
		  char *writer, size_t writersize, FstError *err)
{
	char		what[128];
	S3Request	req = {0};
	S3Response	resp;
	FstCode		code;

	s3_describe(what, sizeof(what), "HEAD", key);
	req.method = "HEAD";
	req.key = full;
	req.what = what;
	code = s3_request(s, &req, &resp, err);
	if (code == FST_OK)
	{
		if (resp.status == 200)
		{
			if (resp.content_length < 0)
				code = fst_error(err, FST_CORRUPT,
								 "%s: reply without Content-Length", what);
			else if (info)
			{
				info->size = (uint64) resp.content_length;
				info->mtime = resp.last_modified >= 0 ? resp.last_modified : 0;
			}
			if (writer)
				snprintf(writer, writersize, "%s", resp.writer);
		}
		else if (resp.status == 404 && resp.code[0] == '\0')
			code = fst_error(err, FST_NOT_FOUND,
							 "%s: object not found (or bucket \"%s\" missing)",
							 what, s->bucket);
		else
			code = s3_status_error(s, &req, &resp, err);
	}
	s3_response_free(&resp);
	return code;
}

/*
 * A create-if-absent got 412 after a retry: the object exists, maybe
 * because an earlier attempt of ours created it.  Ours if it carries our id.
 */
FstCode
s3_resolve_lost_reply(S3Store *s, const char *full, const char *key,
				   const char *writer_id, FstError *err)
{
	char		writer[80];
	FstCode		code;

	code = head_full(s, full, key, NULL, writer, sizeof(writer), err);
	if (code == FST_OK && strcmp(writer, writer_id) == 0)
		return FST_OK;
	if (code == FST_OK || code == FST_NOT_FOUND)
		return fst_error(err, FST_ALREADY_EXISTS,
						 "s3 object \"%.150s\" already exists", key);
	return code;
}

static FstCode
conditional_refused(S3Store *s, const char *what, FstError *err)
{
	return fst_error(err, FST_NOT_SUPPORTED,
					 "%s: the server at %s does not support conditional writes (If-None-Match: *), which create-if-absent needs",
					 what, s->endpoint);
}

/* ---- single PUT -------------------------------------------------------- */

static FstCode
put_single(S3Store *s, const char *key, const char *full, const void *data,
		   size_t len, const FstPutSource *src, bool if_absent, FstError *err)
{
	char		what[128];
	char		md5b64[MD5_B64_LEN];
	char		md5hex[MD5_HEX_LEN];
	char		sha256[FST_SHA256_HEX_LEN + 1];
	char		writer_id[2 * WRITER_ID_BYTES + 1];
	FstSigV4Pair h[4];
	int			nh = 0;
	S3Request	req = {0};
	S3Response	resp;
	FstCode		code;

	s3_describe(what, sizeof(what), if_absent ? "PUT (if absent)" : "PUT", key);
	if (src != NULL)
	{
		/* one pass for the digests, then the body again as it is sent */
		code = fst_body_digests(src, SOURCE_CHUNK, sha256, md5b64, md5hex, err);
		if (code != FST_OK)
			return code;
		len = (size_t) src->len;
		req.body_src = src;
		req.body_sha256 = sha256;
	}
	else
		fst_md5_base64_hex(data, len, md5b64, md5hex);
	h[nh++] = (FstSigV4Pair) {"Content-Type", "application/octet-stream"};
	h[nh++] = (FstSigV4Pair) {"Content-MD5", md5b64};
	if (if_absent)
	{
		s3_random_hex(writer_id, WRITER_ID_BYTES);
		h[nh++] = (FstSigV4Pair) {"If-None-Match", "*"};
		h[nh++] = (FstSigV4Pair) {S3_WRITER_META, writer_id};
	}
	req.method = "PUT";
	req.key = full;
	req.headers = h;
	req.nheaders = nh;
	req.body = data;
	req.body_len = len;
	req.what = what;
	code = s3_request(s, &req, &resp, err);
	if (code != FST_OK)
		;
	else if (resp.status >= 200 && resp.status < 300)
	{
		/* a single-part ETag is the MD5 of the body */
		if (strlen(resp.etag) == 32 && strchr(resp.etag, '-') == NULL &&
			pg_strcasecmp(resp.etag, md5hex) != 0)
			code = fst_error(err, FST_CORRUPT,
							 "%s: the server stored ETag %s, not the MD5 %s of the data sent",
							 what, resp.etag, md5hex);
	}
	else if (if_absent && resp.status == 412)
	{
		if (resp.attempts > 1)
			code = s3_resolve_lost_reply(s, full, key, writer_id, err);
		else
			code = fst_error(err, FST_ALREADY_EXISTS,
							 "s3 object \"%.150s\" already exists", key);
	}
	else if (if_absent && (resp.status == 501 ||
						   strcmp(resp.code, "NotImplemented") == 0))
		code = conditional_refused(s, what, err);
	else
		code = s3_status_error(s, &req, &resp, err);
	s3_response_free(&resp);
	return code;
}


static FstCode
put_common(FstObjStore *store, const char *key, const void *data, size_t len,
		   bool if_absent, FstError *err)
{
	S3Store    *s = (S3Store *) store;
	char	   *full = s3_full_key(s, key);
	FstCode		code;

	if (full == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	if (data == NULL)
		data = "";
	/*
	 * Create-if-absent always uses a single PUT: not every S3 compatible
	 * honours If-None-Match on CompleteMultipartUpload, and one that ignores
	 * it would silently overwrite.  The objects written that way (manifests,
	 * checkpoints) are small; a single PUT takes up to 5 GiB.
	 */
	if (if_absent && (uint64) len > (UINT64CONST(5) << 30))
		code = fst_error(err, FST_NOT_SUPPORTED,
						 "s3 create-if-absent of %zu bytes: at most 5 GiB", len);
	else if (!if_absent && (uint64) len >= s->multipart_threshold && len > 0)
		code = s3_put_multipart(s, key, full, data, len, err);
	else
		code = put_single(s, key, full, data, len, NULL, if_absent, err);
	fst_free(full);
	return code;
}

static FstCode
s3_put(FstObjStore *store, const char *key, const void *data, size_t len,
	   FstError *err)
{
	return put_common(store, key, data, len, false, err);
}

static FstCode
s3_put_if_absent(FstObjStore *store, const char *key, const void *data,
				 size_t len, FstError *err)
{
	return put_common(store, key, data, len, true, err);
}

/*
 * A body read in pieces: one PUT with If-None-Match, like put_if_absent,
 * its digests computed in a first pass over the source and the body read
 * again as curl sends it, so that memory stays at a piece or two whatever
 * the object's size.
 */
static FstCode
s3_put_if_absent_source(FstObjStore *store, const char *key,
						const FstPutSource *src, FstError *err)
{
	S3Store    *s = (S3Store *) store;
	char	   *full;
	FstCode		code;

	if (src->len > (UINT64CONST(5) << 30))
		return fst_error(err, FST_NOT_SUPPORTED,
						 "s3 create-if-absent of " UINT64_FORMAT " bytes: at most 5 GiB",
						 src->len);
	full = s3_full_key(s, key);
	if (full == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	code = put_single(s, key, full, NULL, 0, src, true, err);
	fst_free(full);
	return code;
}

/* ---- GET, HEAD --------------------------------------------------------- */

static FstCode
not_found_or_error(S3Store *s, const S3Request *req, const S3Response *resp,
				   const char *key, FstError *err)
{
	if (resp->status == 404 && strcmp(resp->code, "NoSuchBucket") != 0)
		return fst_error(err, FST_NOT_FOUND, "s3 object \"%.150s\" not found",
						 key);
	return s3_status_error(s, req, resp, err);
}

static FstCode
s3_get(FstObjStore *store, const char *key, FstBuf *out, FstError *err)
{
	S3Store    *s = (S3Store *) store;
	char		what[128];
	char	   *full = s3_full_key(s, key);
	S3Request	req = {0};
	S3Response	resp;
	FstCode		code;

	if (full == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	s3_describe(what, sizeof(what), "GET", key);
	req.method = "GET";
	req.key = full;
	req.out = out;
	req.what = what;
	code = s3_request(s, &req, &resp, err);
	if (code == FST_OK && resp.status != 200)
		code = not_found_or_error(s, &req, &resp, key, err);
	s3_response_free(&resp);
	fst_free(full);
	return code;
}

FstCode
s3_get_range(FstObjStore *store, const char *key, uint64 offset, size_t len,
			 char *buf, size_t *got, FstError *err)
{
	S3Store    *s = (S3Store *) store;
	char	   *full;
	S3RangeGet	g;
	S3Response	resp;
	FstCode		code;
	const char *what = g.what;

	full = s3_full_key(s, key);
	if (full == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	if (len == 0)
	{
		/* nothing to read, but a missing object is still FST_NOT_FOUND */
		code = head_full(s, full, key, NULL, NULL, 0, err);
		fst_free(full);
		return code;
	}
	s3_range_get_init(&g, full, key, offset, len, buf);
	code = s3_request(s, &g.req, &resp, err);
	if (code != FST_OK)
		;
	else if (resp.status == 206)
	{
		if (resp.range_start >= 0 && (uint64) resp.range_start != offset)
			code = fst_error(err, FST_CORRUPT,
							 "%s: asked for bytes from %llu, got a range from %lld",
							 what, (unsigned long long) offset,
							 (long long) resp.range_start);
		else
			*got = resp.received;
	}
	else if (resp.status == 200)
		*got = resp.received;	/* the whole object, sliced on arrival */
	else if (resp.status == 416)
		*got = 0;				/* the range starts at or past the end */
	else
		code = not_found_or_error(s, &g.req, &resp, key, err);
	s3_response_free(&resp);
	fst_free(full);
	return code;
}

void
s3_range_get_init(S3RangeGet *g, const char *full, const char *key,
				  uint64 offset, size_t len, char *buf)
{
	s3_describe(g->what, sizeof(g->what), "GET (range)", key);
	snprintf(g->range, sizeof(g->range), "bytes=%llu-%llu",
			 (unsigned long long) offset,
			 (unsigned long long) (offset + len - 1));
	g->header = (FstSigV4Pair)
	{
		"Range", g->range
	};
	memset(&g->req, 0, sizeof(g->req));
	g->req.method = "GET";
	g->req.key = full;
	g->req.headers = &g->header;
	g->req.nheaders = 1;
	g->req.out_buf = buf;
	g->req.out_cap = len;
	g->req.range_offset = offset;
	g->req.what = g->what;
}

static FstCode
s3_head(FstObjStore *store, const char *key, FstObjInfo *info, FstError *err)
{
	S3Store    *s = (S3Store *) store;
	char	   *full = s3_full_key(s, key);
	FstCode		code;

	if (full == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	code = head_full(s, full, key, info, NULL, 0, err);
	fst_free(full);
	return code;
}

/* ---- list -------------------------------------------------------------- */

static FstCode
s3_list(FstObjStore *store, const char *prefix, const char *start_after,
		int max_keys, FstObjList *out, FstError *err)
{
	S3Store    *s = (S3Store *) store;
	size_t		pl = strlen(s->prefix);
	char	   *full_prefix = s3_full_key(s, prefix);
	char	   *full_start = start_after[0] ? s3_full_key(s, start_after) : NULL;
	char	   *token = NULL;
	char		maxk[16];
	char		what[128];
	S3ListPage	page;
	FstCode		code = FST_OK;
	int			round;
	int			i;

	memset(&page, 0, sizeof(page));
	if (full_prefix == NULL || (start_after[0] && full_start == NULL))
	{
		code = fst_error(err, FST_NO_MEMORY, "out of memory");
		goto done;
	}
	snprintf(maxk, sizeof(maxk), "%d", max_keys);
	s3_describe(what, sizeof(what), "ListObjectsV2", full_prefix);
	for (round = 0;; round++)
	{
		FstSigV4Pair q[5];
		int			nq = 0;
		S3Request	req = {0};
		S3Response	resp;
		FstBuf		body;

		q[nq++] = (FstSigV4Pair) {"list-type", "2"};
		q[nq++] = (FstSigV4Pair) {"max-keys", maxk};
		if (full_prefix[0])
			q[nq++] = (FstSigV4Pair) {"prefix", full_prefix};
		if (token)
			q[nq++] = (FstSigV4Pair) {"continuation-token", token};
		else if (full_start)
			q[nq++] = (FstSigV4Pair) {"start-after", full_start};
		fst_buf_init(&body);
		req.method = "GET";
		req.query = q;
		req.nquery = nq;
		req.out = &body;
		req.what = what;
		code = s3_request(s, &req, &resp, err);
		if (code == FST_OK && resp.status == 200)
			code = s3_xml_list(body.data, body.len, &page, err);
		else if (code == FST_OK)
			code = s3_status_error(s, &req, &resp, err);
		s3_response_free(&resp);
		fst_buf_free(&body);
		if (code != FST_OK)
			goto done;
		if (page.nentries > 0 || !page.truncated)
			break;
		/* truncated without a key: follow the token, boundedly */
		fst_free(token);
		token = page.next_token;
		page.next_token = NULL;
		s3_list_page_free(&page);
		if (round >= LIST_MAX_EMPTY_PAGES)
		{
			code = fst_error(err, FST_CORRUPT,
							 "%s: %d pages in a row without keys", what, round + 1);
			goto done;
		}
	}

	/*
	 * Check and strip the store prefix, check the order.  A "folder marker"
	 * object named exactly like the store prefix ("p/") is no key of ours.
	 */
	{
		int			n = 0;

		for (i = 0; i < page.nentries; i++)
		{
			char	   *k = page.entries[i].key;
			const char *prev = n > 0 ? page.entries[n - 1].key :
				(start_after[0] ? start_after : NULL);

			if (strncmp(k, full_prefix, strlen(full_prefix)) != 0)
			{
				code = fst_error(err, FST_CORRUPT,
								 "%s: listed key \"%.100s\" is outside the prefix",
								 what, k);
				goto done;
			}
			memmove(k, k + pl, strlen(k + pl) + 1);
			if (k[0] == '\0')
			{
				fst_free(k);
				continue;
			}
			if (prev && strcmp(prev, k) >= 0)
			{
				code = fst_error(err, FST_CORRUPT,
								 "%s: listed keys out of order (\"%.80s\" after \"%.80s\")",
								 what, k, prev);
				page.entries[n++] = page.entries[i];
				for (i++; i < page.nentries; i++)
					page.entries[n++] = page.entries[i];
				page.nentries = n;
				goto done;
			}
			page.entries[n++] = page.entries[i];
		}
		page.nentries = n;
	}
	if (page.truncated && page.nentries == 0)
	{
		code = fst_error(err, FST_CORRUPT,
						 "%s: truncated page holding only the prefix marker",
						 what);
		goto done;
	}
	out->entries = page.entries;
	out->nentries = page.nentries;
	out->truncated = page.truncated;
	if (page.truncated)
	{
		out->next = fst_strdup(page.entries[page.nentries - 1].key);
		if (out->next == NULL)
			code = fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	fst_free(page.next_token);
	memset(&page, 0, sizeof(page));

done:
	s3_list_page_free(&page);
	fst_free(token);
	fst_free(full_prefix);
	fst_free(full_start);
	return code;
}

/* ---- delete ------------------------------------------------------------ */

static FstCode
delete_error_code(const char *code)
{
	if (strcmp(code, "NoSuchKey") == 0)
		return FST_OK;
	if (strcmp(code, "AccessDenied") == 0)
		return FST_ACCESS_DENIED;
	if (strcmp(code, "SlowDown") == 0 || strcmp(code, "InternalError") == 0 ||
		strcmp(code, "ServiceUnavailable") == 0)
		return FST_TRANSIENT;
	return FST_IO_ERROR;
}

/* Delete keys[0..n) (n <= S3_DELETE_MAX) with one DeleteObjects. */
static FstCode
delete_chunk(S3Store *s, const char *const *keys, int n, FstCode *codes,
			 FstError *first, int *nfailed)
{
	FstBuf		body;
	FstBuf		reply;
	char		md5b64[MD5_B64_LEN];
	FstSigV4Pair q[] = {{"delete", ""}};
	FstSigV4Pair h[] = {
		{"Content-Type", "application/xml"},
		{"Content-MD5", md5b64},
	};
	S3Request	req = {0};
	S3Response	resp;
	S3DeleteError *errs = NULL;
	int			nerrs = 0;
	FstError	err;
	FstCode		code;
	int			i,
				j;

	fst_buf_init(&body);
	fst_buf_init(&reply);
	fst_buf_append(&body, DELETE_HEAD, strlen(DELETE_HEAD));
	for (i = 0; i < n; i++)
	{
		fst_buf_append(&body, "<Object><Key>", 13);
		s3_xml_escape(&body, s->prefix);
		s3_xml_escape(&body, keys[i]);
		fst_buf_append(&body, "</Key></Object>", 15);
	}
	fst_buf_append(&body, "</Delete>", 9);
	if (body.oom)
	{
		fst_buf_free(&body);
		code = fst_error(&err, FST_NO_MEMORY, "out of memory");
		goto failed_all;
	}
	fst_md5_base64(body.data, body.len, md5b64);
	req.method = "POST";
	req.query = q;
	req.nquery = 1;
	req.headers = h;
	req.nheaders = lengthof(h);
	req.body = body.data;
	req.body_len = body.len;
	req.out = &reply;
	req.what = "s3 DeleteObjects";
	code = s3_request(s, &req, &resp, &err);
	if (code == FST_OK && resp.status == 200)
		code = s3_xml_delete_result(reply.data, reply.len, &errs, &nerrs, &err);
	else if (code == FST_OK)
		code = s3_status_error(s, &req, &resp, &err);
	s3_response_free(&resp);
	fst_buf_free(&body);
	fst_buf_free(&reply);
	if (code != FST_OK)
		goto failed_all;

	for (j = 0; j < nerrs; j++)
	{
		FstCode		c = delete_error_code(errs[j].code);
		size_t		pl = strlen(s->prefix);

		if (c == FST_OK)
			continue;
		for (i = 0; i < n; i++)
		{
			if (codes[i] != FST_OK ||
				strncmp(errs[j].key, s->prefix, pl) != 0 ||
				strcmp(errs[j].key + pl, keys[i]) != 0)
				continue;
			codes[i] = c;
			if ((*nfailed)++ == 0)
				fst_error(first, c, "\"%.100s\": %s: %.80s", keys[i],
						  errs[j].code, errs[j].message);
		}
	}
	s3_delete_errors_free(errs, nerrs);
	return FST_OK;

failed_all:
	for (i = 0; i < n; i++)
		codes[i] = code;
	if (*nfailed == 0)
		fst_error(first, code, "\"%.100s\": %s", keys[0], err.msg);
	*nfailed += n;
	return code;
}

static FstCode
s3_delete_batch(FstObjStore *store, const char *const *keys, int nkeys,
				FstCode *codes, FstError *err)
{
	S3Store    *s = (S3Store *) store;
	FstError	first;
	int			nfailed = 0;
	int			i;

	fst_error_clear(&first);
	for (i = 0; i < nkeys; i += S3_DELETE_MAX)
	{
		int			n = Min(nkeys - i, S3_DELETE_MAX);
		FstCode		code = delete_chunk(s, keys + i, n, codes + i, &first,
										&nfailed);

		if (code == FST_INTERRUPTED)
		{
			int			j;

			for (j = i + n; j < nkeys; j++)
				codes[j] = FST_INTERRUPTED;
			nfailed += nkeys - (i + n);
			break;
		}
	}
	if (nfailed == 0)
		return FST_OK;
	return fst_error(err, first.code,
					 "could not delete %d of %d objects; first failure: %s",
					 nfailed, nkeys, first.msg);
}

const FstObjStoreOps s3_store_ops = {
	.name = "s3",
	.put = s3_put,
	.put_if_absent = s3_put_if_absent,
	.put_if_absent_source = s3_put_if_absent_source,
	.get = s3_get,
	.get_range = s3_get_range,
	.head = s3_head,
	.list = s3_list,
	.delete_batch = s3_delete_batch,
	.get_ranges = s3_get_ranges,
	.close = s3_store_close,
};
