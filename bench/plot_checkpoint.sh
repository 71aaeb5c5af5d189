#!/usr/bin/env bash
# bench/plot_checkpoint.sh RESULTS.tsv RUNS.tsv OUT.png
# Two bar charts of a bench/checkpoint_restore.sh run, per state size (log
# scale): the median forst.checkpoint() next to PostgreSQL's CHECKPOINT
# after the same upserts, and the time to the first answers on another
# server: forst.attach next to a pg_basebackup restore.  Needs gnuplot
# (apt-get install gnuplot-nox).
set -euo pipefail
IN=${1:?results tsv}
RUNS=${2:?runs tsv}
OUT=${3:?output png}
CK=$(mktemp)
RS=$(mktemp)
trap 'rm -f "$CK" "$RS"' EXIT
python3 - "$IN" "$RUNS" "$CK" "$RS" <<'PY'
import csv, statistics, sys
sizes = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
runs = list(csv.DictReader(open(sys.argv[2]), delimiter='\t'))
with open(sys.argv[3], 'w') as ck, open(sys.argv[4], 'w') as rs:
    for s in sizes:
        r = [x for x in runs if x['size'] == s['size']]
        f = statistics.median(float(x['forst_checkpoint_ms']) for x in r)
        h = statistics.median(float(x['heap_checkpoint_ms']) for x in r)
        ck.write(f'"{s["size"]}" {f:.1f} {h:.1f}\n')
        a = float(s['attach_session_ms']) / 1000
        b = (float(s['basebackup_ms']) + float(s['restored_start_ms']) + float(s['restored_probe_ms'])) / 1000
        rs.write(f'"{s["size"]}" {a:.3f} {b:.3f}\n')
PY
gnuplot <<GP
set terminal pngcairo size 1100,460 font "DejaVu Sans,10" noenhanced
set output "$OUT"
set multiplot layout 1,2 title "Checkpoints and restore (issue 5): lower is better, log scale; 2 vCPUs, file:// store"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set key top left
set xlabel "state size"
set title "checkpoint after 10,000 upserts (ms)"
set ylabel "ms"
set yrange [10:*]
plot "$CK" using 2:xtic(1) title "forst.checkpoint()" lc rgb "#1f77b4", \
     "" using 3 title "PostgreSQL CHECKPOINT (heap twin)" lc rgb "#7f7f7f"
set title "another server answers the first queries (s)"
set ylabel "s"
set yrange [0.01:*]
plot "$RS" using 2:xtic(1) title "forst.attach + queries" lc rgb "#1f77b4", \
     "" using 3 title "pg_basebackup + start + queries" lc rgb "#7f7f7f"
unset multiplot
GP
echo "written: $OUT" >&2
