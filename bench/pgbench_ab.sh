#!/usr/bin/env bash
# bench/pgbench_ab.sh CHECKOUT_A CHECKOUT_B — the forst.so of two checkouts
# (e.g. two git worktrees, each built) on one data directory, installed in
# turn A B A B, with pgbench upserts and point reads (bench/pgbench/) on a
# forst table of ROWS keys (default 4000000), 1 client, DURATION seconds
# (default 15) each.  For before/after measurements of a change on a noisy
# machine: both sides see the same data and nearly the same time window.
# WORKLOADS (default "upsert read") may also name range (100 keys from a
# random one) and scan (count(*) of the whole table); FORST_CONF adds
# lines to postgresql.conf (e.g. "forst.target_file_size = '1MB'").
# Holds /tmp/forst-install.lock for its whole run (~5 min); installs
# CHECKOUT_B's forst.so again at the end.
set -euo pipefail
A=$(realpath "${1:?checkout A}")
B=$(realpath "${2:?checkout B}")
cd "$(dirname "$0")/.."
. scripts/lib.sh
ROWS=${ROWS:-4000000}
DURATION=${DURATION:-15}
WORKLOADS=${WORKLOADS:-upsert read}
forst_ensure_pg_user
exec 9>"${TMPDIR:-/tmp}/forst-install.lock"
flock 9
dir=$(forst_user_tmpdir forst-ab)
bindir=$("$PG_CONFIG" --bindir)
port=$(forst_free_port)
inst() { as_root make -C "$1" --no-print-directory PG_CONFIG="$PG_CONFIG" -s install; }
start() { as_pg_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir'" start >/dev/null; }
stop() { as_pg_user "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; }
trap 'stop 2>/dev/null || true; rm -rf "$dir"' EXIT
as_pg_user "$bindir/initdb" -D "$dir/data" -A trust -N -E UTF8 --locale=C >/dev/null
as_pg_user tee -a "$dir/data/postgresql.conf" >/dev/null <<CONF
shared_preload_libraries = 'forst'
shared_buffers = 128MB
synchronous_commit = off
max_wal_size = 8GB
checkpoint_timeout = 30min
${FORST_CONF:-}
CONF
psql_q() { as_pg_user "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d postgres "$@"; }
inst "$B"
start
psql_q -c "CREATE EXTENSION forst"
psql_q -c "CREATE TABLE f (k bigint PRIMARY KEY, v bigint NOT NULL, payload text NOT NULL) USING forst"
psql_q -c "INSERT INTO f SELECT g, 0, substr(repeat(md5(g::text), 2), 1, 40) FROM generate_series(1, $ROWS) g"
for w in $WORKLOADS; do sed "s/@TABLE@/f/g" "bench/pgbench/$w.sql" >"$dir/$w-f.sql"; done
! is_root || chown "$FORST_TEST_USER:" "$dir"/*.sql
sleep 20	# let the flush worker settle
log "table: $(psql_q -c 'SELECT sst_files, level_files, sst_bytes FROM forst.tables')"
stop
for round in 1 2; do
	for side in A B; do
		if [ "$side" = A ]; then inst "$A"; else inst "$B"; fi
		start
		for w in $WORKLOADS; do
			tps=$(as_pg_user "$bindir/pgbench" -n -M prepared -c 1 -j 1 -T "$DURATION" --random-seed=42 \
				-D nkeys="$ROWS" -f "$dir/$w-f.sql" -h 127.0.0.1 -p "$port" postgres 2>&1 |
				sed -n 's/^tps = \([0-9.]*\).*/\1/p')
			printf 'round %s\t%s\t%s\t1 client\ttps %s\n' "$round" "$side" "$w" "$tps"
		done
		stop
	done
done
inst "$B"
