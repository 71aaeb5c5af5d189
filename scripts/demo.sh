#!/usr/bin/env bash
# scripts/demo.sh -- README command 1: build forst, start a private
# PostgreSQL 15 server that preloads it, and run a streaming pipeline that
# keeps its windowed state in forst tables (docs/pipeline.md).
#
#   bash scripts/demo.sh [--quick] [--events N] [--rate N] [--batch N] [--seed N] [DIR]
#
#   --quick     a short run (under a minute in all), as CI runs it
#   --events N  events to generate (default 12000000; --quick: 3000000)
#   --rate N    events per second the generator produces (default 0: as
#               fast as it can; the pipeline then runs as fast as it can too)
#   --batch N   events per pipeline transaction (default 5000)
#   --seed N    the generator's seed (default 42); same seed, same events
#
# A Nexmark-style generator (people, auctions, bids) appends events to a
# source log; the pipeline folds each batch into windowed state in forst
# tables (bids per auction per hopping window, highest bid per tumbling
# window, auctions per seller per tumbling window), emits closed windows to
# output tables and stores its source offset, all in one transaction per
# batch, and expires closed windows with forst.advance_watermark.  At the
# end a verification recomputes every emitted window from the source log
# with plain SQL and checks that the state stayed bounded; it prints PASS
# or FAIL, and the exit status is non-zero on FAIL.
#
# forst is built and installed into a private copy of PostgreSQL 15 under
# DIR (FORST_BINDIR=dir uses that bindir instead).  DIR (default: a new
# temporary directory, removed afterwards) holds that copy, the server's
# data directory, socket and log; it must be writable by the server user.
# The server listens on 127.0.0.1 on a free port, keeps its SST files under
# the data directory (file://, no S3) and is stopped when the script ends.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { forst_usage "${BASH_SOURCE[0]}"; }

quick=0
events=""
rate=0
batch=5000
seed=42
dir_arg=""
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) quick=1 ;;
		--events | --rate | --batch | --seed)
			[ $# -ge 2 ] || die "$1 needs a number"
			[[ "$2" =~ ^[0-9]+$ ]] || die "$1 needs a number, not '$2'"
			declare "${1#--}=$2"
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
if [ -z "$events" ]; then
	if [ "$quick" -eq 1 ]; then events=3000000; else events=12000000; fi
fi
[ "$events" -gt 0 ] && [ "$batch" -gt 0 ] || die "--events and --batch must be positive"

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
data="$dir/data"
port=$(forst_free_port)
gen_pid=""

cleanup()
{
	[ -z "$gen_pid" ] || kill "$gen_pid" 2>/dev/null || true
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

# Each run starts from a new data directory, so that runs are repeatable
# (the job recreates all its tables anyway).
if [ -e "$data" ]; then
	[ ! -f "$data/postmaster.pid" ] || die "a server seems to run on $data (postmaster.pid)"
	log "removing the data directory of an earlier run, $data"
	rm -rf "$data"
fi
log "initdb $data"
as_pg_user "$bindir/initdb" -D "$data" -A trust -N -E UTF8 --locale=C >/dev/null
# 1 MB memtables: the state is flushed to SST files and compacted while
# the job runs, so expiry reclaims space in files, not only in memory
as_pg_user tee -a "$data/postgresql.conf" >/dev/null <<CONF

# added by scripts/demo.sh
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '64MB'
CONF
# Another server (a concurrent test run) may take the free port before
# ours binds it: then try the next free one.
for attempt in 1 2 3 4 5; do
	log "starting PostgreSQL 15 on 127.0.0.1:$port (log: $dir/server.log)"
	if as_pg_user "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w \
		-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir'" \
		start >/dev/null; then
		break
	fi
	tail -n 20 "$dir/server.log" | grep -q 'Address already in use' && [ "$attempt" -lt 5 ] ||
		die "the server did not start (log: $dir/server.log)"
	port=$(forst_free_port)
done

# psql as the server user; SQL files are read by this shell (the server
# user may not be able to read the checkout)
sql() { as_pg_user "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d postgres "$@"; }

log "setting up the job: nexmark.* (generator, source log), pipeline.* (state, outputs, offset)"
sql -v seed="$seed" -v delta_us=1000 -v jitter_us=2000000 -v batch="$batch" \
	-v hop_size='10 seconds' -v hop_slide='2 seconds' -v tumble_size='10 seconds' \
	-f - <"$FORST_ROOT/scripts/pipeline.sql" >/dev/null
sql -At -c "SELECT 'forst ' || forst.version() || ', SST files in ' || forst.remote_dir()"

cat <<TXT

Events: $events (seed $seed), 1 ms of event time apart, up to 2 s out of order;
generator rate: $([ "$rate" -gt 0 ] && echo "$rate/s" || echo "as fast as it can").
Pipeline: $batch events per transaction; state in forst tables
  q5_state      bids per auction, hopping windows of 10 s every 2 s
  q7_state      highest bid, tumbling windows of 10 s
  seller_state  auctions opened per seller, tumbling windows of 10 s
closed windows (end <= watermark = newest event time - 2 s) are emitted to
q5_hot_items, q7_highest_bid, seller_activity and expired in the state.

TXT

log "generator: CALL nexmark.generate($events, 1000, $rate) in the background"
sql -c "CALL nexmark.generate($events, 1000, $rate)" &
gen_pid=$!

log "pipeline: CALL pipeline.run($events)"
started=$SECONDS
pipe_rc=0
sql -c "SET client_min_messages = notice" -c "CALL pipeline.run($events)" 2>&1 |
	sed -u 's/^NOTICE:  /  /' || pipe_rc=$?
elapsed=$((SECONDS - started))
gen_rc=0
wait "$gen_pid" || gen_rc=$?
gen_pid=""
[ "$gen_rc" -eq 0 ] || log "the generator failed (exit status $gen_rc)"
[ "$pipe_rc" -eq 0 ] || log "the pipeline failed (exit status $pipe_rc)"

log "verification: every emitted window recomputed from nexmark.events with plain SQL"
verify_rc=0
out=$(sql -v total="$events" -f - <"$FORST_ROOT/scripts/pipeline-verify.sql") || verify_rc=$?
printf '%s\n' "$out" | sed '$d' | sed 's/^/  /'
echo
if [ "$gen_rc" -eq 0 ] && [ "$pipe_rc" -eq 0 ] && [ "$verify_rc" -eq 0 ] &&
	[ "$(printf '%s\n' "$out" | tail -n 1)" = PASS ]; then
	echo "PASS: pipeline of $events events in ${elapsed}s ($((events / (elapsed > 0 ? elapsed : 1))) events/s); emitted windows equal the recomputation; state bounded"
	exit 0
fi
echo "FAIL: see the lines above (server log: $dir/server.log)"
[ "$keep_dir" -eq 1 ] || keep_dir=1	# keep the evidence
exit 1
