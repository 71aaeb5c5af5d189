#!/usr/bin/env bash
# scripts/demo.sh -- README command 1: build forst, start a private
# PostgreSQL 15 server that preloads it, and show it working.
#
#   bash scripts/demo.sh [DIR]
#
# DIR (default: a new temporary directory, removed afterwards) holds the
# server's data directory, socket and log; it must be writable by the
# server user.  The server listens on 127.0.0.1 on a free port and is
# stopped when the script ends.
#
# This is a placeholder for the streaming-pipeline demo (windowed aggregates
# of an event stream in forst tables), which needs the table access method
# that is not built yet.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-}" in
	-h | --help) forst_usage "${BASH_SOURCE[0]}"; exit 0 ;;
esac

forst_install_deps
forst_ensure_pg_user
forst_build_install

if [ -n "${1:-}" ]; then
	dir=$(realpath -m "$1")
	mkdir -p "$dir"
	! is_root || chown "$FORST_TEST_USER:" "$dir"
	keep_dir=1
else
	dir=$(forst_user_tmpdir forst-demo)
	keep_dir=0
fi
as_pg_user test -w "$dir" || die "$dir is not writable by the server user"

bindir=$("$PG_CONFIG" --bindir)
data="$dir/data"
port=$(forst_free_port)

cleanup()
{
	if [ -f "$data/postmaster.pid" ]; then
		log "stopping the server"
		as_pg_user "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
	fi
	if [ "$keep_dir" -eq 0 ]; then
		rm -rf "$dir"
	else
		log "data directory and server log kept in $dir"
	fi
}
trap cleanup EXIT

if [ ! -f "$data/PG_VERSION" ]; then
	log "initdb $data"
	as_pg_user "$bindir/initdb" -D "$data" -A trust -N -E UTF8 --locale=C >/dev/null
	as_pg_user tee -a "$data/postgresql.conf" >/dev/null <<CONF

# added by scripts/demo.sh
shared_preload_libraries = 'forst'
CONF
fi
log "starting PostgreSQL 15 on 127.0.0.1:$port (log: $dir/server.log)"
as_pg_user "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w \
	-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir'" \
	start >/dev/null

log "SQL session"
as_pg_user "$bindir/psql" -X -a -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d postgres <<'SQL'
CREATE EXTENSION IF NOT EXISTS forst;
SELECT forst.version();
SELECT forst.remote_dir();
SHOW forst.compression;
SQL

cat <<'TXT'

forst is loaded: the extension, its settings and the checks above work.
Not built yet: the forst table access method (CREATE TABLE ... USING forst),
the s3:// backend, checkpoints and the streaming pipeline that this demo
will run (docs/architecture.md).  Today the repository holds the engine
core, tested stand-alone by "make unit", and this extension skeleton.
TXT
