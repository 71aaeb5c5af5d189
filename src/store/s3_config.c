/*-------------------------------------------------------------------------
 *
 * s3_config.c
 *	  Settings of the s3:// store (defaults, the AWS_* environment, URL
 *	  parameters), opening and closing a store.
 *
 * Addressing: path-style requests go to <endpoint>/<bucket>/<key>,
 * virtual-hosted ones to <bucket>.<endpoint host>/<key>.  The Host header
 * is set (and signed) explicitly, without a port that is the scheme's
 * default, as libcurl would send it.
 *
 * Secrets are copied into the handle and wiped from memory at close.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <stdio.h>
#include <stdlib.h>

#include <curl/curl.h>
#include <openssl/rand.h>

#include "s3_internal.h"

static void
free_secret(char *p)
{
	if (p)
	{
		memset(p, 0, strlen(p));
		fst_free(p);
	}
}

void
s3_store_close(FstObjStore *store)
{
	S3Store    *s = (S3Store *) store;

	if (s->curl)
		curl_easy_cleanup(s->curl);
	s3_multi_close(s);
	fst_free(s->bucket);
	fst_free(s->prefix);
	fst_free(s->base_url);
	fst_free(s->host);
	fst_free(s->path_base);
	fst_free(s->endpoint);
	fst_free(s->region);
	fst_free(s->access_key);
	free_secret(s->secret_key);
	free_secret(s->session_token);
	fst_free(s->ca_file);
	fst_free(s->ca_path);
	fst_free(s);
}


void
fst_s3_config_defaults(FstS3Config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->path_style = -1;
	cfg->connect_timeout_ms = 5000;
	cfg->request_timeout_ms = 60000;
	cfg->low_speed_time_s = 15;
	cfg->max_retries = 5;
	cfg->parallel_gets = 16;
	cfg->retry_base_ms = 100;
	cfg->retry_max_ms = 5000;
	cfg->multipart_threshold = UINT64CONST(16) << 20;
	cfg->part_size = UINT64CONST(8) << 20;
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

void
fst_s3_config_from_env(FstS3Config *cfg)
{
	if (cfg->access_key == NULL)
		cfg->access_key = env("AWS_ACCESS_KEY_ID");
	if (cfg->secret_key == NULL)
		cfg->secret_key = env("AWS_SECRET_ACCESS_KEY");
	if (cfg->session_token == NULL)
		cfg->session_token = env("AWS_SESSION_TOKEN");
	if (cfg->region == NULL)
		cfg->region = env("AWS_REGION") ? env("AWS_REGION") :
			env("AWS_DEFAULT_REGION");
	if (cfg->endpoint == NULL)
		cfg->endpoint = env("AWS_ENDPOINT_URL_S3") ?
			env("AWS_ENDPOINT_URL_S3") : env("AWS_ENDPOINT_URL");
	if (cfg->ca_file == NULL)
		cfg->ca_file = env("AWS_CA_BUNDLE");
}

static bool
set_str(char **dst, const char *src)
{
	*dst = NULL;
	if (src == NULL || *src == '\0')
		return true;
	*dst = fst_strdup(src);
	return *dst != NULL;
}

/* Split endpoint into scheme and authority; false if malformed. */
static bool
parse_endpoint(const char *ep, char *scheme, size_t ssize, char *authority,
			   size_t asize, bool *default_port)
{
	const char *sep = strstr(ep, "://");
	const char *auth;
	size_t		alen;
	const char *colon;

	if (sep == NULL || (size_t) (sep - ep) >= ssize)
		return false;
	memcpy(scheme, ep, sep - ep);
	scheme[sep - ep] = '\0';
	if (pg_strcasecmp(scheme, "http") != 0 && pg_strcasecmp(scheme, "https") != 0)
		return false;
	auth = sep + 3;
	alen = strcspn(auth, "/?#");
	if (alen == 0 || alen >= asize || strcspn(auth, "@ ") < alen ||
		(auth[alen] != '\0' && strcmp(auth + alen, "/") != 0))
		return false;
	memcpy(authority, auth, alen);
	authority[alen] = '\0';
	/* an explicit port equal to the scheme's default is left out of Host */
	colon = strrchr(authority, ':');
	*default_port = false;
	if (colon && strchr(colon, ']') == NULL)
	{
		long		port = strtol(colon + 1, NULL, 10);

		if ((port == 80 && pg_strcasecmp(scheme, "http") == 0) ||
			(port == 443 && pg_strcasecmp(scheme, "https") == 0))
		{
			*default_port = true;
			authority[colon - authority] = '\0';
		}
	}
	return true;
}

FstCode
fst_objstore_s3_open(const FstObjUrl *url, const char *url_text,
					 const FstS3Config *cfg, FstObjStore **out, FstError *err)
{
	static bool curl_ready = false;
	S3Store    *s;
	char		scheme[16];
	char		authority[300];
	char		aws_ep[128];
	const char *region = cfg->region && *cfg->region ? cfg->region : "us-east-1";
	const char *ep = cfg->endpoint;
	bool		is_aws = false;
	bool		default_port;
	bool		path_style;
	bool		ok;
	const char *c;
	FstBuf		b;

	*out = NULL;
	for (c = url->host; *c; c++)
	{
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
			  (*c >= 'A' && *c <= 'Z') || *c == '.' || *c == '-' || *c == '_'))
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "invalid S3 bucket name \"%.64s\"", url->host);
	}
	if (url->path[0] && fst_objstore_validate_key(url->path, err) != FST_OK)
	{
		fst_error_prefix(err, "s3 URL prefix");
		return FST_INVALID_ARGUMENT;
	}
	if (ep == NULL || *ep == '\0')
	{
		snprintf(aws_ep, sizeof(aws_ep), "https://s3.%s.amazonaws.com", region);
		ep = aws_ep;
		is_aws = true;
	}
	if (!parse_endpoint(ep, scheme, sizeof(scheme), authority,
						sizeof(authority), &default_port))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "invalid S3 endpoint \"%.100s\" (expected http[s]://host[:port])",
						 ep);
	if ((cfg->access_key && *cfg->access_key) &&
		!(cfg->secret_key && *cfg->secret_key))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "S3 access key id given without a secret access key");
	if (cfg->part_size < (UINT64CONST(5) << 20) ||
		cfg->part_size > (UINT64CONST(5) << 30) || cfg->multipart_threshold == 0)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "S3 part size must be between 5 MiB and 5 GiB");
	path_style = cfg->path_style < 0 ? !is_aws : cfg->path_style != 0;

	if (!curl_ready)
	{
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return fst_error(err, FST_IO_ERROR, "could not initialize libcurl");
		curl_ready = true;
	}
	s = fst_calloc(1, sizeof(S3Store));
	if (s == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	ok = fst_objstore_init_base(&s->base, &s3_store_ops, url_text) &&
		set_str(&s->bucket, url->host) &&
		set_str(&s->endpoint, ep) &&
		set_str(&s->region, region) &&
		set_str(&s->access_key, cfg->access_key) &&
		set_str(&s->secret_key, cfg->secret_key) &&
		set_str(&s->session_token, cfg->session_token) &&
		set_str(&s->ca_file, cfg->ca_file) &&
		set_str(&s->ca_path, cfg->ca_path);
	if (ok && s->access_key == NULL)
	{
		free_secret(s->secret_key);
		s->secret_key = NULL;
	}
	fst_buf_init(&b);
	if (ok)
	{
		/* prefix "p" -> "p/" */
		fst_buf_append(&b, url->path, strlen(url->path));
		if (url->path[0])
			fst_buf_putc(&b, '/');
		fst_buf_putc(&b, '\0');
		ok = !b.oom && set_str(&s->prefix, b.data);
		if (ok && s->prefix == NULL)
			ok = set_str(&s->prefix, "x") && (s->prefix[0] = '\0', true);
		fst_buf_reset(&b);
		if (path_style)
			ok = ok && set_str(&s->host, authority);
		else
		{
			fst_buf_append(&b, url->host, strlen(url->host));
			fst_buf_putc(&b, '.');
			fst_buf_append(&b, authority, strlen(authority));
			fst_buf_putc(&b, '\0');
			ok = ok && !b.oom && set_str(&s->host, b.data);
		}
		fst_buf_reset(&b);
		fst_buf_append(&b, scheme, strlen(scheme));
		fst_buf_append(&b, "://", 3);
		if (s->host)
			fst_buf_append(&b, s->host, strlen(s->host));
		fst_buf_putc(&b, '\0');
		ok = ok && !b.oom && set_str(&s->base_url, b.data);
		fst_buf_reset(&b);
		if (path_style)
		{
			fst_buf_putc(&b, '/');
			fst_buf_append(&b, url->host, strlen(url->host));
		}
		else
			fst_buf_putc(&b, 'x');
		fst_buf_putc(&b, '\0');
		ok = ok && !b.oom && set_str(&s->path_base, b.data);
		if (ok && !path_style)
			s->path_base[0] = '\0';
	}
	fst_buf_free(&b);
	if (ok)
	{
		s->curl = curl_easy_init();
		ok = s->curl != NULL;
	}
	if (!ok)
	{
		s3_store_close(&s->base);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	s->connect_timeout_ms = Max(cfg->connect_timeout_ms, 1);
	s->request_timeout_ms = Max(cfg->request_timeout_ms, 1);
	s->low_speed_time_s = Max(cfg->low_speed_time_s, 1);
	s->max_retries = Max(cfg->max_retries, 0);
	s->parallel_gets = Min(Max(cfg->parallel_gets, 1), FST_S3_MAX_PARALLEL_GETS);
	s->retry_base_ms = Max(cfg->retry_base_ms, 1);
	s->retry_max_ms = Max(cfg->retry_max_ms, s->retry_base_ms);
	s->multipart_threshold = cfg->multipart_threshold;
	s->part_size = cfg->part_size;
	if (RAND_bytes((unsigned char *) &s->rng, sizeof(s->rng)) != 1 || s->rng == 0)
		s->rng = (uint64) (uintptr_t) s ^ UINT64CONST(0x9E3779B97F4A7C15);
	*out = &s->base;
	return FST_OK;
}

FstCode
fst_objstore_s3_reconfigure(FstObjStore *store, const FstS3Config *cfg,
							FstError *err)
{
	S3Store    *s = (S3Store *) store;
	FstObjStore *fresh_store;
	S3Store    *fresh;
	S3Store		tmp;
	FstObjUrl	url;
	FstCode		code;

	if (store->ops != &s3_store_ops)
		return fst_error(err, FST_INVALID_ARGUMENT, "not an s3 store");
	code = fst_objstore_parse_url(store->url, &url, err);
	if (code != FST_OK)
		return code;
	code = fst_objstore_s3_open(&url, store->url, cfg, &fresh_store, err);
	if (code != FST_OK)
		return code;
	fresh = (S3Store *) fresh_store;

	/*
	 * Swap everything but the common head (URL, counters, interrupt
	 * callback): the old settings go with the fresh handle, which is closed.
	 */
	tmp = *s;
	memcpy((char *) s + sizeof(FstObjStore), (char *) fresh + sizeof(FstObjStore),
		   sizeof(S3Store) - sizeof(FstObjStore));
	memcpy((char *) fresh + sizeof(FstObjStore), (char *) &tmp + sizeof(FstObjStore),
		   sizeof(S3Store) - sizeof(FstObjStore));
	memset(&tmp, 0, sizeof(tmp));
	fst_objstore_close(fresh_store);
	return FST_OK;
}

FstCode
fst_objstore_s3_open_url(const FstObjUrl *url, const char *url_text,
						 FstObjStore **out, FstError *err)
{
	FstS3Config cfg;
	char		query[sizeof(url->query)];
	char	   *p;
	char	   *save = NULL;

	fst_s3_config_defaults(&cfg);
	snprintf(query, sizeof(query), "%s", url->query);
	for (p = strtok_r(query, "&", &save); p; p = strtok_r(NULL, "&", &save))
	{
		char	   *eq = strchr(p, '=');
		const char *v = eq ? eq + 1 : "";

		if (eq)
			*eq = '\0';
		if (strcmp(p, "endpoint") == 0)
			cfg.endpoint = v;
		else if (strcmp(p, "region") == 0)
			cfg.region = v;
		else if (strcmp(p, "path_style") == 0 &&
				 (strcmp(v, "true") == 0 || strcmp(v, "1") == 0))
			cfg.path_style = 1;
		else if (strcmp(p, "path_style") == 0 &&
				 (strcmp(v, "false") == 0 || strcmp(v, "0") == 0))
			cfg.path_style = 0;
		else
			return fst_error(err, FST_INVALID_ARGUMENT,
							 "unknown or invalid s3 URL parameter \"%.60s\" (expected endpoint, region or path_style=true|false)",
							 p);
	}
	fst_s3_config_from_env(&cfg);
	return fst_objstore_s3_open(url, url_text, &cfg, out, err);
}
