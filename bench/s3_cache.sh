#!/usr/bin/env bash
# bench/s3_cache.sh -- forst on S3 next to forst on file:// (issue 4):
#
#  1. reads: bench/cache_server.sh (point reads and --scan range scans on a
#     Zipf key distribution; no cache, cold and warm cache of 10% of the
#     SST bytes, everything cached) once with the default file:// store and
#     once with forst.remote_dir on S3 (through FORST_BENCH_CONF), the two
#     alternating for --rounds rounds;
#  2. uploads: the same files (--files8 of 8 MB, an SST of a default
#     memtable, and --files64 of 64 MB) put by forst's store
#     (build/bench_s3_upload, create-if-absent one after the other, as the
#     flush worker does) and by `aws s3 cp --recursive` (its defaults: 10
#     requests in parallel, multipart from 8 MiB; and with
#     max_concurrent_requests = 1), alternating, --rounds rounds.
#
#   bench/s3_cache.sh [--rows N] [--seconds S] [--scan N] [--rounds R] [--zipf Z]
#                     [--windows W]     (bench/cache_server.sh --windows: keys with
#                                        W windows each; scans read one key)
#                     [--files8 N] [--files64 N] [--skip-reads] [--skip-uploads]
#                     [--prefetch-ab]   (reads on s3 with forst.scan_prefetch on
#                                        and off instead of file:// and s3)
#                     [--pin]           (bench/cache_server.sh --pin: each client
#                                        and its backend pinned to one CPU)
#
# The S3 server: the one in S3_ENDPOINT / S3_BUCKET / AWS_ACCESS_KEY_ID /
# AWS_SECRET_ACCESS_KEY if set, else a throwaway Ceph RGW (scripts/rgw.sh,
# 4 GiB memstore).  Results go to bench/results/s3-<timestamp>.{md,tsv}
# (reads) and s3-upload-<timestamp>.tsv; bench/plot_s3.sh plots them.
# Defaults: 300,000 rows, 15 s per run, scans of 100 rows, Zipf 1.1
# (pgbench's random_zipfian; larger is more skewed), 2 rounds,
# 24 x 8 MB and 3 x 64 MB.  The machine's load average is recorded with
# every run: on a shared machine compare within a round.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

rows=300000
seconds=15
scan=100
windows=0
zipf=1.1
stores="file s3"
rounds=2
files8=24
files64=3
do_reads=1
do_uploads=1
pin=""
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift ;;
		--seconds) seconds=$2; shift ;;
		--scan) scan=$2; shift ;;
		--windows) windows=$2; shift ;;
		--zipf) zipf=$2; shift ;;
		--rounds) rounds=$2; shift ;;
		--files8) files8=$2; shift ;;
		--files64) files64=$2; shift ;;
		--skip-reads) do_reads=0 ;;
		--skip-uploads) do_uploads=0 ;;
		--prefetch-ab) stores="s3 s3-noprefetch" ;;
		--pin) pin=--pin ;;
		-h | --help) forst_usage "${BASH_SOURCE[0]}"; exit 0 ;;
		*) forst_usage "${BASH_SOURCE[0]}" >&2; exit 2 ;;
	esac
	shift
done

ts=$(date -u +%Y%m%d-%H%M%S)
results="$root/bench/results"
mkdir -p "$results"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/forst-s3bench.XXXXXX")
rgw_dir=""
cleanup()
{
	[ -z "$rgw_dir" ] || bash "$root/scripts/rgw.sh" stop "$rgw_dir" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ -z "${S3_ENDPOINT:-}" ]; then
	rgw_dir="$tmp/rgw"
	log "starting Ceph RGW (scripts/rgw.sh)"
	eval "$(RGW_MEMSTORE_BYTES=$((4 << 30)) bash "$root/scripts/rgw.sh" start "$rgw_dir")"
fi
: "${S3_BUCKET:?}" "${AWS_ACCESS_KEY_ID:?}" "${AWS_SECRET_ACCESS_KEY:?}"
load() { cut -d' ' -f1 /proc/loadavg; }

# ---- reads ---------------------------------------------------------------
if [ "$do_reads" -eq 1 ]; then
	md="$results/s3-$ts.md"
	tsv="$results/s3-$ts.tsv"
	printf 'round\tstore\trun\tworkload\tops\tload\n' >"$tsv"
	{
		echo "# bench/s3_cache.sh reads, $ts"
		echo
		echo "rows $rows, ${seconds}s per run, $([ "$windows" -gt 0 ] && echo "$windows windows per key, scans of one key's windows" || echo "scans of $scan rows"), Zipf $zipf${pin:+, clients pinned}; S3: $S3_ENDPOINT"
	} >"$md"
	for ((r = 1; r <= rounds; r++)); do
		for store in $stores; do
			conf="$tmp/conf-$store-$r"
			: >"$conf"
			if [ "$store" = s3-noprefetch ]; then
				echo "forst.scan_prefetch = off" >"$conf"
			fi
			if [ "$store" != file ]; then
				cat >>"$conf" <<EOF
forst.remote_dir = 's3://$S3_BUCKET/bench-$ts-$store-$r'
forst.s3_endpoint = '$S3_ENDPOINT'
forst.s3_access_key_id = '$AWS_ACCESS_KEY_ID'
forst.s3_secret_access_key = '$AWS_SECRET_ACCESS_KEY'
EOF
			fi
			chmod 644 "$conf"
			log "reads: round $r, $store (load $(load))"
			out=$(FORST_BENCH_CONF=$conf bash "$root/bench/cache_server.sh" \
				--rows "$rows" --seconds "$seconds" --zipf "$zipf" $pin \
				$([ "$windows" -gt 0 ] && echo "--windows $windows" || echo "--scan $scan"))
			{
				echo
				echo "## round $r, $store (load average at the end: $(load))"
				printf '%s\n' "$out"
			} >>"$md"
			printf '%s\n' "$out" | sed -n 's/^| \([^|]*\) | \([0-9.]*\) |.*/\1|\2/p' |
				while IFS='|' read -r run ops; do
					wl=point
					case "$run" in *", scans of"*) wl=scan; run=${run%%, scans of*} ;; esac
					printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$store" "$run" "$wl" "$ops" "$(load)"
				done >>"$tsv"
		done
	done
	log "reads: $md, $tsv"
fi

# ---- uploads -------------------------------------------------------------
if [ "$do_uploads" -eq 1 ]; then
	forst_make -s build/bench_s3_upload
	utsv="$results/s3-upload-$ts.tsv"
	printf 'round\tfiles\ttool\tbytes\tseconds\tMBps\tload\n' >"$utsv"
	mkdir -p "$tmp/f8" "$tmp/f64"
	for ((i = 1; i <= files8; i++)); do head -c 8000000 /dev/urandom >"$tmp/f8/sst$i"; done
	for ((i = 1; i <= files64; i++)); do head -c 64000000 /dev/urandom >"$tmp/f64/sst$i"; done
	aws=$(command -v aws)
	printf '[default]\nregion = %s\ns3 =\n    addressing_style = path\n' \
		"${AWS_REGION:-us-east-1}" >"$tmp/aws-par.cfg"
	printf '[default]\nregion = %s\ns3 =\n    addressing_style = path\n    max_concurrent_requests = 1\n' \
		"${AWS_REGION:-us-east-1}" >"$tmp/aws-ser.cfg"
	awsrun() { AWS_CONFIG_FILE=$1 AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_PAGER="" "$aws" --endpoint-url "$S3_ENDPOINT" "${@:2}"; }
	now() { date +%s.%N; }
	# the CLI's start-up (Python, botocore), paid once per command
	t0=$(now); awsrun "$tmp/aws-par.cfg" s3 ls "s3://$S3_BUCKET/none-$ts/" >/dev/null || true; t1=$(now)
	startup=$(echo "$t1 - $t0" | bc)
	log "uploads: aws CLI start-up and one LIST: ${startup}s"
	for ((r = 1; r <= rounds; r++)); do
		for set in f8 f64; do
			bytes=$(du -b -c "$tmp/$set"/* | tail -1 | cut -f1)
			for tool in forst aws aws-serial; do
				pfx="up-$ts-$r-$set-$tool"
				t0=$(now)
				case $tool in
					forst) "$root/build/bench_s3_upload" "s3://$S3_BUCKET/$pfx?endpoint=$S3_ENDPOINT" "$tmp/$set" --if-absent >/dev/null ;;
					aws) awsrun "$tmp/aws-par.cfg" s3 cp --only-show-errors --recursive "$tmp/$set" "s3://$S3_BUCKET/$pfx/" ;;
					aws-serial) awsrun "$tmp/aws-ser.cfg" s3 cp --only-show-errors --recursive "$tmp/$set" "s3://$S3_BUCKET/$pfx/" ;;
				esac
				t1=$(now)
				secs=$(echo "$t1 - $t0" | bc)
				mbps=$(echo "scale=1; $bytes / 1000000 / $secs" | bc)
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$set" "$tool" "$bytes" "$secs" "$mbps" "$(load)" >>"$utsv"
				log "uploads: round $r $set $tool: $mbps MB/s (load $(load))"
			done
		done
	done
	printf 'startup\t-\taws\t0\t%s\t-\t%s\n' "$startup" "$(load)" >>"$utsv"
	log "uploads: $utsv"
fi
