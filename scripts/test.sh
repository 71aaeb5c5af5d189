#!/usr/bin/env bash
# scripts/test.sh -- every test of forst, as CI runs it (the README's test
# command).  Works on a fresh Debian 12 machine, as root or with sudo.
#
#   bash scripts/test.sh [--quick] [--only unit|fuzz|regress|isolation|tap]
#
#   unit     engine unit tests, no server (make unit; FST_TEST_SEED=n to vary)
#   fuzz     each libFuzzer target for FUZZ_SECONDS (default 20; --quick: 5)
#   regress  pg_regress (sql/, expected/) on a private temporary instance
#   isolation  pg_isolation_regress (specs/, expected/), likewise
#   tap      TAP tests (t/*.pl) with PostgreSQL::Test::Cluster
#
# The PostgreSQL tests run as an unprivileged user from a copy of the test
# files in a temporary directory, which is removed when everything passed
# (set FORST_KEEP_TMP=1 to keep it).  The last line is "N passed, N failed"
# over all steps; the exit status is non-zero if anything failed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { forst_usage "${BASH_SOURCE[0]}"; }

only=""
quick=0
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) quick=1 ;;
		--only)
			[ $# -ge 2 ] || die "--only needs unit, fuzz, regress, isolation or tap"
			only=$2
			shift
			;;
		--only=*) only=${1#--only=} ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; exit 2 ;;
	esac
	shift
done
case "$only" in
	"" | unit | fuzz | regress | isolation | tap) ;;
	*) die "--only takes unit, fuzz, regress, isolation or tap, not '$only'" ;;
esac
if [ -z "${FUZZ_SECONDS:-}" ]; then
	if [ "$quick" -eq 1 ]; then FUZZ_SECONDS=5; else FUZZ_SECONDS=20; fi
fi

wants() { [ -z "$only" ] || [ "$only" = "$1" ]; }

total_passed=0
total_failed=0
summary=()

# record STEP PASSED FAILED
record()
{
	total_passed=$((total_passed + $2))
	total_failed=$((total_failed + $3))
	summary+=("$(printf '%-9s %4d passed, %d failed' "$1" "$2" "$3")")
}

# run_logged LOG CMD...: runs CMD, shows and saves its output, and sets rc.
run_logged()
{
	local logf=$1

	shift
	{
		rc=0
		"$@" 2>&1 || rc=$?
		echo "$rc" >"$logf.rc"
	} | tee "$logf"
	rc=$(cat "$logf.rc")
}

# in_work CMD...: runs CMD as the server user in the work directory.
in_work() { cd "$work" && as_pg_user "$@"; }

# count PATTERN FILE: lines of FILE matching the extended regexp PATTERN.
count() { grep -cE "$1" "$2" || true; }

# Each step runs one kind of test and records its counts; a step that fails
# without reporting a count (a build error, a crash) counts as one failure.

step_unit()
{
	local line p=0 f=0

	log "unit: make unit"
	run_logged "$logs/unit.log" forst_make unit
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/unit.log" | tail -n 1 || true)
	[ -z "$line" ] || read -r p _ f _ <<<"$line"
	[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
	record unit "$p" "$f"
}

step_fuzz()
{
	local targets n p f=0

	targets=$(forst_make -s print-fuzz-targets)
	if [ -z "$targets" ]; then
		log "fuzz: no fuzz targets (test/fuzz/fuzz_*.c) yet; nothing to run"
		record fuzz 0 0
		return
	fi
	log "fuzz: make fuzz, ${FUZZ_SECONDS}s per target: $targets"
	run_logged "$logs/fuzz.log" forst_make fuzz FUZZ_SECONDS="$FUZZ_SECONDS"
	n=$(wc -w <<<"$targets")
	p=$n
	if [ "$rc" -ne 0 ]; then
		# make fuzz announces each target ("fuzz_x: 20s") and stops at the
		# first one that fails: it and those after it count as failed
		p=$(($(count '^fuzz_[A-Za-z0-9_]+: [0-9]+s$' "$logs/fuzz.log") - 1))
		[ "$p" -ge 0 ] || p=0
		f=$((n - p))
	fi
	record fuzz "$p" "$f"
}

step_regress()
{
	local tests opts p f

	tests=$(forst_make -s print-regress)
	opts=$(forst_make -s print-regress-opts)
	log "regress: pg_regress $tests"
	# shellcheck disable=SC2086  # word lists from the Makefile
	run_logged "$logs/regress.log" in_work env HOME="$work" PATH="$user_path" \
		"$pg_regress" --temp-instance="$work/tmp_check" --bindir="$bindir" \
		--inputdir=. --outputdir=. $opts $tests
	p=$(count '\.\.\. +ok' "$logs/regress.log")
	f=$(count '\.\.\. +FAILED' "$logs/regress.log")
	if [ "$rc" -ne 0 ]; then
		[ "$f" -gt 0 ] || f=1
		[ ! -f "$work/regression.diffs" ] || cat "$work/regression.diffs"
		[ ! -f "$work/tmp_check/log/postmaster.log" ] ||
			tail -n 50 "$work/tmp_check/log/postmaster.log"
	fi
	record regress "$p" "$f"
}

# Isolation tests: the list comes from the Makefile (ISOLATION), and they
# run like the pg_regress tests, on their own temporary instance.
run_isolation()
{
	local tests opts p f

	tests=$(forst_make -s print-isolation)
	if [ -z "$tests" ]; then
		log "isolation: no isolation tests (ISOLATION in the Makefile); nothing to run"
		record isolation 0 0
		return
	fi
	opts=$(forst_make -s print-isolation-opts)
	log "isolation: pg_isolation_regress $tests"
	# shellcheck disable=SC2086  # word lists from the Makefile
	run_logged "$logs/isolation.log" in_work env HOME="$work" PATH="$user_path" \
		"$pg_isolation_regress" --temp-instance="$work/tmp_check_iso" \
		--bindir="$bindir" --inputdir=. --outputdir=output_iso $opts $tests
	p=$(count '\.\.\. +ok' "$logs/isolation.log")
	f=$(count '\.\.\. +FAILED' "$logs/isolation.log")
	if [ "$rc" -ne 0 ]; then
		[ "$f" -gt 0 ] || f=1
		[ ! -f "$work/output_iso/regression.diffs" ] || cat "$work/output_iso/regression.diffs"
		[ ! -f "$work/tmp_check_iso/log/postmaster.log" ] ||
			tail -n 50 "$work/tmp_check_iso/log/postmaster.log"
	fi
	record isolation "$p" "$f"
}

step_tap()
{
	local tests p f l

	tests=$(cd "$work" && find t -maxdepth 1 -name '*.pl' | sort)
	if [ -z "$tests" ]; then
		log "tap: no TAP tests (t/*.pl); nothing to run"
		record tap 0 0
		return
	fi
	log "tap: prove ${tests//$'\n'/ }"
	# As PostgreSQL's prove_installcheck: TESTDIR holds tmp_check/ (data
	# directories and logs), PG_REGRESS is used by Cluster->init.
	mkdir -p "$work/tap"
	! is_root || chown "$FORST_TEST_USER:" "$work/tap"
	# shellcheck disable=SC2086  # file names without blanks, by construction
	run_logged "$logs/tap.log" in_work env HOME="$work" PATH="$user_path" \
		TESTDIR="$work/tap" PG_REGRESS="$pg_regress" \
		prove -I "$pgxs_dir/src/test/perl" -I . --verbose $tests
	p=$(count '^ *ok [0-9]+' "$logs/tap.log")
	f=$(count '^ *not ok [0-9]+' "$logs/tap.log")
	if [ "$rc" -ne 0 ]; then
		[ "$f" -gt 0 ] || f=1
		for l in "$work"/tap/tmp_check/log/*; do
			[ -f "$l" ] || continue
			echo "----- $l (last 60 lines)"
			tail -n 60 "$l"
		done
	fi
	record tap "$p" "$f"
}

started=$SECONDS
forst_install_deps
forst_ensure_pg_user
if wants regress || wants isolation || wants tap; then
	forst_build_install
fi

work=$(forst_user_tmpdir forst-test)
logs="$work/logs"
mkdir -p "$logs"
log "work directory: $work"

pgxs_dir=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
pg_regress="$pgxs_dir/src/test/regress/pg_regress"
pg_isolation_regress="$pgxs_dir/src/test/isolation/pg_isolation_regress"
bindir=$("$PG_CONFIG" --bindir)
user_path="$bindir:/usr/local/bin:/usr/bin:/bin"

if wants regress || wants isolation || wants tap; then
	# What the PostgreSQL tests need, readable by the server user.
	(cd "$FORST_ROOT" && cp -r --parents sql expected specs t test/forst.conf "$work/")
	! is_root || chown -R "$FORST_TEST_USER:" "$work"
fi

! wants unit || step_unit
! wants fuzz || step_fuzz
! wants regress || step_regress
! wants isolation || run_isolation
! wants tap || step_tap

echo
log "summary ($((SECONDS - started))s)"
printf '  %s\n' "${summary[@]}"
if [ "$total_failed" -eq 0 ] && [ -z "${FORST_KEEP_TMP:-}" ]; then
	rm -rf "$work"
else
	echo "test files and logs kept in $work"
fi
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
