#!/usr/bin/env bash
# scripts/s3-server.sh -- a fast, lenient S3 server for tests: s3rver (npm)
# on 127.0.0.1.
#
#   scripts/s3-server.sh start DIR [PORT]   start s3rver with its data, log
#                                           and pid file in DIR (PORT default:
#                                           a free one from 54320), create the
#                                           bucket, print the client
#                                           environment:
#                                             eval "$(scripts/s3-server.sh start DIR)"
#   scripts/s3-server.sh stop DIR           stop it
#
# Needs node >= 18 with npm; s3rver is installed once into build/s3rver of
# the repository (S3RVER_CACHE to change that).  s3rver checks neither
# signatures nor conditional writes (If-None-Match is ignored: a
# create-if-absent silently overwrites), so tests of those must run against
# scripts/rgw.sh; the environment printed says so to test/unit/test_s3.c
# with FORST_S3_TEST_SERVER=s3rver.
# Settings (environment): S3_BUCKET (forst-test), S3RVER_PACKAGE
# (s3rver@3.7.1).
set -euo pipefail

PROG=s3-server.sh
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG=${S3RVER_PACKAGE:-s3rver@3.7.1}
CACHE=${S3RVER_CACHE:-$ROOT/build/s3rver}
BUCKET=${S3_BUCKET:-forst-test}

die() { echo "$PROG: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

is_ours()
{
	local pid=$1 dir=$2

	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
		tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir/data"
}

install_s3rver()
{
	[ -f "$CACHE/node_modules/s3rver/package.json" ] && return 0
	command -v npm >/dev/null || die "npm is missing (node >= 18 with npm is needed)"
	mkdir -p "$CACHE"
	note "installing $PKG into $CACHE"
	[ -f "$CACHE/package.json" ] || echo '{"name":"forst-s3rver","private":true}' >"$CACHE/package.json"
	(cd "$CACHE" && npm install --no-audit --no-fund --loglevel=error \
		--cache "$CACHE/.npm" "$PKG") >"$CACHE/npm-install.log" 2>&1 ||
		{ cat "$CACHE/npm-install.log" >&2; die "npm install $PKG failed"; }
}

cmd_start()
{
	local dir=$1 port=${2:-} p pid

	command -v node >/dev/null || die "node is missing"
	install_s3rver
	if [ -z "$port" ]; then
		for p in $(seq 54320 54419); do
			if port_free "$p"; then port=$p; break; fi
		done
		[ -n "$port" ] || die "no free port in 54320-54419"
	fi
	port_free "$port" || die "127.0.0.1:$port is in use"
	mkdir -p "$dir/data"
	dir=$(cd "$dir" && pwd -P)
	cmd_stop "$dir"
	cat >"$dir/launch.js" <<'JS'
'use strict';
const fs = require('fs');
const [pkgDir, dataDir, port, bucket, pidFile] = process.argv.slice(2);
fs.writeFileSync(pidFile, String(process.pid) + '\n');
const S3rver = require(pkgDir);
process.on('SIGTERM', () => process.exit(0));
new S3rver({ directory: dataDir, address: '127.0.0.1', port: Number(port),
	silent: true, configureBuckets: [{ name: bucket, configs: [] }] })
	.run()
	.then(() => console.log('listening'))
	.catch((e) => { console.error(e); process.exit(1); });
JS
	# --openssl-legacy-provider: s3rver encrypts continuation tokens with
	# DES, which OpenSSL 3 keeps in its legacy provider
	setsid node --openssl-legacy-provider "$dir/launch.js" "$CACHE/node_modules/s3rver" \
		"$dir/data" "$port" "$BUCKET" "$dir/s3rver.pid" \
		</dev/null >"$dir/s3rver.log" 2>&1 &
	for _ in $(seq 1 300); do
		grep -q '^listening' "$dir/s3rver.log" 2>/dev/null && break
		if [ -s "$dir/s3rver.pid" ] && ! is_ours "$(cat "$dir/s3rver.pid")" "$dir"; then
			cat "$dir/s3rver.log" >&2
			die "s3rver exited"
		fi
		sleep 0.1
	done
	grep -q '^listening' "$dir/s3rver.log" || { cmd_stop "$dir"; die "s3rver did not start"; }
	cat >"$dir/s3.env" <<EOF
export S3_ENDPOINT=http://127.0.0.1:$port
export S3_BUCKET=$BUCKET
export AWS_ENDPOINT_URL=http://127.0.0.1:$port
export AWS_ACCESS_KEY_ID=S3RVER
export AWS_SECRET_ACCESS_KEY=S3RVER
export AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
export FORST_S3_TEST_SERVER=s3rver
EOF
	note "s3rver on 127.0.0.1:$port, bucket $BUCKET, data in $dir/data"
	cat "$dir/s3.env"
}

cmd_stop()
{
	local dir=$1 pid

	[ -d "$dir" ] || return 0
	dir=$(cd "$dir" && pwd -P)
	[ -s "$dir/s3rver.pid" ] || return 0
	pid=$(cat "$dir/s3rver.pid")
	if is_ours "$pid" "$dir"; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			is_ours "$pid" "$dir" || break
			sleep 0.1
		done
		! is_ours "$pid" "$dir" || kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/s3rver.pid"
}

case "${1:-}" in
	start) [ $# -ge 2 ] || usage; cmd_start "$2" "${3:-}" ;;
	stop) [ $# -eq 2 ] || usage; cmd_stop "$2" ;;
	*) usage ;;
esac
