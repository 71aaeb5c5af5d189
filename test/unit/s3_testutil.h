/*-------------------------------------------------------------------------
 *
 * s3_testutil.h
 *	  Helpers of the s3:// integration tests (test_s3.c, test_s3_faults.c):
 *	  the test URL and its per-run prefix, opening stores, small checks.
 *
 * FORST_S3_TEST_URL names the store (s3://bucket/prefix?endpoint=...);
 * every test works under <prefix>/<run>/<test>, <run> being
 * FORST_S3_TEST_RUN or "run-<pid>-<time>".
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_S3_TESTUTIL_H
#define FST_S3_TESTUTIL_H

#include "unit.h"
#include "objstore_s3.h"

#include <time.h>
#include <unistd.h>

static inline const char *
s3_test_run_id(void)
{
	static char run_id[48];

	if (run_id[0] == '\0')
	{
		if (getenv("FORST_S3_TEST_RUN"))
			snprintf(run_id, sizeof(run_id), "%s", getenv("FORST_S3_TEST_RUN"));
		else
			snprintf(run_id, sizeof(run_id), "run-%d-%ld", (int) getpid(),
					 (long) time(NULL));
	}
	return run_id;
}


static inline bool
env_set(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

/* s3rver: no conditional writes, no signature checks, see above */
static inline bool
lenient_server(void)
{
	const char *v = getenv("FORST_S3_TEST_SERVER");

	return v != NULL && strcmp(v, "s3rver") == 0;
}

/* The test URL with "/<run>/<name>" appended to its prefix (or exactly). */
static inline void
test_url(const char *name, char *out, size_t size)
{
	const char *base = getenv("FORST_S3_TEST_URL");
	const char *q = strchr(base, '?');
	size_t		n = q ? (size_t) (q - base) : strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	if (name == NULL)
		snprintf(out, size, "%s", base);
	else
		snprintf(out, size, "%.*s/%s/%s%s", (int) n, base, s3_test_run_id(),
				 name, q ? q : "");
}

static inline bool
open_named(const char *name, FstObjStore **store)
{
	char		url[1024];
	FstError	err;

	test_url(name, url, sizeof(url));
	if (fst_objstore_open(url, store, &err) != FST_OK)
	{
		fst_test_fail(__FILE__, __LINE__, "open %s: %s", url, err.msg);
		return false;
	}
	return true;
}

/* Open with an explicit configuration (from the environment, then cfg). */
static inline bool
open_cfg(const char *name, FstS3Config *cfg, const char *bucket,
		 FstObjStore **store, FstError *err)
{
	char		url[1024];
	FstObjUrl	u;

	test_url(name, url, sizeof(url));
	if (fst_objstore_parse_url(url, &u, err) != FST_OK)
		return false;
	if (bucket)
		snprintf(u.host, sizeof(u.host), "%s", bucket);
	if (cfg->endpoint == NULL)
	{
		/* the endpoint of the test URL, when it has one */
		static char ep[256];
		const char *e = strstr(u.query, "endpoint=");

		if (e)
		{
			snprintf(ep, sizeof(ep), "%s", e + 9);
			ep[strcspn(ep, "&")] = '\0';
			cfg->endpoint = ep;
		}
	}
	fst_s3_config_from_env(cfg);
	return fst_objstore_s3_open(&u, url, cfg, store, err) == FST_OK;
}

static inline bool
put_str(FstObjStore *store, const char *key, const char *s)
{
	FstError	err;

	if (fst_objstore_put(store, key, s, strlen(s), &err) != FST_OK)
	{
		fst_test_fail(__FILE__, __LINE__, "put %s: %s", key, err.msg);
		return false;
	}
	return true;
}

static inline bool
buf_is(const FstBuf *b, const void *data, size_t len)
{
	return b->len == len && (len == 0 || memcmp(b->data, data, len) == 0);
}

static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void
fill_random(char *p, size_t n, uint64 seed)
{
	size_t		i;

	for (i = 0; i < n; i++)
	{
		if (i % 8 == 0)
			fst_rand_next(&seed);
		p[i] = (char) (seed >> (8 * (i % 8)));
	}
}

#endif							/* FST_S3_TESTUTIL_H */
