#!/usr/bin/env bash
# scripts/test.sh -- every test of forst, as CI runs it (the README's test
# command).  Works on a fresh Debian 12 machine, as root or with sudo.
#
#   bash scripts/test.sh [--quick] [--only unit|fuzz|regress|isolation|tap|s3|pipeline]
#
#   unit     engine unit tests, no server (make unit; FST_TEST_SEED=n to vary)
#   fuzz     each libFuzzer target for FUZZ_SECONDS (default 20; --quick: 5)
#   regress  pg_regress (sql/, expected/) on a private temporary instance
#   isolation  pg_isolation_regress (specs/, expected/), own temporary instance
#   tap      TAP tests (t/*.pl) with PostgreSQL::Test::Cluster
#            (FORST_TAP_TESTS="t/a.pl t/b.pl" to run only some)
#   s3       the s3:// store against a local S3 server (the s3it_* unit
#            tests, then scripts/s3-cli-check.sh with the aws CLI), then
#            PostgreSQL with forst.remote_dir on it: the DML regress suite
#            the crash tests (t/002, t/007) with 1 MB memtables, two
#            servers sharing the bucket (t/013: restore, clone, split,
#            merge, claim, gc checked with the aws CLI), t/033 (a crash
#            of checkpoint-durable, unlogged tables), t/043 (a table over
#            three servers and a coordinator sharing the bucket: routing,
#            rescale, distributed checkpoints),
#            t/s3/*.pl (settings, errors, cancel, faults injected by
#            scripts/s3-fault-proxy.py, prefetch, batched upserts against a heap
#            twin under concurrent writers, an outage under load of
#            FORST_S3_OUTAGE_SECONDS, default 300, --quick 60), and the
#            objects forst wrote,
#            downloaded with the aws CLI, checked by build/forst-sst-verify.
#            Ceph RGW by default (scripts/rgw.sh, ~20 s to start, minutes on a loaded machine), or
#            s3rver with FORST_S3_SERVER=s3rver (scripts/s3-server.sh);
#            FORST_S3_TAP_TESTS="t/s3/a.pl ..." runs only those TAP tests
#   pipeline the streaming job of the demo in its short mode
#            (scripts/demo.sh --quick), then in its checkpoint-durable mode
#            (--quick --checkpoint-durable), then on two servers rescaled
#            to three and back, one of them then killed and replaced
#            (--quick --servers 2): 1 passed for each run whose
#            verification says PASS
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
			[ $# -ge 2 ] || die "--only needs unit, fuzz, regress, isolation, tap, s3 or pipeline"
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
	"" | unit | fuzz | regress | isolation | tap | s3 | pipeline) ;;
	*) die "--only takes unit, fuzz, regress, isolation, tap, s3 or pipeline, not '$only'" ;;
esac
if [ -z "${FUZZ_SECONDS:-}" ]; then
	if [ "$quick" -eq 1 ]; then FUZZ_SECONDS=5; else FUZZ_SECONDS=20; fi
fi
# t/s3/030's outage: 300 s (the issue's five minutes), 60 s with --quick
if [ -z "${FORST_S3_OUTAGE_SECONDS:-}" ] && [ "$quick" -eq 1 ]; then
	export FORST_S3_OUTAGE_SECONDS=60
fi

wants() { [ -z "$only" ] || [ "$only" = "$1" ]; }

total_passed=0
total_failed=0
summary=()

# What failed, by name, for the summary: a CI log that shows only its end
# still says which test to look at.
failures=()

# note_failures STEP LOG: the failed tests of LOG (prove's "not ok" lines
# with their file, pg_regress's FAILED tests, the unit tests' FAIL lines).
# A TAP script that dies has no "not ok" line: for it, the die message
# (the "died:" lines step_tap adds from its regress_log), the three lines
# before Test::More's "Looks like your test exited", and prove's summary
# report, which names the file and says why.
note_failures()
{
	local l

	[ -f "$2" ] || return 0
	while IFS= read -r l; do
		failures+=("$1: $l")
	done < <(awk '
		/^t\/[^ ]+\.pl \.+ ?$/ { file = $1 }
		/^Test Summary Report/ { report = 1; next }
		report && /^(Files=|Result:)/ { report = 0 }
		report && !/^-+$/ { sub(/^ */, ""); print; next }
		/Looks like your test exited/ {
			for (i = 1; i <= 3; i++)
				if (last[i] != "")
					print (file ? file ": " : "") last[i]
			sub(/^ */, ""); print (file ? file ": " : "") $0; next
		}
		/^ *not ok [0-9]+/ { sub(/^ */, ""); print (file ? file ": " : "") $0; next }
		/^died: / { print substr($0, 1, 300); next }
		/\.\.\. +FAILED/ { sub(/^ */, ""); print; next }
		/^FAIL[: ]/ { print }
		{ last[1] = last[2]; last[2] = last[3]; last[3] = substr($0, 1, 300) }
	' "$2" | head -n 30)
}

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
	# The folders of src/ call each other only downwards (tools/layout_check.py).
	log "unit: make layout-check"
	run_logged "$logs/layout.log" forst_make layout-check
	if [ "$rc" -eq 0 ]; then p=$((p + 1)); else f=$((f + 1)); fi
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

# regress_counts LOG OUTDIR INSTANCE: sets rp and rf to the tests that
# passed and failed in pg_regress's output LOG (rf at least 1 when rc, the
# run's status, is not 0), and on failure prints OUTDIR's regression.diffs
# and the end of the temporary INSTANCE's server log.
regress_counts()
{
	rp=$(count '\.\.\. +ok' "$1")
	rf=$(count '\.\.\. +FAILED' "$1")
	if [ "$rc" -ne 0 ]; then
		[ "$rf" -gt 0 ] || rf=1
		[ ! -f "$2/regression.diffs" ] || cat "$2/regression.diffs"
		[ ! -f "$3/log/postmaster.log" ] || tail -n 50 "$3/log/postmaster.log"
	fi
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
	regress_counts "$logs/regress.log" "$work" "$work/tmp_check"
	p=$rp
	f=$rf
	owner_regress
	record regress "$p" "$f"
}

# The DML suites again, as an ordinary role that owns its tables and has no
# grant beyond CREATE on schema public (what heap needs): each file's
# CREATE EXTENSION becomes the superuser's CREATE EXTENSION followed by
# SET ROLE, its DROP EXTENSION a RESET ROLE first; the expected output
# changes the same way, so any difference is one of privileges.  Adds to p
# and f of step_regress.
OWNER_REGRESS="forst_table forst_onconflict forst_triggers forst_differential forst_window"

owner_regress()
{
	local dir="$work/owner" t kind

	mkdir -p "$dir/sql" "$dir/expected" "$dir/output"
	for t in $OWNER_REGRESS; do
		for kind in sql:sql expected:out; do
			sed -E \
				-e 's/^CREATE EXTENSION (IF NOT EXISTS )?forst;$/CREATE EXTENSION forst;\nCREATE ROLE regress_forst_user;\nGRANT CREATE ON SCHEMA public TO regress_forst_user;\nSET ROLE regress_forst_user;/' \
				-e 's/^DROP EXTENSION forst;$/RESET ROLE;\nDROP OWNED BY regress_forst_user;\nDROP ROLE regress_forst_user;\nDROP EXTENSION forst;/' \
				"$FORST_ROOT/${kind%%:*}/$t.${kind##*:}" >"$dir/${kind%%:*}/${t}_owner.${kind##*:}"
		done
		grep -q '^SET ROLE regress_forst_user;$' "$dir/sql/${t}_owner.sql" ||
			die "owner_regress: sql/$t.sql has no line 'CREATE EXTENSION forst;'"
	done
	cp "$FORST_ROOT/test/forst.conf" "$dir/"
	! is_root || chown -R "$FORST_TEST_USER:" "$dir"
	log "regress: pg_regress as an ordinary role: $OWNER_REGRESS"
	# shellcheck disable=SC2046  # word lists
	run_logged "$logs/regress-owner.log" in_work env HOME="$work" PATH="$user_path" \
		"$pg_regress" --temp-instance="$work/tmp_check_owner" --bindir="$bindir" \
		--inputdir="$dir" --outputdir="$dir/output" --temp-config="$dir/forst.conf" \
		$(for t in $OWNER_REGRESS; do echo "${t}_owner"; done)
	regress_counts "$logs/regress-owner.log" "$dir/output" "$work/tmp_check_owner"
	p=$((p + rp))
	f=$((f + rf))
}

# Isolation tests: concurrent sessions scripted by specs/*.spec, on a
# temporary instance of their own (output in output_iso/, so that the
# regress step's results stay apart).  The list is the Makefile's ISOLATION.
step_isolation()
{
	local tests opts p f pg_isolation_regress

	tests=$(forst_make -s print-isolation)
	if [ -z "$tests" ]; then
		log "isolation: no isolation tests (ISOLATION in the Makefile); nothing to run"
		record isolation 0 0
		return
	fi
	opts=$(forst_make -s print-isolation-opts)
	pg_isolation_regress="$pgxs_dir/src/test/isolation/pg_isolation_regress"
	(cd "$FORST_ROOT" && cp -r --parents specs expected test/forst.conf "$work/")
	mkdir -p "$work/output_iso"
	! is_root || chown -R "$FORST_TEST_USER:" "$work"
	log "isolation: pg_isolation_regress $tests"
	# shellcheck disable=SC2086  # word lists from the Makefile
	run_logged "$logs/isolation.log" in_work env HOME="$work" PATH="$user_path" \
		"$pg_isolation_regress" --temp-instance="$work/tmp_check_iso" \
		--bindir="$bindir" --inputdir=. --outputdir=output_iso $opts $tests
	regress_counts "$logs/isolation.log" "$work/output_iso" "$work/tmp_check_iso"
	p=$rp
	f=$rf
	record isolation "$p" "$f"
}

step_tap()
{
	local tests p f l

	# FORST_TAP_TESTS="t/009_disk_cache.pl ..." runs only those
	tests=${FORST_TAP_TESTS:-$(cd "$work" && find t -maxdepth 1 -name '*.pl' | sort)}
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
		prove -I "$pgxs_dir/src/test/perl" -I . -I t/lib --verbose $tests
	p=$(count '^ *ok [0-9]+' "$logs/tap.log")
	f=$(count '^ *not ok [0-9]+' "$logs/tap.log")
	if [ "$rc" -ne 0 ]; then
		[ "$f" -gt 0 ] || f=1
		# A script's die message is in its regress_log only (PostgreSQL::Test
		# sends STDERR there): into the step's log, for the summary, for each
		# script that died (prove: "Parse errors", its plan not finished).
		for l in $(awk '/^t\/[^ ]*\.pl \(Wstat/ { f = $1 } /Parse errors/ && f { sub(/\.pl$/, "", f); print f; f = "" }' "$logs/tap.log"); do
			l="$work/tap/tmp_check/log/regress_log_${l#t/}"
			[ -f "$l" ] || continue
			grep -E '^error running SQL: |^[^#].* at [^ ]+ line [0-9]+\.?$' "$l" | tail -n 2 |
				cut -c1-300 | sed "s|^|died: ${l##*/regress_log_}: |" >>"$logs/tap.log"
		done
		for l in "$work"/tap/tmp_check/log/*; do
			[ -f "$l" ] || continue
			echo "----- $l (last 60 lines)"
			tail -n 60 "$l"
		done
	fi
	record tap "$p" "$f"
}

# The demo's streaming job, short mode, on servers of its own started from
# the private copy of PostgreSQL: an uninterrupted run and a failover run;
# their verification (emitted windows against a recomputation from the source
# log and against the uninterrupted run, bounded state, the offset) prints
# PASS or FAIL.  Then the same in the checkpoint-durable mode (the job's
# tables unlogged, the killed server restarted on its data directory), and
# on two servers rescaled to three and back while it runs, one of them then
# killed and replaced from the job's distributed checkpoint (--servers 2).
step_pipeline()
{
	local passed=0 failed=0 l name args

	for args in "pipeline --quick" "pipeline-ckpt --quick --checkpoint-durable" "pipeline-servers --quick --servers 2"; do
		name=${args%% *}
		log "pipeline: scripts/demo.sh ${args#* }"
		# shellcheck disable=SC2086 # the options, one per word
		run_logged "$logs/$name.log" env FORST_BINDIR="$bindir" \
			bash "$FORST_ROOT/scripts/demo.sh" ${args#* } "$work/$name"
		if [ "$rc" -eq 0 ] && grep -q '^PASS: ' "$logs/$name.log"; then
			passed=$((passed + 1))
		else
			for l in "$work/$name"/*/server.log; do
				[ ! -f "$l" ] || { echo "--- $l"; tail -n 50 "$l"; }
			done
			failed=$((failed + 1))
		fi
	done
	record pipeline "$passed" "$failed"
}

# The S3 server of the s3 step: started in a directory of its own and
# stopped on every exit, also when this script fails or is interrupted.
s3_server_script=""
s3_server_dir=""

stop_s3_server()
{
	[ -n "$s3_server_dir" ] || return 0
	bash "$s3_server_script" stop "$s3_server_dir/server" || true
	rm -rf "$s3_server_dir"
	s3_server_dir=""
}
trap stop_s3_server EXIT

# s3_run CMD...: CMD with the server's client environment.
s3_run()
{
	# shellcheck disable=SC1091
	. "$s3_server_dir/server.env"
	"$@"
}

# last_counts FILE: "P F" of the last "N passed, N failed" line of FILE.
last_counts()
{
	local line

	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -n 1 || true)
	if [ -n "$line" ]; then
		read -r p _ f _ <<<"$line"
		echo "$p $f"
	else
		echo "0 0"
	fi
}

step_s3()
{
	local server=${FORST_S3_SERVER:-rgw} p f p2 f2

	case "$server" in
		rgw) s3_server_script="$FORST_ROOT/scripts/rgw.sh" ;;
		s3rver) s3_server_script="$FORST_ROOT/scripts/s3-server.sh" ;;
		*) die "FORST_S3_SERVER must be rgw or s3rver, not '$server'" ;;
	esac
	log "s3: starting $server"
	s3_server_dir=$(mktemp -d "${TMPDIR:-/tmp}/forst-s3.XXXXXX")
	if ! bash "$s3_server_script" start "$s3_server_dir/server" \
		>"$s3_server_dir/server.env" 2>"$logs/s3-server.log"; then
		cat "$logs/s3-server.log"
		stop_s3_server
		record s3 0 1
		return
	fi
	cat "$logs/s3-server.log"

	log "s3: unit tests s3it_* against $server"
	# the URL takes the endpoint from the server's environment file
	run_logged "$logs/s3.log" s3_run bash -c \
		'FORST_S3_TEST_URL="s3://$S3_BUCKET/ci?endpoint=$S3_ENDPOINT" exec make -C "$1" --no-print-directory PG_CONFIG="$2" unit UNIT_FILTER=s3it_' \
		_ "$FORST_ROOT" "$PG_CONFIG"
	read -r p f <<<"$(last_counts "$logs/s3.log")"
	[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1

	log "s3: aws CLI interoperability (scripts/s3-cli-check.sh)"
	run_logged "$logs/s3-cli.log" s3_run env PG_CONFIG="$PG_CONFIG" \
		bash "$FORST_ROOT/scripts/s3-cli-check.sh"
	read -r p2 f2 <<<"$(last_counts "$logs/s3-cli.log")"
	[ "$rc" -eq 0 ] || [ "$f2" -gt 0 ] || f2=1
	p=$((p + p2))
	f=$((f + f2))
	s3_server_tests
	stop_s3_server
	record s3 "$p" "$f"
}

# The DML suite, run again with forst.remote_dir on S3: with 1 MB
# memtables, so that flushes and compactions go to S3, except forst_table,
# whose EXPLAIN output depends on the size estimate of a nearly empty
# memtable (which grows with forst.memtable_size): it runs with the default
# size.  forst_keycodec creates the extension in each database.
S3_REGRESS_SMALL="forst_keycodec forst_onconflict forst_keyarray forst_scan_parallel forst_scan_backward forst_triggers forst_differential"
S3_REGRESS_DEFAULT="forst_keycodec forst_table"

# s3_conf PREFIX [MEMTABLE_SIZE]: server settings for forst.remote_dir
# s3://$S3_BUCKET/PREFIX (with the throwaway server's test credentials,
# given as settings).
s3_conf()
{
	cat <<EOF
shared_preload_libraries = 'forst'
wal_level = replica
forst.remote_dir = 's3://$S3_BUCKET/$1'
forst.s3_endpoint = '$S3_ENDPOINT'
forst.s3_access_key_id = '$AWS_ACCESS_KEY_ID'
forst.s3_secret_access_key = '$AWS_SECRET_ACCESS_KEY'
forst.memtable_size = '${2:-1MB}'
forst.memtable_memory = '64MB'
EOF
}

# s3_regress NAME CONF TESTS...: pg_regress on a temporary instance with
# the settings CONF; adds to p and f of step_s3.
s3_regress()
{
	local name=$1 conf=$2

	shift 2
	log "s3: pg_regress $* ($name)"
	mkdir -p "$work/output_$name"
	! is_root || chown "$FORST_TEST_USER:" "$work/output_$name"
	run_logged "$logs/$name.log" in_work env HOME="$work" PATH="$user_path" \
		"$pg_regress" --temp-instance="$work/tmp_check_$name" --bindir="$bindir" \
		--inputdir=. --outputdir="output_$name" --temp-config="$conf" "$@"
	regress_counts "$logs/$name.log" "$work/output_$name" "$work/tmp_check_$name"
	p=$((p + rp))
	f=$((f + rf))
}

# s3_server_tests: PostgreSQL servers with forst.remote_dir on the running
# S3 server; adds to p and f of step_s3.
s3_server_tests()
{
	local dir="$work/s3" run tp tf l s3_tap

	(cd "$FORST_ROOT" && cp -r --parents sql expected t scripts/s3-stall-proxy.py scripts/s3-fault-proxy.py "$work/")
	mkdir -p "$dir" "$work/tap_s3"
	run=$(date +%s)-$$
	# shellcheck disable=SC1091
	. "$s3_server_dir/server.env"
	s3_conf "regress-$run" >"$dir/regress.conf"
	s3_conf "regress8-$run" 8MB >"$dir/regress8.conf"
	s3_conf "tap-$run" >"$dir/tap.conf"
	! is_root || chown -R "$FORST_TEST_USER:" "$work"

	# shellcheck disable=SC2086  # word lists
	s3_regress s3-regress "$dir/regress.conf" $S3_REGRESS_SMALL
	# shellcheck disable=SC2086
	s3_regress s3-regress8 "$dir/regress8.conf" $S3_REGRESS_DEFAULT

	# FORST_S3_TAP_TESTS="t/s3/050_s3_batch_lookup.pl ..." runs only those
	s3_tap=${FORST_S3_TAP_TESTS:-t/002_wal_crash.pl t/007_flush_compact.pl t/013_checkpoint_restore.pl t/014_gc_under_load.pl t/033_checkpoint_durable.pl t/034_compaction_memory.pl t/043_distributed.pl t/044_borrow_chains.pl $(cd "$work" && ls t/s3/*.pl)}
	log "s3: prove $s3_tap with forst.remote_dir on S3"
	# shellcheck disable=SC2086  # a list of file names without blanks
	run_logged "$logs/s3-tap.log" in_work env HOME="$work" PATH="$user_path" \
		TESTDIR="$work/tap_s3" PG_REGRESS="$pg_regress" \
		FORST_TAP_EXTRA_CONF="$dir/tap.conf" \
		FORST_STALL_PROXY="$work/scripts/s3-stall-proxy.py" \
		FORST_FAULT_PROXY="$work/scripts/s3-fault-proxy.py" \
		S3_ENDPOINT="$S3_ENDPOINT" S3_BUCKET="$S3_BUCKET" \
		AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
		prove -I "$pgxs_dir/src/test/perl" -I . -I t/lib --verbose $s3_tap
	tp=$(count '^ *ok [0-9]+' "$logs/s3-tap.log")
	tf=$(count '^ *not ok [0-9]+' "$logs/s3-tap.log")
	if [ "$rc" -ne 0 ]; then
		[ "$tf" -gt 0 ] || tf=1
		for l in "$work"/tap_s3/tmp_check/log/*; do
			[ -f "$l" ] || continue
			echo "----- $l (last 60 lines)"
			tail -n 60 "$l"
		done
	fi
	p=$((p + tp))
	f=$((f + tf))

	log "s3: the aws CLI lists and downloads what forst wrote; forst-sst-verify checks it"
	# the TAP tests of the default list write under tap-$run; those chosen
	# with FORST_S3_TAP_TESTS may write nothing there
	if [ -n "${FORST_S3_TAP_TESTS:-}" ]; then
		run_logged "$logs/s3-verify.log" s3_verify_objects "regress-$run"
	else
		run_logged "$logs/s3-verify.log" s3_verify_objects "regress-$run" "tap-$run"
	fi
	read -r tp tf <<<"$(last_counts "$logs/s3-verify.log")"
	[ "$rc" -eq 0 ] || [ "$tf" -gt 0 ] || tf=1
	p=$((p + tp))
	f=$((f + tf))
}

# s3_verify_objects PREFIX...: lists and downloads each prefix with the aws
# CLI and checks the copy with build/forst-sst-verify.
s3_verify_objects()
{
	local aws pfx n cfg="$work/s3/aws.config"

	aws=$(command -v /usr/bin/aws || command -v aws)
	forst_make -s build/forst-sst-verify || return 1
	printf '[default]\nregion = %s\ns3 =\n    addressing_style = path\n' \
		"${AWS_REGION:-us-east-1}" >"$cfg"
	for pfx in "$@"; do
		AWS_CONFIG_FILE="$cfg" AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_PAGER="" \
			"$aws" --endpoint-url "$S3_ENDPOINT" s3 ls --recursive "s3://$S3_BUCKET/$pfx/" \
			>"$work/s3/ls-$pfx.out" ||
			{ echo "not ok - aws s3 ls s3://$S3_BUCKET/$pfx/ failed (an empty prefix fails too)"; return 1; }
		n=$(grep -c '\.sst$' "$work/s3/ls-$pfx.out" || true)
		echo "aws s3 ls: $(wc -l <"$work/s3/ls-$pfx.out") objects under $pfx/, $n SST files"
		[ "$n" -gt 0 ] || { echo "not ok - forst wrote SST files under $pfx/"; return 1; }
		AWS_CONFIG_FILE="$cfg" AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_PAGER="" \
			"$aws" --endpoint-url "$S3_ENDPOINT" s3 cp --only-show-errors --recursive \
			"s3://$S3_BUCKET/$pfx/" "$work/s3/download/$pfx/" || return 1
	done
	"$FORST_ROOT/build/forst-sst-verify" "$work/s3/download" >"$work/s3/verify.out"
	grep -v '^ok - ' "$work/s3/verify.out" || true
	tail -n 1 "$work/s3/verify.out" | grep -qE '^[0-9]+ passed, 0 failed$'
}

started=$SECONDS
forst_install_deps
if wants s3; then
	if [ "${FORST_S3_SERVER:-rgw}" = rgw ]; then
		forst_install_deps "${FORST_S3_PACKAGES[@]}"
	else
		forst_install_deps awscli curl
	fi
fi
forst_ensure_pg_user

work=$(forst_user_tmpdir forst-test)
logs="$work/logs"
mkdir -p "$logs"
log "work directory: $work"

pgxs_dir=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
pg_regress="$pgxs_dir/src/test/regress/pg_regress"
pg_isolation_regress="$pgxs_dir/src/test/isolation/pg_isolation_regress"
bindir=$("$PG_CONFIG" --bindir)
if wants regress || wants isolation || wants tap || wants s3 || wants pipeline; then
	# forst is installed into a private copy of PostgreSQL in the work
	# directory, never system-wide: checkouts on one machine cannot load
	# each other's builds, and tests need no root.
	log "build: make; install into $work/pg (a private copy of PostgreSQL 15)"
	bindir=$(forst_build_private_install "$work/pg")
fi
user_path="$bindir:/usr/local/bin:/usr/bin:/bin"

if wants regress || wants isolation || wants tap; then
	# What the PostgreSQL tests need, readable by the server user.
	(cd "$FORST_ROOT" && cp -r --parents sql expected specs t test/forst.conf "$work/")
	! is_root || chown -R "$FORST_TEST_USER:" "$work"
fi

! wants unit || step_unit
! wants fuzz || step_fuzz
! wants regress || step_regress
! wants isolation || step_isolation
! wants tap || step_tap
! wants s3 || step_s3
! wants pipeline || step_pipeline

echo
log "summary ($((SECONDS - started))s)"
printf '  %s\n' "${summary[@]}"
if [ "$total_failed" -gt 0 ]; then
	for l in "$logs"/*.log; do
		note_failures "$(basename "$l" .log)" "$l"
	done
fi
if [ "${#failures[@]}" -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failures[@]}"
fi
if [ "$total_failed" -eq 0 ] && [ -z "${FORST_KEEP_TMP:-}" ]; then
	rm -rf "$work"
else
	echo "test files and logs kept in $work"
fi
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
