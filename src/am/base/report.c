/*-------------------------------------------------------------------------
 *
 * report.c
 *	  How failures of the engine and the object store become PostgreSQL
 *	  errors (SQLSTATE, message, detail naming the table, hint), and the
 *	  checks of a file:// forst.remote_dir before the store is opened.
 *
 * SQLSTATEs of object-store failures are of class 58 (system error: a
 * failure outside PostgreSQL), never class 08 or 28: drivers and connection
 * pools read those as "this connection is broken" or "the login failed"
 * and reconnect or give up, while the session is fine and the next
 * statement may well succeed.  The table (documented in
 * docs/configuration.md, "Errors"):
 *
 *	credentials rejected, wrong region,			58030 io_error
 *	still throttled or failing after retries
 *	the store cannot be reached (refused, DNS,	58000 system_error
 *	TLS, timeouts), the clock is off
 *	a known identity lacks permission			42501 insufficient_privilege
 *	(as PostgreSQL reports a file it may not read)
 *	the bucket does not exist					42704 undefined_object
 *	the forst.remote_dir directory is missing	58P01 undefined_file
 *	an object a manifest names is missing,		XX001 data_corrupted
 *	or its bytes are corrupt
 *	an object in a newer format (SST, manifest,	0A000 feature_not_supported
 *	checkpoint) or a WAL record of a newer forst
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xact.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/relfilenodemap.h"

#include "am/forst.h"
#include "am/objects/store.h"

/*
 * SQLSTATE and hint for a failure whose cause the store could tell.
 * Returns false when the cause says nothing beyond the FstCode.
 */
static bool
cause_sqlstate(FstCause cause, int *sqlstate, const char **hint)
{
	switch (cause)
	{
		case FST_CAUSE_CREDENTIALS:
			*sqlstate = ERRCODE_IO_ERROR;
			*hint = "Check forst.s3_access_key_id and forst.s3_secret_access_key "
				"(or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the server's "
				"environment) and reload the configuration.";
			return true;
		case FST_CAUSE_DENIED:
			*sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
			*hint = "The object store refused the request: grant the credentials "
				"access to the bucket and prefix of forst.remote_dir.";
			return true;
		case FST_CAUSE_NO_BUCKET:
			*sqlstate = ERRCODE_UNDEFINED_OBJECT;
			*hint = "Create the bucket, or correct forst.remote_dir and forst.s3_endpoint.";
			return true;
		case FST_CAUSE_UNREACHABLE:
			*sqlstate = ERRCODE_SYSTEM_ERROR;
			*hint = "Check that the object store is running and that forst.s3_endpoint "
				"names it.";
			return true;
		case FST_CAUSE_CLOCK_SKEW:
			*sqlstate = ERRCODE_SYSTEM_ERROR;
			*hint = "Synchronize this machine's clock (NTP): S3 rejects requests "
				"signed more than 15 minutes off.";
			return true;
		case FST_CAUSE_THROTTLED:
			*sqlstate = ERRCODE_IO_ERROR;
			*hint = "The object store kept asking to slow down; retry later, or raise "
				"forst.s3_max_retries.";
			return true;
		case FST_CAUSE_TIMEOUT:
			*sqlstate = ERRCODE_SYSTEM_ERROR;
			*hint = "The object store did not answer in time; check it and the network, "
				"or raise forst.s3_request_timeout.";
			return true;
		case FST_CAUSE_TLS:
			*sqlstate = ERRCODE_SYSTEM_ERROR;
			*hint = "Set forst.s3_ca_file or forst.s3_ca_path to the CA that signed "
				"the endpoint's certificate.";
			return true;
		case FST_CAUSE_REGION:
			*sqlstate = ERRCODE_IO_ERROR;
			*hint = "Check forst.s3_region and forst.s3_endpoint for the bucket.";
			return true;
		case FST_CAUSE_NEWER_FORMAT:
			*sqlstate = ERRCODE_FEATURE_NOT_SUPPORTED;
			*hint = "A newer version of forst wrote the object: install that version "
				"or a later one on this server (standbys before their primary).";
			return true;
		case FST_CAUSE_NONE:
			break;
	}
	return false;
}

/* SQLSTATE and hint of an FstCode whose cause the store could not tell. */
static int
code_sqlstate(FstCode code, const char **hint)
{
	switch (code)
	{
		case FST_CORRUPT:
		case FST_NOT_FOUND:
			return ERRCODE_DATA_CORRUPTED;
		case FST_IO_ERROR:
			return ERRCODE_IO_ERROR;
		case FST_ACCESS_DENIED:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		case FST_TRANSIENT:
			*hint = "The object store kept failing; the request was retried "
				"(forst.s3_max_retries).";
			return ERRCODE_IO_ERROR;
		case FST_NO_MEMORY:
			return ERRCODE_OUT_OF_MEMORY;
		case FST_INTERRUPTED:
			return ERRCODE_QUERY_CANCELED;
		case FST_NOT_SUPPORTED:
			return ERRCODE_FEATURE_NOT_SUPPORTED;
		case FST_FULL:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case FST_ALREADY_EXISTS:
			return ERRCODE_DUPLICATE_OBJECT;
		case FST_INVALID_ARGUMENT:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case FST_OK:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

/*
 * The table an object key belongs to ("<sysid>/tables/<db>.<relfilenode>/..."),
 * as a detail sentence, or NULL when text names no table's object.  The
 * name is looked up only where catalog access is safe: in a transaction
 * of the table's database, outside critical sections and LWLocks (held
 * LWLocks hold off interrupts); elsewhere (the flush worker, a lock held)
 * the relfilenode names it.
 */
static char *
table_detail(const char *text)
{
	const char *p = text ? strstr(text, "/tables/") : NULL;
	unsigned int db,
				relfilenode;

	if (p == NULL || sscanf(p, "/tables/%u.%u", &db, &relfilenode) != 2)
		return NULL;
	if (db == MyDatabaseId && IsTransactionState() &&
		!IsAbortedTransactionBlockState() &&
		CritSectionCount == 0 && InterruptHoldoffCount == 0)
	{
		Oid			relid = RelidByRelfilenode(0, relfilenode);
		char	   *rel = OidIsValid(relid) ? get_rel_name(relid) : NULL;
		char	   *nsp = rel ? get_namespace_name(get_rel_namespace(relid)) : NULL;

		if (rel && nsp)
			return psprintf("The object belongs to table \"%s.%s\" (relfilenode %u).",
							nsp, rel, relfilenode);
	}
	return psprintf("The object belongs to the table with relfilenode %u in the database with OID %u.",
					relfilenode, db);
}

void
forst_report(FstCode code, FstError *err, const char *what)
{
	int			sqlstate;
	const char *hint = NULL;
	const char *msg = err && err->msg[0] ? err->msg : fst_code_name(code);
	char	   *detail;

	if (code == FST_INTERRUPTED)
	{
		/* the store gave up because an interrupt is pending: raise it */
		CHECK_FOR_INTERRUPTS();
	}
	if (err == NULL || !cause_sqlstate(err->cause, &sqlstate, &hint))
		sqlstate = code_sqlstate(code, &hint);
	detail = table_detail(what);
	if (detail == NULL)
		detail = table_detail(msg);
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("forst: %s: %s", what, msg),
			 detail ? errdetail_internal("%s", detail) : 0,
			 hint ? errhint("%s", hint) : 0));
	pg_unreachable();
}

/*
 * Before the store of a file:// forst.remote_dir is opened: a missing
 * directory is created when its parent exists (as for the default location
 * in the data directory), so that a fresh setting just works; under a
 * missing parent it is most likely a typo, and creating the whole path would
 * put the data where nobody looks for it.
 */
void
forst_prepare_remote_dir(const char *url)
{
	FstObjUrl	parsed;
	FstError	err;
	struct stat st;
	char	   *parent;
	char	   *slash;

	if (strncmp(url, "file://", 7) != 0 ||
		fst_objstore_parse_url(url, &parsed, &err) != FST_OK)
		return;					/* s3://, or fst_objstore_open says why */
	if (stat(parsed.path, &st) == 0)
	{
		if (!S_ISDIR(st.st_mode))
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("forst: forst.remote_dir \"%s\" is not a directory",
							parsed.path),
					 errhint("Correct forst.remote_dir and restart the server.")));
		return;
	}
	if (errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("forst: could not access forst.remote_dir \"%s\": %m",
						parsed.path)));

	parent = pstrdup(parsed.path);
	slash = strrchr(parent, '/');
	if (slash == parent)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("forst: directory \"%s\" of forst.remote_dir does not exist",
						parsed.path),
				 errdetail("Its parent directory \"%s\" does not exist either.", parent),
				 errhint("Create the directory, or correct forst.remote_dir and restart the server.")));
	if (mkdir(parsed.path, pg_dir_create_mode) == 0)
		ereport(LOG,
				(errmsg("forst: created directory \"%s\" for forst.remote_dir",
						parsed.path)));
	else if (errno != EEXIST)	/* EEXIST: another process was first */
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("forst: could not create directory \"%s\" for forst.remote_dir: %m",
						parsed.path),
				 errhint("Create the directory, or correct forst.remote_dir and restart the server.")));
	pfree(parent);
}
