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
# RGW_SECRET_KEY (fixed test credentials, not secrets), RGW_WAIT_SECONDS
# (180: each wait for a daemon; radosgw gets twice as long).
# A start that fails names its step and shows the logs' last lines, then
# is tried once more.
set -euo pipefail

PROG=rgw.sh
BUCKET=${S3_BUCKET:-forst-test}
AK=${RGW_ACCESS_KEY:-FORSTTESTACCESSKEY}
SK=${RGW_SECRET_KEY:-forst-test-secret-key}
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
# seconds each wait may take (a monitor, an OSD, the CLI); radosgw gets
# twice as long.  Sized for a loaded 2-core machine, where a first start
# (Python compiling the ceph CLI, radosgw creating its pools) takes minutes.
WAIT=${RGW_WAIT_SECONDS:-180}

die() { echo "$PROG: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

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

# What a start attempt is doing, for the report when it fails: the step's
# name, the file its command's output went to and the daemon log that says
# more.  Globals, because the EXIT and ERR traps that read them run when the
# function that set them may be gone.
START_DIR=""
STEP=""
STEP_OUT=""
STEP_LOG=""

# tail_of FILE: FILE's last lines, indented, if it has any.
tail_of()
{
	[ -s "$1" ] || return 0
	echo "$PROG: --- last lines of $1" >&2
	tail -n "${RGW_LOG_LINES:-25}" "$1" | sed 's/^/    /' >&2
}

# step NAME [LOG]: the attempt's next step; its command's output goes to a
# file of its own, LOG is the daemon log to show too if the step fails.
step()
{
	STEP=$1
	STEP_OUT="$START_DIR/log/step-$(echo "$1" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '-').out"
	STEP_LOG=${2:-}
	: >"$STEP_OUT"
}

# The report of a failed attempt: which step failed, its output and the
# daemon logs, then whatever the attempt started is stopped.
attempt_failed()
{
	local rc=$1

	trap - EXIT ERR
	[ "$rc" -ne 0 ] || return 0
	note "start failed at step \"$STEP\" (exit status $rc); logs in $START_DIR/log"
	tail_of "$STEP_OUT"
	[ -z "$STEP_LOG" ] || tail_of "$STEP_LOG"
	tail_of "$START_DIR/log/daemons.out"
	cmd_stop "$START_DIR"
	exit "$rc"
}

# wait_for SECONDS WHAT CMD...: runs CMD every second until it succeeds;
# fails after SECONDS, or at once when the daemon whose pid file is
# $PIDFILE (if set) has died.
wait_for()
{
	local limit=$1 what=$2 t0=$SECONDS pid

	shift 2
	until "$@" >>"$STEP_OUT" 2>&1; do
		if [ -n "${PIDFILE:-}" ] && [ -s "$PIDFILE" ]; then
			pid=$(cat "$PIDFILE")
			is_ours "$pid" "$START_DIR" || { note "$what: the daemon (pid $pid) exited"; return 1; }
		fi
		if [ $((SECONDS - t0)) -ge "$limit" ]; then
			note "$what: not ready after $limit s (RGW_WAIT_SECONDS raises the limit)"
			return 1
		fi
		sleep 1
	done
}

# retry SECONDS CMD...: CMD until it succeeds, at most SECONDS; its output
# on stdout, its errors in the step's file.  For idempotent commands only.
retry()
{
	local limit=$1 t0=$SECONDS

	shift
	until "$@" 2>>"$STEP_OUT"; do
		if [ $((SECONDS - t0)) -ge "$limit" ]; then
			note "$*: still failing after $limit s"
			return 1
		fi
		sleep 1
	done
}

# ceph_cli ARGS...: the ceph CLI on DIR's cluster, bounded in time (its own
# default is to wait 5 minutes for a monitor).
ceph_cli()
{
	timeout "$WAIT" ceph -c "$START_DIR/ceph.conf" --connect-timeout "$WAIT" "$@"
}

# The OSD is up and in, and the cluster has placed its placement groups.
osd_up()
{
	ceph_cli osd dump | grep -q '^osd\.[0-9]* up  *in '
}

http_up() { curl -s -m 5 -o /dev/null "http://127.0.0.1:$1/"; }

# attempt DIR PORT: one start, in a process of its own (bash's set -e does
# not stop a function whose status is tested); exits non-zero after
# reporting the step that failed.
cmd_attempt()
{
	local dir=$1 port=$2 mon fsid conf id b osd_uuid

	mon=$((port + 1))
	START_DIR=$dir
	cmd_stop "$dir"
	rm -rf "${dir:?}"/{mon,osd,run,log,rgw,ceph.conf,monmap,rgw.env}
	mkdir -p "$dir"/{mon/a,osd/0,run,log,rgw}
	# from here on, a failure (set -e) reports its step and stops whatever
	# was started
	trap 'attempt_failed $?' EXIT
	fsid=$(cat /proc/sys/kernel/random/uuid)
	conf="$dir/ceph.conf"
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
# a loaded machine: give the first requests to the new pools time
rgw init timeout = $((WAIT * 2))
EOF
	step "creating the monitor map and store" "$dir/log/mon.a.log"
	monmaptool --create --addv a "[v1:127.0.0.1:$mon]" --fsid "$fsid" "$dir/monmap" >>"$STEP_OUT" 2>&1
	ceph-mon --mkfs -i a --monmap "$dir/monmap" -c "$conf" >>"$STEP_OUT" 2>&1
	step "starting the monitor" "$dir/log/mon.a.log"
	# daemons fork; their stdio must not hold the caller's pipes open
	ceph-mon -i a -c "$conf" </dev/null >>"$dir/log/daemons.out" 2>&1
	PIDFILE="$dir/run/mon.a.pid" wait_for "$WAIT" "the monitor on 127.0.0.1:$mon" ceph_cli mon stat
	step "creating the OSD" "$dir/log/mon.a.log"
	# A monitor that answers "mon stat" may still refuse the next command
	# ("EPERM: problem getting command descriptions", seen on the first
	# start on a fresh machine): retried.  With its uuid, "osd create" is
	# idempotent, as the crush commands are.
	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	id=$(retry "$WAIT" ceph_cli osd create "$osd_uuid")
	ceph-osd -i "$id" --mkfs --osd-uuid "$osd_uuid" -c "$conf" </dev/null >>"$STEP_OUT" 2>&1
	retry "$WAIT" ceph_cli osd crush add-bucket localhost host >>"$STEP_OUT"
	retry "$WAIT" ceph_cli osd crush move localhost root=default >>"$STEP_OUT"
	retry "$WAIT" ceph_cli osd crush add "osd.$id" 1.0 host=localhost >>"$STEP_OUT"
	step "starting the OSD" "$dir/log/osd.$id.log"
	ceph-osd -i "$id" -c "$conf" </dev/null >>"$dir/log/daemons.out" 2>&1
	PIDFILE="$dir/run/osd.$id.pid" wait_for "$WAIT" "osd.$id up" osd_up
	step "starting radosgw on 127.0.0.1:$port" "$dir/log/client.rgw.a.log"
	radosgw -n client.rgw.a -c "$conf" </dev/null >>"$dir/log/daemons.out" 2>&1
	# radosgw creates its pools before it listens: the longest wait
	PIDFILE="$dir/run/client.rgw.a.pid" wait_for $((WAIT * 2)) "radosgw on 127.0.0.1:$port" http_up "$port"
	step "creating the test user" "$dir/log/client.rgw.a.log"
	timeout "$WAIT" radosgw-admin -c "$conf" user create --uid=forst --display-name=forst \
		--access-key="$AK" --secret-key="$SK" >>"$STEP_OUT" 2>&1
	step "creating bucket $BUCKET" "$dir/log/client.rgw.a.log"
	# curl signs (SigV4) but does not send the payload hash: add it
	b=$(curl -s -m "$WAIT" -o "$STEP_OUT" -w '%{http_code}' -X PUT \
		--aws-sigv4 aws:amz:us-east-1:s3 --user "$AK:$SK" \
		-H "x-amz-content-sha256: $EMPTY_SHA256" "http://127.0.0.1:$port/$BUCKET" || true)
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
}

# start DIR [PORT]: an attempt, and when it fails a second one (on another
# free port unless PORT was given): a first start on a fresh or loaded
# machine can miss a wait that a second one makes.  The failed attempt's
# logs are kept in DIR/log.failed.
cmd_start()
{
	local dir=$1 port=${2:-} t0=$SECONDS n b

	for b in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph curl timeout; do
		command -v "$b" >/dev/null ||
			die "$b is missing (apt-get install --no-install-recommends ceph-mon ceph-osd radosgw curl)"
	done
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd -P)
	for n in 1 2; do
		if [ -n "${2:-}" ]; then
			port_free "$port" || die "127.0.0.1:$port is in use"
		else
			port=$(pick_port)
		fi
		if "$BASH" "$0" attempt "$dir" "$port"; then
			note "radosgw on 127.0.0.1:$port, bucket $BUCKET, up in $((SECONDS - t0)) s; logs in $dir/log"
			print_env "$dir"
			return 0
		fi
		rm -rf "$dir/log.failed"
		mv "$dir/log" "$dir/log.failed" 2>/dev/null || true
		[ "$n" -eq 2 ] || note "attempt $n failed after $((SECONDS - t0)) s; trying once more (its logs: $dir/log.failed)"
	done
	die "could not start radosgw in two attempts ($((SECONDS - t0)) s); logs of the last one in $dir/log.failed"
}

case "${1:-}" in
	start) [ $# -ge 2 ] || usage; cmd_start "$2" "${3:-}" ;;
	attempt) [ $# -eq 3 ] || usage; cmd_attempt "$2" "$3" ;;
	stop) [ $# -eq 2 ] || usage; cmd_stop "$2" ;;
	env) [ $# -eq 2 ] || usage; print_env "$2" ;;
	*) usage ;;
esac
