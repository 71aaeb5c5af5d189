#!/usr/bin/env bash
# bench/pipeline_large.sh -- the demo's streaming job (scripts/pipeline.sql,
# docs/pipeline.md) in its large-state mode: bids spread over millions of
# auctions and hopping windows of an hour, so that the live state is far
# larger than forst's cache and than the memory the server may use.  One
# run, three configurations side by side on the same pre-generated events:
#
#   bash bench/pipeline_large.sh [--events N] [--quick]
#
#   --events N  events (default 450000; --quick: 200000)
#   --quick     a smoke run (small sizes, under 6 minutes in all): 200,000
#               events, windows of 10 minutes every 2 minutes, 200,000 cold
#               auctions; pipeline-verify.sql
#               checks the first mode's outputs
#
# Modes (MODES, default "local s3 heap", run in that order):
#   local   forst on file:// (the data directory), no memory limit: the SST
#           files stay in the page cache, everything is in memory
#   s3      forst on S3 (a throwaway Ceph RGW on 127.0.0.1, scripts/rgw.sh;
#           the run fails with RGW's own report if it cannot start), with
#           forst.cache_size = CACHE_PERCENT (5) % of the local mode's final
#           state bytes (or CACHE_SIZE, e.g. 8MB, when no local mode runs
#           first) and the server in a memory cgroup of MEMORY_LIMIT
#   heap    the state tables as heap tables (state_am heap, closed windows
#           DELETEd, autovacuum tuned as bench/pipeline_vs_heap.sh's heap
#           mode), in a memory cgroup of MEMORY_LIMIT
#   BASE-NAME  mode BASE (local, s3 or heap) with more postgresql.conf lines
#           from EXTRA_CONF_BASE_NAME (the mode's name with "-" as "_");
#           s3-nobatch has 'forst.batch_lookups = off' built in.  A mode
#           whose lines name a setting this build lacks is skipped (noted
#           in the report), so default runs never carry such lines.
#   MODES="local s3 s3-nobatch heap" compares S3 with and without a setting.
#
# Environment: MEMORY_LIMIT (default 256M; cgroup v1 memory controller at
# /sys/fs/cgroup/memory, root needed; page cache included), CACHE_PERCENT,
# CACHE_SIZE, BATCH (events per step, default 5000), MAX_SECONDS (stop a
# mode after that long, default 0: no limit; a stopped mode is marked
# partial and its events/s are over the events it consumed), VERIFY=1 (run
# scripts/pipeline-verify.sql after the first mode; default with --quick
# only: at full size its recomputation takes longer than the job),
# EXTRA_CONF (lines for every mode), FORST_BINDIR (a bindir with forst
# installed, instead of building a private copy), KEEP=1 keeps the work
# directory; the job's large-state parameters: COLD_FRACTION (0.9),
# COLD_AUCTIONS (1000000), BIDDERS (1000000), DELTA_US (event time between
# two events, 8700 µs: 450,000 events span 65 minutes, so the first full
# hour closes), HOP_SIZE (1 hour), HOP_SLIDE (10 minutes), TUMBLE_SIZE
# (10 minutes).
#
# Each mode: a fresh server (initdb; shared_buffers 32MB, 2 MB memtables
# in a 32 MB pool, a 16 MB shared block cache, 8 MB per backend and 16 MB
# of open SST files' indexes and filters,
# pg_stat_statements with track = all), a fresh job, the source log filled
# with the same pre-generated events (COPY of one generation) and
# CHECKPOINTed; then the server is restarted, inside the memory cgroup for
# s3 and heap: the source log's page cache stays outside the cgroup (it
# stands for a log outside the job's server, such as a Kafka topic).  One
# psql session runs `SELECT pipeline.step()` once per batch, each its own
# transaction, with \timing (the step latency); no checkpoints of the job.
# Samplers: the state bytes, the object store GETs and the disk cache's
# hits every second (psql \watch), the server's PSS every second
# (bench/pipeline/mem_series.py).  After the run: the live state rows
# (count(*)), forst.stats, the memory cgroup's peak, the top statements of
# pg_stat_statements, and a digest of the three output tables, which must
# be equal in every mode that finished.  Then, on the forst modes, a probe:
# once the background workers are idle, the q5 upsert of one earlier batch
# (the 5,000 events from 90% of the stream, whose windows are mostly still
# open) runs again under EXPLAIN ANALYZE and is rolled back; the object
# store requests it made, divided by its conflicting keys, say what one
# read of an existing key costs (its plan, with the batch lookups'
# counters, goes to the statements file).
#
# Results: bench/results/pipeline-large-STAMP.tsv (one line per mode),
# -samples.tsv and -mem.tsv (over time), -statements.txt, .md (report with
# the ratios s3/local and s3/heap); bench/plot_pipeline_large.sh draws them.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

events=450000
quick=0
while [ $# -gt 0 ]; do
	case "$1" in
		--events)
			if [ $# -lt 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then die "$1 needs a number"; fi
			events=$2
			shift
			;;
		--quick) quick=1 ;;
		-h | --help) forst_usage "$0"; exit 0 ;;
		*) forst_usage "$0" >&2; exit 2 ;;
	esac
	shift
done
if [ "$quick" -eq 1 ]; then
	[ "${events}" != 450000 ] || events=200000
	: "${HOP_SIZE:=10 minutes}" "${HOP_SLIDE:=2 minutes}" "${TUMBLE_SIZE:=2 minutes}"
	: "${COLD_AUCTIONS:=200000}" "${VERIFY:=1}"
fi
MODES=${MODES:-"local s3 heap"}
MEMORY_LIMIT=${MEMORY_LIMIT:-256M}
CACHE_PERCENT=${CACHE_PERCENT:-5}
CACHE_SIZE=${CACHE_SIZE:-}
BATCH=${BATCH:-5000}
MAX_SECONDS=${MAX_SECONDS:-0}
VERIFY=${VERIFY:-0}
EXTRA_CONF=${EXTRA_CONF:-}
KEEP=${KEEP:-0}
COLD_FRACTION=${COLD_FRACTION:-0.9}
COLD_AUCTIONS=${COLD_AUCTIONS:-1000000}
BIDDERS=${BIDDERS:-1000000}
DELTA_US=${DELTA_US:-8700}
HOP_SIZE=${HOP_SIZE:-1 hour}
HOP_SLIDE=${HOP_SLIDE:-10 minutes}
TUMBLE_SIZE=${TUMBLE_SIZE:-10 minutes}
if [ "$events" -le 0 ] || [ "$BATCH" -le 0 ]; then die "--events and BATCH must be positive"; fi

# mode_base MODE: local, s3 or heap
mode_base()
{
	case "$1" in
		local | local-*) echo local ;;
		s3 | s3-*) echo s3 ;;
		heap | heap-*) echo heap ;;
		*) die "unknown mode $1 (local, s3, heap, or one of them followed by -NAME)" ;;
	esac
}

# mode_conf MODE: the mode's own postgresql.conf lines (EXTRA_CONF_<MODE>,
# "-" as "_"; s3-nobatch has its line built in).
mode_conf()
{
	local var="EXTRA_CONF_${1//[^A-Za-z0-9]/_}"
	if [ -n "${!var:-}" ]; then
		printf '%s\n' "${!var}"
	elif [ "$1" = s3-nobatch ]; then
		echo "forst.batch_lookups = off"
	fi
}

need_memcg=0
need_s3=0
for m in $MODES; do
	case "$(mode_base "$m")" in
		s3) need_memcg=1; need_s3=1 ;;
		heap) need_memcg=1 ;;
	esac
done
limit_bytes=0
MEMCG=
if [ "$need_memcg" -eq 1 ]; then
	is_root || die "MEMORY_LIMIT needs root (a memory cgroup for the server)"
	[ -d /sys/fs/cgroup/memory ] || die "MEMORY_LIMIT needs the cgroup v1 memory controller at /sys/fs/cgroup/memory"
	limit_bytes=$(numfmt --from=iec "$MEMORY_LIMIT")
	MEMCG=/sys/fs/cgroup/memory/forst-pipeline-large-$$
fi

stamp=$(date -u +%Y%m%d-%H%M%S)
mkdir -p bench/results
TSV=bench/results/pipeline-large-$stamp.tsv
SAMPLES=bench/results/pipeline-large-$stamp-samples.tsv
MEM=bench/results/pipeline-large-$stamp-mem.tsv
STMTS=bench/results/pipeline-large-$stamp-statements.txt
REPORT=bench/results/pipeline-large-$stamp.md

forst_install_deps
forst_ensure_pg_user
work=$(forst_user_tmpdir forst-pipelarge)
if [ -n "${FORST_BINDIR:-}" ]; then
	bindir=$FORST_BINDIR
else
	log "build: make; install into $work/pg (a private copy of PostgreSQL 15)"
	bindir=$(forst_build_private_install "$work/pg")
fi
data=
port=
rgw_dir=
samplers=()

stop_server()
{
	if [ -n "$port" ]; then
		as_pg_user "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
		port=
	fi
}

cleanup()
{
	local p
	for p in "${samplers[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	stop_server
	[ -z "$MEMCG" ] || rmdir "$MEMCG" 2>/dev/null || true
	[ -z "$rgw_dir" ] || bash scripts/rgw.sh stop "$rgw_dir" >/dev/null 2>&1 || true
	if [ "$KEEP" -eq 1 ]; then
		log "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

sql() { as_pg_user "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d postgres "$@"; }

if [ "$need_s3" -eq 1 ]; then
	if [ -z "${S3_ENDPOINT:-}" ]; then
		rgw_dir=$work/rgw
		log "starting Ceph RGW on 127.0.0.1 (scripts/rgw.sh)"
		forst_install_deps "${FORST_S3_PACKAGES[@]}"
		rgw_env=$(RGW_MEMSTORE_BYTES=$((8 << 30)) bash scripts/rgw.sh start "$rgw_dir") ||
			die "Ceph RGW did not start (its report above; logs in $rgw_dir/log.failed)"
		eval "$rgw_env"
	fi
	: "${S3_BUCKET:?}" "${AWS_ACCESS_KEY_ID:?}" "${AWS_SECRET_ACCESS_KEY:?}"
fi

# server_start MODE [in-cgroup]: a server on MODE's data directory, in the
# memory cgroup when asked.
server_start()
{
	local mode=$1 cg=${2:-}
	port=$(forst_free_port)
	if [ -n "$cg" ]; then
		# a fresh group, its page cache dropped with it; the postmaster and
		# every backend inherit it from the subshell
		[ ! -d "$MEMCG" ] || rmdir "$MEMCG"
		mkdir "$MEMCG"
		echo "$limit_bytes" >"$MEMCG/memory.limit_in_bytes"
	fi
	(
		[ -z "$cg" ] || echo "$BASHPID" >"$MEMCG/cgroup.procs"
		as_pg_user "$bindir/pg_ctl" -D "$data" -l "$work/$mode/server.log" -w \
			-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$work/$mode'" \
			start >/dev/null
	) || die "mode $mode: the server did not start (log: $work/$mode/server.log)"
}

# setup_mode MODE CACHE_KB: initdb, postgresql.conf; prints nothing.
setup_mode()
{
	local mode=$1 cache_kb=$2 base
	base=$(mode_base "$mode")
	data=$work/$mode/data
	as_pg_user mkdir -p "$work/$mode"
	as_pg_user "$bindir/initdb" -D "$data" -A trust -N -E UTF8 --locale=C >/dev/null
	{
		cat <<CONF

# bench/pipeline_large.sh, mode $mode
shared_preload_libraries = 'forst,pg_stat_statements'
pg_stat_statements.track = all
shared_buffers = 32MB
forst.memtable_size = '2MB'
forst.memtable_memory = '32MB'
forst.shared_block_cache_size = '16MB'
forst.block_cache_size = '8MB'
forst.sst_reader_memory = '16MB'
forst.checkpoint_interval = 0
autovacuum_naptime = 1s
max_wal_size = 1GB
CONF
		if [ "$base" = s3 ]; then
			cat <<CONF
forst.remote_dir = 's3://$S3_BUCKET/pipeline-large-$stamp-$mode'
forst.s3_endpoint = '$S3_ENDPOINT'
forst.s3_access_key_id = '$AWS_ACCESS_KEY_ID'
forst.s3_secret_access_key = '$AWS_SECRET_ACCESS_KEY'
forst.cache_size = '${cache_kb}kB'
CONF
		fi
		printf '%s\n' "$EXTRA_CONF"
		mode_conf "$mode"
	} | as_pg_user tee -a "$data/postgresql.conf" >/dev/null
}

# setup_job MODE: a fresh job whose state tables suit MODE.
setup_job()
{
	local am=forst
	[ "$(mode_base "$1")" != heap ] || am=heap
	sql -v seed=42 -v delta_us="$DELTA_US" -v jitter_us=2000000 -v batch="$BATCH" \
		-v hop_size="$HOP_SIZE" -v hop_slide="$HOP_SLIDE" -v tumble_size="$TUMBLE_SIZE" \
		-v cold_fraction="$COLD_FRACTION" -v cold_auctions="$COLD_AUCTIONS" -v bidders="$BIDDERS" \
		-v state_am="$am" -f - <scripts/pipeline.sql >/dev/null
	sql -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
	if [ "$am" = heap ]; then
		local t
		for t in q5_state q7_state seller_state; do
			sql -c "ALTER TABLE pipeline.$t SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0)"
		done
	fi
}

# The driver: one statement per step, \timing gives each one's latency;
# with MAX_SECONDS, a look at the clock every 5 steps (not timed).
steps=$(((events + BATCH - 1) / BATCH))
driver=$work/driver.sql
{
	printf '%s\n' '\timing on'
	for i in $(seq 1 "$steps"); do
		printf '%s\n' 'SELECT pipeline.step();'
		if [ "$MAX_SECONDS" -gt 0 ] && [ $((i % 5)) -eq 0 ]; then
			printf '%s\n' '\timing off' \
				"SELECT extract(epoch FROM clock_timestamp()) > :deadline AS over \gset" \
				'\if :over' '\q' '\endif' '\timing on'
		fi
	done
} >"$driver"
chmod 644 "$driver"

STATE_TABLES="('pipeline.q5_state'::regclass, 'pipeline.q7_state'::regclass, 'pipeline.seller_state'::regclass)"
printf 'mode\tbase\tevents\tconsumed\tcomplete\twall_s\tevents_per_s\tsteps\tstep_p50_ms\tstep_p99_ms\tstep_max_ms\tstate_rows\tq5_rows\tstate_bytes\tcache_size\tmemory_limit\tpeak_pss\tmemcg_peak\toom_kills\tstore_gets\tgets_per_event\tstore_bytes_read\tstore_request_ms\tcache_hits\tcache_misses\tcache_hit_ratio\tblock_cache_hits\tblock_cache_misses\twal_bytes\tloadavg\textra_conf\toutput_digest\tprobe_keys\tprobe_conflicts\tprobe_gets\tprobe_ms\n' >"$TSV"
printf 'mode\tt_s\tlast_id\tstate_bytes\tstore_gets\tcache_hits\tcache_misses\n' >"$SAMPLES"
printf 'mode\tt_s\tpss\n' >"$MEM"
: >"$STMTS"
skipped=""
local_state_bytes=
first_done=0

# store_requests: GETs (whole and ranged) so far, from forst.stats.
store_requests() { sql -c "SELECT store_get + store_get_range FROM forst.stats"; }

# probe_upsert: the q5 upsert of the batch at 90% of the stream again, in a
# transaction rolled back, once the flush and compaction workers have been
# idle (forst.stats unchanged) for 2 s (at most 30 s of waiting).  Prints
# "keys conflicts gets ms".
probe_upsert()
{
	local lo=$((events * 9 / 10)) a b out
	a=$(store_requests)
	for _ in $(seq 1 15); do
		sleep 2
		b=$(store_requests)
		[ "$a" != "$b" ] || break
		a=$b
	done
	out=$(sql -c "BEGIN" -c "EXPLAIN (ANALYZE, TIMING off)
	        INSERT INTO pipeline.q5_state AS s (window_start, auction, bids)
	        SELECT w.window_start, e.auction, count(*)
	          FROM nexmark.events e, pipeline.config c, forst.hop_windows(e.at, c.hop_size, c.hop_slide) w
	         WHERE e.id > $lo AND e.id <= $lo + $BATCH AND e.kind = 'bid'
	         GROUP BY 1, 2
	        ON CONFLICT (window_start, auction) DO UPDATE SET bids = s.bids + excluded.bids" -c "ROLLBACK")
	b=$(store_requests)
	# the plan with the batch lookups' counters, for the statements file
	printf '## mode %s: the probe'"'"'s EXPLAIN ANALYZE\n%s\n\n' "$mode" "$out" >>"$STMTS"
	printf '%s\n' "$out" | python3 -c '
import re, sys
t = sys.stdin.read()
ins = int(re.search(r"Tuples Inserted: (\d+)", t).group(1))
con = int(re.search(r"Conflicting Tuples: (\d+)", t).group(1))
ms = float(re.search(r"Execution Time: ([0-9.]+) ms", t).group(1))
print(ins + con, con, int(sys.argv[2]) - int(sys.argv[1]), "%.1f" % ms)' "$a" "$b"
}

# run_one MODE: one run of the job, one line of $TSV.
run_one()
{
	local mode=$1 base cache_kb=0 cg="" t0 t1 lsn0 lsn1 load digest deadline conf_line name
	base=$(mode_base "$mode")
	if [ "$base" = s3 ]; then
		if [ -n "$CACHE_SIZE" ]; then
			# 8M, 8MB or 8MiB, as PostgreSQL and numfmt spell sizes
			cache_kb=$(numfmt --from=iec "$(sed -E 's/i?B$//' <<<"$CACHE_SIZE")") ||
				die "CACHE_SIZE=$CACHE_SIZE is not a size (e.g. 8MB)"
			cache_kb=$((cache_kb / 1024))
		elif [ -n "$local_state_bytes" ]; then
			cache_kb=$((local_state_bytes * CACHE_PERCENT / 100 / 1024))
		else
			die "mode $mode: no local mode ran before it to size the cache; set CACHE_SIZE"
		fi
		[ "$cache_kb" -ge 1024 ] || cache_kb=1024
	fi
	[ "$base" = local ] || cg=1
	log "mode $mode: fresh server and job, $events events in the source log"
	setup_mode "$mode" "$cache_kb"
	server_start "$mode"
	# a setting this build does not know: skip the mode (the server may
	# have dropped the line with a warning)
	while IFS= read -r conf_line; do
		name=$(sed -n 's/^[[:space:]]*\([A-Za-z0-9_.]*\)[[:space:]]*=.*/\1/p' <<<"$conf_line")
		[ -n "$name" ] || continue
		if [ -z "$(sql -c "SELECT current_setting('$name', true)")" ]; then
			log "mode $mode: this build has no setting $name: mode skipped"
			skipped+="${skipped:+, }$mode (no setting $name)"
			stop_server
			return 0
		fi
	done < <(printf '%s\n' "$EXTRA_CONF"; mode_conf "$mode")
	setup_job "$mode"
	sql -c "COPY nexmark.events FROM '$work/events.copy' (FORMAT binary)" \
		-c "VACUUM ANALYZE nexmark.events" -c "CHECKPOINT"
	# restarted, in the memory cgroup for s3 and heap; the source log's
	# pages stay in the page cache, charged outside the cgroup
	stop_server
	server_start "$mode" "$cg"
	sql -c "SELECT forst.stats_reset()" -c "SELECT pg_stat_statements_reset()" -c "SELECT pg_stat_reset()" >/dev/null
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	lsn0=$(sql -c "SELECT pg_current_wal_lsn()")
	local state_expr
	if [ "$base" = heap ]; then
		state_expr="(SELECT (pg_total_relation_size('pipeline.q5_state') + pg_total_relation_size('pipeline.q7_state')
		                     + pg_total_relation_size('pipeline.seller_state'))::bigint)"
	else
		state_expr="(SELECT sum(memtable_bytes + sst_bytes)::bigint FROM forst.tables WHERE \"table\" IN $STATE_TABLES)"
	fi
	printf '%s\n' "SELECT round(extract(epoch FROM clock_timestamp())::numeric, 3),
	               (SELECT last_id FROM pipeline.offsets WHERE job = 'nexmark'), $state_expr,
	               s.store_get + s.store_get_range, s.cache_hits, s.cache_misses
	          FROM forst.stats s" '\watch 1' |
		as_pg_user "$bindir/psql" -X -q -At -h 127.0.0.1 -p "$port" \
			-d "dbname=postgres application_name=pipelarge_sampler" -f - >"$work/$mode/samples.out" 2>/dev/null &
	samplers=($!)
	python3 bench/pipeline/mem_series.py "$(head -1 "$data/postmaster.pid")" "$work/$mode/mem.out" 1 &
	samplers+=($!)
	deadline=$(awk -v a="$EPOCHREALTIME" -v m="$MAX_SECONDS" 'BEGIN { printf "%.0f", a + m }')
	log "mode $mode: $steps steps of $BATCH events${cg:+ (memory cgroup $MEMORY_LIMIT)}$([ "$base" != s3 ] || echo ", forst.cache_size ${cache_kb} kB")$([ "$MAX_SECONDS" -gt 0 ] && echo ", at most $MAX_SECONDS s")"
	t0=$EPOCHREALTIME
	sql -v deadline="$deadline" -f "$driver" >"$work/$mode/steps.out" ||
		die "mode $mode: the job failed (log: $work/$mode/server.log)"
	t1=$EPOCHREALTIME
	sleep 1.2
	sql -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pipelarge_sampler'" >/dev/null
	kill "${samplers[1]}" 2>/dev/null || true
	wait "${samplers[@]}" 2>/dev/null || true
	samplers=()
	lsn1=$(sql -c "SELECT pg_current_wal_lsn()")
	local consumed rows q5rows sbytes stats memcg_peak=0 ooms=0
	consumed=$(sql -c "SELECT last_id FROM pipeline.offsets WHERE job = 'nexmark'")
	log "mode $mode: the job is at offset $consumed of $events; counting the live state"
	read -r rows q5rows < <(sql -F ' ' -c "SELECT (SELECT count(*) FROM pipeline.q5_state) + (SELECT count(*) FROM pipeline.q7_state)
	                                             + (SELECT count(*) FROM pipeline.seller_state), (SELECT count(*) FROM pipeline.q5_state)")
	sbytes=$(sql -c "SELECT $state_expr")
	stats=$(sql -F ' ' -c "SELECT store_get + store_get_range, store_bytes_read, round(store_request_ms),
	                              coalesce(cache_hits, 0), coalesce(cache_misses, 0),
	                              coalesce(block_cache_hits, 0), coalesce(block_cache_misses, 0) FROM forst.stats")
	digest=$(sql -c "SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
	                   SELECT 'q5' || q::text AS x FROM pipeline.q5_hot_items q UNION ALL
	                   SELECT 'q7' || q::text FROM pipeline.q7_highest_bid q UNION ALL
	                   SELECT 'se' || q::text FROM pipeline.seller_activity q) o")
	if [ -n "$cg" ]; then
		memcg_peak=$(cat "$MEMCG/memory.max_usage_in_bytes")
		ooms=$(sed -n 's/^oom_kill //p' "$MEMCG/memory.oom_control")
	fi
	{
		echo "## mode $mode: pg_stat_statements, top 12 by total time"
		as_pg_user "$bindir/psql" -X -P pager=off -h 127.0.0.1 -p "$port" -d postgres \
			-c "SELECT calls, round(total_exec_time) AS total_ms, round(mean_exec_time::numeric, 2) AS mean_ms,
			           rows, shared_blks_hit, shared_blks_read, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
			      FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12"
		as_pg_user "$bindir/psql" -X -P pager=off -h 127.0.0.1 -p "$port" -d postgres \
			-c "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del, n_live_tup FROM pg_stat_user_tables
			     WHERE relid IN $STATE_TABLES ORDER BY relname"
		as_pg_user "$bindir/psql" -X -P pager=off -h 127.0.0.1 -p "$port" -d postgres -c "SELECT * FROM forst.stats" -x
	} >>"$STMTS"
	local probe="0 0 0 0"
	[ "$base" = heap ] || probe=$(probe_upsert)
	if [ "$VERIFY" -eq 1 ] && [ "$first_done" -eq 0 ] && [ "$consumed" = "$events" ]; then
		log "mode $mode: scripts/pipeline-verify.sql (every emitted window recomputed from the source log)"
		sql -c "INSERT INTO pipeline.samples SELECT clock_timestamp(), o.last_id, s.q5_rows, s.q7_rows, s.seller_rows,
		               s.memtable_bytes, s.sst_bytes, s.sst_files, s.reclaimed_bytes
		          FROM pipeline.state_size s, pipeline.offsets o"
		local vout
		vout=$(sql -v total="$events" -f - <scripts/pipeline-verify.sql) || true
		printf '%s\n' "$vout" | sed 's/^/  /'
		[ "$(printf '%s\n' "$vout" | tail -n 1)" = PASS ] || die "mode $mode: the verification failed"
	fi
	[ "$base" != local ] || [ -n "$local_state_bytes" ] || local_state_bytes=$sbytes
	# shellcheck disable=SC2086 # $probe and $stats are four and seven numbers
	python3 - "$mode" "$base" "$events" "$consumed" "$t0" "$t1" "$work/$mode/steps.out" \
		"$work/$mode/samples.out" "$work/$mode/mem.out" "$rows" "$q5rows" "$sbytes" "$((cache_kb * 1024))" \
		"$([ -n "$cg" ] && echo "$limit_bytes" || echo 0)" "$memcg_peak" "${ooms:-0}" \
		"$(sql -c "SELECT '$lsn1'::pg_lsn - '$lsn0'::pg_lsn")" "$load" "$(mode_conf "$mode" | paste -sd ';' -)" \
		"$digest" "$TSV" "$SAMPLES" "$MEM" $probe $stats <<'PY'
import re, sys
(mode, base, events, consumed, t0, t1, steps_out, samples_out, mem_out, rows, q5rows, sbytes,
 cache, limit, memcg_peak, ooms, wal, load, conf, digest, tsv, samples_tsv, mem_tsv,
 p_keys, p_conflicts, p_gets, p_ms, gets, bytes_read, req_ms, c_hits, c_miss, b_hits, b_miss) = sys.argv[1:]
consumed, t0, t1 = int(consumed), float(t0), float(t1)
lat, counts = [], []
for line in open(steps_out):
    m = re.match(r'Time: ([0-9.]+) ms', line)
    if m:
        lat.append(float(m.group(1)))
    elif re.fullmatch(r'[0-9]+', line.strip()):
        counts.append(int(line))
assert len(lat) == len(counts) and sum(counts) == consumed, (len(lat), len(counts), sum(counts), consumed)
s = sorted(lat)
pct = lambda p: s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]
with open(samples_tsv, 'a') as o:
    for line in open(samples_out):
        f = line.strip().split('|')
        if len(f) == 6 and f[0] and float(f[0]) <= t1 + 0.1:
            o.write('%s\t%.3f\t%s\t%s\t%s\t%s\t%s\n' % (mode, float(f[0]) - t0, f[1], f[2] or 0, f[3], f[4], f[5]))
peak = 0
with open(mem_tsv, 'a') as o:
    for line in open(mem_out):
        f = line.split()
        if len(f) == 2 and t0 - 0.5 <= float(f[0]) <= t1 + 0.5:
            o.write('%s\t%.3f\t%s\n' % (mode, float(f[0]) - t0, f[1]))
            peak = max(peak, int(f[1]))
wall = t1 - t0
ch, cm = int(c_hits), int(c_miss)
row = [mode, base, events, consumed, int(consumed == int(events)), '%.2f' % wall, '%.0f' % (consumed / wall),
       len(lat), '%.1f' % pct(50), '%.1f' % pct(99), '%.1f' % s[-1], rows, q5rows, sbytes, cache, limit,
       peak, memcg_peak, ooms, gets, '%.4f' % (int(gets) / max(consumed, 1)), bytes_read, req_ms, ch, cm,
       '%.4f' % (ch / (ch + cm)) if ch + cm else '', b_hits, b_miss, wal, load, conf, digest,
       p_keys, p_conflicts, p_gets, p_ms]
open(tsv, 'a').write('\t'.join(map(str, row)) + '\n')
print('  %s: %d events in %.1f s = %.0f events/s; step p50 %.0f ms, p99 %.0f ms; state %s rows, %.1f MB; '
      'GETs/event %.3f; disk cache hits %s; peak PSS %.0f MB'
      % (mode, consumed, wall, consumed / wall, pct(50), pct(99), rows, int(sbytes) / 1e6,
         int(gets) / max(consumed, 1), '%.1f%%' % (100 * ch / (ch + cm)) if ch + cm else '-', peak / 1e6))
PY
	first_done=1
	stop_server
	[ -z "$cg" ] || rmdir "$MEMCG" 2>/dev/null || true
}

# The source: generated once (deterministic, seed 42) on a scratch server,
# saved with COPY, loaded into each mode's source log.
log "generating $events events once (nexmark.gen, seed 42, the large-state parameters)"
data=$work/gen/data
as_pg_user mkdir -p "$work/gen"
as_pg_user "$bindir/initdb" -D "$data" -A trust -N -E UTF8 --locale=C >/dev/null
printf '%s\n' "shared_preload_libraries = 'forst'" "max_wal_size = 1GB" | as_pg_user tee -a "$data/postgresql.conf" >/dev/null
server_start gen
setup_job heap
sql -c "CALL nexmark.generate($events, 20000, 0)" \
	-c "COPY nexmark.events TO '$work/events.copy' (FORMAT binary)"
sql -F ' ' -c "SELECT 'events: ' || count(*) || ', bids on ' || count(DISTINCT auction) FILTER (WHERE kind = 'bid') ||
                      ' auctions, event time ' || min(at) || ' .. ' || max(at) FROM nexmark.events" | sed 's/^/  /'
stop_server
rm -rf "$work/gen"

for m in $MODES; do
	run_one "$m"
done
# every mode that ran left a line (header first): else say so and fail
[ "$(wc -l <"$TSV")" -gt 1 ] || die "no mode finished: see the errors above"

python3 bench/pipeline/large_report.py "$TSV" \
	"events=$events batch=$BATCH cold_fraction=$COLD_FRACTION cold_auctions=$COLD_AUCTIONS bidders=$BIDDERS delta_us=$DELTA_US hop=$HOP_SIZE/$HOP_SLIDE tumble=$TUMBLE_SIZE memory_limit=$MEMORY_LIMIT cache=${CACHE_SIZE:-$CACHE_PERCENT% of local state} max_seconds=$MAX_SECONDS modes=[$MODES]" \
	"$skipped" | tee "$REPORT"
log "written: $REPORT, $TSV, $SAMPLES, $MEM, $STMTS (plot: bash bench/plot_pipeline_large.sh $TSV docs/benchmarks-pipeline-large.png)"
