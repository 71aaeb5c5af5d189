#!/usr/bin/env bash
# bench/plot_pipeline.sh SAMPLES.tsv OUT.png
# Plots a bench/pipeline_vs_heap.sh run: the state tables' bytes over time
# (forst: memtables + SST files; heap: pg_total_relation_size; log scale),
# one line per run, and the events processed over time.  Needs gnuplot
# (apt-get install gnuplot-nox).
set -euo pipefail
IN=${1:?samples tsv}
OUT=${2:?output png}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$IN" "$DIR" <<'PY'
import csv, sys
from collections import defaultdict
inp, out = sys.argv[1:3]
per = defaultdict(list)
for r in csv.DictReader(open(inp), delimiter='\t'):
    per[(r['mode'], r['round'])].append((float(r['t_s']), int(r['state_bytes']), int(r['last_id'])))
with open(out + '/runs.txt', 'w') as idx:
    for i, ((mode, rnd), pts) in enumerate(sorted(per.items())):
        fn = '%s/run%d.dat' % (out, i)
        with open(fn, 'w') as f:
            for t, b, n in pts:
                f.write('%.3f %.4f %.4f\n' % (t, b / 1048576, n / 1e6))
        idx.write('%s\t%s round %s\t%s\n' % (fn, mode, rnd, mode))
PY
colors() { case "$1" in forst) echo '#1f77b4' ;; heap) echo '#7f7f7f' ;; *) echo '#d62728' ;; esac; }
p1='' p2=''
while IFS=$'\t' read -r fn title mode; do
	dt=1
	case "$title" in *"round 2"* | *"round 4"*) dt=2 ;; esac
	p1+="${p1:+, }\"$fn\" using 1:2 with lines lw 2 dt $dt lc rgb \"$(colors "$mode")\" title \"$title\""
	p2+="${p2:+, }\"$fn\" using 1:3 with lines lw 2 dt $dt lc rgb \"$(colors "$mode")\" title \"$title\""
done <"$DIR/runs.txt"
gnuplot <<EOF
set terminal pngcairo size 1100,480 font "DejaVu Sans,10" noenhanced
set output "$OUT"
set multiplot layout 1,2 title "Streaming pipeline (scripts/pipeline.sql): state in forst tables vs heap tables (2 vCPUs, shared)"
set grid
set key top left
set xlabel "seconds since the job started"
set ylabel "state tables, MB (log scale)"
set logscale y
set yrange [0.3:*]
set key bottom right
set title "state size over time"
plot $p1
unset logscale y
set yrange [0:*]
set ylabel "events processed, millions"
set title "progress"
plot $p2
unset multiplot
EOF
echo "written: $OUT" >&2
