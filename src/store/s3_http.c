/*-------------------------------------------------------------------------
 *
 * s3_http.c
 *	  One attempt of an S3 request over libcurl: signing, sending, reading
 *	  the reply, and turning failures into FstCodes with messages that name
 *	  the request but never a secret.  Retries are in s3_retry.c.
 *
 * Timeouts apply per attempt: connect_timeout_ms to connect,
 * request_timeout_ms for the whole attempt, and a low-speed limit (less
 * than 1 KiB/s for low_speed_time_s) against stalled transfers.
 *
 * Interrupts.  The store's interrupt callback is polled before every
 * attempt, during transfers (libcurl's progress callback, called at least
 * about once a second and on every chunk) and every 10 ms of a backoff
 * sleep; when it says stop, the request ends with FST_INTERRUPTED.
 *
 * The easy handle is reset (curl_easy_reset keeps the connection cache)
 * and configured from scratch for every attempt.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/rand.h>

#include "s3_internal.h"

/* What the callbacks of one attempt share. */
struct S3Attempt
{
	S3Store    *s;
	void	   *curl;			/* the easy handle it runs on */
	const S3Request *req;
	S3Response *resp;
	FstBuf		url;
	struct curl_slist *hdrs;
	char		errbuf[CURL_ERROR_SIZE];
	size_t		upload_pos;		/* read callback's position in the body */
	uint64		skip;			/* bytes of a 200 reply before the range */
	uint64		skipped;		/* ... of which this many went by */
	bool		skip_known;		/* skip has been set from the status */
	bool		enough;			/* out_buf full from a 200 reply: stop */
	bool		overflow;		/* more bytes than out_buf holds */
	bool		interrupted;	/* the progress callback said stop */
	bool		body_failed;	/* body_src could not be read: body_err */
	FstError	body_err;
};

typedef struct S3Attempt Xfer;

bool
s3_interrupted(S3Store *s)
{
	return s->base.interrupt_fn != NULL &&
		s->base.interrupt_fn(s->base.interrupt_arg);
}

void
s3_random_hex(char *out, int nbytes)
{
	static const char hex[] = "0123456789abcdef";
	uint8		b[64];
	int			i;

	nbytes = Min(nbytes, (int) sizeof(b));
	if (RAND_bytes(b, nbytes) != 1)
	{
		/* no entropy from OpenSSL: fall back to time and address bits */
		uint64		x = (uint64) time(NULL) ^ ((uint64) (uintptr_t) out << 17) ^
			(uint64) clock();

		for (i = 0; i < nbytes; i++)
		{
			x = x * UINT64CONST(6364136223846793005) + 1442695040888963407;
			b[i] = (uint8) (x >> 56);
		}
	}
	for (i = 0; i < nbytes; i++)
	{
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * nbytes] = '\0';
}

void
s3_response_free(S3Response *resp)
{
	fst_buf_free(&resp->errbody);
}

/* ---- callbacks --------------------------------------------------------- */

static size_t
write_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	Xfer	   *x = arg;
	S3Response *r = x->resp;
	const S3Request *req = x->req;
	size_t		n = size * nmemb;
	size_t		take;

	if (r->status < 200 || r->status >= 300)
	{
		/* an error document: keep the first S3_ERRBODY_MAX bytes */
		take = Min(n, S3_ERRBODY_MAX - Min(r->errbody.len, S3_ERRBODY_MAX));
		fst_buf_append(&r->errbody, ptr, take);
		return n;
	}
	if (req->out != NULL)
	{
		if (r->received == 0 && r->content_length > 0 &&
			req->out->len == 0)
			fst_buf_reserve(req->out, (size_t) r->content_length);
		fst_buf_append(req->out, ptr, n);
		if (req->out->oom)
			return 0;
		r->received += n;
		return n;
	}
	if (req->out_buf != NULL)
	{
		if (!x->skip_known)
		{
			/* a 200 reply to a ranged GET is the whole object */
			x->skip_known = true;
			if (r->status == 200)
				x->skip = req->range_offset;
		}
		if (x->skip > 0)
		{
			take = (size_t) Min((uint64) n, x->skip);
			x->skip -= take;
			x->skipped += take;
			ptr += take;
			n -= take;
			if (n == 0)
				return size * nmemb;
		}
		take = Min(n, req->out_cap - r->received);
		memcpy(req->out_buf + r->received, ptr, take);
		r->received += take;
		if (take < n)
		{
			/* a 200 reply (the whole object) may run past the range */
			if (r->status == 200)
				x->enough = true;
			else
				x->overflow = true;
			return 0;
		}
		return size * nmemb;
	}
	return n;					/* discarded */
}

static bool
header_is(const char *line, size_t len, const char *name, const char **value,
		  size_t *vlen)
{
	size_t		n = strlen(name);

	if (len <= n || pg_strncasecmp(line, name, n) != 0 || line[n] != ':')
		return false;
	line += n + 1;
	len -= n + 1;
	while (len > 0 && (*line == ' ' || *line == '\t'))
		line++, len--;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n' ||
					   line[len - 1] == ' '))
		len--;
	*value = line;
	*vlen = len;
	return true;
}

static void
copy_value(char *dst, size_t dstsize, const char *v, size_t vlen)
{
	vlen = Min(vlen, dstsize - 1);
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
}

static size_t
header_cb(char *line, size_t size, size_t nmemb, void *arg)
{
	Xfer	   *x = arg;
	S3Response *r = x->resp;
	size_t		len = size * nmemb;
	const char *v;
	size_t		vlen;
	char		tmp[128];

	if (len >= 5 && strncmp(line, "HTTP/", 5) == 0)
	{
		/* a new status line (after 100 Continue, say): start over */
		const char *sp = memchr(line, ' ', len);

		r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		r->content_length = -1;
		r->last_modified = -1;
		r->range_start = -1;
		r->range_total = -1;
		r->etag[0] = '\0';
		r->writer[0] = '\0';
		return len;
	}
	if (header_is(line, len, "Content-Length", &v, &vlen))
	{
		copy_value(tmp, sizeof(tmp), v, vlen);
		r->content_length = strtoll(tmp, NULL, 10);
	}
	else if (header_is(line, len, "ETag", &v, &vlen))
	{
		if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"')
			v++, vlen -= 2;
		copy_value(r->etag, sizeof(r->etag), v, vlen);
	}
	else if (header_is(line, len, "Last-Modified", &v, &vlen))
	{
		time_t		t;

		copy_value(tmp, sizeof(tmp), v, vlen);
		t = curl_getdate(tmp, NULL);
		r->last_modified = t < 0 ? -1 : (int64) t;
	}
	else if (header_is(line, len, "Content-Range", &v, &vlen))
	{
		long long	a,
					b,
					total;

		/* "bytes a-b/total" or "bytes * /total" (416) */
		copy_value(tmp, sizeof(tmp), v, vlen);
		if (sscanf(tmp, "bytes %lld-%lld/%lld", &a, &b, &total) == 3)
		{
			r->range_start = a;
			r->range_total = total;
		}
		else if (sscanf(tmp, "bytes */%lld", &total) == 1)
			r->range_total = total;
	}
	else if (header_is(line, len, S3_WRITER_META, &v, &vlen))
		copy_value(r->writer, sizeof(r->writer), v, vlen);
	return len;
}

static size_t
read_cb(char *buf, size_t size, size_t nitems, void *arg)
{
	Xfer	   *x = arg;
	size_t		n = Min(size * nitems, x->req->body_len - x->upload_pos);

	if (n > 0 && x->req->body_src != NULL)
	{
		const FstPutSource *src = x->req->body_src;

		if (src->read(src->arg, x->upload_pos, buf, n, &x->body_err) != FST_OK)
		{
			x->body_failed = true;
			return CURL_READFUNC_ABORT;
		}
	}
	else if (n > 0)
		memcpy(buf, x->req->body + x->upload_pos, n);
	x->upload_pos += n;
	return n;
}

static int
seek_cb(void *arg, curl_off_t offset, int origin)
{
	Xfer	   *x = arg;

	if (origin != SEEK_SET || offset < 0 ||
		(size_t) offset > x->req->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	x->upload_pos = (size_t) offset;
	return CURL_SEEKFUNC_OK;
}

static int
progress_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow,
			curl_off_t ultotal, curl_off_t ulnow)
{
	Xfer	   *x = arg;

	if (s3_interrupted(x->s))
	{
		x->interrupted = true;
		return 1;
	}
	return 0;
}

/* ---- one attempt ------------------------------------------------------- */

/* Build URL and signed headers of req into *url and *hdrs. */
static FstCode
prepare(S3Store *s, const S3Request *req, FstBuf *url,
		struct curl_slist **hdrs, FstError *err)
{
	FstBuf		path;
	FstBuf		query;
	FstBuf		auth;
	FstBuf		line;
	FstSigV4Pair *h;
	char		date[FST_AMZ_DATE_LEN + 1];
	char		hash[FST_SHA256_HEX_LEN + 1];
	int			nh = 0;
	int			i;
	FstCode		code = FST_OK;

	h = fst_calloc(req->nheaders + 4, sizeof(FstSigV4Pair));
	if (h == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	fst_buf_init(&path);
	fst_buf_init(&query);
	fst_buf_init(&auth);
	fst_buf_init(&line);

	fst_buf_append(&path, s->path_base, strlen(s->path_base));
	fst_buf_putc(&path, '/');
	if (req->key)
		fst_sigv4_uri_encode(&path, req->key, strlen(req->key), true);
	fst_buf_putc(&path, '\0');
	if (!fst_sigv4_query(req->query, req->nquery, &query) || path.oom)
	{
		code = fst_error(err, FST_NO_MEMORY, "out of memory");
		goto done;
	}

	if (req->body_sha256)
		snprintf(hash, sizeof(hash), "%s", req->body_sha256);
	else
		fst_sha256_hex(req->body ? req->body : "", req->body_len, hash);
	fst_sigv4_amz_date((int64) time(NULL), date);
	h[nh++] = (FstSigV4Pair)
	{
		"Host", s->host
	};
	h[nh++] = (FstSigV4Pair)
	{
		"x-amz-date", date
	};
	h[nh++] = (FstSigV4Pair)
	{
		"x-amz-content-sha256", hash
	};
	if (s->session_token)
		h[nh++] = (FstSigV4Pair)
	{
		"x-amz-security-token", s->session_token
	};
	for (i = 0; i < req->nheaders; i++)
		h[nh++] = req->headers[i];

	if (s->access_key)
	{
		FstSigV4Request sr = {req->method, path.data, query.data, h, nh, hash};
		FstSigV4Key key = {s->access_key, s->secret_key, s->region, "s3"};

		code = fst_sigv4_authorization(&sr, &key, date, &auth, NULL, err);
		if (code != FST_OK)
			goto done;
	}

	fst_buf_reset(url);
	fst_buf_append(url, s->base_url, strlen(s->base_url));
	fst_buf_append(url, path.data, path.len - 1);
	if (query.len > 0)
	{
		fst_buf_putc(url, '?');
		fst_buf_append(url, query.data, query.len);
	}
	fst_buf_putc(url, '\0');

	*hdrs = NULL;
	for (i = 0; i <= nh + 1 && code == FST_OK; i++)
	{
		struct curl_slist *n;

		fst_buf_reset(&line);
		if (i < nh)
		{
			fst_buf_append(&line, h[i].name, strlen(h[i].name));
			fst_buf_append(&line, ": ", 2);
			fst_buf_append(&line, h[i].value, strlen(h[i].value));
		}
		else if (i == nh)
		{
			if (auth.len == 0)
				continue;
			fst_buf_append(&line, "Authorization: ", 15);
			fst_buf_append(&line, auth.data, auth.len);
		}
		else
			fst_buf_append(&line, "Expect:", 7);	/* no 100-continue wait */
		fst_buf_putc(&line, '\0');
		n = line.oom ? NULL : curl_slist_append(*hdrs, line.data);
		if (n == NULL)
			code = fst_error(err, FST_NO_MEMORY, "out of memory");
		else
			*hdrs = n;
	}
	if (code == FST_OK && url->oom)
		code = fst_error(err, FST_NO_MEMORY, "out of memory");

done:
	/* the Authorization line holds no secret, but clear the buffers */
	fst_buf_free(&path);
	fst_buf_free(&query);
	fst_buf_free(&auth);
	fst_buf_free(&line);
	fst_free(h);
	return code;
}

#define SET(opt, val) \
	do { if (rc == CURLE_OK) rc = curl_easy_setopt(curl, opt, val); } while (0)

static CURLcode
configure(S3Store *s, const S3Request *req, Xfer *x, const char *url,
		  struct curl_slist *hdrs, char *errbuf)
{
	CURL	   *curl = x->curl;
	CURLcode	rc = CURLE_OK;

	curl_easy_reset(curl);
	SET(CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	SET(CURLOPT_HTTPHEADER, hdrs);
	SET(CURLOPT_ERRORBUFFER, errbuf);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_TCP_NODELAY, 1L);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long) s->connect_timeout_ms);
	SET(CURLOPT_TIMEOUT_MS, (long) s->request_timeout_ms);
	SET(CURLOPT_LOW_SPEED_LIMIT, 1024L);
	SET(CURLOPT_LOW_SPEED_TIME, (long) s->low_speed_time_s);
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	if (s->ca_file)
		SET(CURLOPT_CAINFO, s->ca_file);
	if (s->ca_path)
		SET(CURLOPT_CAPATH, s->ca_path);
	SET(CURLOPT_WRITEFUNCTION, write_cb);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_HEADERFUNCTION, header_cb);
	SET(CURLOPT_HEADERDATA, x);
	SET(CURLOPT_XFERINFOFUNCTION, progress_cb);
	SET(CURLOPT_XFERINFODATA, x);
	SET(CURLOPT_NOPROGRESS, 0L);

	if (strcmp(req->method, "GET") == 0)
		SET(CURLOPT_HTTPGET, 1L);
	else if (strcmp(req->method, "HEAD") == 0)
		SET(CURLOPT_NOBODY, 1L);
	else if (strcmp(req->method, "PUT") == 0)
	{
		SET(CURLOPT_UPLOAD, 1L);
		SET(CURLOPT_READFUNCTION, read_cb);
		SET(CURLOPT_READDATA, x);
		SET(CURLOPT_SEEKFUNCTION, seek_cb);
		SET(CURLOPT_SEEKDATA, x);
		SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t) req->body_len);
	}
	else if (strcmp(req->method, "POST") == 0)
	{
		SET(CURLOPT_POST, 1L);
		SET(CURLOPT_POSTFIELDS, req->body ? req->body : "");
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->body_len);
	}
	else
		SET(CURLOPT_CUSTOMREQUEST, req->method);
	return rc;
}

#undef SET

S3Attempt *
s3_attempt_start(S3Store *s, void *curl, const S3Request *req,
				 S3Response *resp, FstError *err)
{
	Xfer	   *x = fst_calloc(1, sizeof(Xfer));
	CURLcode	rc;

	if (x == NULL)
	{
		fst_error(err, FST_NO_MEMORY, "out of memory");
		return NULL;
	}
	x->s = s;
	x->curl = curl;
	x->req = req;
	x->resp = resp;
	resp->status = 0;
	resp->received = 0;
	resp->content_length = -1;
	resp->code[0] = '\0';
	resp->message[0] = '\0';
	fst_buf_reset(&resp->errbody);
	if (req->out)
		fst_buf_reset(req->out);
	fst_buf_init(&x->url);
	if (prepare(s, req, &x->url, &x->hdrs, err) != FST_OK)
	{
		s3_attempt_free(x);
		return NULL;
	}
	rc = configure(s, req, x, x->url.data, x->hdrs, x->errbuf);
	if (rc != CURLE_OK)
	{
		fst_error(err, FST_IO_ERROR, "%s: %s", req->what, curl_easy_strerror(rc));
		s3_attempt_free(x);
		return NULL;
	}
	resp->attempts++;
	return x;
}

void
s3_attempt_free(S3Attempt *x)
{
	if (x == NULL)
		return;
	curl_slist_free_all(x->hdrs);
	fst_buf_free(&x->url);
	fst_free(x);
}

AttemptResult
s3_attempt_finish(S3Attempt *xp, int curl_code, FstError *err)
{
	Xfer		x = *xp;
	S3Store    *s = x.s;
	const S3Request *req = x.req;
	S3Response *resp = x.resp;
	CURLcode	rc = (CURLcode) curl_code;
	const char *what = req->what;
	char		errbuf[CURL_ERROR_SIZE];

	memcpy(errbuf, xp->errbuf, sizeof(errbuf));
	s3_attempt_free(xp);
	if (rc == CURLE_WRITE_ERROR && x.enough)
		rc = CURLE_OK;
	if (rc != CURLE_OK && x.body_failed)
	{
		/* the body's own source failed: sending it again would too */
		fst_error(err, x.body_err.code, "%s: %s", what, x.body_err.msg);
		return ATTEMPT_FAIL;
	}
	if (rc != CURLE_OK)
	{
		const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);

		switch (rc)
		{
			case CURLE_ABORTED_BY_CALLBACK:
				fst_error(err, FST_INTERRUPTED, "%s: interrupted", what);
				return ATTEMPT_FAIL;
			case CURLE_WRITE_ERROR:
				if (x.overflow)
					fst_error(err, FST_CORRUPT,
							  "%s: the reply is longer than the %zu bytes asked for",
							  what, req->out_cap);
				else
					fst_error(err, FST_NO_MEMORY, "%s: out of memory", what);
				return ATTEMPT_FAIL;
			case CURLE_COULDNT_RESOLVE_HOST:
			case CURLE_COULDNT_RESOLVE_PROXY:
				fst_error(err, FST_IO_ERROR,
						  "%s: could not resolve the host of endpoint %s: %s",
						  what, s->endpoint, detail);
				fst_error_cause(err, FST_CAUSE_UNREACHABLE);
				return ATTEMPT_RETRY;
			case CURLE_COULDNT_CONNECT:
				fst_error(err, FST_IO_ERROR,
						  "%s: could not connect to endpoint %s: %s",
						  what, s->endpoint, detail);
				fst_error_cause(err, FST_CAUSE_UNREACHABLE);
				return ATTEMPT_RETRY;
			case CURLE_OPERATION_TIMEDOUT:
				fst_error(err, FST_TRANSIENT, "%s: timed out: %s", what,
						  detail);
				fst_error_cause(err, FST_CAUSE_TIMEOUT);
				return ATTEMPT_RETRY;
			case CURLE_SEND_ERROR:
			case CURLE_RECV_ERROR:
			case CURLE_GOT_NOTHING:
			case CURLE_PARTIAL_FILE:
			case CURLE_HTTP2:
			case CURLE_HTTP2_STREAM:
			case CURLE_SSL_CONNECT_ERROR:
				fst_error(err, FST_TRANSIENT, "%s: connection failed: %s",
						  what, detail);
				return ATTEMPT_RETRY;
			case CURLE_PEER_FAILED_VERIFICATION:
			case CURLE_SSL_CACERT_BADFILE:
				fst_error(err, FST_IO_ERROR,
						  "%s: TLS certificate of endpoint %s not verified: %s",
						  what, s->endpoint, detail);
				fst_error_cause(err, FST_CAUSE_TLS);
				return ATTEMPT_FAIL;
			default:
				fst_error(err, FST_IO_ERROR, "%s: %s", what, detail);
				return ATTEMPT_FAIL;
		}
	}

	if (resp->status < 200 || resp->status >= 300)
	{
		FstError	ignore;

		if (resp->errbody.len > 0)
			(void) s3_xml_error(resp->errbody.data, resp->errbody.len,
								resp->code, sizeof(resp->code),
								resp->message, sizeof(resp->message),
								&ignore);
		if (s3_retriable_status(resp->status, resp->code))
		{
			if (strcmp(resp->code, "SlowDown") == 0 || resp->status == 429 ||
				strcmp(resp->code, "Throttling") == 0)
			{
				fst_error(err, FST_TRANSIENT,
						  "%s: the server kept throttling requests (HTTP %ld %s)",
						  what, resp->status,
						  resp->code[0] ? resp->code : "Too Many Requests");
				fst_error_cause(err, FST_CAUSE_THROTTLED);
			}
			else
				fst_error(err, FST_TRANSIENT, "%s: HTTP %ld %s%s%.100s", what,
						  resp->status, resp->code,
						  resp->message[0] ? ": " : "", resp->message);
			return ATTEMPT_RETRY;
		}
		return ATTEMPT_DONE;
	}

	/* payload integrity: the whole announced body arrived */
	if ((req->out || req->out_buf) && !x.enough &&
		strcmp(req->method, "HEAD") != 0 && resp->content_length >= 0 &&
		(int64) (resp->received + x.skipped) != resp->content_length)
	{
		fst_error(err, FST_TRANSIENT,
				  "%s: received %zu bytes, Content-Length said %lld", what,
				  resp->received, (long long) resp->content_length);
		return ATTEMPT_RETRY;
	}
	return ATTEMPT_DONE;
}

FstCode
s3_status_error(S3Store *s, const S3Request *req, const S3Response *resp,
				FstError *err)
{
	const char *what = req->what;
	const char *c = resp->code;
	long		st = resp->status;

	if (strcmp(c, "NoSuchBucket") == 0)
	{
		fst_error(err, FST_NOT_FOUND,
				  "%s: bucket \"%s\" does not exist at %s", what,
				  s->bucket, s->endpoint);
		return fst_error_cause(err, FST_CAUSE_NO_BUCKET);
	}
	if (st == 404)
		return fst_error(err, FST_NOT_FOUND, "%s: not found%s%s", what,
						 c[0] ? ": " : "", c);
	if (strcmp(c, "RequestTimeTooSkewed") == 0)
	{
		fst_error(err, FST_ACCESS_DENIED,
				  "%s: the server rejects this machine's clock as too far off (RequestTimeTooSkewed); check the system time",
				  what);
		return fst_error_cause(err, FST_CAUSE_CLOCK_SKEW);
	}
	if (strcmp(c, "InvalidAccessKeyId") == 0)
	{
		fst_error(err, FST_ACCESS_DENIED,
				  "%s: the server does not know the access key id (InvalidAccessKeyId)",
				  what);
		return fst_error_cause(err, FST_CAUSE_CREDENTIALS);
	}
	if (strcmp(c, "SignatureDoesNotMatch") == 0)
	{
		fst_error(err, FST_ACCESS_DENIED,
				  "%s: request signature rejected (SignatureDoesNotMatch): check the secret key and region",
				  what);
		return fst_error_cause(err, FST_CAUSE_CREDENTIALS);
	}
	if (strcmp(c, "AuthorizationHeaderMalformed") == 0)
	{
		fst_error(err, FST_ACCESS_DENIED,
				  "%s: authorization rejected (AuthorizationHeaderMalformed): check the region (\"%s\")",
				  what, s->region);
		return fst_error_cause(err, FST_CAUSE_REGION);
	}
	if (st == 403 || st == 401)
	{
		fst_error(err, FST_ACCESS_DENIED, "%s: access denied (HTTP %ld %s)",
				  what, st, c[0] ? c : "Forbidden");
		return fst_error_cause(err, FST_CAUSE_DENIED);
	}
	if (st == 501 || strcmp(c, "NotImplemented") == 0)
		return fst_error(err, FST_NOT_SUPPORTED,
						 "%s: not implemented by the server at %s (HTTP %ld %s)",
						 what, s->endpoint, st, c);
	if (st == 301 || st == 307 || strcmp(c, "PermanentRedirect") == 0)
	{
		fst_error(err, FST_IO_ERROR,
				  "%s: bucket \"%s\" is served elsewhere (HTTP %ld %s): check the region and endpoint",
				  what, s->bucket, st, c);
		return fst_error_cause(err, FST_CAUSE_REGION);
	}
	return fst_error(err, FST_IO_ERROR, "%s: HTTP %ld %s%s%.100s", what, st,
					 c[0] ? c : "error", resp->message[0] ? ": " : "",
					 resp->message);
}
