#!/usr/bin/env bash
# bench/batch_lookup.sh -- batched key lookups of INSERT ... ON CONFLICT on
# s3:// (forst.batch_lookups, src/am/write/batch_lookup.c), side by side
# with the same statement unbatched, at the store latencies of a local
# server and of a remote one; or (--workload index-range) the row lookups
# of a range of a secondary index, read ahead (tableam/secondary_scan.c).
#
#   bash bench/batch_lookup.sh [--rows N] [--keys K] [--latencies "0 10"]
#                              [--modes "off on-8 on-16 on-32"] [--rounds R]
#                              [--workload upsert|index-range]
#
#   --rows N       rows of the table (default 400000, about 120 MB of SST
#                  files: 300-byte rows)
#   --keys K       keys of each batch upsert, spread evenly over the table
#                  (default 2000); each run upserts keys no run before it
#                  did (at most rows / K runs)
#   --latencies L  milliseconds added before each request by
#                  scripts/s3-fault-proxy.py (a "delay" rule) between forst
#                  and the S3 server, or "direct": no proxy (the proxy
#                  itself costs a connection per request; default
#                  "direct 10"; AWS S3's first-byte latency is 10-30 ms)
#   --modes M      off: forst.batch_lookups = off; on-P: on, with
#                  forst.s3_parallel_gets = P (default "off on-8 on-16 on-32")
#   --rounds R     rounds (default 2); each round runs every mode once per
#                  latency, alternating the order
#   --workload W   upsert (default), or index-range: the table gets a column
#                  a, a permutation of the key ((k * 7919) % N; N must not be
#                  a multiple of 7919), and an index on it, and each run
#                  times SELECT count(*), sum(n) FROM t WHERE a BETWEEN lo
#                  AND lo + K - 1 (an index scan; run i reads the i-th range
#                  of K values), whose K rows are spread over the table
#
# One private PostgreSQL 15 server with this checkout's forst; the S3
# server of S3_ENDPOINT / S3_BUCKET / AWS_* if set, else a throwaway Ceph
# RGW (scripts/rgw.sh).  The table (k bigint PRIMARY KEY, n bigint,
# payload text) is loaded once and checkpointed; then every run restarts
# the server with an empty disk cache (a fresh server: every block of the
# state is in the store only), sets its mode, and times one
#   INSERT INTO t SELECT k, 1, '' FROM <K keys, every (N / K)th> ON CONFLICT
#   (k) DO UPDATE SET n = t.n + 1
# with psql's \timing (run i: keys i, i + N/K, ...; never the keys of an
# earlier run, whose rows stay in the memtable: no run flushes, so no
# compaction runs during the runs).  Its answer is
# checked: after each run every upserted key's n is 1.
# Reported per run: seconds, synchronous cache misses (reads that waited
# for the store one by one) and ranged GETs, from forst.stats; and per
# latency the ratio of each mode's time to off's, within a round.
#
# Results: bench/results/batch-lookup-STAMP.{tsv,md} (index-range:
# batch-lookup-index-STAMP).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

rows=400000
keys=2000
latencies="direct 10"
modes="off on-8 on-16 on-32"
rounds=2
workload=upsert
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift ;;
		--keys) keys=$2; shift ;;
		--latencies) latencies=$2; shift ;;
		--modes) modes=$2; shift ;;
		--rounds) rounds=$2; shift ;;
		--workload) workload=$2; shift ;;
		-h | --help) forst_usage "${BASH_SOURCE[0]}"; exit 0 ;;
		*) forst_usage "${BASH_SOURCE[0]}" >&2; exit 2 ;;
	esac
	shift
done
[ $((rows / keys)) -ge 2 ] || die "--keys must be at most half of --rows"
case "$workload" in
	upsert) ;;
	index-range) [ $((rows % 7919)) -ne 0 ] || die "--rows must not be a multiple of 7919" ;;
	*) die "unknown workload '$workload' (upsert or index-range)" ;;
esac
for m in $modes; do
	case "$m" in off | on-[0-9]*) ;; *) die "unknown mode '$m' (off or on-P)" ;; esac
done

ts=$(date -u +%Y%m%d-%H%M%S)
results="$root/bench/results"
mkdir -p "$results"
is_root && forst_ensure_pg_user
work=$(forst_user_tmpdir forst-bench-batch)
rgw_dir=""
proxy_pid=""
bindir=""
cleanup()
{
	[ -z "$bindir" ] || as_pg_user "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
	[ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null || true
	[ -z "$rgw_dir" ] || bash "$root/scripts/rgw.sh" stop "$rgw_dir" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

if [ -z "${S3_ENDPOINT:-}" ]; then
	rgw_dir="$work/rgw"
	log "starting Ceph RGW (scripts/rgw.sh)"
	eval "$(RGW_MEMSTORE_BYTES=$((4 << 30)) bash "$root/scripts/rgw.sh" start "$rgw_dir")"
fi
: "${S3_BUCKET:?}" "${AWS_ACCESS_KEY_ID:?}" "${AWS_SECRET_ACCESS_KEY:?}"
upstream_port=${S3_ENDPOINT##*:}
upstream_port=${upstream_port%%/*}

# the latency proxy
proxy_port=$(forst_free_port)
rules="$work/proxy-rules.json"
echo '[]' >"$rules"
python3 "$root/scripts/s3-fault-proxy.py" "$proxy_port" "$upstream_port" "$rules" "$work/proxy.log" \
	>"$work/proxy.out" 2>&1 &
proxy_pid=$!
for _ in $(seq 50); do grep -q listening "$work/proxy.out" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/proxy.out" || die "the latency proxy did not start: $(cat "$work/proxy.out")"
set_latency() { printf '[{"action": "delay", "ms": %s}]\n' "$1" >"$rules"; }

bindir=$(forst_build_private_install "$work/pg")
! is_root || chown -R "$FORST_TEST_USER:" "$work"
port=$(forst_free_port)
data="$work/data"
pg() { as_pg_user "$bindir/$@"; }
sql() { pg psql -XAtq -h "$work" -p "$port" -d postgres -v ON_ERROR_STOP=1 -c "$1"; }

pg initdb -D "$data" -A trust >/dev/null
cat >>"$data/postgresql.conf" <<EOF
shared_preload_libraries = 'forst'
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
wal_level = replica
forst.remote_dir = 's3://$S3_BUCKET/bench-batch-$ts'
forst.s3_access_key_id = '$AWS_ACCESS_KEY_ID'
forst.s3_secret_access_key = '$AWS_SECRET_ACCESS_KEY'
forst.cache_size = '1GB'
forst.memtable_size = '8MB'
forst.memtable_memory = '64MB'
forst.checkpoint_interval = 0
include_if_exists = 'bench_mode.conf'
EOF
start() { pg pg_ctl -D "$data" -l "$work/log" -w start >/dev/null; }
stop() { pg pg_ctl -D "$data" -m fast -w stop >/dev/null; }
set_mode()
{
	local m=$1 lat=$2
	{
		if [ "$lat" = direct ]; then
			echo "forst.s3_endpoint = '$S3_ENDPOINT'"
		else
			echo "forst.s3_endpoint = 'http://127.0.0.1:$proxy_port'"
		fi
		if [ "$m" = off ]; then
			echo "forst.batch_lookups = off"
		else
			echo "forst.batch_lookups = on"
			echo "forst.s3_parallel_gets = ${m#on-}"
		fi
	} | as_pg_user tee "$data/bench_mode.conf" >/dev/null
}

set_latency 0
set_mode off direct
start
sql "CREATE EXTENSION forst"
sql "CREATE TABLE t (k bigint PRIMARY KEY, n bigint NOT NULL, payload text NOT NULL) USING forst"
if [ "$workload" = index-range ]; then
	sql "ALTER TABLE t ADD COLUMN a bigint"
	sql "CREATE INDEX t_a ON t (a)"
fi
acol=""
[ "$workload" = upsert ] || acol=", (g * 7919) % $rows"
log "loading $rows rows"
step=50000
for ((lo = 1; lo <= rows; lo += step)); do
	hi=$((lo + step - 1 < rows ? lo + step - 1 : rows))
	sql "INSERT INTO t SELECT g, 0, md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text) || md5((g + 3)::text) || md5((g + 4)::text) || md5((g + 5)::text) || md5((g + 6)::text) || md5((g + 7)::text) || md5((g + 8)::text) $acol FROM generate_series($lo, $hi) g" >/dev/null
done
sql "SELECT forst.checkpoint()" >/dev/null
# compactions settle: the files and the count of finished compactions stay
# the same for 12 s (a compaction in flight changes neither until it ends;
# one running during a run would read through the cache)
settle()
{
	local prev="" same=0 cur _
	for _ in $(seq 150); do
		cur=$(sql "SELECT (SELECT string_agg(file_id::text, ',' ORDER BY file_id) FROM forst.table_files('t')) || '/' || (SELECT compactions FROM forst.stats)")
		if [ "$cur" = "$prev" ]; then
			same=$((same + 1))
			[ "$same" -ge 3 ] && return 0
		else
			same=0
		fi
		prev=$cur
		sleep 4
	done
}
settle
n=$(sql "SELECT count(*) FROM forst.table_files('t')")
sst_bytes=$(sql "SELECT sum(size) FROM forst.table_files('t')")
log "SST files: $n, $sst_bytes bytes"
every=$((rows / keys))
# run i upserts keys i, i + every, i + 2 every, ...: keys no earlier run
# touched, whose blocks are in the loaded files only
upsert() { echo "INSERT INTO t AS x SELECT g, 1, '' FROM generate_series($1, $rows, $every) g ON CONFLICT (k) DO UPDATE SET n = x.n + 1"; }
# run i's range of the index: values (i - 1) K .. i K - 1, K rows
range() { echo "SELECT count(*) FROM t WHERE a BETWEEN $((($1 - 1) * keys)) AND $(($1 * keys - 1))"; }
nkeys=$(sql "SELECT count(*) FROM generate_series(1, $rows, $every)")

name=batch-lookup
[ "$workload" = upsert ] || name=batch-lookup-index
tsv="$results/$name-$ts.tsv"
md="$results/$name-$ts.md"
printf 'round\tlatency_ms\tmode\tseconds\tsync_misses\tranged_gets\tload\n' >"$tsv"
run=0
for ((r = 1; r <= rounds; r++)); do
	for lat in $latencies; do
		order=$modes
		# shellcheck disable=SC2086  # a word list
		[ $((r % 2)) -eq 1 ] || order=$(printf '%s\n' $modes | tac | tr '\n' ' ')
		for m in $order; do
			run=$((run + 1))
			stop
			rm -rf "$data/forst/cache"
			set_mode "$m" "$lat"
			[ "$lat" = direct ] || set_latency "$lat"
			start
			for _ in $(seq 100); do [ "$(sql "SELECT cache_ready FROM forst.stats")" = t ] && break; sleep 0.1; done
			sql "SELECT forst.stats_reset()" >/dev/null
			if [ "$workload" = upsert ]; then
				stmt=$(upsert "$run")
			else
				stmt=$(range "$run")
			fi
			out=$(pg psql -XAtq -h "$work" -p "$port" -d postgres -v ON_ERROR_STOP=1 \
				-c 'SET enable_seqscan = off' -c 'SET enable_bitmapscan = off' \
				-c '\timing on' -c "$stmt")
			secs=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -n 1)
			secs=$(echo "scale=3; $secs / 1000" | bc)
			IFS='|' read -r misses gets <<<"$(sql "SELECT cache_misses, store_get_range FROM forst.stats")"
			if [ "$workload" = upsert ]; then
				bad=$(sql "SELECT count(*) FROM generate_series($run, $rows, $every) g LEFT JOIN t ON t.k = g WHERE t.n IS DISTINCT FROM 1")
				[ "$bad" = 0 ] || die "run $run ($m, ${lat} ms): $bad upserted rows do not hold n = 1"
			else
				got=$(grep -v '^Time:' <<<"$out" | tail -n 1)
				[ "$got" = "$keys" ] || die "run $run ($m, ${lat} ms): the range gave $got rows, not $keys"
			fi
			set_latency 0
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$lat" "$m" "$secs" "$misses" "$gets" \
				"$(cut -d' ' -f1 /proc/loadavg)" >>"$tsv"
			log "round $r, ${lat} ms, $m: ${secs} s, $misses synchronous misses, $gets ranged GETs"
		done
	done
done

{
	echo "# bench/batch_lookup.sh, $ts"
	echo
	if [ "$workload" = upsert ]; then
		what="A batch upsert of $nkeys keys"
	else
		what="A range of $keys values of a secondary index, naming $keys rows"
	fi
	echo "$what spread over a table of $rows rows ($sst_bytes bytes of SST files on S3: $S3_ENDPOINT), on a fresh server (empty disk cache); store latency added by a proxy. Median of $rounds rounds; ratio: the mode's time over off's within a round, then the median."
	echo
	echo "| latency | mode | seconds | synchronous misses | ranged GETs | speed-up over off |"
	echo "|---|---|---|---|---|---|"
	awk -F'\t' 'NR > 1 { k = $2 "\t" $3; t[k] = t[k] " " $4; ms[k] = $5; g[k] = $6; row[NR] = $0 }
		END {
			for (i in row) { split(row[i], f, "\t"); if (f[3] == "off") off[f[1] "\t" f[2]] = f[4] }
			for (i in row) { split(row[i], f, "\t"); if (f[3] != "off" && off[f[1] "\t" f[2]] > 0) { k = f[2] "\t" f[3]; s[k] = s[k] " " off[f[1] "\t" f[2]] / f[4] } }
			for (k in t) print k "\t" t[k] "\t" ms[k] "\t" g[k] "\t" s[k]
		}' "$tsv" | sort -t$'\t' -k1,1 -k2,2V |
		while IFS=$'\t' read -r lat m times misses gets speedups; do
			med() { printf '%s\n' $1 | sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
			sp=$( [ -n "$speedups" ] && printf '%.1fx' "$(med "$speedups")" || echo "1.0x")
			[ "$lat" = direct ] || lat="$lat ms"
			printf '| %s | %s | %s | %s | %s | %s |\n' "$lat" "$m" "$(med "$times")" "$misses" "$gets" "$sp"
		done
} >"$md"
cat "$md"
log "results: $tsv, $md"
