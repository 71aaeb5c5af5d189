#!/usr/bin/env bash
# bench/key_scans.sh -- reads through the key of a forst table next to the
# same reads of a heap table with a btree primary key: max(), the top rows
# (ORDER BY k DESC LIMIT 10), a range of half the table forward and
# backward, and a sequential count, in one private server.
#
#   bash bench/key_scans.sh
#
# Environment: ROWS (default 2000000), REPEAT (runs of each query per table
# after its first, in the same session, default 5), SETTINGS (lines added
# to postgresql.conf).
# Both tables are (k bigint PRIMARY KEY, v int), loaded with keys 1..ROWS;
# the forst table is checkpointed (its rows in SST files on file://), the
# heap table vacuumed.  Each query runs with enable_seqscan = off (except
# the count) and max_parallel_workers_per_gather = 0, timed by the server
# (EXPLAIN ANALYZE's execution time, which leaves the client out): its
# first run in a new session, and the median of the runs after it.
#
# Results: bench/results/key-scans-STAMP.md.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

ROWS=${ROWS:-2000000}
REPEAT=${REPEAT:-5}
case "${1:-}" in
-h | --help) forst_usage "$0"; exit 0 ;;
"") ;;
*) die "unknown argument: $1 (see --help)" ;;
esac

forst_install_deps
forst_ensure_pg_user
stamp=$(date -u +%Y%m%d-%H%M%S)
mkdir -p bench/results
REPORT=bench/results/key-scans-$stamp.md

forst_bench_server forst-keyscans

log "load: $ROWS rows into each table"
psql_ <<EOF
CREATE EXTENSION forst;
CREATE TABLE f (k bigint PRIMARY KEY, v int) USING forst;
CREATE TABLE h (k bigint PRIMARY KEY, v int) USING heap;
INSERT INTO f SELECT g, g % 1000 FROM generate_series(1, $ROWS) g;
INSERT INTO h SELECT g, g % 1000 FROM generate_series(1, $ROWS) g;
SELECT forst.checkpoint();
VACUUM ANALYZE h;
ANALYZE f;
EOF

half=$((ROWS / 2))
queries=(
	"max|SELECT max(k) FROM @"
	"top 10 desc|SELECT k, v FROM @ ORDER BY k DESC LIMIT 10"
	"range forward ($half rows)|SELECT count(v) FROM (SELECT * FROM @ WHERE k > $half ORDER BY k) s"
	"range backward ($half rows)|SELECT count(v) FROM (SELECT * FROM @ WHERE k > $half ORDER BY k DESC) s"
	"sequential count|SELECT count(v) FROM @"
)

# times QUERY: "FIRST MEDIAN" in milliseconds: the query's first run in a
# new session (whose backend opens the table's files then), and the median
# of the REPEAT runs after it in that session
times()
{
	local q=$1 seqscan=off i args=()
	case "$q" in "SELECT count(v) FROM f" | "SELECT count(v) FROM h") seqscan=on ;; esac
	args+=(-c "SET enable_seqscan = $seqscan" -c "SET max_parallel_workers_per_gather = 0")
	for ((i = 0; i <= REPEAT; i++)); do
		args+=(-c "EXPLAIN (ANALYZE, FORMAT JSON) $q")
	done
	psql_ "${args[@]}" | python3 -c '
import re, statistics, sys
t = [float(x) for x in re.findall(r"\"Execution Time\": ([0-9.]+)", sys.stdin.read())]
print("%.2f %.2f" % (t[0], statistics.median(t[1:])))'
}

{
	echo "# Key scans, forst against heap (bench/key_scans.sh)"
	echo
	echo "$ROWS rows of (k bigint PRIMARY KEY, v int); forst checkpointed to file://, heap vacuumed; median of $REPEAT runs (EXPLAIN ANALYZE execution time), one private server, $(date -u +%Y-%m-%d)."
	echo
	echo "Each query's first run in a new session (forst's backend opens the table's SST files then) and the median of the runs after it in that session."
	echo
	echo "| query | forst ms, first / then | heap ms, first / then | forst / heap time, first / then |"
	echo "|---|---|---|---|"
} >"$REPORT"
for entry in "${queries[@]}"; do
	name=${entry%%|*}
	q=${entry#*|}
	read -r f1 f2 <<<"$(times "${q//@/f}")"
	read -r h1 h2 <<<"$(times "${q//@/h}")"
	r1=$(python3 -c "print(f'{$f1 / $h1:.2f}')")
	r2=$(python3 -c "print(f'{$f2 / $h2:.2f}')")
	log "$name: forst $f1 / $f2 ms, heap $h1 / $h2 ms"
	echo "| $name | $f1 / $f2 | $h1 / $h2 | $r1× / $r2× |" >>"$REPORT"
done
cat "$REPORT"
