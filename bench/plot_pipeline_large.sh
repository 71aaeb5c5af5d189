#!/usr/bin/env bash
# bench/plot_pipeline_large.sh RUNS.tsv [OUT.png]
# Plots a bench/pipeline_large.sh run (RUNS.tsv and the -samples.tsv and
# -mem.tsv beside it): per mode, the events processed over time, the state
# tables' bytes (forst: memtables + SST files; heap: pg_total_relation_size)
# with the memory limit and forst.cache_size as lines, the server's PSS,
# and the object store GETs per event so far.  OUT defaults to
# docs/benchmarks-pipeline-large.png.  Needs gnuplot (apt-get install
# gnuplot-nox).
set -euo pipefail
IN=${1:?runs tsv}
OUT=${2:-docs/benchmarks-pipeline-large.png}
SAMPLES=${IN%.tsv}-samples.tsv
MEM=${IN%.tsv}-mem.tsv
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$IN" "$SAMPLES" "$MEM" "$DIR" <<'PY'
import csv, sys
from collections import defaultdict
runs_tsv, samples_tsv, mem_tsv, out = sys.argv[1:5]
runs = list(csv.DictReader(open(runs_tsv), delimiter='\t'))
samp, mem = defaultdict(list), defaultdict(list)
for r in csv.DictReader(open(samples_tsv), delimiter='\t'):
    samp[r['mode']].append(r)
for r in csv.DictReader(open(mem_tsv), delimiter='\t'):
    mem[r['mode']].append((float(r['t_s']), int(r['pss'])))
limit = cache = 0
with open(out + '/runs.txt', 'w') as idx:
    for i, r in enumerate(runs):
        m = r['mode']
        with open('%s/s%d.dat' % (out, i), 'w') as f:
            for s in samp[m]:
                n = int(s['last_id'])
                f.write('%s %.4f %.3f %.4f\n' % (s['t_s'], n / 1e6, int(s['state_bytes']) / 1e6,
                                                 int(s['store_gets']) / n if n else 0))
        with open('%s/m%d.dat' % (out, i), 'w') as f:
            for t, p in mem[m]:
                f.write('%.3f %.3f\n' % (t, p / 1e6))
        limit = max(limit, int(r['memory_limit']))
        cache = max(cache, int(r['cache_size']))
        idx.write('%d\t%s\t%s\t%s\n' % (i, m, r['base'], '%s: %s events/s%s' % (
            m, '{:,}'.format(int(r['events_per_s'])), '' if r['complete'] == '1' else ' (partial)')))
open(out + '/limits.txt', 'w').write('%.3f %.3f\n' % (limit / 1e6, cache / 1e6))
PY
colors() { case "$1" in s3) echo '#d62728' ;; local) echo '#1f77b4' ;; heap) echo '#7f7f7f' ;; *) echo '#2ca02c' ;; esac; }
read -r limit cache <"$DIR/limits.txt"
p1='' p2='' p3='' p4=''
while IFS=$'\t' read -r i mode base title; do
	c=$(colors "$base")
	dt=1
	[ "$mode" = "$base" ] || dt=2
	p1+="${p1:+, }\"$DIR/s$i.dat\" using 1:2 with lines lw 2 dt $dt lc rgb \"$c\" title \"$title\""
	p2+="${p2:+, }\"$DIR/s$i.dat\" using 1:3 with lines lw 2 dt $dt lc rgb \"$c\" title \"$mode\""
	p3+="${p3:+, }\"$DIR/m$i.dat\" using 1:2 with lines lw 2 dt $dt lc rgb \"$c\" title \"$mode\""
	[ "$base" = heap ] || p4+="${p4:+, }\"$DIR/s$i.dat\" using 1:4 with lines lw 2 dt $dt lc rgb \"$c\" title \"$mode\""
done <"$DIR/runs.txt"
gnuplot <<EOF
set terminal pngcairo size 1200,820 font "DejaVu Sans,10" noenhanced
set output "$OUT"
set multiplot layout 2,2 title "Streaming job with a large state (bench/pipeline_large.sh): forst on S3 vs forst on file:// vs heap (2 vCPUs, shared)"
set grid
set xlabel "seconds since the job started"
set key top left
set title "progress"
set ylabel "events processed, millions"
plot $p1
set title "state tables (memory limit and S3 cache as lines)"
set ylabel "MB"
set key top left
plot $p2, $limit with lines lc rgb "#000000" dt 3 title "memory limit", $cache with lines lc rgb "#d62728" dt 3 title "forst.cache_size (s3)"
set title "server memory (sum of PSS)"
set ylabel "MB"
plot $p3, $limit with lines lc rgb "#000000" dt 3 title "memory limit"
set title "object store GETs per event so far (forst)"
set ylabel "GETs per event"
plot ${p4:-0 notitle}
unset multiplot
EOF
echo "written: $OUT" >&2
