/*-------------------------------------------------------------------------
 *
 * scaleout/remote.h
 *	  Statements on the other servers of a distributed table, reached as
 *	  postgres_fdw reaches them: through a foreign server and the current
 *	  user's user mapping.
 *
 * The connection takes the libpq options of the foreign server and of the
 * user mapping (the ones postgres_fdw validated when they were set), and
 * follows postgres_fdw's rule for roles that are not superusers: the
 * mapping must give a password, and the server must have used it, unless a
 * superuser set password_required 'false' on the mapping.  So forst reaches
 * no server as a role that postgres_fdw would not.
 *
 * Waiting for a server is interruptible (statement_timeout, cancel,
 * postmaster death); an interrupted statement is cancelled on the server.
 * A server's error is raised here with its SQLSTATE, message, detail and
 * hint, prefixed with the server's name.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_SCALEOUT_REMOTE_H
#define FORST_SCALEOUT_REMOTE_H

/*
 * Runs sql (one statement, or several separated by semicolons) on the
 * foreign server and returns the first column of the last statement's
 * first row, palloc'd in the current memory context, or NULL when that
 * statement returned no row or a null.  The connection is kept until the
 * end of the transaction and used again for the same server and user,
 * unless the statement failed or left a transaction block open: so the
 * statements of one transaction on one server run in one session there,
 * each in its own transaction (autocommit), and a statement that sets
 * something for its own use sets it LOCAL, in BEGIN ... COMMIT.
 */
extern char *forst_remote_exec(const char *servername, const char *sql);

#endif							/* FORST_SCALEOUT_REMOTE_H */
