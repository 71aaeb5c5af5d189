/*-------------------------------------------------------------------------
 *
 * scaleout/remote.c
 *	  Statements on the other servers of a distributed table (see
 *	  scaleout/remote.h): connecting through a postgres_fdw foreign server
 *	  and user mapping, running a statement, raising the server's errors.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/wait_event.h"

#include "am/base/privileges.h"
#include "am/scaleout/remote.h"

PG_FUNCTION_INFO_V1(forst_remote_exec_fn);

/* Seconds to wait for a connection when the server's options set none. */
#define REMOTE_CONNECT_TIMEOUT "10"

/*
 * Connections kept until the end of the transaction, one per server and
 * user: a rescale runs several statements on each of its servers, and a
 * new connection is a new backend there.  A kept connection is idle,
 * outside a transaction block: one whose statement failed, or that a
 * statement left inside a block, is closed at once.  Beyond
 * MAX_KEPT_CONNS, connections are closed after their statement.
 */
#define MAX_KEPT_CONNS 32

typedef struct KeptConn
{
	Oid			serverid;
	Oid			userid;
	PGconn	   *conn;
} KeptConn;

static KeptConn kept[MAX_KEPT_CONNS];
static int	n_kept = 0;
static bool xact_callback_registered = false;

/* Closes kept connection i (the last one takes its place). */
static void
close_kept(int i)
{
	PQfinish(kept[i].conn);
	ReleaseExternalFD();
	kept[i] = kept[--n_kept];
}

/* Closes conn, and forgets it if it was kept. */
static void
close_conn(PGconn *conn)
{
	for (int i = 0; i < n_kept; i++)
	{
		if (kept[i].conn == conn)
		{
			close_kept(i);
			return;
		}
	}
	PQfinish(conn);
	ReleaseExternalFD();
}

/* At the end of the transaction, every kept connection is closed. */
static void
remote_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			while (n_kept > 0)
				close_kept(n_kept - 1);
			break;
		default:
			break;
	}
}

/* Whether name is one of libpq's connection options that may be passed. */
static bool
is_libpq_option(const char *name)
{
	static PQconninfoOption *defaults = NULL;

	if (defaults == NULL && (defaults = PQconndefaults()) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	/* set by forst itself, or never wanted for this connection */
	if (strcmp(name, "client_encoding") == 0 ||
		strcmp(name, "fallback_application_name") == 0 ||
		strcmp(name, "replication") == 0)
		return false;
	for (PQconninfoOption *o = defaults; o->keyword; o++)
		if (strcmp(o->keyword, name) == 0)
			return true;
	return false;
}

static int
add_options(List *options, const char **keywords, const char **values, int n)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (is_libpq_option(d->defname))
		{
			keywords[n] = d->defname;
			values[n] = defGetString(d);
			n++;
		}
	}
	return n;
}

static bool
password_required(UserMapping *um)
{
	ListCell   *lc;

	foreach(lc, um->options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, "password_required") == 0)
			return defGetBoolean(d);
	}
	return true;
}

/* Raises what went wrong on conn (a result's error, or the connection's). */
static void
report_remote_error(const char *servername, PGconn *conn, PGresult *res)
{
	const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *d = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *h = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	int			code = ERRCODE_CONNECTION_FAILURE;
	char	   *msg;
	char	   *detail;
	char	   *hint;

	if (sqlstate && strlen(sqlstate) == 5)
		code = MAKE_SQLSTATE(sqlstate[0], sqlstate[1], sqlstate[2],
							 sqlstate[3], sqlstate[4]);
	/* copied out of res, which is freed before the report */
	msg = pchomp(primary ? primary : PQerrorMessage(conn));
	detail = d ? pstrdup(d) : NULL;
	hint = h ? pstrdup(h) : NULL;
	if (res)
		PQclear(res);
	ereport(ERROR,
			(errcode(code),
			 errmsg("forst: on server \"%s\": %s", servername, msg),
			 detail ? errdetail_internal("%s", detail) : 0,
			 hint ? errhint("%s", hint) : 0));
}

static PGconn *
connect_server(ForeignServer *server, UserMapping *um)
{
	int			n = list_length(server->options) + list_length(um->options) + 4;
	const char **keywords = palloc(n * sizeof(char *));
	const char **values = palloc(n * sizeof(char *));
	bool		has_password = false;
	bool		has_timeout = false;
	PGconn	   *conn;

	n = add_options(server->options, keywords, values, 0);
	n = add_options(um->options, keywords, values, n);
	for (int i = 0; i < n; i++)
	{
		if (strcmp(keywords[i], "password") == 0 && values[i][0] != '\0')
			has_password = true;
		if (strcmp(keywords[i], "connect_timeout") == 0)
			has_timeout = true;
	}
	if (!has_timeout)
	{
		keywords[n] = "connect_timeout";
		values[n++] = REMOTE_CONNECT_TIMEOUT;
	}
	keywords[n] = "fallback_application_name";
	values[n++] = "forst";
	keywords[n] = "client_encoding";
	values[n++] = GetDatabaseEncodingName();
	keywords[n] = values[n] = NULL;

	/* postgres_fdw's rule for roles that are not superusers */
	if (!superuser_arg(um->userid) && !has_password && password_required(um))
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("forst: a password is required to reach server \"%s\"",
						server->servername),
				 errdetail("Roles that are not superusers must give a password in the user mapping.")));

	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("forst: could not connect to server \"%s\"", server->servername),
				 errdetail("There are too many open files on the local server."),
				 errhint("Raise the server's max_files_per_process and/or \"ulimit -n\" limits.")));
	conn = PQconnectdbParams(keywords, values, false);
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		char	   *msg = conn ? pchomp(PQerrorMessage(conn)) : pstrdup("out of memory");

		PQfinish(conn);
		ReleaseExternalFD();
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("forst: could not connect to server \"%s\"", server->servername),
				 errdetail_internal("%s", msg)));
	}
	if (!superuser_arg(um->userid) && password_required(um) &&
		!PQconnectionUsedPassword(conn))
	{
		PQfinish(conn);
		ReleaseExternalFD();
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("forst: a password is required to reach server \"%s\"",
						server->servername),
				 errdetail("Roles that are not superusers must authenticate with a password."),
				 errhint("Change the server's authentication method, or have a superuser set password_required 'false' on the user mapping.")));
	}
	return conn;
}

/* Sends sql and waits, interruptibly, for its last result. */
static PGresult *
run(const char *servername, PGconn *conn, const char *sql)
{
	PGresult   *volatile last = NULL;

	if (!PQsendQuery(conn, sql))
		report_remote_error(servername, conn, NULL);
	PG_TRY();
	{
		for (;;)
		{
			PGresult   *res;

			while (PQisBusy(conn))
			{
				int			wc;

				wc = WaitLatchOrSocket(MyLatch,
									   WL_LATCH_SET | WL_SOCKET_READABLE |
									   WL_EXIT_ON_PM_DEATH,
									   PQsocket(conn), -1L, PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
				CHECK_FOR_INTERRUPTS();
				if ((wc & WL_SOCKET_READABLE) && !PQconsumeInput(conn))
					report_remote_error(servername, conn, NULL);
			}
			res = PQgetResult(conn);
			if (res == NULL)
				break;
			if (PQresultStatus(res) != PGRES_COMMAND_OK &&
				PQresultStatus(res) != PGRES_TUPLES_OK)
			{
				PQclear(last);
				last = NULL;
				report_remote_error(servername, conn, res);
			}
			PQclear(last);
			last = res;
		}
	}
	PG_CATCH();
	{
		PQclear(last);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return last;
}

/* Asks the server to stop the statement conn runs; best effort. */
static void
cancel(PGconn *conn)
{
	PGcancel   *c = PQgetCancel(conn);
	char		errbuf[256];

	if (c)
	{
		(void) PQcancel(c, errbuf, sizeof(errbuf));
		PQfreeCancel(c);
	}
}

char *
forst_remote_exec(const char *servername, const char *sql)
{
	ForeignServer *server = GetForeignServerByName(servername, false);
	UserMapping *um = GetUserMapping(GetUserId(), server->serverid);
	PGconn	   *volatile conn = NULL;
	volatile bool keep = false;
	char	   *volatile out = NULL;

	if (!xact_callback_registered)
	{
		RegisterXactCallback(remote_xact_callback, NULL);
		xact_callback_registered = true;
	}
	for (int i = 0; i < n_kept; i++)
	{
		if (kept[i].serverid != server->serverid || kept[i].userid != GetUserId())
			continue;
		if (PQstatus(kept[i].conn) == CONNECTION_OK)
		{
			conn = kept[i].conn;
			keep = true;
		}
		else
			close_kept(i);
		break;
	}
	if (conn == NULL)
	{
		conn = connect_server(server, um);
		if (n_kept < MAX_KEPT_CONNS)
		{
			kept[n_kept].serverid = server->serverid;
			kept[n_kept].userid = GetUserId();
			kept[n_kept++].conn = conn;
			keep = true;
		}
	}
	PG_TRY();
	{
		PGresult   *res = run(server->servername, conn, sql);

		if (res && PQresultStatus(res) == PGRES_TUPLES_OK &&
			PQntuples(res) > 0 && PQnfields(res) > 0 && !PQgetisnull(res, 0, 0))
			out = pstrdup(PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	PG_CATCH();
	{
		/* a failed statement's connection is not reused */
		if (PQtransactionStatus(conn) == PQTRANS_ACTIVE)
			cancel(conn);
		close_conn(conn);
		PG_RE_THROW();
	}
	PG_END_TRY();
	/* nor is one that the statement left inside a transaction block */
	if (!keep || PQtransactionStatus(conn) != PQTRANS_IDLE)
		close_conn(conn);
	return out;
}

/*
 * forst._remote_exec(server name, sql text) RETURNS text -- internal: the
 * statements of forst.rescale on the servers.  Superusers only, also when
 * EXECUTE was granted: it runs any statement there.
 */
Datum
forst_remote_exec_fn(PG_FUNCTION_ARGS)
{
	char	   *out;

	forst_require_superuser("forst._remote_exec", "run statements on other servers");
	out = forst_remote_exec(NameStr(*PG_GETARG_NAME(0)),
							text_to_cstring(PG_GETARG_TEXT_PP(1)));

	if (out == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(out));
}
