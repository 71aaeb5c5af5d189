#!/usr/bin/env bash
# bench/engine_vs_rocksdb.sh — forst's SST layer next to RocksDB's db_bench,
# with matching parameters, one after the other (never concurrently).
#
#   bench/engine_vs_rocksdb.sh            N = 1,000,000 (~116 MB of key+value)
#   bench/engine_vs_rocksdb.sh --quick    N = 100,000 (smoke run)
#   bench/engine_vs_rocksdb.sh --num N    any N
#
# Environment: BENCH_DIR (scratch directory, default /tmp/forst-vs-rocksdb),
# DB_BENCH (default db_bench), SEED (default 42), CACHE_MB (default 512,
# must hold every decoded block), SMALL_CACHE_MB (default 8), REPEAT
# (default 1: how many times the whole sequence runs; the table shows the
# best run of each benchmark and the spread, since a shared 2-core machine
# is noisy).
#
# Writes a markdown report to stdout and to bench/results/engine-<date>.md
# (raw outputs of both programs included).
#
# What runs:
#   RocksDB  1. filluniquerandom,flush,compactall   (fresh DB, WAL disabled)
#               -> the fill line, plus the wall time of the whole invocation
#                  (memtable inserts + flushes + full compaction into one
#                  sorted run + DB open/close)
#            2. readseq,readrandom,readrandom,readmissing   (cache CACHE_MB;
#               the first readrandom is the warm-up)
#            3. readrandom,readrandom   (cache SMALL_CACHE_MB)
#   forst    build/bench_engine fillrandom,readrandom,readrandomsmall,readseq,
#            readmissing with the same N, sizes, compression, bloom bits,
#            caches and seed.
# Keys are unique (db_bench filluniquerandom / bench_engine --unique 1) so
# that every readrandom lookup hits on both sides.
set -euo pipefail

cd "$(dirname "$0")/.."
NUM=1000000
MODE=full
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) NUM=100000; MODE=quick ;;
		--num) NUM="$2"; shift ;;
		*) echo "usage: $0 [--quick] [--num N]" >&2; exit 2 ;;
	esac
	shift
done

DB_BENCH=${DB_BENCH:-db_bench}
BENCH_DIR=${BENCH_DIR:-/tmp/forst-vs-rocksdb}
SEED=${SEED:-42}
CACHE_MB=${CACHE_MB:-512}
SMALL_CACHE_MB=${SMALL_CACHE_MB:-8}
REPEAT=${REPEAT:-1}
KEY=16
VALUE=100
BLOCK=32768
BLOOM=10
COMP=lz4
READS=$NUM

command -v "$DB_BENCH" >/dev/null || { echo "db_bench not found (apt-get install rocksdb-tools)" >&2; exit 1; }
make -s bench-engine >&2

RAW=$(mktemp -d)
trap 'rm -rf "$RAW" "$BENCH_DIR"' EXIT
rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR"

COMMON=(--num="$NUM" --key_size=$KEY --value_size=$VALUE --compression_type=$COMP
	--compression_ratio=0.5 --disable_wal=1 --bloom_bits=$BLOOM --block_size=$BLOCK
	--threads=1 --seed="$SEED" --db="$BENCH_DIR/rocksdb"
	--cache_index_and_filter_blocks=0 --target_file_size_base=67108864)

now() { date +%s.%N; }

for r in $(seq 1 "$REPEAT"); do
	echo "== [run $r/$REPEAT] RocksDB fill (filluniquerandom,flush,compactall)" >&2
	t0=$(now)
	"$DB_BENCH" "${COMMON[@]}" --use_existing_db=0 --cache_size=$((CACHE_MB << 20)) \
		--benchmarks=filluniquerandom,flush,compactall >"$RAW/rocks_fill.$r.txt" 2>"$RAW/rocks_fill.$r.err"
	t1=$(now)
	python3 -c "print($t1 - $t0)" >"$RAW/rocks_wall.$r.txt"
	du -sb "$BENCH_DIR/rocksdb"/*.sst | awk '{s+=$1} END {print s}' >"$RAW/rocks_disk.txt"
	ls "$BENCH_DIR/rocksdb"/*.sst | wc -l >"$RAW/rocks_nsst.txt"
	sync

	echo "== [run $r/$REPEAT] RocksDB reads, cache ${CACHE_MB} MB" >&2
	"$DB_BENCH" "${COMMON[@]}" --use_existing_db=1 --reads="$READS" --cache_size=$((CACHE_MB << 20)) \
		--benchmarks=readseq,readrandom,readrandom,readmissing >"$RAW/rocks_read.$r.txt" 2>"$RAW/rocks_read.$r.err"

	echo "== [run $r/$REPEAT] RocksDB reads, cache ${SMALL_CACHE_MB} MB" >&2
	"$DB_BENCH" "${COMMON[@]}" --use_existing_db=1 --reads="$READS" --cache_size=$((SMALL_CACHE_MB << 20)) \
		--benchmarks=readrandom,readrandom >"$RAW/rocks_small.$r.txt" 2>"$RAW/rocks_small.$r.err"
	rm -rf "$BENCH_DIR/rocksdb"

	FORST_CMD=(build/bench_engine --num "$NUM" --key-size $KEY --value-size $VALUE
		--block-size $BLOCK --compression $COMP --bloom-bits $BLOOM
		--cache-mb "$CACHE_MB" --small-cache-mb "$SMALL_CACHE_MB" --reads "$READS"
		--seed "$SEED" --unique 1 --target-file-mb 64 --dir "$BENCH_DIR/forst"
		--benchmarks fillrandom,readrandom,readrandomsmall,readseq,readmissing)
	echo "== [run $r/$REPEAT] forst: ${FORST_CMD[*]}" >&2
	"${FORST_CMD[@]}" >"$RAW/forst.$r.txt"
done

mkdir -p bench/results
OUT="bench/results/engine-$(date -u +%Y%m%d-%H%M%S)${MODE/full/}.md"
DBV=$("$DB_BENCH" --version 2>&1 | head -1)
CCV=$(${CC:-cc} --version | head -1)
CPU=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$RAW" "$REPEAT" "$NUM" "$KEY" "$VALUE" \
	"$DBV" "$CCV" "$CPU" "$CACHE_MB" "$SMALL_CACHE_MB" "${FORST_CMD[*]}" \
	"$DB_BENCH ${COMMON[*]}" "$LOAD" <<'PY' | tee "$OUT"
import re, sys, os, datetime, statistics
(raw, repeat, num, key, value, dbv, ccv, cpu, cache_mb, small_mb,
 forst_cmd, rocks_common, load) = sys.argv[1:]
repeat, num, key, value = int(repeat), int(num), int(key), int(value)
LINE = re.compile(r'^(\S+)\s*:\s*([\d.]+) micros/op (\d+) ops/sec(?: ([\d.]+) seconds)?'
                  r'(?: (\d+) operations)?;?(?:\s*([\d.]+) MB/s)?(.*)$')

def parse(path):
    runs = {}
    for l in open(path, errors='replace'):
        m = LINE.match(l.strip())
        if m:
            runs.setdefault(m.group(1), []).append(dict(
                us=float(m.group(2)), ops=float(m.group(3)),
                secs=float(m.group(4) or 0), n=int(m.group(5) or 0),
                mbs=float(m.group(6)) if m.group(6) else None, extra=m.group(7).strip()))
    return runs

raw_mb = num * (key + value) / 1048576.0
def mk(secs, n, mb=None, extra=''):
    return dict(us=secs * 1e6 / n, ops=n / secs, mbs=mb, secs=secs, extra=extra)

# per metric: list over repeats
M = {}
def add(name, d):
    if d is not None:
        M.setdefault(name, []).append(d)
for r in range(1, repeat + 1):
    rf = parse(f'{raw}/rocks_fill.{r}.txt'); rr = parse(f'{raw}/rocks_read.{r}.txt')
    rs = parse(f'{raw}/rocks_small.{r}.txt'); fo = parse(f'{raw}/forst.{r}.txt')
    last = lambda d, k: d[k][-1] if k in d else None
    add('r_fill', last(rf, 'filluniquerandom'))
    w = float(open(f'{raw}/rocks_wall.{r}.txt').read())
    add('r_fillwall', mk(w, num, raw_mb / w))
    add('r_rr', last(rr, 'readrandom')); add('r_rs', last(rs, 'readrandom'))
    add('r_seq', last(rr, 'readseq')); add('r_miss', last(rr, 'readmissing'))
    ff = last(fo, 'fillrandom')
    add('f_fill', ff)
    m = re.search(r'sort ([\d.]+) s, build ([\d.]+) s.*?fsync ([\d.]+) s', ff['extra'])
    sort_s, build_s, fsync_s = float(m.group(1)), float(m.group(2)), float(m.group(3))
    add('f_sort', mk(sort_s, num)); add('f_build', mk(build_s, num, raw_mb / build_s))
    add('f_fsync', mk(fsync_s, num))
    add('f_rr', last(fo, 'readrandom')); add('f_rs', last(fo, 'readrandomsmall'))
    add('f_seq', last(fo, 'readseq')); add('f_miss', last(fo, 'readmissing'))

def best(k):
    return max(M[k], key=lambda d: d['ops']) if k in M else None
def spread(k):
    if k not in M or len(M[k]) < 2:
        return ''
    o = [d['ops'] for d in M[k]]
    return f' (runs: {min(o):,.0f}–{max(o):,.0f})'
def cell(k):
    d = best(k)
    if d is None:
        return 'n/a'
    mb = f', {d["mbs"]:.1f} MB/s' if d.get('mbs') else ''
    return f'{d["us"]:.3f} µs/op, {d["ops"]:,.0f} ops/s{mb}{spread(k)}'
def ratio(fk, rk):
    f, r = best(fk), best(rk)
    return f'**{f["ops"] / r["ops"]:.2f}×**' if f and r else 'n/a'

out = []
p = out.append
p(f'# forst engine vs RocksDB db_bench — {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC\n')
p(f'- N = {num:,} keys of {key} B + values of {value} B ({raw_mb:.1f} MB raw), unique keys in random order, '
  f'lz4, 32 KiB blocks, bloom 10 bits/key, one thread, values ~50% compressible (db_bench generator)')
p(f'- caches: {cache_mb} MB (holds every block; reads after a warm-up pass) and {small_mb} MB')
p(f'- {dbv} (Debian rocksdb-tools; built with assertions enabled); forst built with {ccv}, -O2 -g')
p(f'- CPU: {cpu}, {os.cpu_count()} cores; load average at the end: {load}')
p(f'- {repeat} run(s); each cell is the best run (highest ops/s){", with the range over runs" if repeat > 1 else ""}\n')
p('Ratio = forst ops/s ÷ RocksDB ops/s (above 1: forst faster).\n')
p('| benchmark | RocksDB db_bench | forst bench_engine | ratio | what is compared |')
p('|---|---|---|---|---|')
rows = [
    ('fill (as reported)', 'r_fill', 'f_fill',
     'RocksDB: filluniquerandom = memtable inserts, flushes in the background; forst: sort + SST build + fsync'),
    ('fill → one sorted run on disk', 'r_fillwall', 'f_fill',
     'RocksDB: wall time of the whole filluniquerandom,flush,compactall process (incl. start-up, DB open/close); forst: as above'),
    ('readrandom, cached', 'r_rr', 'f_rr', 'existing keys, second pass, every block in the cache'),
    (f'readrandom, {small_mb} MB cache', 'r_rs', 'f_rs', 'existing keys, second pass; misses read + decompress a block (OS page cache)'),
    ('readseq', 'r_seq', 'f_seq', 'full scan, cold block cache, warm page cache'),
    ('readmissing', 'r_miss', 'f_miss', 'absent keys (key + one byte), bloom filters'),
]
for name, rk, fk, note in rows:
    p(f'| {name} | {cell(rk)} | {cell(fk)} | {ratio(fk, rk)} | {note} |')
p('')
p('forst fill, split (best run of each):\n')
p('| part | time | rate |')
p('|---|---|---|')
for name, k in (('sort (memtable stand-in)', 'f_sort'), ('SST build incl. fsync', 'f_build'), ('  of which fsync', 'f_fsync')):
    d = best(k) if k != 'f_fsync' else min(M[k], key=lambda d: d['secs'])
    mb = f', {d["mbs"]:.1f} MB/s' if d.get('mbs') else ''
    p(f'| {name} | {d["secs"]:.3f} s | {d["ops"]:,.0f} entries/s{mb} |')
fm = best('f_miss')
m = re.search(r'bloom negative rate ([\d.]+)%', fm['extra']) if fm else None
ff = best('f_fill')
d = re.search(r'(\d+) files, ([\d.]+) MB on disk', ff['extra'])
rdisk = int(open(f'{raw}/rocks_disk.txt').read())
rn = open(f'{raw}/rocks_nsst.txt').read().strip()
p(f'\nforst: {d.group(1)} SST files, {d.group(2)} MB on disk; bloom negative rate on absent keys '
  f'{m.group(1) if m else "?"}%.  RocksDB: {rn} SST file(s), {rdisk / 1048576:.1f} MB on disk.\n')
p('Commands:\n')
p('```')
p(f'{rocks_common} --use_existing_db=0 --cache_size=$(({cache_mb}<<20)) --benchmarks=filluniquerandom,flush,compactall')
p(f'{rocks_common} --use_existing_db=1 --reads={num} --cache_size=$(({cache_mb}<<20)) --benchmarks=readseq,readrandom,readrandom,readmissing')
p(f'{rocks_common} --use_existing_db=1 --reads={num} --cache_size=$(({small_mb}<<20)) --benchmarks=readrandom,readrandom')
p(forst_cmd)
p('```\n')
p('<details><summary>raw output</summary>\n')
p('```')
for r in range(1, repeat + 1):
    for f in ('rocks_fill', 'rocks_read', 'rocks_small', 'forst'):
        p(f'### run {r}: {f}')
        for l in open(f'{raw}/{f}.{r}.txt', errors='replace'):
            l = l.rstrip()
            if LINE.match(l) or l.startswith(('RocksDB:', 'forst', 'Entries:', 'WARNING')):
                p(l)
p('```\n</details>')
print('\n'.join(out))
PY
echo "written: $OUT" >&2
