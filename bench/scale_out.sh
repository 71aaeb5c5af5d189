#!/usr/bin/env bash
# bench/scale_out.sh — a forst table spread over three servers and a
# coordinator (docs/scale-out.md): what routing through the coordinator
# costs a point read, and what a rescale costs.
#
#   bash bench/scale_out.sh              ROWS=2000000, DURATION=15
#   ROWS=200000 DURATION=5 bash bench/scale_out.sh     a quick run
#
# Four private servers (a private copy of PostgreSQL 15 with this
# checkout's forst) share one file:// store: s0, s1, s2 hold the shards,
# c routes.  s0 loads ROWS rows (k bigint, w int, v text of 100 bytes,
# PRIMARY KEY (k, w)) into a forst table and checkpoints; s0, s1, s2
# attach [0,64), [64,96), [96,128) of it; c runs forst.distribute.
#
#  1. Point reads of a random key, 1 client, DURATION s each (pgbench -M
#     prepared, the same script): direct, on s0's original table (every
#     key group, one server); routed, on c through the distributed table
#     (pruned to one foreign partition, one round trip to its server).
#  2. Rescales on c: 3 servers to 2 ([0,64) s0, [64,128) s1) and back to
#     3 ([0,32) s2, [32,64) s0, [64,128) s1).  Measured: the call's wall
#     time, the switch time the procedure reports, and the SST bytes in
#     the store before and after (the servers' state flushed first).
#     Answers through c (count, sums) must equal s0's original table's.
#
# The machine's 2 cores run all four servers, so this measures per-request
# costs, not throughput across servers.  KEEP=1 keeps the work directory.
# Results: bench/results/scale-out-<stamp>.md.
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib.sh

ROWS=${ROWS:-2000000}
DURATION=${DURATION:-15}
stamp=$(date -u +%Y%m%d-%H%M%S)
out=bench/results/scale-out-$stamp.md
mkdir -p bench/results

work=$(forst_user_tmpdir forst-scaleout)
log "build: make; install into $work/pg"
bindir=$(forst_build_private_install "$work/pg")
as_pg_user mkdir -p "$work/store"
declare -A port
stop_all()
{
	for n in s0 s1 s2 c; do
		[ -d "$work/$n" ] && as_pg_user "$bindir/pg_ctl" -D "$work/$n" -m immediate -w stop >/dev/null 2>&1 || true
	done
	if [ "${KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap stop_all EXIT

for n in s0 s1 s2 c; do
	port[$n]=$(forst_free_port)
	as_pg_user "$bindir/initdb" -D "$work/$n" -A trust -N -E UTF8 --locale=C >/dev/null
	as_pg_user tee -a "$work/$n/postgresql.conf" >/dev/null <<CONF
port = ${port[$n]}
listen_addresses = '127.0.0.1'
unix_socket_directories = '$work'
shared_preload_libraries = 'forst'
forst.remote_dir = 'file://$work/store'
shared_buffers = '128MB'
wal_level = replica
forst.checkpoint_interval = 0
CONF
	as_pg_user "$bindir/pg_ctl" -D "$work/$n" -l "$work/$n.log" -w start >/dev/null
	# the next free port must differ from this one
	sleep 0.2
done
q() { local n=$1; shift; as_pg_user "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${port[$n]}" -d postgres "$@"; }
for n in s0 s1 s2 c; do q $n -c 'CREATE EXTENSION forst'; done

log "load $ROWS rows on s0"
t0=$(date +%s.%N)
q s0 <<SQL
CREATE TABLE t (k bigint, w int, v text, PRIMARY KEY (k, w)) USING forst;
INSERT INTO t SELECT g, g % 4, repeat(md5(g::text), 3) || 'abcd' FROM generate_series(1, $ROWS) g;
SQL
load_s=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
cluster=$(q s0 -c 'SELECT forst.cluster_id()')
ck=$(q s0 -c 'SELECT forst.checkpoint()')
ranges=('[0,64)' '[64,96)' '[96,128)')
for i in 0 1 2; do
	q s$i -c "SELECT forst.attach('public.t', $ck, cluster => '$cluster', as_table => 'shard', key_groups => '${ranges[$i]}')" >/dev/null
done
user=$(q c -c 'SELECT current_user')
q c >/dev/null <<SQL
CREATE EXTENSION postgres_fdw;
$(for i in 0 1 2; do echo "CREATE SERVER s$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${port[s$i]}', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER s$i OPTIONS (user '$user');"; done)
CREATE TABLE t_def (k bigint, w int, v text, PRIMARY KEY (k, w));
SELECT forst.distribute('t', 't_def', '{s0,s1,s2}', '{"[0,64)","[64,96)","[96,128)"}', remote_table => 'shard');
ANALYZE t;
SQL
answer="SELECT count(*), sum(k), sum(w), sum(length(v)) FROM %s"
want=$(q s0 -c "$(printf "$answer" t)")
got=$(q c -c "$(printf "$answer" t)")
[ "$want" = "$got" ] || die "the distributed table answers $got, s0's table $want"

log "point reads: direct on s0, routed through c ($DURATION s each)"
cat >"$work/read.sql" <<SQL
\set k random(1, $ROWS)
SELECT v FROM t WHERE k = :k AND w = 1;
SQL
chmod a+r "$work/read.sql"
bench()
{
	local n=$1 f=$2
	as_pg_user "$bindir/pgbench" -n -M prepared -c 1 -T "$DURATION" -f "$f" -h 127.0.0.1 -p "${port[$n]}" postgres 2>&1 |
		awk '/^tps/ { tps = $3 } /latency average/ { lat = $4 } END { printf "%.0f %s\n", tps, lat }'
}
read -r d_tps d_lat < <(bench s0 "$work/read.sql")
read -r r_tps r_lat < <(bench c "$work/read.sql")
log "  direct (s0's whole table): $d_tps tps, $d_lat ms; routed: $r_tps tps, $r_lat ms"

sst_bytes() { as_pg_user find "$work/store" -name '*.sst' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }
rescale()
{
	local servers=$1 kg=$2 before after t0 t1 notice
	for n in s0 s1 s2; do q $n -c 'SELECT forst.checkpoint()' >/dev/null; done
	before=$(sst_bytes)
	t0=$(date +%s.%N)
	notice=$(q c -c "CALL forst.rescale('t', '{$servers}', '{$kg}')" 2>&1 | grep -o 'switched to the new layout in [0-9]* ms' || true)
	t1=$(date +%s.%N)
	after=$(sst_bytes)
	got=$(q c -c "$(printf "$answer" t)")
	[ "$want" = "$got" ] || die "after the rescale the distributed table answers $got, not $want"
	printf '%s\t%s\t%s\t%s\t%s\n' "$servers $kg" "$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.0f", (a - b) * 1000 }')" \
		"$(echo "$notice" | grep -o '[0-9]*' | head -1)" "$before" "$after"
}
log "rescales"
r1=$(rescale 's0,s1' '"[0,64)","[64,128)"')
r2=$(rescale 's2,s0,s1' '"[0,32)","[32,64)","[64,128)"')
log "  $r1"
log "  $r2"
state=$(q s0 -c "SELECT pg_size_pretty(sum(size)) FROM forst.table_files('t')" 2>/dev/null || echo '?')

{
	echo "# Scale-out: routing and rescale ($stamp)"
	echo
	echo "\`ROWS=$ROWS DURATION=$DURATION bash bench/scale_out.sh\`; $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg) at the end."
	echo "Three shard servers and a coordinator on one machine, one file:// store; $ROWS rows loaded in $load_s s, state $state."
	echo
	echo "| point read, 1 client | tps | latency (ms) |"
	echo "|---|---|---|"
	echo "| direct: s0's original table (every key group) | $d_tps | $d_lat |"
	echo "| routed: the distributed table on the coordinator | $r_tps | $r_lat |"
	echo
	echo "routed / direct: $(awk -v a="$r_tps" -v b="$d_tps" 'BEGIN { printf "%.2f", a / b }')x"
	echo
	echo "| rescale | call (ms) | switch (ms, reported) | SST bytes before | SST bytes after |"
	echo "|---|---|---|---|---|"
	printf '%s\n%s\n' "$r1" "$r2" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }'
} >"$out"
cat "$out"
log "wrote $out"
