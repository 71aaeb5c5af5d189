#!/usr/bin/env bash
# bench/pipeline_vs_heap.sh -- the demo's streaming job (scripts/pipeline.sql,
# docs/pipeline.md) with its state tables as forst tables and as heap
# tables, side by side on one private PostgreSQL 15 server (issue 6).
#
#   bash bench/pipeline_vs_heap.sh [--events N] [--rounds R] [--quick]
#
#   --events N  events per run (default 3000000; --quick: 300000)
#   --rounds R  rounds (default 2; --quick: 1); each round runs every mode
#               once, in alternating order (round 1 forst first, round 2
#               heap first, ...), so that ratios are taken within a round
#
# Environment: MODES (default "forst heap heap-novacuum"),
# BATCH (events per step, default 5000), VACUUM_EVERY (mode heap: an
# explicit VACUUM of the state tables after every K steps, besides
# autovacuum, counted in the wall time but not in step latency; default 0:
# autovacuum only), FORST_BINDIR (a bindir with forst installed, instead of
# building a private copy), EXTRA_CONF (more postgresql.conf lines),
# FUNC_STATS=1 (track_functions = all; after each run, the functions' calls
# and times from pg_stat_user_functions are appended to
# bench/results/pipeline-STAMP-functions.txt), KEEP=1 keeps the work
# directory.
#
# Modes (psql variables state_am and durability of scripts/pipeline.sql):
#   forst          the job as the demo runs it: state tables USING forst,
#                  closed windows expired by forst.advance_watermark, space
#                  reclaimed by forst's flush and compaction workers
#   forst-ckpt     the same, checkpoint-durable (durability=checkpoint, as
#                  scripts/demo.sh --checkpoint-durable runs it): every table
#                  of the job (state, outputs, offset, config, samples) is an
#                  UNLOGGED forst table, whose rows write no WAL; the source
#                  log stays a heap table.  No checkpoints are taken here
#                  either (the durability they give is not measured)
#   heap           state tables USING heap, closed windows DELETEd in the
#                  step; autovacuum reclaims their space, tuned as a heap
#                  pipeline would be: autovacuum_naptime = 1s, and on each
#                  state table autovacuum_vacuum_scale_factor = 0,
#                  autovacuum_vacuum_threshold = 1000,
#                  autovacuum_vacuum_cost_delay = 0
#   heap-novacuum  the same DELETEs, autovacuum off on the state tables: what
#                  DELETE without VACUUM leaves behind
# Everything else is the same job: the output, offset and config tables are
# forst tables in every mode (unlogged ones in forst-ckpt), and every run's
# outputs must be identical (a digest of the three output tables is
# compared across runs and modes; the script fails if they differ).
#
# Each run: a fresh job (pipeline.sql), the source log filled with the same
# pre-generated events (a copy of one generation, so the job catches up on
# a backlog at full speed, and the generator does not compete for the 2
# cores), VACUUM ANALYZE of the log, CHECKPOINT; then one psql session runs
# `SELECT pipeline.step()` once per batch, each its own transaction, with
# \timing (the step latency, as the client sees it).  No checkpoints of the
# job (forst.checkpoint_interval = 0; a heap table is in no forst
# checkpoint anyway), no progress lines (pipeline.run's sampling is left
# out).  A second session samples the state every 0.5 s (\watch):
# pipeline.state_size.state_bytes (forst: memtables + SST files of the
# three state tables, forst.tables; heap: pg_total_relation_size of the
# three), live rows, and dead tuples (pg_stat_user_tables).
#
# Results: bench/results/pipeline-STAMP.tsv (one line per run),
# -samples.tsv (the state over time), .md (report with ratios forst/heap,
# forst-ckpt/heap and forst-ckpt/forst within each round, for the modes
# run); bench/plot_pipeline.sh draws the samples.
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib.sh

events=3000000
rounds=2
while [ $# -gt 0 ]; do
	case "$1" in
		--events | --rounds)
			[ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || die "$1 needs a number"
			declare "${1#--}=$2"
			shift
			;;
		--quick) events=300000; rounds=1 ;;
		-h | --help) forst_usage "$0"; exit 0 ;;
		*) forst_usage "$0" >&2; exit 2 ;;
	esac
	shift
done
MODES=${MODES:-"forst heap heap-novacuum"}
BATCH=${BATCH:-5000}
VACUUM_EVERY=${VACUUM_EVERY:-0}
KEEP=${KEEP:-0}
EXTRA_CONF=${EXTRA_CONF:-}
FUNC_STATS=${FUNC_STATS:-0}
[ "$FUNC_STATS" -eq 0 ] || EXTRA_CONF="track_functions = all
$EXTRA_CONF"
[ "$events" -gt 0 ] && [ "$rounds" -gt 0 ] || die "--events and --rounds must be positive"
for m in $MODES; do
	case "$m" in forst | forst-ckpt | heap | heap-novacuum) ;; *) die "unknown mode $m" ;; esac
done

stamp=$(date -u +%Y%m%d-%H%M%S)
mkdir -p bench/results
TSV=bench/results/pipeline-$stamp.tsv
SAMPLES=bench/results/pipeline-$stamp-samples.tsv
REPORT=bench/results/pipeline-$stamp.md
FUNCS=bench/results/pipeline-$stamp-functions.txt

forst_install_deps
forst_ensure_pg_user
work=$(forst_user_tmpdir forst-pipebench)
if [ -n "${FORST_BINDIR:-}" ]; then
	bindir=$FORST_BINDIR
else
	log "build: make; install into $work/pg (a private copy of PostgreSQL 15)"
	bindir=$(forst_build_private_install "$work/pg")
fi
data=$work/data
port=
sampler=

cleanup()
{
	if [ -n "$port" ]; then
		as_pg_user "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
	fi
	if [ "$KEEP" -eq 1 ]; then
		log "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

sql() { as_pg_user "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d postgres "$@"; }

as_pg_user "$bindir/initdb" -D "$data" -A trust -N -E UTF8 --locale=C >/dev/null
# The demo's forst settings (1 MB memtables: the state is flushed and
# compacted while the job runs); autovacuum every second for the heap modes.
as_pg_user tee -a "$data/postgresql.conf" >/dev/null <<CONF

# bench/pipeline_vs_heap.sh
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '64MB'
forst.checkpoint_interval = 0
autovacuum_naptime = 1s
max_wal_size = 4GB
$EXTRA_CONF
CONF
port=$(forst_free_port)
log "server: PostgreSQL 15 on 127.0.0.1:$port (log: $work/server.log)"
as_pg_user "$bindir/pg_ctl" -D "$data" -l "$work/server.log" -w \
	-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$work'" start >/dev/null

# setup_job MODE: a fresh job whose state tables suit MODE.
setup_job()
{
	local am=heap durability=wal
	case "$1" in
		forst) am=forst ;;
		forst-ckpt) am=forst durability=checkpoint ;;
	esac
	sql -v seed=42 -v delta_us=1000 -v jitter_us=2000000 -v batch="$BATCH" \
		-v hop_size='10 seconds' -v hop_slide='2 seconds' -v tumble_size='10 seconds' \
		-v state_am="$am" -v durability="$durability" -f - <scripts/pipeline.sql >/dev/null
	case "$1" in
		heap)
			sql -c "ALTER TABLE pipeline.q5_state SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0)" \
				-c "ALTER TABLE pipeline.q7_state SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0)" \
				-c "ALTER TABLE pipeline.seller_state SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0)"
			;;
		heap-novacuum)
			sql -c "ALTER TABLE pipeline.q5_state SET (autovacuum_enabled = false)" \
				-c "ALTER TABLE pipeline.q7_state SET (autovacuum_enabled = false)" \
				-c "ALTER TABLE pipeline.seller_state SET (autovacuum_enabled = false)"
			;;
	esac
}

# The source: generated once (deterministic, seed 42), copied into each
# run's source log.
log "generating $events events once (nexmark.gen, seed 42)"
setup_job forst
sql -c "CALL nexmark.generate($events, 10000, 0)"
sql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS public.src_events" \
	-c "CREATE TABLE public.src_events AS SELECT * FROM nexmark.events ORDER BY id"

# The driver: one statement per step, \timing gives each one's latency.
steps=$(((events + BATCH - 1) / BATCH))
driver=$work/driver.sql
{
	echo '\timing on'
	for i in $(seq 1 "$steps"); do
		echo 'SELECT pipeline.step();'
		if [ "$VACUUM_EVERY" -gt 0 ] && [ $((i % VACUUM_EVERY)) -eq 0 ]; then
			echo '\timing off'
			echo 'VACUUM__PLACEHOLDER'
			echo '\timing on'
		fi
	done
} >"$driver"

STATE_TABLES="('pipeline.q5_state'::regclass, 'pipeline.q7_state'::regclass, 'pipeline.seller_state'::regclass)"
printf 'round\tmode\tevents\twall_s\tevents_per_s\tsteps\tstep_p50_ms\tstep_p99_ms\tstep_max_ms\tstep_mean_ms\tstep_rate_p50\tstate_bytes_max\tstate_bytes_end\tstate_bytes_mean\tdead_tup_max\tautovacuums\twal_bytes\tloadavg\toutput_digest\n' >"$TSV"
printf 'round\tmode\tt_s\tlast_id\tstate_bytes\tlive_rows\tdead_tup\n' >"$SAMPLES"

# run_one ROUND MODE: one run of the job, one line of $TSV.
run_one()
{
	local round=$1 mode=$2 t0 t1 lsn0 lsn1 load consumed digest
	log "round $round, $mode: fresh job, $events events in the source log"
	setup_job "$mode"
	sql -c "INSERT INTO nexmark.events SELECT * FROM public.src_events" \
		-c "VACUUM ANALYZE nexmark.events" -c "CHECKPOINT"
	if [ "$mode" != heap ]; then
		sed 's/^VACUUM__PLACEHOLDER$//' "$driver" >"$work/run.sql"
	else
		sed 's/^VACUUM__PLACEHOLDER$/VACUUM pipeline.q5_state, pipeline.q7_state, pipeline.seller_state;/' \
			"$driver" >"$work/run.sql"
	fi
	[ "$FUNC_STATS" -eq 0 ] || sql -c "SELECT pg_stat_reset()" >/dev/null
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	lsn0=$(sql -c "SELECT pg_current_wal_lsn()")
	# The sampler: one session, every 0.5 s; ended by terminating its
	# backend (psql then exits).
	printf '%s\n' "SELECT round(extract(epoch FROM clock_timestamp())::numeric, 3),
	               (SELECT last_id FROM pipeline.offsets WHERE job = 'nexmark'),
	               s.state_bytes, s.q5_rows + s.q7_rows + s.seller_rows,
	               (SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables WHERE relid IN $STATE_TABLES)
	          FROM pipeline.state_size s" '\watch 0.5' |
		as_pg_user "$bindir/psql" -X -q -At -h 127.0.0.1 -p "$port" \
			-d "dbname=postgres application_name=pipebench_sampler" -f - >"$work/samples.out" 2>/dev/null &
	sampler=$!
	t0=$EPOCHREALTIME
	sql -f - <"$work/run.sql" >"$work/steps.out"
	t1=$EPOCHREALTIME
	sleep 0.6
	sql -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pipebench_sampler'" >/dev/null
	wait "$sampler" 2>/dev/null || true
	sampler=
	lsn1=$(sql -c "SELECT pg_current_wal_lsn()")
	consumed=$(sql -c "SELECT last_id FROM pipeline.offsets WHERE job = 'nexmark'")
	[ "$consumed" = "$events" ] || die "round $round, $mode: the job's offset is $consumed, not $events"
	digest=$(sql -c "SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
	                   SELECT 'q5' || q::text AS x FROM pipeline.q5_hot_items q UNION ALL
	                   SELECT 'q7' || q::text FROM pipeline.q7_highest_bid q UNION ALL
	                   SELECT 'se' || q::text FROM pipeline.seller_activity q) o")
	if [ "$FUNC_STATS" -eq 1 ]; then
		sleep 0.6	# the backends' function counters reach the statistics
		{
			echo "## round $round, $mode"
			as_pg_user "$bindir/psql" -X -P pager=off -h 127.0.0.1 -p "$port" -d postgres \
				-c "SELECT schemaname || '.' || funcname AS function, calls,
				           round(total_time::numeric, 1) AS total_ms, round(self_time::numeric, 1) AS self_ms,
				           round((total_time / nullif(calls, 0))::numeric, 3) AS ms_per_call
				      FROM pg_stat_user_functions ORDER BY total_time DESC"
		} >>"$FUNCS"
	fi
	local avs
	avs=$(sql -c "SELECT coalesce(sum(autovacuum_count + vacuum_count), 0) FROM pg_stat_user_tables WHERE relid IN $STATE_TABLES")
	python3 - "$round" "$mode" "$events" "$t0" "$t1" "$work/steps.out" "$work/samples.out" \
		"$avs" "$(sql -c "SELECT '$lsn1'::pg_lsn - '$lsn0'::pg_lsn")" "$load" "$digest" "$BATCH" \
		"$TSV" "$SAMPLES" <<'PY'
import re, sys
(rnd, mode, events, t0, t1, steps_out, samples_out, avs, wal, load, digest, batch,
 tsv, samples_tsv) = sys.argv[1:]
events, t0, t1, batch = int(events), float(t0), float(t1), int(batch)
lat, counts = [], []
for line in open(steps_out):
    m = re.match(r'Time: ([0-9.]+) ms', line)
    if m:
        lat.append(float(m.group(1)))
    elif re.fullmatch(r'[0-9]+', line.strip()):
        counts.append(int(line))
assert len(lat) == len(counts) and sum(counts) == events, (len(lat), len(counts), sum(counts))
s = sorted(lat)
pct = lambda p: s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]
rates = sorted(c / (l / 1000) for c, l in zip(counts, lat))
samp = []
for line in open(samples_out):
    f = line.strip().split('|')
    if len(f) == 5 and f[0]:
        samp.append((float(f[0]) - t0, int(f[1]), int(f[2]), int(f[3]), int(f[4])))
samp = [x for x in samp if x[0] <= t1 - t0 + 0.1]
with open(samples_tsv, 'a') as o:
    for x in samp:
        o.write('%s\t%s\t%.3f\t%d\t%d\t%d\t%d\n' % ((rnd, mode) + x))
sb = [x[2] for x in samp] or [0]
wall = t1 - t0
row = [rnd, mode, events, '%.2f' % wall, '%.0f' % (events / wall), len(lat),
       '%.2f' % pct(50), '%.2f' % pct(99), '%.2f' % s[-1], '%.2f' % (sum(s) / len(s)),
       '%.0f' % rates[len(rates) // 2], max(sb), sb[-1], '%.0f' % (sum(sb) / len(sb)),
       max([x[4] for x in samp] or [0]), avs, wal, load, digest]
open(tsv, 'a').write('\t'.join(map(str, row)) + '\n')
print('  %s: %d events in %.1f s = %.0f events/s; step p50 %.1f ms, p99 %.1f ms; state max %.0f kB, end %.0f kB; %d samples'
      % (mode, events, wall, events / wall, pct(50), pct(99), max(sb) / 1024, sb[-1] / 1024, len(samp)))
PY
}

read -r -a modes <<<"$MODES"
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		order=("${modes[@]}")
	else
		order=()
		for ((i = ${#modes[@]} - 1; i >= 0; i--)); do order+=("${modes[i]}"); done
	fi
	for m in "${order[@]}"; do
		run_one "$r" "$m"
	done
done

# The outputs of every run, whatever the mode, must be the same.
ndigests=$(tail -n +2 "$TSV" | cut -f 19 | sort -u | wc -l)
python3 bench/pipeline/report.py "$TSV" "$SAMPLES" \
	"events=$events batch=$BATCH rounds=$rounds modes=[$MODES] vacuum_every=$VACUUM_EVERY" | tee "$REPORT"
log "written: $REPORT, $TSV, $SAMPLES (plot: bash bench/plot_pipeline.sh $SAMPLES OUT.png)"
[ "$ndigests" -eq 1 ] || die "the runs' outputs differ ($ndigests digests, $TSV)"
