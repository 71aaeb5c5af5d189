#!/usr/bin/env bash
# bench/cache_server.sh -- point reads of a forst table through the server's
# local disk cache, on a skewed (Zipf) key distribution, with pgbench:
#
#   no cache     forst.cache_size = 0: every block the per-backend block
#                cache misses is a ranged read of the object store
#   cold 10%     a cache of 10% of the table's SST bytes, empty at start
#   warm 10%     the same cache after the cold run
#   all cached   a cache larger than the table, filled by a full scan first
#
#   bench/cache_server.sh [--rows N] [--seconds S] [--clients C] [--zipf Z]
#                         [--scan N] [--windows W] [--pin]
#
# --scan N adds a scan workload to each configuration: range scans of N
# rows from a Zipf-chosen key (SELECT ... WHERE k BETWEEN :k AND :k+N-1).
# --windows W lays the rows out as a streaming job keeps keyed state:
# rows/W keys with W windows each, PRIMARY KEY (k, w).  The key is chosen
# by Zipf and the window uniformly; point reads read one (k, w), and the
# scan workload (on with --windows, in place of --scan's ranges) reads all
# of one key's windows (WHERE k = :k), a prefix of the key, which lies in
# one key group.
# --pin runs each client as its own pgbench process (one client, one
# thread) and pins it and its backend to one CPU (client i on CPU i mod
# nproc).  Without it the kernel places them: a client and its backend
# normally settle on one CPU, but on a machine that also runs the object
# store, the store's threads waking to serve a request can leave both
# backends on one CPU and both clients on the other for a few hundred
# milliseconds (seen with perf: one CPU ~20% idle, every read 3-5x slower),
# which penalises exactly the runs that make requests.
# Defaults: 300,000 rows of ~270 bytes (incompressible), 20 s per run, 2
# clients, Zipf exponent 1.1.  forst.block_cache_size is at its minimum
# (256 kB per backend), and no shared block cache, so that reads reach the
# disk cache.  The store is
# file:// (in the data directory): its "remote" reads are page-cache reads,
# so this measures what the cache costs and saves on top of a fast store;
# against S3 a miss costs a request (milliseconds), see docs/benchmarks.md.
# FORST_BENCH_CONF=file appends settings (forst.remote_dir, S3 ones) to
# the server's configuration.  Runs as the unprivileged test user when
# started as root, on a private copy of PostgreSQL (scripts/lib.sh).
# Prints a markdown table.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

rows=300000
seconds=20
clients=2
zipf=1.1
scan=0
windows=0
pin=0
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift ;;
		--seconds) seconds=$2; shift ;;
		--clients) clients=$2; shift ;;
		--zipf) zipf=$2; shift ;;
		--scan) scan=$2; shift ;;
		--windows) windows=$2; shift ;;
		--pin) pin=1 ;;
		-h | --help) forst_usage "${BASH_SOURCE[0]}"; exit 0 ;;
		*) forst_usage "${BASH_SOURCE[0]}" >&2; exit 2 ;;
	esac
	shift
done

is_root && forst_ensure_pg_user
work=$(forst_user_tmpdir forst-bench-cache)
trap 'as_pg_user "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
bindir=$(forst_build_private_install "$work/pg")
! is_root || chown -R "$FORST_TEST_USER:" "$work"
port=$(forst_free_port)
data="$work/data"

pg() { as_pg_user "$bindir/$@"; }
sql() { pg psql -XAtq -h "$work" -p "$port" -d postgres -c "$1"; }

pg initdb -D "$data" -A trust >/dev/null
cat >>"$data/postgresql.conf" <<EOF
shared_preload_libraries = 'forst'
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
forst.memtable_size = '4MB'
forst.memtable_memory = '32MB'
forst.block_cache_size = '256kB'
forst.shared_block_cache_size = 0
include_if_exists = 'bench_cache.conf'
EOF
if [ -n "${FORST_BENCH_CONF:-}" ]; then
	cat "$FORST_BENCH_CONF" >>"$data/postgresql.conf"
fi

start() { pg pg_ctl -D "$data" -l "$work/log" -w start >/dev/null; }
stop() { pg pg_ctl -D "$data" -m fast -w stop >/dev/null; }
set_cache() { echo "forst.cache_size = '$1'" | as_pg_user tee "$data/bench_cache.conf" >/dev/null; }

set_cache 0
start
sql "CREATE EXTENSION forst"
if [ "$windows" -gt 0 ]; then
	keys=$((rows / windows))
	rows=$((keys * windows))
	scan=$windows
	sql "CREATE TABLE f (k int, w int, v text, PRIMARY KEY (k, w)) USING forst"
	kexpr="g / $windows + 1, g % $windows"
	first=0
else
	keys=$rows
	sql "CREATE TABLE f (k int PRIMARY KEY, v text) USING forst"
	kexpr="g"
	first=1
fi
log "loading $rows rows"
step=50000
for ((lo = first; lo < rows + first; lo += step)); do
	hi=$((lo + step - 1 < rows + first - 1 ? lo + step - 1 : rows + first - 1))
	sql "INSERT INTO f SELECT $kexpr, md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text) || md5((g + 3)::text) || md5((g + 4)::text) || md5((g + 5)::text) || md5((g + 6)::text) || md5((g + 7)::text) FROM generate_series($lo, $hi) g"
done
# the rows left in the active memtable go to an SST file at the restart's
# catch-up only if memory is wanted: flush what is frozen, then measure
sleep 5
sst_bytes=$(sql "SELECT sst_bytes FROM forst.tables")
log "SST bytes: $sst_bytes"

if [ "$windows" -gt 0 ]; then
	cat >"$work/read.sql" <<EOF
\\set k random_zipfian(1, $keys, $zipf)
\\set w random(0, $windows - 1)
SELECT length(v) FROM f WHERE k = :k AND w = :w;
EOF
	cat >"$work/scan.sql" <<EOF
\\set k random_zipfian(1, $keys, $zipf)
SELECT count(*), sum(length(v)) FROM f WHERE k = :k;
EOF
else
	cat >"$work/read.sql" <<EOF
\\set k random_zipfian(1, $rows, $zipf)
SELECT length(v) FROM f WHERE k = :k;
EOF
	cat >"$work/scan.sql" <<EOF
\\set k random_zipfian(1, $rows, $zipf)
SELECT count(*), sum(length(v)) FROM f WHERE k BETWEEN :k AND :k + $scan - 1;
EOF
fi
! is_root || chown "$FORST_TEST_USER:" "$work/read.sql" "$work/scan.sql"

# pinned_tps SCRIPT: --pin's run of SCRIPT; prints the clients' summed tps
pinned_tps()
{
	local i cpu pid try ncpu t0 pids=()
	ncpu=$(nproc)
	# the previous run's backends may still be listed while they exit
	t0=$(sql "SELECT now()")
	for ((i = 0; i < clients; i++)); do
		cpu=$((i % ncpu))
		as_pg_user env PGAPPNAME="forst-bench-$i" taskset -c "$cpu" "$bindir/pgbench" -n \
			-h "$work" -p "$port" -c 1 -j 1 -T "$seconds" -M prepared -f "$1" postgres \
			>"$work/pgbench-$i.out" 2>&1 &
		pids+=($!)
	done
	# pgbench's first connection (its check before the run) may be listed
	# and gone by the time it is pinned: pin the newest, until one stays
	for ((i = 0; i < clients; i++)); do
		try=0
		while :; do
			[ $((try++)) -lt 200 ] || die "could not pin client $i's backend"
			pid=$(sql "SELECT pid FROM pg_stat_activity WHERE application_name = 'forst-bench-$i' AND backend_start > '$t0' ORDER BY backend_start DESC LIMIT 1")
			if [ -n "$pid" ] && taskset -pc "$((i % ncpu))" "$pid" >/dev/null 2>&1; then
				break
			fi
			sleep 0.02
		done
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || die "pgbench failed: $(cat "$work"/pgbench-*.out)"
	done
	cat "$work"/pgbench-*.out | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | paste -sd+ | bc
}

# run1 NAME SCRIPT: one pgbench run; prints a table row
run1()
{
	local name=$1 out tps hits misses fetched gets ms bg
	sql "SELECT forst.stats_reset()" >/dev/null
	if [ "$pin" -eq 1 ]; then
		tps=$(pinned_tps "$2")
	else
		out=$(pg pgbench -n -h "$work" -p "$port" -c "$clients" -j "$clients" -T "$seconds" \
			-M prepared -f "$2" postgres 2>&1)
		tps=$(printf '%s\n' "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
	fi
	IFS='|' read -r hits misses fetched gets ms bg < <(sql "SELECT coalesce(cache_hits, 0), coalesce(cache_misses, 0), store_bytes_read, store_get + store_get_range, round(store_request_ms::numeric, 1), flushes + compactions FROM forst.stats")
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$tps" "$hits" "$misses" "$fetched" "$gets" "$ms" "$bg"
}

# run NAME: the point reads, then (--scan) the scans, of one configuration
run()
{
	run1 "$1" "$work/read.sql"
	[ "$scan" -eq 0 ] || run1 "$1, scans of $scan" "$work/scan.sql"
}

echo
echo "rows $rows$([ "$windows" -eq 0 ] || echo " ($keys keys x $windows windows; scans read one key's windows)"), SST bytes $sst_bytes, Zipf $zipf, $clients clients$([ "$pin" -eq 0 ] || echo ", each pinned with its backend to one CPU"), ${seconds}s per run"
echo
echo '| run | reads/s (scans/s) | disk cache hits | misses | store bytes read | store GETs | store ms | flushes + compactions |'
echo '|---|---|---|---|---|---|---|---|'
run "no cache"
stop
set_cache "$((sst_bytes / 10 / 1024))kB"
rm -rf "$data/forst/cache"
start
run "cold, cache = 10%"
run "warm, cache = 10%"
stop
set_cache "$((sst_bytes * 2 / 1024 + 4096))kB"
start
sql "SELECT count(*) FROM f" >/dev/null
run "all cached"
stop
