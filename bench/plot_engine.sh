#!/usr/bin/env bash
# bench/plot_engine.sh RESULTS.md OUT.png — bar chart (ops/s, log scale) of
# a bench/results/engine-*.md table written by engine_vs_rocksdb.sh.
# Needs gnuplot (apt-get install gnuplot-nox).
set -euo pipefail
IN=${1:?results markdown}
OUT=${2:?output png}
DAT=$(mktemp)
trap 'rm -f "$DAT"' EXIT
python3 - "$IN" >"$DAT" <<'PY'
import re, sys
for l in open(sys.argv[1]):
    if not l.startswith('| ') or 'ops/s' not in l:
        continue
    c = [x.strip() for x in l.strip().strip('|').split('|')]
    ops = [float(re.search(r'([\d,]+) ops/s', x).group(1).replace(',', '')) for x in c[1:3]]
    name = c[0].replace(' ', '\\n', 1).replace('"', '')
    print(f'"{name}" {ops[0]:.0f} {ops[1]:.0f}')
PY
gnuplot <<EOF
set terminal pngcairo size 1000,520 font "DejaVu Sans,10" noenhanced
set output "$OUT"
set title "forst SST layer vs RocksDB db_bench (ops/s, log scale, higher is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [10000:*]
set format y "%.0s%c"
set grid ytics
set key top right
set xtics font ",9"
set bmargin 5
plot "$DAT" using 2:xtic(1) title "RocksDB 7.8.3 db_bench" lc rgb "#7f7f7f", \
     "" using 3 title "forst bench_engine" lc rgb "#1f77b4"
EOF
echo "written: $OUT" >&2
