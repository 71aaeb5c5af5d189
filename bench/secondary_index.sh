#!/usr/bin/env bash
# bench/secondary_index.sh -- lookups through a secondary index of a forst
# table next to the same lookups through a btree of a heap table, in one
# private server: one row by the indexed column, ten rows by a range of
# it, and updates that change the indexed column (the write cost of the
# index: a tombstone and a new entry per row).  The indexed column is a
# permutation of the key, so its order is not the table's.
#
#   bash bench/secondary_index.sh
#
# Environment: ROWS (default 500000), DURATION (seconds per run, default
# 15), CLIENTS (default 1), ROUNDS (each run is repeated, alternating
# forst and heap, default 2; the report gives each run and the median),
# SETTINGS (lines added to postgresql.conf; the report names them).  Each
# run is pgbench -M prepared against the same server.
#
# Results: bench/results/secondary-index-STAMP.md.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

ROWS=${ROWS:-500000}
DURATION=${DURATION:-15}
CLIENTS=${CLIENTS:-1}
ROUNDS=${ROUNDS:-2}
case "${1:-}" in
-h | --help) forst_usage "$0"; exit 0 ;;
"") ;;
*) die "unknown argument: $1 (see --help)" ;;
esac

forst_install_deps
forst_ensure_pg_user
stamp=$(date -u +%Y%m%d-%H%M%S)
mkdir -p bench/results
REPORT=bench/results/secondary-index-$stamp.md

forst_bench_server forst-secindex

log "load: $ROWS rows, forst and heap, then the indexes"
# a: a permutation of k (7919 is prime; ROWS must not be a multiple of it)
psql_ <<EOF
CREATE EXTENSION forst;
CREATE TABLE f (k bigint PRIMARY KEY, a bigint, v text) USING forst;
CREATE TABLE h (k bigint PRIMARY KEY, a bigint, v text);
INSERT INTO f SELECT g, (g::bigint * 7919) % $ROWS, repeat('v', 100) FROM generate_series(1, $ROWS) g;
INSERT INTO h SELECT g, (g::bigint * 7919) % $ROWS, repeat('v', 100) FROM generate_series(1, $ROWS) g;
CREATE INDEX f_a ON f (a);
CREATE INDEX h_a ON h (a);
SELECT forst.checkpoint();
VACUUM ANALYZE h;
ANALYZE f;
EOF
for q in "SELECT * FROM f WHERE a = 5" "SELECT * FROM f WHERE a BETWEEN 5 AND 14"; do
	plan=$(psql_ -c "EXPLAIN (COSTS OFF) $q")
	case "$plan" in *"Index Scan using f_a"*) ;; *) die "$q does not use the index: $plan" ;; esac
done

scripts=$work/scripts
mkdir -p "$scripts"
chmod 755 "$work"
for t in f h; do
	cat >"$scripts/point_$t.sql" <<EOF
\set x random(0, $((ROWS - 1)))
SELECT * FROM $t WHERE a = :x;
EOF
	cat >"$scripts/range_$t.sql" <<EOF
\set x random(0, $((ROWS - 10)))
SELECT * FROM $t WHERE a BETWEEN :x AND :x + 9;
EOF
	cat >"$scripts/update_$t.sql" <<EOF
\set k random(1, $ROWS)
\set x random(0, $((ROWS * 10)))
UPDATE $t SET a = :x WHERE k = :k;
EOF
done
chmod 644 "$scripts"/*.sql

run()
{
	as_pg_user "$bindir/pgbench" -n -M prepared -h "$work" -p "$port" -c "$CLIENTS" -j "$CLIENTS" \
		-T "$DURATION" -f "$scripts/$1.sql" postgres 2>&1 |
		awk '/^tps = / { printf "%.1f\n", $3 }'
}

declare -A tps
for r in $(seq 1 "$ROUNDS"); do
	for w in point range update; do
		for t in f h; do
			v=$(run "${w}_$t")
			[ -n "$v" ] || die "pgbench ${w}_$t gave no tps (see $work/server.log)"
			log "round $r: ${w}_$t $v tps"
			tps[${w}_$t]="${tps[${w}_$t]:-} $v"
		done
	done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
{
	echo "# Secondary index vs heap + btree (bench/secondary_index.sh)"
	echo
	echo "$ROWS rows (bigint key; the indexed bigint column a permutation of the key; 100-byte text), $CLIENTS client(s), $DURATION s per run, $ROUNDS rounds alternating; pgbench -M prepared; settings: ${SETTINGS:-the defaults}; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| workload | forst (tps) | heap + btree (tps) | forst/heap |"
	echo "|---|---|---|---|"
	for w in point range update; do
		f=$(echo "${tps[${w}_f]}" | median)
		h=$(echo "${tps[${w}_h]}" | median)
		case $w in
		point) label="one row by the indexed column" ;;
		range) label="ten rows by a range of it" ;;
		update) label="update of the indexed column, by key" ;;
		esac
		printf '| %s | %s (%s) | %s (%s) | %.2f |\n' "$label" \
			"$f" "${tps[${w}_f]# }" "$h" "${tps[${w}_h]# }" \
			"$(echo "$f $h" | awk '{ print $1 / $2 }')"
	done
} >"$REPORT"
cat "$REPORT"
log "report: $REPORT"
