/*-------------------------------------------------------------------------
 *
 * s3_guc.c
 *	  The forst.s3_* configuration parameters: how the server reaches an
 *	  s3:// forst.remote_dir (documented in docs/configuration.md).
 *
 * Contexts.  Endpoint, region and addressing style say where the state
 * lives, like forst.remote_dir itself, so they are PGC_POSTMASTER.
 * Credentials, CA certificates, timeouts and retries are PGC_SIGHUP: keys
 * can be rotated with a reload, and every process (backends and the flush
 * worker) applies the new values to its open store handle the next time it
 * uses it (objects/store.c compares forst_s3_settings_generation).
 *
 * Secrets.  forst.s3_secret_access_key and forst.s3_session_token are
 * GUC_SUPERUSER_ONLY, and beyond that their values are never visible at
 * all: the check hook moves the value into its "extra" and leaves an empty
 * string in the variable, so that neither SHOW, pg_settings (a show hook
 * prints "********" when one is set) nor the postmaster's "parameter
 * changed" log line (which it only writes when the variable's text
 * changed) can show it.  The check hooks never fail, so no error message
 * quotes a secret either.  Unset credentials fall back to the AWS_*
 * environment of the postmaster (fst_s3_config_from_env).
 *
 * Parallel workers.  A parallel worker takes its leader's settings
 * (RestoreGUCState), in which a secret's variable is "": it would have
 * no secret.  So each process also keeps the last secret it was given
 * outside a parallel worker; a parallel worker, forked from the
 * postmaster, inherits the postmaster's, which read the same
 * configuration files as the leader (a secret is PGC_SIGHUP: no session
 * sets its own), and uses it when its leader's settings say "".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "utils/guc.h"

#include "am/forst.h"
#include "store/objstore_s3.h"

char	   *forst_s3_endpoint = NULL;
char	   *forst_s3_region = NULL;
int			forst_s3_path_style = -1;
char	   *forst_s3_access_key_id = NULL;
char	   *forst_s3_ca_file = NULL;
char	   *forst_s3_ca_path = NULL;
int			forst_s3_connect_timeout_ms = 5000;
int			forst_s3_request_timeout_ms = 60000;
int			forst_s3_max_retries = 5;
int			forst_s3_parallel_gets = 16;

/* bumped by every assignment of a reloadable setting */
uint32		forst_s3_settings_generation = 0;

/* the visible variables of the two secrets: always "" */
static char *secret_access_key_var = NULL;
static char *session_token_var = NULL;

/* the secrets themselves: the current "extra" of each (malloc'ed) */
static const char *secret_access_key = NULL;
static const char *session_token = NULL;

/* the last of each given outside a parallel worker (malloc'ed copies) */
static char *inherited_secret_access_key = NULL;
static char *inherited_session_token = NULL;

static const struct config_enum_entry path_style_options[] = {
	{"auto", -1, false},
	{"on", 1, false},
	{"off", 0, false},
	{"true", 1, true},
	{"false", 0, true},
	{NULL, 0, false}
};

static bool
check_endpoint(char **newval, void **extra, GucSource source)
{
	const char *v = *newval;
	const char *auth;
	size_t		alen;

	if (v == NULL || v[0] == '\0')
		return true;
	if (pg_strncasecmp(v, "http://", 7) == 0)
		auth = v + 7;
	else if (pg_strncasecmp(v, "https://", 8) == 0)
		auth = v + 8;
	else
	{
		GUC_check_errdetail("forst.s3_endpoint must begin with http:// or https://.");
		return false;
	}
	alen = strcspn(auth, "/?#@ ");
	if (alen == 0 || (auth[alen] != '\0' && strcmp(auth + alen, "/") != 0))
	{
		GUC_check_errdetail("forst.s3_endpoint must be http[s]://host[:port], without a path or user name.");
		return false;
	}
	return true;
}

/*
 * Check hook of a secret: keep the value in *extra, show "" (see the
 * header comment); in a parallel worker, "" means the inherited secret.
 * Never fails on the value.
 */
static bool
check_secret(char **newval, void **extra, const char *inherited)
{
	const char *v = *newval ? *newval : "";
	char	   *keep;
	char	   *blank;

	if (v[0] == '\0' && inherited != NULL && IsParallelWorker())
		v = inherited;
	keep = malloc(strlen(v) + 1);
	blank = malloc(1);
	if (keep == NULL || blank == NULL)
	{
		free(keep);
		free(blank);
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	strcpy(keep, v);
	blank[0] = '\0';
	if (*newval)
	{
		memset(*newval, 0, strlen(*newval));
		free(*newval);
	}
	*newval = blank;
	*extra = keep;
	return true;
}

static bool
check_secret_access_key(char **newval, void **extra, GucSource source)
{
	return check_secret(newval, extra, inherited_secret_access_key);
}

static bool
check_session_token(char **newval, void **extra, GucSource source)
{
	return check_secret(newval, extra, inherited_session_token);
}

/* Keeps a copy of a secret given outside a parallel worker. */
static void
remember_secret(char **copy, const char *value)
{
	char	   *keep;

	if (IsParallelWorker())
		return;
	keep = value ? strdup(value) : NULL;
	if (value && keep == NULL)
		return;					/* out of memory: workers keep the old one */
	if (*copy)
	{
		memset(*copy, 0, strlen(*copy));
		free(*copy);
	}
	*copy = keep;
}

static void
assign_secret_access_key(const char *newval, void *extra)
{
	secret_access_key = extra;
	remember_secret(&inherited_secret_access_key, extra);
	forst_s3_settings_generation++;
}

static void
assign_session_token(const char *newval, void *extra)
{
	session_token = extra;
	remember_secret(&inherited_session_token, extra);
	forst_s3_settings_generation++;
}

static const char *
show_secret_access_key(void)
{
	return secret_access_key && secret_access_key[0] ? "********" : "";
}

static const char *
show_session_token(void)
{
	return session_token && session_token[0] ? "********" : "";
}

static void
assign_string(const char *newval, void *extra)
{
	forst_s3_settings_generation++;
}

static void
assign_int(int newval, void *extra)
{
	forst_s3_settings_generation++;
}

void
forst_define_s3_gucs(void)
{
	DefineCustomStringVariable("forst.s3_endpoint",
							   "Endpoint of an s3:// forst.remote_dir.",
							   "http[s]://host[:port]; empty means AWS_ENDPOINT_URL_S3 or "
							   "AWS_ENDPOINT_URL from the environment, else AWS "
							   "(https://s3.<region>.amazonaws.com).",
							   &forst_s3_endpoint,
							   "",
							   PGC_POSTMASTER,
							   0,
							   check_endpoint, NULL, NULL);

	DefineCustomStringVariable("forst.s3_region",
							   "Region of an s3:// forst.remote_dir (for request signing).",
							   "Empty means AWS_REGION or AWS_DEFAULT_REGION from the "
							   "environment, else us-east-1.",
							   &forst_s3_region,
							   "",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);

	DefineCustomEnumVariable("forst.s3_path_style",
							 "Path-style (on) or virtual-hosted (off) S3 addressing.",
							 "auto: virtual-hosted for AWS, path-style for any "
							 "explicit endpoint.",
							 &forst_s3_path_style,
							 -1,
							 path_style_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("forst.s3_access_key_id",
							   "Access key id for an s3:// forst.remote_dir.",
							   "Empty means AWS_ACCESS_KEY_ID from the environment.",
							   &forst_s3_access_key_id,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, assign_string, NULL);

	DefineCustomStringVariable("forst.s3_secret_access_key",
							   "Secret access key for an s3:// forst.remote_dir (never shown).",
							   "Empty means AWS_SECRET_ACCESS_KEY from the environment.",
							   &secret_access_key_var,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY | GUC_NOT_IN_SAMPLE,
							   check_secret_access_key, assign_secret_access_key,
							   show_secret_access_key);

	DefineCustomStringVariable("forst.s3_session_token",
							   "Session token of temporary credentials for an s3:// forst.remote_dir (never shown).",
							   "Empty means AWS_SESSION_TOKEN from the environment.",
							   &session_token_var,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY | GUC_NOT_IN_SAMPLE,
							   check_session_token, assign_session_token,
							   show_session_token);

	DefineCustomStringVariable("forst.s3_ca_file",
							   "File of CA certificates that verify an https forst.s3_endpoint.",
							   "Empty means AWS_CA_BUNDLE from the environment, else the "
							   "system's CAs.  Certificates are always verified.",
							   &forst_s3_ca_file,
							   "",
							   PGC_SIGHUP,
							   0,
							   NULL, assign_string, NULL);

	DefineCustomStringVariable("forst.s3_ca_path",
							   "Directory of CA certificates (OpenSSL hashed names) for an https forst.s3_endpoint.",
							   NULL,
							   &forst_s3_ca_path,
							   "",
							   PGC_SIGHUP,
							   0,
							   NULL, assign_string, NULL);

	DefineCustomIntVariable("forst.s3_connect_timeout",
							"Time limit to connect to the S3 endpoint, per attempt.",
							NULL,
							&forst_s3_connect_timeout_ms,
							5000, 100, 600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, assign_int, NULL);

	DefineCustomIntVariable("forst.s3_request_timeout",
							"Time limit of one S3 request attempt, transfer included.",
							"Stalled transfers (under 1 kB/s for 15 s) are abandoned earlier.",
							&forst_s3_request_timeout_ms,
							60000, 1000, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, assign_int, NULL);

	DefineCustomIntVariable("forst.s3_max_retries",
							"Retries of an S3 request after a transient failure.",
							"5xx, 429/SlowDown, timeouts and connection resets are retried "
							"with exponential backoff and jitter.",
							&forst_s3_max_retries,
							5, 0, 100,
							PGC_SIGHUP,
							0,
							NULL, assign_int, NULL);

	DefineCustomIntVariable("forst.s3_parallel_gets",
							"Ranged GETs in flight at once when forst fetches a batch of "
							"ranges (prefetch, batched lookups, prewarm).",
							"Each backend or worker that fetches a batch opens up to this "
							"many connections to the store.",
							&forst_s3_parallel_gets,
							16, 1, FST_S3_MAX_PARALLEL_GETS,
							PGC_SIGHUP,
							0,
							NULL, assign_int, NULL);
}

void
forst_s3_config(FstS3Config *cfg)
{
	fst_s3_config_defaults(cfg);
	if (forst_s3_endpoint && forst_s3_endpoint[0])
		cfg->endpoint = forst_s3_endpoint;
	if (forst_s3_region && forst_s3_region[0])
		cfg->region = forst_s3_region;
	cfg->path_style = forst_s3_path_style;
	if (forst_s3_access_key_id && forst_s3_access_key_id[0])
	{
		/* a key id from the settings goes with the secret from the settings */
		cfg->access_key = forst_s3_access_key_id;
		cfg->secret_key = secret_access_key ? secret_access_key : "";
		cfg->session_token = session_token ? session_token : "";
	}
	if (forst_s3_ca_file && forst_s3_ca_file[0])
		cfg->ca_file = forst_s3_ca_file;
	if (forst_s3_ca_path && forst_s3_ca_path[0])
		cfg->ca_path = forst_s3_ca_path;
	cfg->connect_timeout_ms = forst_s3_connect_timeout_ms;
	cfg->request_timeout_ms = forst_s3_request_timeout_ms;
	cfg->max_retries = forst_s3_max_retries;
	cfg->parallel_gets = forst_s3_parallel_gets;
	fst_s3_config_from_env(cfg);
}
