#!/usr/bin/env bash
# bench/pgbench_vs_heap.sh — pgbench on a forst table next to a heap table
# with the same schema and PRIMARY KEY, in a private PostgreSQL 15 server.
#
#   bench/pgbench_vs_heap.sh                  both phases (~20 min)
#   bench/pgbench_vs_heap.sh --phase small    state that fits shared_buffers
#   bench/pgbench_vs_heap.sh --phase large    state >= 10x shared_buffers
#   bench/pgbench_vs_heap.sh --quick          tiny sizes, 5 s runs (smoke run)
#   bench/pgbench_vs_heap.sh --profile        also perf-record each workload
#
# Environment: SMALL_ROWS (default 500000), LARGE_ROWS (default 14000000),
# DURATION (seconds per pgbench run, default 30), WARMUP (seconds of the
# same workload, unmeasured and with another seed, before each run; default
# 0: a run then starts with what the previous run left in the caches),
# CLIENTS (default "1 2 4"),
# SEED (pgbench --random-seed, default 42), SHARED_BUFFERS (default 128MB),
# SYNC_COMMIT (synchronous_commit, default off), PAYLOAD (bytes of the text
# column, default 40), FORST_SETTINGS (extra postgresql.conf lines), KEEP=1
# keeps the data directory, FORST_UNLOGGED=1 makes the forst table an
# UNLOGGED (checkpoint-durable) one, SEPARATE=1 runs each table in a server
# of its own (for a fair peak PSS), MEMORY_LIMIT (e.g. 1G; needs root and the
# cgroup v1 memory controller) runs the server in a memory cgroup of that
# size, so that its page cache is bounded too: without it a machine with
# more RAM than the state serves every "large" read from the OS page
# cache, and neither table ever waits for the disk.
#
# Schema (both tables):
#   (k bigint PRIMARY KEY, v bigint NOT NULL, payload text NOT NULL)
# loaded with keys 1..ROWS (INSERT ... SELECT generate_series), then
#   upsert: bench/pgbench/upsert.sql  INSERT ... ON CONFLICT (k) DO UPDATE
#           SET v = t.v + excluded.v, uniformly random key
#   read:   bench/pgbench/read.sql    SELECT by uniformly random key
# each with `pgbench -n -M prepared -c C -j C -T DURATION --random-seed SEED`
# for every C in CLIENTS, heap and forst one after the other (never at the
# same time).  A CHECKPOINT precedes every run.  Measured per run: tps, mean
# latency, WAL bytes (pg_current_wal_lsn before/after) per transaction (one
# row each), peak server memory (sum of PSS and of RSS of the postmaster and
# its children, bench/pgbench/sample_mem.py), peak pg_wal size, and the lag
# of forst's replication slot after the run, and full-page images written
# (pg_stat_wal.wal_fpi: heap's WAL includes one per page first modified
# after a checkpoint), and the bytes read from and written to the disk
# during the run (/proc/diskstats, the whole machine).
#
# Each phase holds /tmp/forst-install.lock (like scripts/test.sh) while it
# installs this checkout's forst.so and runs its server, and releases it
# at the end, so other test runs can proceed between phases.
#
# Results: bench/results/pgbench-<date>.md (report) and .tsv (one line per
# run); bench/plot_pgbench.sh turns the .tsv into a PNG.
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib.sh

PHASES="small large"
PROFILE=0
QUICK=0
while [ $# -gt 0 ]; do
	case "$1" in
		--phase) PHASES="$2"; shift ;;
		--quick) QUICK=1 ;;
		--profile) PROFILE=1 ;;
		-h | --help) forst_usage "$0"; exit 0 ;;
		*) echo "usage: $0 [--phase small|large] [--quick] [--profile]" >&2; exit 2 ;;
	esac
	shift
done

SMALL_ROWS=${SMALL_ROWS:-500000}
LARGE_ROWS=${LARGE_ROWS:-14000000}
DURATION=${DURATION:-30}
WARMUP=${WARMUP:-0}
CLIENTS=${CLIENTS:-"1 2 4"}
SEED=${SEED:-42}
SHARED_BUFFERS=${SHARED_BUFFERS:-128MB}
SYNC_COMMIT=${SYNC_COMMIT:-off}
PAYLOAD=${PAYLOAD:-40}
FORST_SETTINGS=${FORST_SETTINGS:-}
KEEP=${KEEP:-0}
SEPARATE=${SEPARATE:-0}
if [ "$QUICK" -eq 1 ]; then
	SMALL_ROWS=20000
	LARGE_ROWS=200000
	DURATION=5
	CLIENTS="1 2"
fi

bindir=$("$PG_CONFIG" --bindir)
stamp=$(date -u +%Y%m%d-%H%M%S)
mkdir -p bench/results
REPORT=bench/results/pgbench-$stamp.md
TSV=bench/results/pgbench-$stamp.tsv
LOADS=bench/results/pgbench-$stamp-load.tsv
LOCK=${TMPDIR:-/tmp}/forst-install.lock

MEMCG=
if [ -n "${MEMORY_LIMIT:-}" ]; then
	is_root || die "MEMORY_LIMIT needs root (a memory cgroup for the server)"
	[ -d /sys/fs/cgroup/memory ] || die "MEMORY_LIMIT needs the cgroup v1 memory controller at /sys/fs/cgroup/memory"
	MEMCG=/sys/fs/cgroup/memory/forst-bench-$$
fi

forst_ensure_pg_user
log "build: make"
forst_make -s -j"$(nproc)"

work=$(forst_user_tmpdir forst-pgbench)
# The server user must read the pgbench scripts and the sampler.
# (sample_mem.py imports ../procmem.py: keep the layout)
mkdir -p "$work/pgbench"
cp bench/pgbench/*.sql "$work/"
cp bench/pgbench/sample_mem.py "$work/pgbench/"
cp bench/procmem.py "$work/"
! is_root || chown -R "$FORST_TEST_USER:" "$work"
data="$work/data"
port=
server_up=0

stop_server()
{
	if [ "$server_up" -eq 1 ]; then
		as_pg_user "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
		server_up=0
	fi
}

cleanup()
{
	stop_server
	[ -z "$MEMCG" ] || rmdir "$MEMCG" 2>/dev/null || true
	if [ "$KEEP" -eq 1 ]; then
		log "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

psql_q() { as_pg_user "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d postgres "$@"; }

start_server()
{
	rm -rf "$data"
	as_pg_user "$bindir/initdb" -D "$data" -A trust -N -E UTF8 --locale=C >/dev/null
	as_pg_user tee -a "$data/postgresql.conf" >/dev/null <<CONF

# bench/pgbench_vs_heap.sh
shared_preload_libraries = 'forst'
shared_buffers = $SHARED_BUFFERS
synchronous_commit = $SYNC_COMMIT
max_wal_size = 8GB
checkpoint_timeout = 30min
max_connections = 20
autovacuum = on
$FORST_SETTINGS
CONF
	port=$(forst_free_port)
	if [ -n "$MEMCG" ]; then
		# A fresh group, its page cache dropped with it; the postmaster and
		# every backend inherit it from the subshell.
		[ ! -d "$MEMCG" ] || rmdir "$MEMCG"
		mkdir "$MEMCG"
		echo "$(numfmt --from=iec "$MEMORY_LIMIT")" >"$MEMCG/memory.limit_in_bytes"
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
	(
		[ -z "$MEMCG" ] || echo "$BASHPID" >"$MEMCG/cgroup.procs"
		as_pg_user "$bindir/pg_ctl" -D "$data" -l "$work/server-$1.log" -w \
			-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$work'" \
			start >/dev/null
	)
	server_up=1
	psql_q -c "CREATE EXTENSION forst"
}

postmaster_pid() { head -1 "$data/postmaster.pid"; }

# Sectors read and written by the machine's disks (whole disks, not
# partitions), as "read_bytes write_bytes".
disk_io()
{
	awk '$3 ~ /^(sd|vd|nvme[0-9]+n)[a-z0-9]*$/ && $3 !~ /[0-9]p[0-9]+$/ && $3 !~ /^(sd|vd)[a-z]+[0-9]+$/ { r += $6; w += $10 } END { printf "%.0f %.0f\n", r * 512, w * 512 }' /proc/diskstats
}

# forst's memtables of table $1 (bytes), 0 if none.
forst_mem_bytes() { psql_q -c "SELECT coalesce(sum(memtable_bytes), 0) FROM forst.tables WHERE \"table\"::text = '$1'"; }

slot_lag() { psql_q -c "SELECT coalesce(pg_current_wal_lsn() - restart_lsn, 0) FROM pg_replication_slots WHERE slot_name = 'forst'"; }

# Bytes of the relation and its indexes (heap) or of the live SST files of
# the table's current manifest (forst).  Not the remote directory's size:
# that also holds the files compactions replaced, which garbage collection
# keeps for forst.gc_grace (10 minutes by default), several times the live
# state right after a bulk load.
table_bytes()
{
	if [ "$1" = h ]; then
		psql_q -c "SELECT pg_total_relation_size('h')"
	else
		psql_q -c "SELECT coalesce(sum(sst_bytes), 0) FROM forst.tables WHERE \"table\"::text = 'f'"
	fi
}

load_table()
{
	local t=$1 rows=$2 am=$3 t0 t1 kind=

	[ "$am" = forst ] && [ "${FORST_UNLOGGED:-0}" = 1 ] && kind="UNLOGGED "
	psql_q -c "CREATE ${kind}TABLE $t (k bigint PRIMARY KEY, v bigint NOT NULL, payload text NOT NULL) USING $am"
	t0=$(date +%s.%N)
	# md5 gives incompressible-ish text, so lz4 does not flatter forst.
	psql_q -c "INSERT INTO $t SELECT g, 0, substr(repeat(md5(g::text), ($PAYLOAD + 31) / 32), 1, $PAYLOAD) FROM generate_series(1, $rows) g"
	t1=$(date +%s.%N)
	python3 -c "print(f'{$t1 - $t0:.1f}')"
}

# One pgbench run: phase workload table clients -> one TSV line.
run_one()
{
	local phase=$1 wl=$2 t=$3 c=$4 rows=$5 script out lsn0 lsn1 fpi0 fpi1 wal tps lat txns mem io0 io1
	script="$work/$wl-$t.sql"
	sed "s/@TABLE@/$t/g" "$work/$wl.sql" >"$script"
	! is_root || chown "$FORST_TEST_USER:" "$script"
	if [ "$WARMUP" -gt 0 ]; then
		# the same workload, unmeasured, with other keys (another seed)
		as_pg_user "$bindir/pgbench" -n -M prepared -c "$c" -j "$c" -T "$WARMUP" \
			--random-seed="$((SEED + 1000))" -D nkeys="$rows" -f "$script" \
			-h 127.0.0.1 -p "$port" postgres >/dev/null 2>&1 ||
			die "pgbench warm-up failed ($phase $wl $t c=$c)"
	fi
	psql_q -c "CHECKPOINT"
	sleep 1
	lsn0=$(psql_q -c "SELECT pg_current_wal_lsn()")
	fpi0=$(psql_q -c "SELECT wal_fpi FROM pg_stat_wal")
	/usr/bin/python3 "$work/pgbench/sample_mem.py" "$(postmaster_pid)" "$data" "$work/mem.out" 0.5 &
	local sampler=$!
	read -r -a io0 <<<"$(disk_io)"
	out=$(as_pg_user "$bindir/pgbench" -n -M prepared -c "$c" -j "$c" -T "$DURATION" \
		--random-seed="$SEED" -D nkeys="$rows" -f "$script" -h 127.0.0.1 -p "$port" postgres 2>&1) ||
		{ echo "$out" >&2; die "pgbench failed ($phase $wl $t c=$c)"; }
	read -r -a io1 <<<"$(disk_io)"
	lsn1=$(psql_q -c "SELECT pg_current_wal_lsn()")
	sleep 1	# exited backends' WAL counters reach pg_stat_wal
	fpi1=$(psql_q -c "SELECT wal_fpi FROM pg_stat_wal")
	kill -TERM "$sampler"
	wait "$sampler" || true
	mem=$(cat "$work/mem.out")
	wal=$(psql_q -c "SELECT '$lsn1'::pg_lsn - '$lsn0'::pg_lsn")
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
	txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
	# shellcheck disable=SC2086 # $mem is five numbers
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$phase" "$wl" "$t" "$c" "$rows" "$tps" "$lat" "$txns" "$wal" \
		$mem "$(slot_lag)" "$(forst_mem_bytes f)" "$((fpi1 - fpi0))" \
		"$((io1[0] - io0[0]))" "$((io1[1] - io0[1]))" >>"$TSV"
	log "$phase $wl $t c=$c: tps $tps, latency $lat ms, WAL $wal bytes / $txns rows, disk read $(((io1[0] - io0[0]) >> 20)) MiB written $(((io1[1] - io0[1]) >> 20)) MiB"
}

# perf profile of one workload on one table: the pgbench backend and the
# forst flush worker only (-p: the machine may run other servers), with
# DWARF call graphs (PostgreSQL and forst.so have no frame pointers).
profile_one()
{
	local phase=$1 wl=$2 t=$3 rows=$4 script="$work/$2-$3.sql" pd="$work/perf-$1-$2-$3" pids
	command -v perf >/dev/null || { log "perf not installed, no profile"; return 0; }
	as_pg_user "$bindir/pgbench" -n -M prepared -c 1 -j 1 -T 16 --random-seed="$SEED" \
		-D nkeys="$rows" -f "$script" -h 127.0.0.1 -p "$port" postgres >"$pd.out" 2>&1 &
	local bench=$!
	sleep 1
	pids=$(psql_q -c "SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE application_name = 'pgbench' OR backend_type = 'forst flush'")
	perf record -q -F 499 --call-graph dwarf,16384 -p "$pids" -o "$pd.data" -- sleep 12 >/dev/null 2>&1 || true
	wait "$bench" || true
	{
		echo "### perf: $phase $wl on $t (pgbench backend + forst flush worker, 1 client, 12 s; $(grep '^tps' "$pd.out"))"
		echo
		echo "Self time:"
		echo '```'
		perf report -i "$pd.data" --no-children --sort comm,dso,symbol --stdio -g none \
			--percent-limit 0.8 2>/dev/null >"$pd.self" || true
		awk '!/^#/ && NF && n++ < 30 { sub(/ +$/, ""); print }' "$pd.self"
		echo '```'
		echo "Inclusive (children):"
		echo '```'
		perf report -i "$pd.data" --children --sort symbol --stdio -g none \
			--percent-limit 4 2>/dev/null >"$pd.incl" || true
		awk '!/^#/ && NF && n++ < 45 { sub(/ +$/, ""); print }' "$pd.incl"
		echo '```'
	} >>"$work/profiles.md"
	cp "$pd.out" "bench/results/perf-$stamp-$phase-$wl-$t.txt" 2>/dev/null || true
}

# Loads the tables of one server ("h", "f" or both) for phase $1, $2 rows.
load_tables()
{
	local phase=$1 rows=$2 t load_h='' load_f=''
	shift 2

	for t in "$@"; do
		if [ "$t" = h ]; then
			log "load heap"
			load_h=$(load_table h "$rows" heap)
			psql_q -c "VACUUM ANALYZE h"
		else
			log "load forst"
			load_f=$(load_table f "$rows" forst)
			psql_q -c "ANALYZE f"
			# Let the flush worker drain what the load left in memtables.
			for _ in $(seq 1 120); do
				[ "$(forst_mem_bytes f)" -lt $((16 << 20)) ] && break
				sleep 1
			done
		fi
	done
	psql_q -c "CHECKPOINT"
	[ -z "$load_h" ] ||
		printf '%s\th\t%s\t%s\t%s\t%s\t0\n' "$phase" "$rows" "$load_h" "$(table_bytes h)" "$(slot_lag)" >>"$LOADS"
	[ -z "$load_f" ] ||
		printf '%s\tf\t%s\t%s\t%s\t%s\t%s\n' "$phase" "$rows" "$load_f" "$(table_bytes f)" "$(slot_lag)" "$(forst_mem_bytes f)" >>"$LOADS"
	log "loaded: $* ($(du -sb "$data/forst/remote" 2>/dev/null | cut -f1) bytes in forst's remote dir, replaced files included)"
}

# One server of phase $1 (server log server-$2.log) after its runs.
after_runs()
{
	local phase=$1 name=$2

	{
		echo "#### $phase ($name): after the runs"
		echo '```'
		psql_q -P pager=off -c "SELECT pg_size_pretty(pg_total_relation_size(c.oid)) AS heap_with_index, pg_size_pretty(pg_relation_size(c.oid)) AS heap, pg_size_pretty(pg_indexes_size(c.oid)) AS heap_index FROM pg_class c WHERE c.relname = 'h'"
		echo "forst remote dir: $(du -sb "$data/forst/remote" 2>/dev/null | cut -f1) bytes, pg_wal: $(du -sb "$data/pg_wal" | cut -f1) bytes, forst slot lag: $(slot_lag) bytes"
		as_pg_user "$bindir/psql" -X -P pager=off -h 127.0.0.1 -p "$port" -d postgres \
			-c "SELECT \"table\", memtables, memtable_bytes, sst_files, sst_bytes, level_files, rows_estimate FROM forst.tables"
		echo "server log: $(grep -cE 'ERROR|WARNING|FATAL|PANIC' "$work/server-$name.log" || true) ERROR/WARNING/FATAL/PANIC lines"
		grep -E 'ERROR|WARNING|FATAL|PANIC' "$work/server-$name.log" | sort | uniq -c | sort -rn | head -10 || true
		echo '```'
	} >>"$work/after.md"
}

run_phase()
{
	local phase=$1 rows=$2 c wl t group groups tables

	exec 9>"$LOCK"
	if ! flock -n 9; then
		log "waiting for $LOCK"
		flock 9
	fi
	log "phase $phase: $rows rows; install this checkout's forst.so"
	as_root make -C "$FORST_ROOT" --no-print-directory PG_CONFIG="$PG_CONFIG" -s install
	# SEPARATE=1: each table in a server of its own, so that one's memory
	# (heap's shared_buffers, forst's memtables) is not in the other's PSS
	if [ "$SEPARATE" = 1 ]; then groups="h f"; else groups="hf"; fi
	for group in $groups; do
		tables=$(echo "$group" | sed 's/./& /g')
		start_server "$phase-$group"
		# shellcheck disable=SC2086 # one word per table
		load_tables "$phase" "$rows" $tables
		for wl in upsert read; do
			for c in $CLIENTS; do
				for t in $tables; do
					run_one "$phase" "$wl" "$t" "$c" "$rows"
				done
			done
		done
		after_runs "$phase" "$phase-$group"
		if [ "$PROFILE" -eq 1 ]; then
			for wl in upsert read; do
				for t in $tables; do
					profile_one "$phase" "$wl" "$t" "$rows"
				done
			done
		fi
		stop_server
	done
	exec 9>&-
	log "phase $phase done, lock released"
}

printf 'phase\tworkload\ttable\tclients\trows\ttps\tlatency_ms\ttxns\twal_bytes\tpeak_pss\tpeak_rss\tpeak_pg_wal\tlast_pg_wal\tsamples\tslot_lag\tforst_memtable_bytes\twal_fpi\tdisk_read_bytes\tdisk_write_bytes\n' >"$TSV"
printf 'phase\ttable\trows\tload_seconds\tbytes\tslot_lag\tforst_memtable_bytes\n' >"$LOADS"
for p in $PHASES; do
	case "$p" in
		small) run_phase small "$SMALL_ROWS" ;;
		large) run_phase large "$LARGE_ROWS" ;;
		*) die "unknown phase $p" ;;
	esac
done
touch "$work/after.md" "$work/profiles.md"
python3 bench/pgbench/report.py "$TSV" "$LOADS" "$work/after.md" "$work/profiles.md" \
	"shared_buffers=$SHARED_BUFFERS ${MEMORY_LIMIT:+memory_limit=$MEMORY_LIMIT }$([ "${FORST_UNLOGGED:-0}" = 1 ] && echo 'forst_table=UNLOGGED ')$([ "$SEPARATE" = 1 ] && echo 'separate_servers ')synchronous_commit=$SYNC_COMMIT duration=${DURATION}s ${WARMUP:+warmup=${WARMUP}s }seed=$SEED payload=${PAYLOAD}B clients=[$CLIENTS] $FORST_SETTINGS" |
	tee "$REPORT"
log "written: $REPORT, $TSV"
