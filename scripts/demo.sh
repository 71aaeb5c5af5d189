#!/usr/bin/env bash
# scripts/demo.sh -- README command 1: build forst, start a private
# PostgreSQL 15 server that preloads it, run a streaming pipeline that
# keeps its windowed state in forst tables, then run it again, kill the
# server in the middle, and finish the job on a new server from the last
# checkpoint (docs/pipeline.md).  With --checkpoint-durable, the job's
# tables are unlogged forst tables, durable at forst checkpoints, and the
# killed server is restarted on its own data directory instead.
#
#   bash scripts/demo.sh [--quick] [--large] [--events N] [--rate N] [--batch N] [--seed N]
#                        [--checkpoint-interval S] [--kill-after N] [--auto-checkpoints]
#                        [--checkpoint-durable] [--no-failover] [--servers N] [--backlog] [DIR]
#
#   --quick     a short run (about a minute in all), as CI runs it
#   --large     the large-state mode (docs/pipeline.md): 90% of bids go
#               uniformly to the newest 2,000,000 auctions, hopping windows
#               of an hour every 10 minutes, tumbling windows of 10 minutes,
#               event time 1.5 ms per event (3,000,000 events span 75
#               minutes), a progress sample every 10 s; with --quick:
#               300,000 events, windows of 10 minutes every 2 minutes,
#               200,000 auctions
#   --events N  events to generate (default 12000000; --quick: 2000000;
#               --large: 3000000, --large --quick: 300000)
#   --rate N    events per second the generator produces (default 0: as
#               fast as it can; the pipeline then runs as fast as it can too)
#   --batch N   events per pipeline transaction (default 5000)
#   --seed N    the generator's seed (default 42); same seed, same events
#   --checkpoint-interval S
#               seconds between two checkpoints (default 10, --quick: 2)
#   --kill-after N
#               kill the server after N checkpoints of the failover run
#               (default 3, at most 30)
#   --auto-checkpoints
#               checkpoints by forst's checkpointer (forst.checkpoint_interval)
#               while the job runs, instead of by the job between two batches
#               (docs/pipeline.md)
#   --checkpoint-durable
#               both runs create the job's forst tables UNLOGGED
#               (scripts/pipeline.sql's durability=checkpoint): their rows
#               write no WAL and are durable at forst checkpoints; the
#               failover run restarts the killed server on the same data
#               directory (below)
#   --no-failover
#               the uninterrupted run only
#   --servers N run 2 is, instead of the failover, the job on N servers
#               (2 to 4), one instance per server, rescaled to N + 1
#               servers and back while it runs, then one server killed
#               and replaced from the job's distributed checkpoint
#               (scripts/demo-servers.sh, docs/scale-out.md)
#   --backlog   the generator writes all the events before the job starts,
#               as a topic with a backlog: the job runs alone, as fast as
#               it can (with --no-failover or --servers; bench/scale_out_job.sh)
#
# A Nexmark-style generator (people, auctions, bids) appends events to a
# source log; the pipeline folds each batch into windowed state in forst
# tables (bids per auction per hopping window, highest bid per tumbling
# window, auctions per seller per tumbling window), emits closed windows to
# output tables and stores its source offset, all in one transaction per
# batch, and expires closed windows with forst.advance_watermark.  Every
# few seconds, between two batches, the job checkpoints its forst tables.
#
# 1. The uninterrupted run, on server "uninterrupted".  A verification
#    recomputes every emitted window from the source log with plain SQL
#    and checks that the state stayed bounded (not with --quick, whose
#    failover run's verification covers it).
# 2. The failover run: the same job on server "a"; after N checkpoints
#    the whole server is killed (SIGKILL to the postmaster and all its
#    processes).  A new server "b" is initialized on an empty data
#    directory, reaches a's store (forst.remote_dir), attaches the job's
#    tables from a's last checkpoint, re-applies the expiry settings,
#    resumes from the stored offset (the source replays from there) and
#    finishes.  The same verification runs, and checks in addition that
#    b's outputs equal those of the uninterrupted run row for row.
#    With --checkpoint-durable, there is no server b: server a is started
#    again on its own data directory.  Its heap tables (the source log)
#    and catalogs come back through WAL recovery; at the first access to
#    a forst table, the job's unlogged tables return together to a's last
#    completed checkpoint.  The job resumes from the offset stored there,
#    reading the source log again from it, and finishes; the same
#    verification runs.  It prints the time from the restart to the first
#    step committed.
# It prints the failover's timings, one line per check, and PASS or FAIL;
# the exit status is non-zero on FAIL.
#
# forst is built and installed into a private copy of PostgreSQL 15 under
# DIR (FORST_BINDIR=dir uses that bindir instead).  DIR (default: a new
# temporary directory, removed afterwards) holds that copy and, per server
# (uninterrupted, a, b; with --servers: s1 .. sN+1, coord), its data
# directory and server.log; it must be writable by the server user.  The
# servers listen on 127.0.0.1 on free ports, keep their SST files under a's
# and the uninterrupted server's data directories (with --servers: in DIR/
# store, which all of run 2's servers share; file://, no S3) and are
# stopped when the script ends.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { forst_usage "${BASH_SOURCE[0]}"; }

quick=0
large=0
events=""
rate=0
batch=5000
seed=42
interval=""
kill_after=3
auto_ckpt=0
ckpt_durable=0
failover=1
servers=0
backlog=0
dir_arg=""
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) quick=1 ;;
		--large) large=1 ;;
		--no-failover) failover=0 ;;
		--backlog) backlog=1 ;;
		--auto-checkpoints) auto_ckpt=1 ;;
		--checkpoint-durable) ckpt_durable=1 ;;
		--events | --rate | --batch | --seed | --checkpoint-interval | --kill-after | --servers)
			[ $# -ge 2 ] || die "$1 needs a number"
			[[ "$2" =~ ^[0-9]+$ ]] || die "$1 needs a number, not '$2'"
			case "$1" in
				--checkpoint-interval) interval=$2 ;;
				--kill-after) kill_after=$2 ;;
				*) declare "${1#--}=$2" ;;
			esac
			shift
			;;
		-h | --help) usage; exit 0 ;;
		-*) usage >&2; exit 2 ;;
		*)
			[ -z "$dir_arg" ] || die "one DIR only"
			dir_arg=$1
			;;
	esac
	shift
done
# The job's windows and event stream (scripts/pipeline.sql's variables).
if [ "$large" -eq 1 ]; then
	if [ "$quick" -eq 1 ]; then
		default_events=300000
		job_vars=(-v delta_us=2000 -v hop_size='10 minutes' -v hop_slide='2 minutes' -v tumble_size='2 minutes'
			-v cold_fraction=0.9 -v cold_auctions=200000 -v bidders=1000000 -v sample_every=2)
		desc=("2 ms" "10 min every 2 min" "2 min" "90% of bids uniformly over the newest 200,000 auctions")
	else
		default_events=3000000
		job_vars=(-v delta_us=1500 -v hop_size='1 hour' -v hop_slide='10 minutes' -v tumble_size='10 minutes'
			-v cold_fraction=0.9 -v cold_auctions=2000000 -v bidders=1000000 -v sample_every=10)
		desc=("1.5 ms" "1 h every 10 min" "10 min" "90% of bids uniformly over the newest 2,000,000 auctions")
	fi
else
	if [ "$quick" -eq 1 ]; then default_events=2000000; else default_events=12000000; fi
	job_vars=(-v delta_us=1000 -v hop_size='10 seconds' -v hop_slide='2 seconds' -v tumble_size='10 seconds')
	desc=("1 ms" "10 s every 2 s" "10 s" "bids to recent auctions")
fi
events=${events:-$default_events}
if [ -z "$interval" ]; then
	if [ "$quick" -eq 1 ]; then interval=2; else interval=10; fi
fi
[ "$events" -gt 0 ] && [ "$batch" -gt 0 ] || die "--events and --batch must be positive"
[ "$interval" -gt 0 ] || die "--checkpoint-interval must be positive"
[ "$kill_after" -ge 1 ] && [ "$kill_after" -le 30 ] || die "--kill-after must be 1 to 30"
[ "$backlog" -eq 0 ] || [ "$failover" -eq 0 ] || [ "$servers" -ne 0 ] ||
	die "--backlog goes with --no-failover or --servers"
if [ "$servers" -ne 0 ]; then
	[ "$servers" -ge 2 ] && [ "$servers" -le 4 ] || die "--servers must be 2 to 4"
	[ "$ckpt_durable" -eq 0 ] || die "--servers runs the job with durability wal: not with --checkpoint-durable"
	[ "$failover" -eq 1 ] || die "--servers replaces the failover run: not with --no-failover"
fi
# Who takes the checkpoints: the job between two batches (pipeline.run's
# checkpoint_every), or forst's checkpointer every forst.checkpoint_interval.
if [ "$auto_ckpt" -eq 1 ]; then
	ckpt_conf="${interval}s"
	run_args=""
else
	ckpt_conf=0
	run_args=", interval '$interval s'"
fi
# Durability of the job's forst tables (scripts/pipeline.sql's durability).
if [ "$ckpt_durable" -eq 1 ]; then
	job_vars+=(-v durability=checkpoint)
	tables_desc="unlogged forst tables, durable at forst checkpoints"
else
	tables_desc="forst tables"
fi

forst_install_deps
forst_ensure_pg_user

if [ -n "$dir_arg" ]; then
	dir=$(realpath -m "$dir_arg")
	mkdir -p "$dir"
	! is_root || chown "$FORST_TEST_USER:" "$dir"
	keep_dir=1
else
	dir=$(forst_user_tmpdir forst-demo)
	keep_dir=0
fi
as_pg_user test -w "$dir" || die "$dir is not writable by the server user"

if [ -n "${FORST_BINDIR:-}" ]; then
	bindir=$FORST_BINDIR
else
	log "build: make; install into $dir/pg (a private copy of PostgreSQL 15)"
	bindir=$(forst_build_private_install "$dir/pg")
fi

declare -A port=()		# server name -> port, while it runs
declare -A gen_pid=()	# --servers: server name -> its generator's psql
killed_pids=""			# the processes of the server server_kill killed
t_initdb=""				# when server_start's initdb ended ($EPOCHREALTIME)
bg_pids=()				# psql sessions running in the background

cleanup()
{
	local p name

	for p in "${bg_pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for name in "${!port[@]}"; do
		log "stopping server $name"
		as_pg_user "$bindir/pg_ctl" -D "$dir/$name/data" -m fast -w stop >/dev/null || true
	done
	if [ "$keep_dir" -eq 0 ]; then
		rm -rf "$dir"
	else
		log "data directories and server logs kept in $dir"
	fi
}
trap cleanup EXIT

fail()
{
	echo "FAIL: $* (server logs: $dir/*/server.log)"
	keep_dir=1		# keep the evidence
	exit 1
}

# Seconds from $1 to $2 (values of $EPOCHREALTIME), as 0.00.
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# server_start NAME [CONF LINE ...]: initdb DIR/NAME/data and start it on
# a free port.
server_start()
{
	local name=$1 data="$dir/$1/data"
	shift

	as_pg_user mkdir "$dir/$name"
	as_pg_user "$bindir/initdb" -D "$data" -A trust -N -E UTF8 --locale=C >/dev/null
	t_initdb=$EPOCHREALTIME
	# 1 MB memtables: the state is flushed to SST files and compacted
	# while the job runs, so expiry reclaims space in files, not only in
	# memory
	{
		printf '\n# added by scripts/demo.sh\n'
		printf '%s\n' "shared_preload_libraries = 'forst'" \
			"forst.memtable_size = '1MB'" "forst.memtable_memory = '64MB'" \
			"forst.checkpoint_interval = '$ckpt_conf'" "$@"
	} | as_pg_user tee -a "$data/postgresql.conf" >/dev/null
	server_boot "$name"
}

# server_boot NAME: start the server on DIR/NAME/data (which exists) on a
# free port.
server_boot()
{
	local name=$1 data="$dir/$1/data" p attempt

	# Another server (a concurrent test run) may take the free port before
	# ours binds it: then try the next free one.
	for attempt in 1 2 3 4 5; do
		p=$(forst_free_port)
		log "starting server $name: PostgreSQL 15 on 127.0.0.1:$p (log: $dir/$name/server.log)"
		if as_pg_user "$bindir/pg_ctl" -D "$data" -l "$dir/$name/server.log" -w \
			-o "-c listen_addresses=127.0.0.1 -c port=$p -c unix_socket_directories='$dir/$name'" \
			start >/dev/null; then
			port[$name]=$p
			return 0
		fi
		tail -n 20 "$dir/$name/server.log" | grep -q 'Address already in use' && [ "$attempt" -lt 5 ] ||
			die "server $name did not start (log: $dir/$name/server.log)"
	done
}

server_stop()
{
	as_pg_user "$bindir/pg_ctl" -D "$dir/$1/data" -m fast -w stop >/dev/null
	unset "port[$1]"
}

# The machine dies: SIGKILL to the postmaster and every process of the
# server, no shutdown, no checkpoint of any kind.  Killing the postmaster
# alone is not that: each backend leads a process group of its own, and
# a backend busy with a long statement (CALL pipeline.run) does not notice
# its postmaster's death until it next waits, so it would go on committing
# batches on the dead server for many seconds.  The postmaster is stopped
# first, so that it forks no child between the listing and the kill.
server_kill()
{
	local pid kids

	pid=$(head -n 1 "$dir/$1/data/postmaster.pid")
	[[ "$pid" =~ ^[0-9]+$ ]] || die "no postmaster pid in $dir/$1/data/postmaster.pid"
	kill -STOP "$pid"
	kids=$(ps -o pid= --ppid "$pid" | tr -d ' ' | tr '\n' ' ')
	# shellcheck disable=SC2086 # one pid per word
	kill -KILL "$pid" $kids
	killed_pids="$pid $kids"
	unset "port[$1]"
}

# Waits until the processes server_kill killed are gone: a postmaster
# refuses to start while the pid in postmaster.pid exists, or while a
# process still holds the old shared memory.
server_wait_gone()
{
	local p alive _

	for _ in $(seq 1 300); do
		alive=0
		for p in $killed_pids; do
			! kill -0 "$p" 2>/dev/null || alive=1
		done
		[ "$alive" -eq 1 ] || return 0
		sleep 0.1
	done
	die "the killed server's processes did not go away in 30 s: $killed_pids"
}

# sql NAME ARGS...: psql on server NAME as the server user; SQL files are
# read by this shell (the server user may not be able to read the checkout)
sql()
{
	local name=$1
	shift
	as_pg_user "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${port[$name]}" -d postgres "$@"
}

# The job's progress lines, indented.
progress() { sed -u 's/^NOTICE:  /  /'; }

setup_job()
{
	log "server $1: setting up the job: nexmark.* (generator, source log), pipeline.* (state, outputs, offset)"
	sql "$1" -v seed="$seed" -v jitter_us=2000000 -v batch="$batch" "${job_vars[@]}" \
		-f - <"$FORST_ROOT/scripts/pipeline.sql" >/dev/null
}

# verify NAME [PSQL ARGS...]: scripts/pipeline-verify.sql on server NAME;
# prints its checks, returns non-zero unless it ends with PASS.
verify()
{
	local name=$1 out rc=0
	shift

	out=$(sql "$name" -v total="$events" "$@" -f - <"$FORST_ROOT/scripts/pipeline-verify.sql") || rc=$?
	printf '%s\n' "$out" | sed '$d' | sed 's/^/  /'
	[ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | tail -n 1)" = PASS ]
}

# load_uninterrupted NAME: the uninterrupted run's outputs into heap tables
# of schema uninterrupted on server NAME, for the verification.
load_uninterrupted()
{
	log "the uninterrupted run's outputs into schema uninterrupted (heap tables)"
	sql "$1" -c "CREATE SCHEMA uninterrupted"
	for t in q5_hot_items q7_highest_bid seller_activity; do
		sql "$1" -c "CREATE TABLE uninterrupted.$t (LIKE pipeline.$t) USING heap"
		sql "$1" -c "COPY uninterrupted.$t FROM STDIN" <"$dir/uninterrupted/$t.copy"
	done
}

# Each run starts from new data directories, so that runs are repeatable.
for name in uninterrupted a b s1 s2 s3 s4 s5 coord store; do
	[ -e "$dir/$name" ] || continue
	[ ! -e "$dir/$name/data" ] || ! as_pg_user "$bindir/pg_ctl" -D "$dir/$name/data" status >/dev/null 2>&1 ||
		die "a server runs on $dir/$name/data"
	log "removing server $name of an earlier run, $dir/$name"
	rm -rf "${dir:?}/$name"
done

cat <<TXT

Events: $events (seed $seed), ${desc[0]} of event time apart, up to 2 s out of order,
${desc[3]}; generator rate: $([ "$rate" -gt 0 ] && echo "$rate/s" || echo "as fast as it can").
Pipeline: $batch events per transaction; state, outputs and offset in $tables_desc
  q5_state      bids per auction, hopping windows of ${desc[1]}
  q7_state      highest bid, tumbling windows of ${desc[2]}
  seller_state  auctions opened per seller, tumbling windows of ${desc[2]}
closed windows (end <= watermark = newest event time - 2 s) are emitted to
q5_hot_items, q7_highest_bid, seller_activity and expired in the state.
A checkpoint of the forst tables every $interval s, $([ "$auto_ckpt" -eq 1 ] &&
	echo "by forst's checkpointer (forst.checkpoint_interval)" || echo "taken by the job between two batches").
$([ "$failover" -eq 0 ] || if [ "$servers" -gt 0 ]; then
	echo "Run 1 goes on one server; run 2 keeps the state on $servers servers, one instance of the
job each, and is rescaled to $((servers + 1)) servers and back while it runs: it must emit exactly
what run 1 emitted."
elif [ "$ckpt_durable" -eq 1 ]; then
	echo "Run 1 goes uninterrupted; run 2 kills its server after $kill_after checkpoints,
restarts it on the same data directory and finishes there: it must emit exactly
what run 1 emitted."
else
	echo "Run 1 goes uninterrupted; run 2 kills its server after $kill_after checkpoints
and finishes on a new one, which must emit exactly what run 1 emitted."
fi)

TXT

# ---------------------------------------------------------------------
# 1. The uninterrupted run
# ---------------------------------------------------------------------
log "RUN 1: uninterrupted"
server_start uninterrupted
setup_job uninterrupted
sql uninterrupted -At -c "SELECT 'forst ' || forst.version() || ', SST files in ' || forst.remote_dir()"

if [ "$backlog" -eq 1 ]; then
	log "generator: CALL nexmark.generate($events, 10000, 0), all of the events before the job starts"
	sql uninterrupted -c "CALL nexmark.generate($events, 10000, 0)"
	# a settled log, as a topic's backlog is: no autovacuum of it, no hint
	# bits to set while the job runs
	sql uninterrupted -c "VACUUM (ANALYZE) nexmark.events" -c "CHECKPOINT"
	true &		# (the generator's place below)
else
	log "generator: CALL nexmark.generate($events, 1000, $rate) in the background"
	sql uninterrupted -c "CALL nexmark.generate($events, 1000, $rate)" &
fi
bg_pids=($!)
log "pipeline: CALL pipeline.run($events$run_args)"
started=$SECONDS
pipe_rc=0
sql uninterrupted -c "SET client_min_messages = notice" -c "CALL pipeline.run($events$run_args)" 2>&1 |
	progress || pipe_rc=$?
elapsed=$((SECONDS - started))
gen_rc=0
wait "${bg_pids[0]}" || gen_rc=$?
bg_pids=()
[ "$gen_rc" -eq 0 ] || fail "the generator failed (exit status $gen_rc)"
[ "$pipe_rc" -eq 0 ] || fail "the pipeline failed (exit status $pipe_rc)"
rate1=$((events / (elapsed > 0 ? elapsed : 1)))

# With --quick and a second run, its verification covers this run too
# (its outputs must equal both the recomputation and this run's).
if [ "$quick" -eq 0 ] || [ "$failover" -eq 0 ]; then
	log "verification: every emitted window recomputed from nexmark.events with plain SQL"
	verify uninterrupted || fail "the uninterrupted run's verification (lines above)"
fi
if [ "$failover" -eq 0 ]; then
	echo
	echo "PASS: pipeline of $events events in ${elapsed}s ($rate1 events/s); emitted windows equal the recomputation; state bounded"
	exit 0
fi
for t in q5_hot_items q7_highest_bid seller_activity; do
	sql uninterrupted -c "COPY pipeline.$t TO STDOUT" >"$dir/uninterrupted/$t.copy"
done
log "outputs saved in $dir/uninterrupted/*.copy; stopping server uninterrupted"
server_stop uninterrupted

if [ "$servers" -gt 0 ]; then
	# shellcheck source=scripts/demo-servers.sh
	. "$FORST_ROOT/scripts/demo-servers.sh"
	run_servers
	exit 0
fi

# ---------------------------------------------------------------------
# 2. The failover run: server a, killed after $kill_after checkpoints
# ---------------------------------------------------------------------
echo
log "RUN 2: the same job on server a, killed after $kill_after checkpoints"
server_start a
setup_job a
store=$(sql a -At -c "SELECT forst.remote_dir()")
cluster=$(sql a -At -c "SELECT forst.cluster_id()")
log "server a: cluster $cluster, store $store"

sql a -c "CALL nexmark.generate($events, 1000, $rate)" 2>/dev/null &
bg_pids=($!)
(sql a -c "SET client_min_messages = notice" -c "CALL pipeline.run($events$run_args)" 2>&1 | progress) &
bg_pids+=($!)
completed=0
while [ "$completed" -lt "$kill_after" ]; do
	kill -0 "${bg_pids[1]}" 2>/dev/null ||
		fail "the job on server a ended before $kill_after checkpoints (more --events or a shorter --checkpoint-interval)"
	sleep 0.2
	completed=$(sql a -At -c "SELECT count(*) FROM forst.checkpoints
	                           WHERE database = current_database() AND status = 'completed'") ||
		fail "could not read forst.checkpoints on server a"
done
reached=$(sql a -At -c "SELECT last_id FROM pipeline.offsets WHERE job = 'nexmark'")
t_kill=$EPOCHREALTIME
server_kill a
log "KILLED server a (SIGKILL to all its processes) after $completed checkpoints, its job at offset $reached"
wait "${bg_pids[0]}" 2>/dev/null || true
wait "${bg_pids[1]}" 2>/dev/null || true
bg_pids=()

# resume_job SERVER WHAT: the job runs to the end of the events on SERVER
# (WHAT names it in messages) while the generator goes on; sets elapsed2.
resume_job()
{
	local pipe_rc=0 gen_rc=0 started=$SECONDS

	log "pipeline: CALL pipeline.run($events$run_args) on $2"
	sql "$1" -c "SET client_min_messages = notice" -c "CALL pipeline.run($events$run_args)" 2>&1 |
		progress || pipe_rc=$?
	elapsed2=$((SECONDS - started))
	wait "${bg_pids[0]}" || gen_rc=$?
	bg_pids=()
	[ "$gen_rc" -eq 0 ] || fail "the generator on $2 failed (exit status $gen_rc)"
	[ "$pipe_rc" -eq 0 ] || fail "the pipeline on $2 failed (exit status $pipe_rc)"
}

# ---------------------------------------------------------------------
# 3, checkpoint-durable: server a again, on its own data directory
# ---------------------------------------------------------------------
if [ "$ckpt_durable" -eq 1 ]; then
	echo
	log "RUN 2, continued: server a restarted on its own data directory"
	server_wait_gone
	t_restart=$EPOCHREALTIME
	server_boot a
	t_up=$EPOCHREALTIME
	# The first access to a forst table of the database: the job's unlogged
	# tables return to the newest completed checkpoint here.
	resumed_at=$(sql a -At -c "SELECT last_id FROM pipeline.offsets WHERE job = 'nexmark'") ||
		fail "server a: the job's offset row cannot be read after the restart"
	t_query=$EPOCHREALTIME
	[ -n "$resumed_at" ] || fail "server a: no offset row after the restart"
	sql a -At -F ' ' -c "SELECT 'newest completed checkpoint: ' || coalesce(max(id)::text, 'none') ||
		coalesce(', taken at ' || max(started_at)::text, '')
		FROM forst.checkpoints WHERE database = current_database() AND status = 'completed'" |
		sed 's/^/  /' || true
	generated=$(sql a -At -c "SELECT coalesce(max(id), 0) FROM nexmark.events")
	log "server a: the restored offset is $resumed_at (it had reached $reached: $((reached - resumed_at)) events to fold in again); the source log kept events 1 .. $generated through WAL"
	# Nothing to re-apply: the job's functions are in the catalogs (WAL),
	# and the watermarks of its state tables returned to the checkpoint
	# with them: each must be the one the step that stored the restored
	# offset set (scripts/pipeline.sql, "Expiry"), else the windows closed
	# since would stay hidden (or expired ones come back).
	wm_check=$(sql a -At -F ' ' -c "SELECT count(*) FILTER (WHERE e.watermark IS DISTINCT FROM
			o.watermark - CASE WHEN e.relid = 'pipeline.q5_state'::regclass THEN c.hop_size ELSE c.tumble_size END
			+ interval '1 microsecond'), count(*), o.watermark
		FROM forst.expiry e, pipeline.offsets o, pipeline.config c
		WHERE o.job = 'nexmark' AND e.relid IN ('pipeline.q5_state'::regclass, 'pipeline.q7_state'::regclass,
			'pipeline.seller_state'::regclass)
		GROUP BY o.watermark") || fail "server a: the watermarks of the job's state tables cannot be read"
	read -r wm_bad wm_n _ <<<"$wm_check"
	echo "  watermarks of the job's 3 state tables: $wm_n found, $wm_bad not those of the restored offset (watermark ${wm_check#* * })"
	[ "$wm_n" = 3 ] && [ "$wm_bad" = 0 ] ||
		fail "server a: the state tables' watermarks did not return with the checkpoint ($wm_check)"
	log "generator: continues after event $generated (CALL nexmark.generate($events, 1000, $rate)); the job reads the log again from event $((resumed_at + 1))"
	sql a -c "CALL nexmark.generate($events, 1000, $rate)" &
	bg_pids=($!)
	while :; do
		n=$(sql a -At -c "SELECT pipeline.step()") || fail "the first step on the restarted server a failed"
		[ "$n" = 0 ] || break
		sleep 0.02
	done
	t_resumed=$EPOCHREALTIME
	cat <<TXT
  restart timings, from the kill of server a:
    $(secs "$t_kill" "$t_restart") s  restart of server a begun (pg_ctl start, same data directory)
    $(secs "$t_kill" "$t_up") s  server a up (WAL recovery of its logged tables and catalogs done)
    $(secs "$t_kill" "$t_query") s  first query on a forst table answered (the offset row): the job's unlogged tables at the checkpoint
    $(secs "$t_kill" "$t_resumed") s  first batch after the offset committed: the job runs again
  from the restart to the first step committed: $(secs "$t_restart" "$t_resumed") s
TXT
	resume_job a "the restarted server a"
	load_uninterrupted a
	log "verification: the restarted run against the recomputation and against the uninterrupted run"
	verify a -v compare=uninterrupted -v resumed_at="$resumed_at" ||
		fail "the restarted run's verification (lines above)"
	echo
	echo "PASS: checkpoint-durable pipeline of $events events in ${elapsed}s ($rate1 events/s) uninterrupted;" \
		"crash after $completed checkpoints: server a killed at offset $reached, restarted on its data directory," \
		"resumed from offset $resumed_at, first step $(secs "$t_restart" "$t_resumed") s after the restart" \
		"($(secs "$t_kill" "$t_resumed") s after the kill), finished in ${elapsed2}s;" \
		"emitted windows equal the recomputation and the uninterrupted run; state bounded"
	exit 0
fi

# ---------------------------------------------------------------------
# 3. Server b: an empty data directory, a's store, a's last checkpoint
# ---------------------------------------------------------------------
echo
log "RUN 2, continued on a new server b (empty data directory, forst.remote_dir = a's store)"
server_start b "forst.remote_dir = '$store'"
t_up=$EPOCHREALTIME
sql b -c "CREATE EXTENSION forst"
ckpt=$(sql b -At -c "SELECT max(i) FROM forst.checkpoint_ids('$cluster') i")
[ -n "$ckpt" ] || fail "server b finds no checkpoint of cluster $cluster in $store"
sql b -At -F ' ' -c "SELECT 'checkpoint ' || $ckpt || ' of cluster $cluster: taken at ' || (j->>'started_at') ||
	', ' || jsonb_array_length(j->'tables') || ' tables, ' || pg_size_pretty((j->>'state_bytes')::bigint) || ' of state'
	FROM forst.checkpoint_read($ckpt, '$cluster') j" | sed 's/^/  /'
log "server b: attaching the job's tables (mode => 'claim'), creating the rest of the job, re-applying expiry"
sql b -v restore_cluster="$cluster" -v restore_checkpoint="$ckpt" \
	-f - <"$FORST_ROOT/scripts/pipeline.sql" >/dev/null
t_attached=$EPOCHREALTIME
resumed_at=$(sql b -At -c "SELECT last_id FROM pipeline.offsets WHERE job = 'nexmark'")
t_query=$EPOCHREALTIME
log "server b: the restored offset is $resumed_at (server a had reached $reached: $((reached - resumed_at)) events to fold in again)"

log "generator: the source replays from event $((resumed_at + 1)): CALL nexmark.generate($events, 1000, $rate, $((resumed_at + 1)))"
sql b -c "CALL nexmark.generate($events, 1000, $rate, $((resumed_at + 1)))" &
bg_pids=($!)
while :; do
	n=$(sql b -At -c "SELECT pipeline.step()") || fail "the first step on server b failed"
	[ "$n" = 0 ] || break
	sleep 0.02
done
t_resumed=$EPOCHREALTIME
cat <<TXT
  failover timings, from the kill of server a:
    $(secs "$t_kill" "$t_initdb") s  initdb of an empty data directory for server b
    $(secs "$t_kill" "$t_up") s  server b up
    $(secs "$t_kill" "$t_attached") s  the job's tables attached from checkpoint $ckpt, the job's functions created, expiry re-applied
    $(secs "$t_kill" "$t_query") s  first query on an attached table answered (the offset row)
    $(secs "$t_kill" "$t_resumed") s  first batch after the offset committed on server b: the job runs again
TXT
resume_job b "server b"

log "the source log's events 1 .. $resumed_at for the verification (the job on b never reads them)"
sql b -c "CALL nexmark.generate($resumed_at, 10000, 0, 1)"
load_uninterrupted b
log "verification: the failover run against the recomputation and against the uninterrupted run"
verify b -v compare=uninterrupted -v resumed_at="$resumed_at" ||
	fail "the failover run's verification (lines above)"
echo
echo "PASS: pipeline of $events events in ${elapsed}s ($rate1 events/s) uninterrupted;" \
	"failover after $completed checkpoints: server a killed at offset $reached," \
	"server b resumed from checkpoint $ckpt at offset $resumed_at $(secs "$t_kill" "$t_resumed") s after the kill" \
	"(first query $(secs "$t_kill" "$t_query") s) and finished in ${elapsed2}s;" \
	"emitted windows equal the recomputation and the uninterrupted run; state bounded"
