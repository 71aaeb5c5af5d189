#!/usr/bin/env bash
# bench/plot_s3.sh READS.tsv UPLOADS.tsv OUT.png
# Plots a bench/s3_cache.sh run: point reads/s and scans/s of forst on
# file:// and on S3 for each disk cache configuration (mean over rounds,
# log scale), and upload MB/s of forst's store next to `aws s3 cp`.
# Needs gnuplot (apt-get install gnuplot-nox).
set -euo pipefail
READS=${1:?reads tsv}
UPS=${2:?uploads tsv}
OUT=${3:?output png}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$READS" "$UPS" "$DIR" <<'PY'
import csv, sys
from collections import defaultdict
reads, ups, out = sys.argv[1:4]
acc = defaultdict(list)
for r in csv.DictReader(open(reads), delimiter='\t'):
    acc[(r['workload'], r['run'], r['store'])].append(float(r['ops']))
runs = ['no cache', 'cold, cache = 10%', 'warm, cache = 10%', 'all cached']
short = {'no cache': 'none', 'cold, cache = 10%': 'cold 10%', 'warm, cache = 10%': 'warm 10%',
         'all cached': 'all'}
mean = lambda v: sum(v) / len(v) if v else 0
with open(out + '/reads.dat', 'w') as f:
    for wl in ('point', 'scan'):
        for run in runs:
            label = short[run] + ('\\nscans' if wl == 'scan' else '\\npoint')
            f.write('"%s" %.1f %.1f\n' % (label, mean(acc[(wl, run, 'file')]), mean(acc[(wl, run, 's3')])))
up = defaultdict(list)
for r in csv.DictReader(open(ups), delimiter='\t'):
    if r['round'] != 'startup':
        up[(r['files'], r['tool'])].append(float(r['MBps']))
names = {'f8': '8 MB files', 'f64': '64 MB files'}
with open(out + '/ups.dat', 'w') as f:
    for s in ('f8', 'f64'):
        f.write('"%s" %.1f %.1f %.1f\n' % (names[s], mean(up[(s, 'forst')]), mean(up[(s, 'aws')]),
                                           mean(up[(s, 'aws-serial')])))
PY
gnuplot <<EOF
set terminal pngcairo size 1200,520 font "DejaVu Sans,10" noenhanced
set output "$OUT"
set multiplot layout 1,2 title "forst on S3 (Ceph RGW, loopback) vs file://; 2 shared vCPUs"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xtics font ",8"
set title "reads/s and scans/s (100 rows) by disk cache, Zipf 1.1, log scale"
set key top right
set logscale y
set yrange [0.5:*]
plot "$DIR/reads.dat" using 2:xtic(1) title "file://" lc rgb "#7f7f7f", \
     "" using 3 title "s3://" lc rgb "#1f77b4"
unset logscale y
set yrange [0:*]
set title "upload MB/s, same files, same server"
set key top right
plot "$DIR/ups.dat" using 2:xtic(1) title "forst (one at a time, create-if-absent)" lc rgb "#1f77b4", \
     "" using 3 title "aws s3 cp (10 parallel)" lc rgb "#ff7f0e", \
     "" using 4 title "aws s3 cp (1 at a time)" lc rgb "#ffbb78"
unset multiplot
EOF
echo "written: $OUT" >&2
