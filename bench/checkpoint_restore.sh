#!/usr/bin/env bash
# bench/checkpoint_restore.sh — forst checkpoints and attach next to
# PostgreSQL's CHECKPOINT and a pg_basebackup restore (issue 5).
#
#   bench/checkpoint_restore.sh                    sizes 100M,1G
#   bench/checkpoint_restore.sh --sizes 100M,1G,5G
#   bench/checkpoint_restore.sh --quick            10M only (smoke run)
#   PROFILE=1 bench/checkpoint_restore.sh ...       also strace and perf one
#                                                  more checkpoint per size
#
# For every size S (logical bytes: rows x (8-byte key + VALUE_BYTES)):
#
#  1. Server A (fresh initdb, private copy of PostgreSQL 15 with this
#     checkout's forst) loads a heap table h (k bigint PRIMARY KEY, v text)
#     with S bytes of incompressible values (hex of sha512: lz4 finds no
#     repeats), and a forst twin s with the same rows (copied from h).
#     After a PostgreSQL CHECKPOINT and one forst.checkpoint() that flushes
#     what the load left in memtables, REPS times:
#       - UPSERTS distinct random keys upserted into h, then CHECKPOINT
#         (psql \timing; pg_stat_bgwriter buffers_checkpoint, the
#         log_checkpoints line, WAL bytes of the writes);
#       - the same upserts into s, then SELECT forst.checkpoint()
#         (psql \timing and forst.checkpoints.duration / bytes_written /
#         state_bytes; bytes added under the store directory; forst.stats
#         store_bytes_written during the call).
#  2. A's answers to the probe queries (a point SELECT by key, a count and
#     sum over a 1000-key range) are recorded; pg_basebackup of A is taken
#     (-X stream -c fast), then A is stopped (as if lost).
#  3. Server B (fresh initdb, same forst.remote_dir, its own cache) runs
#     in one psql session: forst.attach('public.s', cluster => A's id),
#     then the probe queries on s.  Measured: wall time of that session
#     (what the user waits) and each statement's time.  Answers must equal
#     A's.
#  4. The basebackup is started as a server (its own port and cache dir)
#     and answers the probe queries on h.  Restore time = pg_basebackup +
#     start (with WAL replay) + the probe session.  Answers must equal A's.
#
# The store is file:// on the local disk (shared by A and B): reads are
# page-cache hits for both sides, as are the basebackup's.  The machine's
# load average is recorded next to every timing.
#
# A runs with autovacuum = off (the script VACUUMs and ANALYZEs after the
# load), so that no autovacuum worker runs during the timings.
#
# Environment: VALUE_BYTES (200), UPSERTS (10000), UPSERT_BATCH (1000 per
# transaction), REPS (3), CHUNK_ROWS
# (rows per load transaction, 2000000), SHARED_BUFFERS (1GB), FORST_SETTINGS
# (extra postgresql.conf lines for A and B), KEEP=1 keeps the work directory.
#
# Results: bench/results/ckpt-<date>.tsv (one line per size),
# ckpt-<date>-runs.tsv (one line per checkpoint), ckpt-<date>.md (report);
# bench/plot_checkpoint.sh turns the .tsv into docs/benchmarks-checkpoint.png.
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib.sh

SIZES=100M,1G
while [ $# -gt 0 ]; do
	case "$1" in
		--sizes) SIZES="$2"; shift ;;
		--quick) SIZES=10M ;;
		-h | --help) forst_usage "$0"; exit 0 ;;
		*) echo "usage: $0 [--sizes 100M,1G,5G] [--quick]" >&2; exit 2 ;;
	esac
	shift
done

VALUE_BYTES=${VALUE_BYTES:-200}
UPSERTS=${UPSERTS:-10000}
UPSERT_BATCH=${UPSERT_BATCH:-1000}
REPS=${REPS:-3}
CHUNK_ROWS=${CHUNK_ROWS:-2000000}
SHARED_BUFFERS=${SHARED_BUFFERS:-1GB}
FORST_SETTINGS=${FORST_SETTINGS:-}
KEEP=${KEEP:-0}
PROFILE=${PROFILE:-0}

stamp=$(date -u +%Y%m%d-%H%M%S)
mkdir -p bench/results
TSV=bench/results/ckpt-$stamp.tsv
RUNS=bench/results/ckpt-$stamp-runs.tsv
REPORT=bench/results/ckpt-$stamp.md

forst_ensure_pg_user
work=$(forst_user_tmpdir forst-ckptbench)
log "build: make; install into $work/pg (a private copy of PostgreSQL 15)"
bindir=$(forst_build_private_install "$work/pg")
! is_root || chown -R "$FORST_TEST_USER:" "$work"

# name -> "datadir port"
declare -A SERVERS=()

stop_server()
{
	local d=$1
	as_pg_user "$bindir/pg_ctl" -D "$d" -m fast -w stop >/dev/null 2>&1 || true
}

cleanup()
{
	local d
	for d in "$work"/data-* "$work"/bb-*; do
		[ -f "$d/postmaster.pid" ] && stop_server "$d"
	done
	if [ "$KEEP" -eq 1 ]; then
		log "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed_ms() { python3 -c "print(f'{($2 - $1) * 1000:.1f}')"; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }

# psql against port $1 (further arguments: psql's).
psql_p()
{
	local port=$1
	shift
	as_pg_user "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d postgres "$@"
}

# Milliseconds of the last "Time:" line psql printed (\timing) on stdin.
last_time_ms() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1; }

write_conf()
{
	local d=$1 cache=$2
	as_pg_user tee -a "$d/postgresql.conf" >/dev/null <<CONF

# bench/checkpoint_restore.sh
shared_preload_libraries = 'forst'
shared_buffers = $SHARED_BUFFERS
max_wal_size = 4GB
checkpoint_timeout = 1h
log_checkpoints = on
max_connections = 20
max_locks_per_transaction = 256
autovacuum = off
forst.remote_dir = 'file://$work/store'
forst.cache_dir = '$cache'
forst.memtable_memory = 1GB
forst.memtable_size = 64MB
forst.checkpoint_interval = 0
$FORST_SETTINGS
CONF
}

# start_server DATADIR LOG [extra -c options]: prints the port.
start_server()
{
	local d=$1 logf=$2 extra=${3:-} port
	port=$(forst_free_port)
	as_pg_user "$bindir/pg_ctl" -D "$d" -l "$logf" -w -t 3600 \
		-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$work' $extra" \
		start >/dev/null
	printf '%s\n' "$port"
}

new_server()
{
	local name=$1 d="$work/data-$1"
	rm -rf "$d"
	as_pg_user "$bindir/initdb" -D "$d" -A trust -N -E UTF8 --locale=C >/dev/null
	write_conf "$d" "$work/cache-$name"
}

# Bytes: "100M" -> 104857600.
size_bytes()
{
	local s=$1 n u
	n=${s%[KMGkmg]}
	u=${s#"$n"}
	case "$u" in
		K | k) echo $((n << 10)) ;;
		M | m) echo $((n << 20)) ;;
		G | g) echo $((n << 30)) ;;
		"") echo "$n" ;;
	esac
}

store_bytes() { du -sb "$work/store" | cut -f1; }

# The probe queries (their answers are compared across servers).
probe_sql()
{
	local t=$1 rows=$2 key range_lo
	key=$((rows / 3 + 7))
	range_lo=$((rows / 2))
	cat <<SQL
SELECT md5(v) FROM $t WHERE k = $key;
SELECT count(*), sum(length(v)) FROM $t WHERE k BETWEEN $range_lo AND $((range_lo + 999));
SQL
}

# upsert TABLE REP ROWS: UPSERTS distinct keys (the same for both tables
# in a rep), in transactions of UPSERT_BATCH rows: forst holds a
# heavyweight lock per written key until commit (write/key_locks.c), so one
# transaction of 10,000 upserts exhausts the default lock table ("out of
# shared memory").
upsert()
{
	local t=$1 rep=$2 rows=$3 b sql=
	for ((b = 0; b < UPSERTS; b += UPSERT_BATCH)); do
		sql+="INSERT INTO $t SELECT k, substr(encode(sha512(('u$rep' || k)::text::bytea), 'hex') || encode(sha512(('w$rep' || k)::text::bytea), 'hex'), 1, $VALUE_BYTES) FROM (SELECT DISTINCT 1 + ((g * 2654435761 + $rep * 40503) % $rows) AS k FROM generate_series($((b + 1)), $((b + UPSERT_BATCH < UPSERTS ? b + UPSERT_BATCH : UPSERTS))) g) u ON CONFLICT (k) DO UPDATE SET v = excluded.v;
"
	done
	psql_p "$port_of_A" <<<"$sql"
}

# profile_checkpoint LABEL PORT ROWS: one more upsert + forst.checkpoint()
# under strace of the calling backend and the forst flush worker (wall
# time: where the call waits), and one under perf (CPU: call graphs).
profile_checkpoint()
{
	local label=$1 port=$2 rows=$3 pd="$work/prof-$label" bpid fpid job tool r=90
	for tool in strace perf; do
		upsert s $((++r)) "$rows"
		as_pg_user "$bindir/psql" -X -q -At -h 127.0.0.1 -p "$port" -d postgres \
			-c "SET application_name = 'ckprof'" -c "SELECT pg_sleep(1.5)" \
			-c '\timing on' -c "SELECT forst.checkpoint()" >"$pd.$tool.out" 2>&1 &
		job=$!
		sleep 0.5
		bpid=$(psql_p "$port" -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'ckprof'")
		fpid=$(psql_p "$port" -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'forst flush'")
		if [ "$tool" = strace ]; then
			strace -tt -T -p "$bpid" -o "$pd.strace-backend" &
			local s1=$!
			strace -tt -T -p "$fpid" -o "$pd.strace-flush" &
			local s2=$!
			wait "$job" || true
			sleep 0.3
			kill -INT "$s1" "$s2" 2>/dev/null || true
			wait "$s1" "$s2" 2>/dev/null || true
		else
			perf record -q -F 999 -g -p "$bpid,$fpid" -o "$pd.perf" -- sleep 3 >/dev/null 2>&1 || true
			wait "$job" || true
		fi
	done
	{
		echo "#### $label: profile of one forst.checkpoint() after $UPSERTS upserts"
		echo
		echo "Under strace: $(last_time_ms <"$pd.strace.out") ms; under perf: $(last_time_ms <"$pd.perf.out") ms."
		echo "Backend (pid $bpid) syscalls taking >= 1 ms during the call, and the flush worker's:"
		echo '```'
		awk -F'<' '{ t = $NF; sub(/>.*/, "", t); if (t + 0 >= 0.001) print "backend " $0 }' "$pd.strace-backend" | tail -40
		awk -F'<' '{ t = $NF; sub(/>.*/, "", t); if (t + 0 >= 0.001) print "flush   " $0 }' "$pd.strace-flush" | tail -40
		echo "backend: $(wc -l <"$pd.strace-backend") syscalls, flush worker: $(wc -l <"$pd.strace-flush")"
		echo '```'
		echo "perf, self time (backend + flush worker):"
		echo '```'
		perf report -i "$pd.perf" --no-children --sort comm,dso,symbol --stdio -g none --percent-limit 1 2>/dev/null |
			awk '!/^#/ && NF && n++ < 30 { sub(/ +$/, ""); print }'
		echo '```'
	} >>"$work/profiles.md"
	cp "$pd.strace-backend" "bench/results/ckpt-$stamp-$label-strace-backend.txt"
	cp "$pd.strace-flush" "bench/results/ckpt-$stamp-$label-strace-flush.txt"
}

# profile_probes LABEL PORT ROWS: perf of B's backend running the range
# probe 5 times (warm).
profile_probes()
{
	local label=$1 port=$2 rows=$3 pd="$work/prof-$label-probe" bpid job i
	{
		echo "SET application_name = 'ckprof';"
		echo "SELECT pg_sleep(1);"
		echo '\timing on'
		for i in 1 2 3 4 5; do probe_sql s "$rows" | tail -1; done
	} >"$pd.sql"
	chmod 644 "$pd.sql"
	psql_p "$port" -f "$pd.sql" >"$pd.out" 2>&1 &
	job=$!
	sleep 0.5
	bpid=$(psql_p "$port" -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'ckprof'")
	perf record -q -F 999 -g -p "$bpid" -o "$pd.perf" -- sleep 6 >/dev/null 2>&1 || true
	wait "$job" || true
	{
		echo "#### $label: perf of B's backend, the range probe 5 times (warm): $(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$pd.out" | tr '\n' ' ')ms"
		echo '```'
		perf report -i "$pd.perf" --no-children --sort dso,symbol --stdio -g none --percent-limit 1.5 2>/dev/null |
			awk '!/^#/ && NF && n++ < 25 { sub(/ +$/, ""); print }'
		echo '```'
		echo "Inclusive:"
		echo '```'
		perf report -i "$pd.perf" --children --sort symbol --stdio -g none --percent-limit 5 2>/dev/null |
			awk '!/^#/ && NF && n++ < 30 { sub(/ +$/, ""); print }'
		echo '```'
		echo "forst.stats on B after the probes:"
		echo '```'
		psql_p "$port" -c "SELECT store_get, store_get_range, store_bytes_read, block_cache_hits, block_cache_misses, bloom_checks FROM forst.stats" 2>&1
		psql_p "$port" -c "SELECT sst_files, level_files FROM forst.tables" 2>&1
		echo '```'
	} >>"$work/profiles.md"
}

run_size()
{
	local label=$1 bytes rows portA portB portC lo hi t0 t1 cid i
	local th tf heap_bytes state_bytes
	bytes=$(size_bytes "$label")
	rows=$((bytes / (8 + VALUE_BYTES)))
	log "size $label: $rows rows of $VALUE_BYTES-byte values; load average $(loadavg)"
	df -h "$work" | tail -1 | sed 's/^/    disk: /'

	rm -rf "$work/store" "$work"/cache-* "$work"/bb-*
	as_pg_user mkdir -p "$work/store"
	new_server A
	portA=$(start_server "$work/data-A" "$work/A-$label.log")
	psql_p "$portA" -c "CREATE EXTENSION forst"
	cid=$(psql_p "$portA" -c "SELECT forst.cluster_id()")
	port_of_A=$portA

	psql_p "$portA" -c "CREATE TABLE h (k bigint PRIMARY KEY, v text NOT NULL)" \
		-c "CREATE TABLE s (k bigint PRIMARY KEY, v text NOT NULL) USING forst"
	t0=$(now)
	for ((lo = 1; lo <= rows; lo += CHUNK_ROWS)); do
		hi=$((lo + CHUNK_ROWS - 1 < rows ? lo + CHUNK_ROWS - 1 : rows))
		psql_p "$portA" -c "INSERT INTO h SELECT g, substr(encode(sha512(('a' || g)::text::bytea), 'hex') || encode(sha512(('b' || g)::text::bytea), 'hex'), 1, $VALUE_BYTES) FROM generate_series($lo, $hi) g"
	done
	t1=$(now)
	th=$(elapsed_ms "$t0" "$t1")
	log "  heap loaded in $th ms"
	t0=$(now)
	for ((lo = 1; lo <= rows; lo += CHUNK_ROWS)); do
		hi=$((lo + CHUNK_ROWS - 1 < rows ? lo + CHUNK_ROWS - 1 : rows))
		psql_p "$portA" -c "INSERT INTO s SELECT k, v FROM h WHERE k BETWEEN $lo AND $hi"
	done
	t1=$(now)
	tf=$(elapsed_ms "$t0" "$t1")
	log "  forst loaded in $tf ms"
	# maintenance_io_concurrency = 0: ANALYZE's prefetch of a forst table
	# over 1 GB (its relation_size, in blocks, passes one segment) opens
	# segment 1 of the empty relfilenode and fails: "could not open file
	# base/5/N.1 (target block 131073): previous segment is only 0 blocks".
	psql_p "$portA" -c "VACUUM ANALYZE h" -c "SET maintenance_io_concurrency = 0" -c "ANALYZE s" -c "CHECKPOINT"
	# The first checkpoint flushes what the load left in memtables.
	t0=$(now)
	psql_p "$portA" -c "SELECT forst.checkpoint()" >/dev/null
	t1=$(now)
	log "  first forst.checkpoint() after the load: $(elapsed_ms "$t0" "$t1") ms"
	heap_bytes=$(psql_p "$portA" -c "SELECT pg_total_relation_size('h')")

	local rep cp0 cp1 wal0 wal1 buf0 buf1 hms fms fview fbw fstate sb0 sb1 sw0 sw1 ckid la hwal fwal cline
	for ((rep = 1; rep <= REPS; rep++)); do
		wal0=$(psql_p "$portA" -c "SELECT pg_current_wal_lsn()")
		upsert h "$rep" "$rows"
		wal1=$(psql_p "$portA" -c "SELECT pg_current_wal_lsn()")
		hwal=$(psql_p "$portA" -c "SELECT '$wal1'::pg_lsn - '$wal0'::pg_lsn")
		buf0=$(psql_p "$portA" -c "SELECT buffers_checkpoint FROM pg_stat_bgwriter")
		la=$(loadavg)
		hms=$(psql_p "$portA" -c '\timing on' -c "CHECKPOINT" | last_time_ms)
		buf1=$(psql_p "$portA" -c "SELECT buffers_checkpoint FROM pg_stat_bgwriter")
		sleep 0.2
		cline=$(grep 'checkpoint complete' "$work/A-$label.log" | tail -1 | sed 's/.*checkpoint complete: //')

		wal0=$(psql_p "$portA" -c "SELECT pg_current_wal_lsn()")
		upsert s "$rep" "$rows"
		wal1=$(psql_p "$portA" -c "SELECT pg_current_wal_lsn()")
		fwal=$(psql_p "$portA" -c "SELECT '$wal1'::pg_lsn - '$wal0'::pg_lsn")
		sb0=$(store_bytes)
		IFS='|' read -r sw0 cp0 < <(psql_p "$portA" -c "SELECT store_bytes_written, compactions FROM forst.stats")
		fms=$(psql_p "$portA" -c '\timing on' -c "SELECT forst.checkpoint()" | tee "$work/ckid" | last_time_ms)
		ckid=$(head -1 "$work/ckid")
		IFS='|' read -r sw1 cp1 < <(psql_p "$portA" -c "SELECT store_bytes_written, compactions FROM forst.stats")
		sb1=$(store_bytes)
		IFS='|' read -r fview fbw fstate < <(psql_p "$portA" -c "SELECT round(extract(epoch FROM duration) * 1000, 1), bytes_written, state_bytes FROM forst.checkpoints WHERE id = $ckid AND status = 'completed'")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
			"$label" "$rows" "$rep" "$la" "$hms" "$((buf1 - buf0))" "$hwal" "$cline" \
			"$fms" "$fview" "$fbw" "$((sb1 - sb0))" "$((sw1 - sw0))" "$fstate" "$fwal" "$ckid" "$((cp1 - cp0))" "$(psql_p "$portA" -c "SELECT sst_files FROM forst.tables")" >>"$RUNS"
		log "  rep $rep (load $la): CHECKPOINT $hms ms, $((buf1 - buf0)) buffers; forst.checkpoint() $fms ms (view $fview ms), $fbw bytes written, store +$((sb1 - sb0)) bytes, state $fstate bytes"
	done
	state_bytes=$fstate
	[ "$PROFILE" -eq 0 ] || profile_checkpoint "$label" "$portA" "$rows"

	# The answers at the checkpoint (no writes since).
	probe_sql h "$rows" | psql_p "$portA" >"$work/answers-A-h"
	probe_sql s "$rows" | psql_p "$portA" >"$work/answers-A-s"
	cmp -s "$work/answers-A-h" "$work/answers-A-s" || die "h and s differ on A"

	# pg_basebackup of A, then A is lost.
	local bbms bbbytes
	la=$(loadavg)
	t0=$(now)
	as_pg_user "$bindir/pg_basebackup" -h 127.0.0.1 -p "$portA" -D "$work/bb-$label" -X stream -c fast
	t1=$(now)
	bbms=$(elapsed_ms "$t0" "$t1")
	bbbytes=$(du -sb "$work/bb-$label" | cut -f1)
	log "  pg_basebackup (load $la): $bbms ms, $bbbytes bytes"
	stop_server "$work/data-A"
	rm -rf "$work/cache-A"

	# B: fresh server, attach, first answers.
	local binit bstart battach bpoint brange bwall lab
	t0=$(now)
	new_server B
	t1=$(now)
	binit=$(elapsed_ms "$t0" "$t1")
	t0=$(now)
	portB=$(start_server "$work/data-B" "$work/B-$label.log")
	psql_p "$portB" -c "CREATE EXTENSION forst"
	t1=$(now)
	bstart=$(elapsed_ms "$t0" "$t1")
	lab=$(loadavg)
	{
		echo '\timing on'
		echo "SELECT forst.attach('public.s', cluster => '$cid');"
		probe_sql s "$rows"
	} >"$work/attach.sql"
	chmod 644 "$work/attach.sql"
	t0=$(now)
	psql_p "$portB" -f "$work/attach.sql" >"$work/attach.out"
	t1=$(now)
	bwall=$(elapsed_ms "$t0" "$t1")
	mapfile -t tms < <(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$work/attach.out")
	battach=${tms[0]}
	bpoint=${tms[1]}
	brange=${tms[2]}
	grep -v '^Time:' "$work/attach.out" | tail -n +2 >"$work/answers-B"
	cmp -s "$work/answers-A-s" "$work/answers-B" ||
		{ diff "$work/answers-A-s" "$work/answers-B" >&2 || true; die "B's answers differ from A's"; }
	# the same queries again, warm
	local bwarm
	t0=$(now)
	probe_sql s "$rows" | psql_p "$portB" >/dev/null
	t1=$(now)
	bwarm=$(elapsed_ms "$t0" "$t1")
	{
		echo "#### $label: plans of the probe queries on B (after attach)"
		echo '```'
		probe_sql s "$rows" | sed 's/^/EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) /' | psql_p "$portB"
		echo '```'
	} >>"$work/plans.md"
	log "  attach on B (load $lab): session $bwall ms (attach $battach, point $bpoint, range $brange ms), warm again $bwarm ms; B initdb $binit ms, start $bstart ms"
	[ "$PROFILE" -eq 0 ] || profile_probes "$label" "$portB" "$rows"
	stop_server "$work/data-B"

	# The basebackup as a server.
	local cstart cfirst
	t0=$(now)
	portC=$(start_server "$work/bb-$label" "$work/C-$label.log" "-c forst.cache_dir=$work/cache-C")
	t1=$(now)
	cstart=$(elapsed_ms "$t0" "$t1")
	t0=$(now)
	probe_sql h "$rows" | psql_p "$portC" >"$work/answers-C"
	t1=$(now)
	cfirst=$(elapsed_ms "$t0" "$t1")
	cmp -s "$work/answers-A-h" "$work/answers-C" || die "the basebackup's answers differ from A's"
	log "  basebackup restore: start $cstart ms, first answers $cfirst ms"
	stop_server "$work/bb-$label"

	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$label" "$rows" "$th" "$tf" "$heap_bytes" "$state_bytes" "$(store_bytes)" \
		"$bwall" "$battach" "$bpoint" "$brange" "$bwarm" "$binit" "$bstart" "$lab" \
		"$bbms" "$bbbytes" "$cstart" "$cfirst" "$la" "$(nproc)" >>"$TSV"
	rm -rf "$work/data-A" "$work/data-B" "$work/bb-$label" "$work"/cache-* "$work/store"
}

printf 'size\trows\trep\tloadavg\theap_checkpoint_ms\theap_buffers_written\theap_upsert_wal_bytes\theap_log_checkpoints\tforst_checkpoint_ms\tforst_view_duration_ms\tforst_bytes_written\tstore_bytes_added\tstore_bytes_written_stat\tstate_bytes\tforst_upsert_wal_bytes\tcheckpoint_id\tcompactions_during\tsst_files\n' >"$RUNS"
printf 'size\trows\theap_load_ms\tforst_load_ms\theap_bytes\tforst_state_bytes\tstore_bytes\tattach_session_ms\tattach_ms\tpoint_ms\trange_ms\twarm_probe_ms\tB_initdb_ms\tB_start_ms\tattach_loadavg\tbasebackup_ms\tbasebackup_bytes\trestored_start_ms\trestored_probe_ms\tbasebackup_loadavg\tcores\n' >"$TSV"
IFS=, read -ra size_list <<<"$SIZES"
for s in "${size_list[@]}"; do
	run_size "$s"
done
touch "$work/plans.md" "$work/profiles.md"
cat "$work/profiles.md" >>"$work/plans.md"
python3 bench/ckpt_report.py "$TSV" "$RUNS" "$work/plans.md" "VALUE_BYTES=$VALUE_BYTES UPSERTS=$UPSERTS REPS=$REPS SHARED_BUFFERS=$SHARED_BUFFERS $FORST_SETTINGS" | tee "$REPORT"
log "written: $REPORT, $TSV, $RUNS"
