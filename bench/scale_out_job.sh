#!/usr/bin/env bash
# bench/scale_out_job.sh — the demo's streaming job on one server and on
# SERVERS servers rescaled to SERVERS + 1 and back (docs/scale-out.md, "The
# main job on several servers"): events per second per server, the time
# from a barrier to the new layout, and what a rescale writes.
#
#   bash bench/scale_out_job.sh                    EVENTS=6000000, SERVERS=2
#   EVENTS=2000000 bash bench/scale_out_job.sh     a quick run
#
# Runs scripts/demo.sh --servers SERVERS --backlog --events EVENTS: each
# server's generator writes the whole log before its job starts (a topic
# with a backlog), so that the job runs alone and as fast as it can; run 1
# on one server is the baseline, side by side.  The job's verification
# must say PASS (the outputs of both runs equal, and equal to the
# recomputation).  All servers share the machine's 2 cores: with two
# instances the job can use both, with three they share them.
# Results: bench/results/scale-out-job-<stamp>.md (the lines of the run
# that carry the measures) and .log (all of it).
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib.sh

EVENTS=${EVENTS:-6000000}
SERVERS=${SERVERS:-2}
stamp=$(date -u +%Y%m%d-%H%M%S)
out=bench/results/scale-out-job-$stamp.md
full=bench/results/scale-out-job-$stamp.log
mkdir -p bench/results

log "scripts/demo.sh --servers $SERVERS --backlog --events $EVENTS (all output: $full)"
rc=0
bash scripts/demo.sh --servers "$SERVERS" --backlog --events "$EVENTS" >"$full" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '^PASS: ' "$full"; then
	tail -n 40 "$full"
	die "the job failed (exit status $rc; all output in $full)"
fi

{
	echo "# The demo's job on one server and on $SERVERS servers, rescaled to $((SERVERS + 1)) and back ($stamp)"
	echo
	echo "\`EVENTS=$EVENTS SERVERS=$SERVERS bash bench/scale_out_job.sh\` on $(nproc) cores, forst $(git describe --always --dirty)."
	echo "Each server's log was generated before its job started (--backlog)."
	echo
	echo '```'
	grep -E '^(  phase [0-9]|  rescale to|  distributed checkpoint|  restored in|    s[0-9]  |PASS)' "$full" | awk '!seen[$0]++'
	echo '```'
} >"$out"
cat "$out"
log "results: $out"
