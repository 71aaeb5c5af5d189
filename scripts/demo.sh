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
# It shows windowed state kept in a forst table; the streaming pipeline with
# checkpoints and failover (windowed aggregates of an event stream) will
# replace it.
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
SELECT forst.version(), forst.remote_dir();
-- windowed state in a forst table, folded in with ON CONFLICT
DROP TABLE IF EXISTS clicks_per_minute;
CREATE TABLE clicks_per_minute (
    user_id      bigint,
    window_start timestamptz,
    clicks       bigint NOT NULL,
    PRIMARY KEY (user_id, window_start)
) USING forst;
INSERT INTO clicks_per_minute
SELECT (g % 50), date_bin('1 minute', '2026-01-01'::timestamptz + g * interval '100 milliseconds', 'epoch'), 1
  FROM generate_series(1, 200000) g
ON CONFLICT (user_id, window_start)
DO UPDATE SET clicks = clicks_per_minute.clicks + excluded.clicks;
SELECT count(*) AS windows, sum(clicks) AS clicks FROM clicks_per_minute;
SELECT * FROM clicks_per_minute WHERE user_id = 42 ORDER BY window_start LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM clicks_per_minute WHERE user_id = 42;
SQL

cat <<'TXT'

forst works: a table USING forst, keyed by its primary key, upserted with
ON CONFLICT, read by key, durable through WAL, flushed to SST files under
the data directory's forst/remote (file://) by the "forst flush" worker.
Not built yet: checkpoints, restore on another server and the streaming
pipeline this demo will run (README, docs/architecture.md).
TXT
