#!/usr/bin/env bash
# bench/plot_pgbench.sh RESULTS.tsv OUT.png [BASELINE.tsv [BASELINE_LABEL]]
# Bar chart of a bench/pgbench_vs_heap.sh run: tps of heap and forst for
# each phase, workload and client count; with a baseline .tsv (an earlier
# run), its forst bars too (e.g. before a fix).  Needs gnuplot
# (apt-get install gnuplot-nox).
set -euo pipefail
IN=${1:?results tsv}
OUT=${2:?output png}
BASE=${3:-}
BASE_LABEL=${4:-forst (baseline)}
DAT=$(mktemp)
trap 'rm -f "$DAT"' EXIT
python3 - "$IN" "$BASE" >"$DAT" <<'PY'
import csv, sys
def load(p):
    d = {}
    for r in csv.DictReader(open(p), delimiter='\t'):
        d[(r['phase'], r['workload'], r['clients'], r['table'])] = float(r['tps'])
    return d
run = load(sys.argv[1])
base = load(sys.argv[2]) if sys.argv[2] else {}
keys = sorted({k[:3] for k in run}, key=lambda k: (k[0] != 'small', k[1] != 'upsert', int(k[2])))
for ph, wl, c in keys:
    h, f = run.get((ph, wl, c, 'h'), 0), run.get((ph, wl, c, 'f'), 0)
    b = base.get((ph, wl, c, 'f'), 0)
    print(f'"{ph}\\n{wl}\\n{c} cl." {h:.0f} {f:.0f} {b:.0f}')
PY
extra=
if [ -n "$BASE" ]; then
	extra=", \"\" using 4 title \"$BASE_LABEL\" lc rgb \"#aec7e8\""
fi
gnuplot <<EOF
set terminal pngcairo size 1100,520 font "DejaVu Sans,10" noenhanced
set output "$OUT"
set title "pgbench: forst table vs heap table (tps, higher is better; 2 vCPUs, shared_buffers 128MB)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:*]
set format y "%.0s%c"
set grid ytics
set key top right
set xtics font ",9"
set bmargin 5
plot "$DAT" using 2:xtic(1) title "heap" lc rgb "#7f7f7f", \
     "" using 3 title "forst" lc rgb "#1f77b4"$extra
EOF
echo "written: $OUT" >&2
