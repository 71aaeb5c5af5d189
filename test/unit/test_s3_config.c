/*
 * test_s3_config.c — settings of the s3:// store without a server: URL
 * parameters, the AWS_* environment, addressing (path-style or virtual-
 * hosted, Host header), and refusals of bad settings.
 */
#include "unit.h"
#include "s3_internal.h"

static const char *const aws_env[] = {
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
	"AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE"
};

/* Save and clear the AWS_* environment (restored by restore_env). */
static char *saved_env[lengthof(aws_env)];

static void
clear_env(void)
{
	int			i;

	for (i = 0; i < (int) lengthof(aws_env); i++)
	{
		const char *v = getenv(aws_env[i]);

		saved_env[i] = v ? strdup(v) : NULL;
		unsetenv(aws_env[i]);
	}
}

static void
restore_env(void)
{
	int			i;

	for (i = 0; i < (int) lengthof(aws_env); i++)
	{
		if (saved_env[i])
			setenv(aws_env[i], saved_env[i], 1);
		else
			unsetenv(aws_env[i]);
		free(saved_env[i]);
		saved_env[i] = NULL;
	}
}

static S3Store *
open_url(const char *url, FstError *err)
{
	FstObjStore *store = NULL;

	if (fst_objstore_open(url, &store, err) != FST_OK)
		return NULL;
	return (S3Store *) store;
}

static void
check_addressing(void)
{
	FstError	err;
	S3Store    *s;

	/* AWS by default: virtual-hosted, https, the region in the host */
	s = open_url("s3://my-bucket/some/prefix", &err);
	CHECK_MSG(s != NULL, "%s", err.msg);
	CHECK(strcmp(s->base_url, "https://my-bucket.s3.us-east-1.amazonaws.com") == 0);
	CHECK(strcmp(s->host, "my-bucket.s3.us-east-1.amazonaws.com") == 0);
	CHECK(strcmp(s->path_base, "") == 0);
	CHECK(strcmp(s->prefix, "some/prefix/") == 0);
	CHECK(strcmp(s->region, "us-east-1") == 0);
	CHECK(s->access_key == NULL && s->secret_key == NULL);
	fst_objstore_close(&s->base);

	/* an explicit endpoint: path-style; a default port is not in Host */
	s = open_url("s3://b/?endpoint=http://127.0.0.1:80/&region=eu-west-3", &err);
	CHECK_MSG(s != NULL, "%s", err.msg);
	CHECK(strcmp(s->base_url, "http://127.0.0.1") == 0);
	CHECK(strcmp(s->host, "127.0.0.1") == 0);
	CHECK(strcmp(s->path_base, "/b") == 0);
	CHECK(strcmp(s->prefix, "") == 0);
	CHECK(strcmp(s->region, "eu-west-3") == 0);
	fst_objstore_close(&s->base);

	s = open_url("s3://b/p?endpoint=https://minio.example:9000&path_style=false", &err);
	CHECK_MSG(s != NULL, "%s", err.msg);
	CHECK(strcmp(s->base_url, "https://b.minio.example:9000") == 0);
	CHECK(strcmp(s->host, "b.minio.example:9000") == 0);
	fst_objstore_close(&s->base);

	/* the environment */
	setenv("AWS_ENDPOINT_URL", "http://10.0.0.1:7480", 1);
	setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000", 1);
	setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "SECRET", 1);
	setenv("AWS_SESSION_TOKEN", "TOKEN", 1);
	s = open_url("s3://b/p", &err);
	CHECK_MSG(s != NULL, "%s", err.msg);
	CHECK(strcmp(s->base_url, "http://127.0.0.1:9000") == 0);
	CHECK(strcmp(s->region, "ap-south-1") == 0);
	CHECK(strcmp(s->access_key, "AKID") == 0 && strcmp(s->secret_key, "SECRET") == 0);
	CHECK(strcmp(s->session_token, "TOKEN") == 0);
	fst_objstore_close(&s->base);
	setenv("AWS_REGION", "us-west-2", 1);
	s = open_url("s3://b/p?region=eu-north-1", &err);
	CHECK_MSG(s != NULL, "%s", err.msg);
	CHECK(strcmp(s->region, "eu-north-1") == 0);	/* the URL wins */
	fst_objstore_close(&s->base);

	/* refusals, and no secret in their messages */
	unsetenv("AWS_SECRET_ACCESS_KEY");
	CHECK(open_url("s3://b/p", &err) == NULL && err.code == FST_INVALID_ARGUMENT);
	CHECK(strstr(err.msg, "secret") != NULL);
	setenv("AWS_SECRET_ACCESS_KEY", "SECRET", 1);
	CHECK(open_url("s3://b/p?endpoint=ftp://x", &err) == NULL && err.code == FST_INVALID_ARGUMENT);
	CHECK(open_url("s3://b/p?endpoint=http://h/path", &err) == NULL);
	CHECK(open_url("s3://b/p?endpoint=http://user@h", &err) == NULL);
	CHECK(open_url("s3://b/p?path_style=maybe", &err) == NULL);
	CHECK(open_url("s3://b%20c/p", &err) == NULL && err.code == FST_INVALID_ARGUMENT);
	CHECK(open_url("s3://b/.hidden", &err) == NULL && err.code == FST_INVALID_ARGUMENT);
	CHECK(strstr(err.msg, "SECRET") == NULL && strstr(err.msg, "TOKEN") == NULL);
}

FST_TEST(s3config_addressing_and_environment)
{
	clear_env();
	check_addressing();
	restore_env();
}

FST_TEST(s3config_explicit)
{
	FstS3Config cfg;
	FstObjUrl	u;
	FstObjStore *store;
	FstError	err;
	S3Store    *s;

	fst_s3_config_defaults(&cfg);
	CHECK(cfg.path_style == -1 && cfg.max_retries == 5);
	CHECK(cfg.parallel_gets == 16);
	CHECK(cfg.part_size == (uint64) 8 << 20);
	CHECK_OK(fst_objstore_parse_url("s3://bucket/x", &u, &err), &err);
	cfg.endpoint = "http://[::1]:9000";
	cfg.access_key = "AK";
	cfg.secret_key = "SK";
	cfg.max_retries = -3;
	cfg.parallel_gets = 1000;
	CHECK_OK(fst_objstore_s3_open(&u, "s3://bucket/x", &cfg, &store, &err), &err);
	s = (S3Store *) store;
	CHECK(strcmp(s->base_url, "http://[::1]:9000") == 0);
	CHECK(strcmp(s->path_base, "/bucket") == 0);
	CHECK(s->max_retries == 0);
	/* parallel GETs: clamped to 1 .. FST_S3_MAX_PARALLEL_GETS */
	CHECK(s->parallel_gets == FST_S3_MAX_PARALLEL_GETS);
	fst_objstore_close(store);
	cfg.parallel_gets = 0;
	CHECK_OK(fst_objstore_s3_open(&u, "s3://bucket/x", &cfg, &store, &err), &err);
	CHECK(((S3Store *) store)->parallel_gets == 1);
	fst_objstore_close(store);
	cfg.part_size = 1000;
	CHECK(fst_objstore_s3_open(&u, "s3://bucket/x", &cfg, &store, &err) == FST_INVALID_ARGUMENT);
}
