#!/usr/bin/env bash
# bench/pg_regress_compat.sh -- PostgreSQL 15's own regression suite with
# default_table_access_method = forst, next to the same suite on heap: how
# much of PostgreSQL's SQL works on forst tables, and why the rest fails.
#
#   bash bench/pg_regress_compat.sh [--schedule parallel|serial]
#
# The suite (src/test/regress of Debian's postgresql-15 source package,
# fetched with `apt-get source` into a cache unless PG_SOURCE names a
# source tree; a deb-src twin of the machine's Debian sources is added
# when missing) runs twice, each time on a fresh server of this checkout
# (a private install, shared_preload_libraries = forst) in a database that
# has the extension: once as it is ("heap"), once with the database's
# default_table_access_method = forst ("forst").  Its C test libraries
# (regress, refint, autoinc) are built from the same source.
#
# Reported: tests passed in each run; the tests that pass on heap and fail
# on forst; the ERROR messages of the forst run that the heap run does not
# have (per test, as a multiset), grouped with numbers and names masked,
# most frequent first; and whether either server crashed (a backend ended
# by a signal).  A statement that fails on purpose (forst refuses what it
# cannot honour, with a hint) counts here like any other difference.
#
# Results: bench/results/pg-regress-compat-STAMP.md (the report) and
# -errors.tsv (every forst-only error: test, message).  About 4 minutes.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

SCHEDULE=parallel
while [ $# -gt 0 ]; do
	case "$1" in
	--schedule) SCHEDULE=$2; shift 2 ;;
	-h | --help) forst_usage "$0"; exit 0 ;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
done
case "$SCHEDULE" in parallel | serial) ;; *) die "--schedule: parallel or serial" ;; esac

forst_install_deps
forst_install_deps gcc dpkg-dev
forst_ensure_pg_user

# --- the source
if [ -z "${PG_SOURCE:-}" ]; then
	cache=${FORST_PGSRC_CACHE:-${TMPDIR:-/tmp}/forst-pgsrc}
	PG_SOURCE=$( (find "$cache" -maxdepth 1 -type d -name 'postgresql-15-*' 2>/dev/null || true) | sort | tail -n 1)
	if [ -z "$PG_SOURCE" ]; then
		log "source: apt-get source postgresql-15 into $cache"
		if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ &&
			! grep -qs '^deb-src' /etc/apt/sources.list; then
			[ -f /etc/apt/sources.list.d/debian.sources ] ||
				die "no deb-src entry and no /etc/apt/sources.list.d/debian.sources to copy one from"
			sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
				as_root tee /etc/apt/sources.list.d/forst-debian-src.sources >/dev/null
		fi
		as_root apt-get update -q >/dev/null
		mkdir -p "$cache"
		# the newest version may be missing from the mirror: try each, newest first
		for v in $(apt-cache showsrc postgresql-15 | sed -n 's/^Version: //p' | sort -rV); do
			(cd "$cache" && apt-get source -q "postgresql-15=$v" >/dev/null 2>&1) && break
		done
		PG_SOURCE=$(find "$cache" -maxdepth 1 -type d -name 'postgresql-15-*' | sort | tail -n 1)
		[ -n "$PG_SOURCE" ] || die "apt-get source postgresql-15 failed (see apt's output with -q removed)"
	fi
fi
regress_src=$PG_SOURCE/src/test/regress
[ -f "$regress_src/parallel_schedule" ] || die "$regress_src has no parallel_schedule: PG_SOURCE must be a PostgreSQL 15 source tree"
log "source: $PG_SOURCE"

stamp=$(date -u +%Y%m%d-%H%M%S)
mkdir -p bench/results
REPORT=bench/results/pg-regress-compat-$stamp.md
ERRORS=bench/results/pg-regress-compat-$stamp-errors.tsv

work=$(forst_user_tmpdir forst-pgcompat)
log "build: make; install into $work/pg"
bindir=$(forst_build_private_install "$work/pg")
pg_regress=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress
[ -x "$pg_regress" ] || die "pg_regress not found at $pg_regress (postgresql-server-dev-15)"

# the suite's C libraries, against the installed server's headers
mkdir -p "$work/lib"
inc=$("$PG_CONFIG" --includedir-server)
for m in "$regress_src/regress.c" "$PG_SOURCE/contrib/spi/refint.c" "$PG_SOURCE/contrib/spi/autoinc.c"; do
	gcc -O1 -fPIC -shared -I"$inc" -o "$work/lib/$(basename "$m" .c).so" "$m"
done
cp -r "$regress_src/sql" "$regress_src/expected" "$regress_src/data" "$regress_src/resultmap" \
	"$regress_src/parallel_schedule" "$work/" 2>/dev/null || true
[ -f "$regress_src/serial_schedule" ] && cp "$regress_src/serial_schedule" "$work/"
if [ "$SCHEDULE" = serial ] && [ ! -f "$work/serial_schedule" ]; then
	# PostgreSQL 15 has no serial_schedule: one test per line of the parallel one
	sed -n 's/^test: //p' "$work/parallel_schedule" | tr ' ' '\n' | sed '/^$/d; s/^/test: /' >"$work/serial_schedule"
fi
chown -R "$FORST_TEST_USER:" "$work" 2>/dev/null || true

port=
data=
cleanup()
{
	[ -z "$port" ] || as_pg_user "$bindir/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
	if [ "${KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# run MODE: a fresh server and database, then the suite
run()
{
	local mode=$1 out=$work/out-$1
	data=$work/data-$mode
	port=$(forst_free_port)
	as_pg_user "$bindir/initdb" -D "$data" -A trust --no-locale -E UTF8 >/dev/null
	cat >>"$data/postgresql.conf" <<-EOF
		port = $port
		listen_addresses = ''
		unix_socket_directories = '$work'
		shared_preload_libraries = 'forst'
		max_prepared_transactions = 2
		max_connections = 40
		fsync = off
		log_line_prefix = '%m %b[%p] '
		log_min_messages = warning
	EOF
	as_pg_user "$bindir/pg_ctl" -D "$data" -l "$work/server-$mode.log" -w start >/dev/null
	as_pg_user "$bindir/psql" -X -q -h "$work" -p "$port" -d postgres -v ON_ERROR_STOP=1 \
		-c "CREATE DATABASE regression" >/dev/null
	as_pg_user "$bindir/psql" -X -q -h "$work" -p "$port" -d regression -v ON_ERROR_STOP=1 \
		-c "CREATE EXTENSION forst" >/dev/null
	if [ "$mode" = forst ]; then
		as_pg_user "$bindir/psql" -X -q -h "$work" -p "$port" -d regression -v ON_ERROR_STOP=1 \
			-c "ALTER DATABASE regression SET default_table_access_method = forst" >/dev/null
	fi
	log "$mode: $SCHEDULE schedule on port $port"
	mkdir -p "$out"
	chown "$FORST_TEST_USER:" "$out" 2>/dev/null || true
	(cd "$work" && as_pg_user env PGHOST="$work" PGPORT="$port" "$pg_regress" \
		--use-existing --host="$work" --port="$port" --bindir="$bindir" \
		--inputdir="$work" --outputdir="$out" --dlpath="$work/lib" \
		--schedule="$work/${SCHEDULE}_schedule" >"$work/pg_regress-$mode.log" 2>&1) || true
	as_pg_user "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
	port=
}

run heap
run forst

log "report: $REPORT"
python3 bench/pg_regress_compat_report.py "$work" "$SCHEDULE" "$PG_SOURCE" "$ERRORS" >"$REPORT"
cat "$REPORT"
