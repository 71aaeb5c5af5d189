#!/usr/bin/env bash
# bench/foreign_keys.sh -- foreign keys referencing a forst table next to
# the same foreign keys referencing a heap table, in one private server:
# a heap child table references each parent's key.  Workloads: one
# referencing row inserted (one FOR KEY SHARE lookup of the parent), a
# statement inserting 1,000 referencing rows (beyond
# forst.key_share_locks_per_table, the locks go by bucket), and a parent
# row deleted and inserted again in one transaction (the delete checks the
# child through its index, and waits for bucket holders if any).
#
#   bash bench/foreign_keys.sh
#
# Environment: ROWS (parent rows, default 500000), DURATION (seconds per
# run, default 15), CLIENTS (default 1), ROUNDS (each run is repeated,
# alternating forst and heap, default 2; the report gives each run and the
# median), SETTINGS (lines added to postgresql.conf).  Each run is pgbench
# -M prepared against the same server.
#
# Results: bench/results/foreign-keys-STAMP.md.
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
REPORT=bench/results/foreign-keys-$stamp.md

forst_bench_server forst-fkbench

log "load: $ROWS referenced parent rows (and as many unreferenced), forst and heap"
psql_ <<EOF
CREATE EXTENSION forst;
CREATE TABLE fp (k bigint PRIMARY KEY, v text) USING forst;
CREATE TABLE hp (k bigint PRIMARY KEY, v text);
INSERT INTO fp SELECT g, repeat('v', 100) FROM generate_series(1, 2 * $ROWS) g;
INSERT INTO hp SELECT g, repeat('v', 100) FROM generate_series(1, 2 * $ROWS) g;
CREATE TABLE fc (k bigint NOT NULL REFERENCES fp, note text);
CREATE TABLE hc (k bigint NOT NULL REFERENCES hp, note text);
CREATE INDEX fc_k ON fc (k);
CREATE INDEX hc_k ON hc (k);
SELECT forst.checkpoint();
VACUUM ANALYZE hp;
ANALYZE fp;
EOF

scripts=$work/scripts
mkdir -p "$scripts"
chmod 755 "$work"
for t in f h; do
	cat >"$scripts/insert_$t.sql" <<EOF
\set k random(1, $ROWS)
INSERT INTO ${t}c VALUES (:k, 'one');
EOF
	cat >"$scripts/batch_$t.sql" <<EOF
INSERT INTO ${t}c SELECT 1 + (random() * ($ROWS - 1))::bigint, 'batch' FROM generate_series(1, 1000);
EOF
	cat >"$scripts/delete_$t.sql" <<EOF
\set k random($ROWS + 1, 2 * $ROWS)
BEGIN;
DELETE FROM ${t}p WHERE k = :k;
INSERT INTO ${t}p VALUES (:k, 'again');
COMMIT;
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
	for w in insert batch delete; do
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
	echo "# Foreign keys referencing forst vs heap tables (bench/foreign_keys.sh)"
	echo
	echo "$ROWS referenced parent rows (bigint key, 100-byte text) and as many unreferenced; a heap child table with an index on its foreign key; $CLIENTS client(s), $DURATION s per run, $ROUNDS rounds alternating; pgbench -M prepared; settings: ${SETTINGS:-the defaults}; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| workload | forst parent (tps) | heap parent (tps) | forst/heap |"
	echo "|---|---|---|---|"
	for w in insert batch delete; do
		f=$(echo "${tps[${w}_f]}" | median)
		h=$(echo "${tps[${w}_h]}" | median)
		case $w in
		insert) label="insert of one referencing row" ;;
		batch) label="insert of 1,000 referencing rows (one statement)" ;;
		delete) label="delete and re-insert of an unreferenced parent row" ;;
		esac
		printf '| %s | %s (%s) | %s (%s) | %.2f |\n' "$label" \
			"$f" "${tps[${w}_f]# }" "$h" "${tps[${w}_h]# }" \
			"$(echo "$f $h" | awk '{ print $1 / $2 }')"
	done
} >"$REPORT"
cat "$REPORT"
log "report: $REPORT"
