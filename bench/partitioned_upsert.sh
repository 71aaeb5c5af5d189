#!/usr/bin/env bash
# bench/partitioned_upsert.sh -- upserts into a partitioned table whose
# partitions are forst tables (its primary key forst's), next to the same
# partitioned table with heap partitions and btree keys, in one private
# server: single-row upserts and batches of 1,000 rows, through the
# partitioned table (forst's and heap's) and straight into the partition
# (forst).  An upsert through the partitioned table takes the keys of all
# its forst partitions up front, so the partition count is a parameter.
#
#   bash bench/partitioned_upsert.sh
#
# Environment: PARTS (partitions, default 30), KEYS (ids per partition,
# default 20000, loaded before the runs), DURATION (seconds per run, default
# 15), CLIENTS (default 1), ROUNDS (each run is repeated, alternating
# forst and heap, default 2; the report gives each run and the median),
# SETTINGS (lines added to postgresql.conf, e.g. "forst.memtable_size =
# '1MB'"; the report names them).  Each run is pgbench -M simple against the
# same server.
#
# Results: bench/results/partitioned-upsert-STAMP.md.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

PARTS=${PARTS:-30}
KEYS=${KEYS:-20000}
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
REPORT=bench/results/partitioned-upsert-$stamp.md

forst_bench_server forst-partupsert "max_locks_per_transaction = 256"

log "load: $PARTS partitions of $KEYS ids each, forst and heap"
psql_ <<EOF
CREATE EXTENSION forst;
SET default_table_access_method = forst;
CREATE TABLE fp (id bigint, day int, n bigint, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
RESET default_table_access_method;
CREATE TABLE hp (id bigint, day int, n bigint, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE fp_%s PARTITION OF fp FOR VALUES FROM (%s) TO (%s)', d, d, d + 1),
       format('CREATE TABLE hp_%s PARTITION OF hp FOR VALUES FROM (%s) TO (%s)', d, d, d + 1)
  FROM generate_series(0, $PARTS - 1) d \gexec
INSERT INTO fp SELECT i, d, 1 FROM generate_series(1, $KEYS) i, generate_series(0, $PARTS - 1) d;
INSERT INTO hp SELECT i, d, 1 FROM generate_series(1, $KEYS) i, generate_series(0, $PARTS - 1) d;
SELECT forst.checkpoint();
VACUUM ANALYZE hp;
ANALYZE fp;
EOF

scripts=$work/scripts
mkdir -p "$scripts"
chmod 755 "$work"
for t in fp hp; do
	cat >"$scripts/row_$t.sql" <<EOF
\set id random(1, $((KEYS * 2)))
\set day random(0, $((PARTS - 1)))
INSERT INTO $t AS t VALUES (:id, :day, 1) ON CONFLICT (id, day) DO UPDATE SET n = t.n + 1;
EOF
	cat >"$scripts/batch_$t.sql" <<EOF
\set id random(1, $((KEYS * 2 - 1000)))
\set day random(0, $((PARTS - 1)))
INSERT INTO $t AS t SELECT i, :day, 1 FROM generate_series(:id, :id + 999) i ON CONFLICT (id, day) DO UPDATE SET n = t.n + 1;
EOF
done
cat >"$scripts/row_direct.sql" <<EOF
\set id random(1, $((KEYS * 2)))
\set day random(0, $((PARTS - 1)))
INSERT INTO fp_:day AS t VALUES (:id, :day, 1) ON CONFLICT (id, day) DO UPDATE SET n = t.n + 1;
EOF
cat >"$scripts/batch_direct.sql" <<EOF
\set id random(1, $((KEYS * 2 - 1000)))
\set day random(0, $((PARTS - 1)))
INSERT INTO fp_:day AS t SELECT i, :day, 1 FROM generate_series(:id, :id + 999) i ON CONFLICT (id, day) DO UPDATE SET n = t.n + 1;
EOF
chmod 644 "$scripts"/*.sql

run()
{
	as_pg_user "$bindir/pgbench" -n -M simple -h "$work" -p "$port" -c "$CLIENTS" -j "$CLIENTS" \
		-T "$DURATION" -f "$scripts/$1.sql" postgres 2>&1 |
		awk '/^tps = / { printf "%.1f\n", $3 }'
}

declare -A tps
for r in $(seq 1 "$ROUNDS"); do
	for w in row batch; do
		for t in fp hp direct; do
			v=$(run "${w}_$t")
			[ -n "$v" ] || die "pgbench ${w}_$t gave no tps (see $work/server.log)"
			log "round $r: ${w}_$t $v tps"
			tps[${w}_$t]="${tps[${w}_$t]:-} $v"
		done
	done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
{
	echo "# Upserts into a partitioned table: forst partitions vs heap partitions (bench/partitioned_upsert.sh)"
	echo
	echo "$PARTS partitions of $KEYS ids each (half the upserts hit a new id), $CLIENTS client(s), $DURATION s per run, $ROUNDS rounds alternating; pgbench -M simple; settings: ${SETTINGS:-the defaults}; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| workload | forst through the partitioned table | heap through the partitioned table | forst into the partition | forst/heap | through/into (forst) |"
	echo "|---|---|---|---|---|---|"
	for w in row batch; do
		f=$(echo "${tps[${w}_fp]}" | median)
		h=$(echo "${tps[${w}_hp]}" | median)
		d=$(echo "${tps[${w}_direct]}" | median)
		label=$([ "$w" = row ] && echo "one row per statement (tps)" || echo "1,000 rows per statement (tps)")
		printf '| %s | %s (%s) | %s (%s) | %s (%s) | %.2f | %.2f |\n' "$label" \
			"$f" "${tps[${w}_fp]# }" "$h" "${tps[${w}_hp]# }" "$d" "${tps[${w}_direct]# }" \
			"$(echo "$f $h" | awk '{ print $1 / $2 }')" "$(echo "$f $d" | awk '{ print $1 / $2 }')"
	done
} >"$REPORT"
cat "$REPORT"
log "report: $REPORT"
