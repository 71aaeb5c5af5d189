#!/usr/bin/env bash
# scripts/rgw.sh -- a throwaway single-node Ceph RADOS Gateway on 127.0.0.1,
# the strict S3 server of forst's tests (it checks SigV4 signatures and
# Content-MD5, and implements conditional writes).
#
#   scripts/rgw.sh start DIR [PORT]   start mon + memstore OSD + radosgw,
#                                     S3 on 127.0.0.1:PORT (default: a free
#                                     port from 54420); create the test user
#                                     and bucket; print the client
#                                     environment: eval "$(scripts/rgw.sh start DIR)"
#   scripts/rgw.sh stop DIR           stop what start started in DIR
#   scripts/rgw.sh env DIR            print the client environment again
#
# Needs: apt-get install --no-install-recommends ceph-mon ceph-osd radosgw
# Everything (configuration, monitor store, sockets, logs) lives in DIR;
# objects live in the OSD's memory (memstore, RGW_MEMSTORE_BYTES, default
# 1 GiB; RGW frees deleted objects' data only at its garbage collection,
# hours later, so benchmarks that upload much ask for more).  Ports: PORT (S3),
# PORT+1 (monitor), PORT+2 .. PORT+40 (OSD).  Runs as root or as any user.
# Settings (environment): S3_BUCKET (forst-test), RGW_ACCESS_KEY and
# RGW_SECRET_KEY (fixed test credentials, not secrets).
set -euo pipefail

PROG=rgw.sh
BUCKET=${S3_BUCKET:-forst-test}
AK=${RGW_ACCESS_KEY:-FORSTTESTACCESSKEY}
SK=${RGW_SECRET_KEY:-forst-test-secret-key}
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

die() { echo "$PROG: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A base port whose S3 and monitor ports are free.
pick_port()
{
	local p

	for p in $(seq 54420 50 56420); do
		if port_free "$p" && port_free $((p + 1)) && port_free $((p + 2)); then
			echo "$p"
			return 0
		fi
	done
	die "no free port range found"
}

# Is pid one of our daemons (its command line names DIR's ceph.conf)?
is_ours()
{
	local pid=$1 dir=$2

	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
		tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir/ceph.conf"
}

cmd_stop()
{
	local dir=$1 n f pid

	[ -d "$dir" ] || return 0
	dir=$(cd "$dir" && pwd -P)
	for n in client.rgw.a osd.0 mon.a; do
		f="$dir/run/$n.pid"
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		is_ours "$pid" "$dir" || continue
		kill -TERM "$pid" 2>/dev/null || continue
		for _ in $(seq 1 100); do
			is_ours "$pid" "$dir" || break
			sleep 0.1
		done
		if is_ours "$pid" "$dir"; then
			note "$n (pid $pid) ignored SIGTERM for 10 s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		rm -f "$f"
	done
}

print_env()
{
	local dir=$1

	[ -s "$dir/rgw.env" ] || die "no environment in $dir (not started?)"
	cat "$dir/rgw.env"
}

cmd_start()
{
	local dir=$1 port=${2:-} mon fsid conf id t0 b

	for b in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph curl; do
		command -v "$b" >/dev/null ||
			die "$b is missing (apt-get install --no-install-recommends ceph-mon ceph-osd radosgw curl)"
	done
	[ -n "$port" ] || port=$(pick_port)
	port_free "$port" || die "127.0.0.1:$port is in use"
	mon=$((port + 1))
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd -P)
	cmd_stop "$dir"
	rm -rf "${dir:?}"/{mon,osd,run,log,rgw,ceph.conf,monmap,rgw.env}
	mkdir -p "$dir"/{mon/a,osd/0,run,log,rgw}
	# from here on, a failure (set -e) stops whatever was started
	trap 'note "start failed; logs in $dir/log"; cmd_stop "$dir"' EXIT
	fsid=$(cat /proc/sys/kernel/random/uuid)
	conf="$dir/ceph.conf"
	t0=$SECONDS
	cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$mon
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr2 = false
ms bind port min = $((port + 2))
ms bind port max = $((port + 40))
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 1
osd crush chooseleaf type = 0
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
[mon]
mon data = $dir/mon/\$id
[osd]
osd data = $dir/osd/\$id
osd objectstore = memstore
memstore device bytes = ${RGW_MEMSTORE_BYTES:-1073741824}
# placed by hand below; the automatic updates at start were refused
# with "wrong fsid" here
osd class update on start = false
osd crush update on start = false
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$port tcp_nodelay=1
rgw data = $dir/rgw
EOF
	monmaptool --create --addv a "[v1:127.0.0.1:$mon]" --fsid "$fsid" "$dir/monmap" >/dev/null
	ceph-mon --mkfs -i a --monmap "$dir/monmap" -c "$conf"
	# daemons fork; their stdio must not hold the caller's pipes open
	ceph-mon -i a -c "$conf" </dev/null >>"$dir/log/daemons.out" 2>&1
	id=$(timeout 60 ceph -c "$conf" osd create)
	ceph-osd -i "$id" --mkfs -c "$conf" </dev/null >>"$dir/log/daemons.out" 2>&1
	ceph -c "$conf" osd crush add-bucket localhost host >/dev/null 2>&1
	ceph -c "$conf" osd crush move localhost root=default >/dev/null 2>&1
	ceph -c "$conf" osd crush add "osd.$id" 1.0 host=localhost >/dev/null 2>&1
	ceph-osd -i "$id" -c "$conf" </dev/null >>"$dir/log/daemons.out" 2>&1
	radosgw -n client.rgw.a -c "$conf" </dev/null >>"$dir/log/daemons.out" 2>&1
	for _ in $(seq 1 480); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && break
		sleep 0.25
	done
	curl -s -o /dev/null "http://127.0.0.1:$port/" || false
	timeout 60 radosgw-admin -c "$conf" user create --uid=forst --display-name=forst \
		--access-key="$AK" --secret-key="$SK" >/dev/null
	# curl signs (SigV4) but does not send the payload hash: add it
	b=$(curl -s -o "$dir/log/create-bucket.out" -w '%{http_code}' -X PUT \
		--aws-sigv4 aws:amz:us-east-1:s3 --user "$AK:$SK" \
		-H "x-amz-content-sha256: $EMPTY_SHA256" "http://127.0.0.1:$port/$BUCKET")
	[ "$b" = 200 ] || { note "creating bucket $BUCKET: HTTP $b"; false; }
	trap - EXIT
	cat >"$dir/rgw.env" <<EOF
export S3_ENDPOINT=http://127.0.0.1:$port
export S3_BUCKET=$BUCKET
export AWS_ENDPOINT_URL=http://127.0.0.1:$port
export AWS_ACCESS_KEY_ID=$AK
export AWS_SECRET_ACCESS_KEY=$SK
export AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
EOF
	note "radosgw on 127.0.0.1:$port, bucket $BUCKET, up in $((SECONDS - t0)) s; logs in $dir/log"
	print_env "$dir"
}

case "${1:-}" in
	start) [ $# -ge 2 ] || usage; cmd_start "$2" "${3:-}" ;;
	stop) [ $# -eq 2 ] || usage; cmd_stop "$2" ;;
	env) [ $# -eq 2 ] || usage; print_env "$2" ;;
	*) usage ;;
esac
