#!/usr/bin/env python3
"""bench/pipeline/report.py RUNS.tsv SAMPLES.tsv SETTINGS

Markdown report of a bench/pipeline_vs_heap.sh run: one row per run, the
ratios forst/heap, forst-ckpt/heap and forst-ckpt/forst within each round
(and their mean), for the pairs of modes the run has, and whether the goal
of issue 6 is met: forst sustains at least the heap rate while its state
stays bounded.  Prints to stdout.
"""
import csv
import sys
from collections import defaultdict

runs_tsv, samples_tsv, settings = sys.argv[1:4]
runs = list(csv.DictReader(open(runs_tsv), delimiter='\t'))
samples = list(csv.DictReader(open(samples_tsv), delimiter='\t'))


def kb(b):
    return '%.0f kB' % (float(b) / 1024)


print('# Streaming pipeline: forst vs heap state (bench/pipeline_vs_heap.sh)')
print()
print('Settings: %s' % settings)
print()
print('| round | mode | events/s (total / wall) | wall s | step p50 ms | step p99 ms | step max ms '
      '| per-step events/s (median) | state max | state at end | state mean | dead tuples max '
      '| (auto)vacuums | WAL MB | load avg (1/5/15 min) |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for r in runs:
    print('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %s |' % (
        r['round'], r['mode'], r['events_per_s'], r['wall_s'], r['step_p50_ms'], r['step_p99_ms'],
        r['step_max_ms'], r['step_rate_p50'], kb(r['state_bytes_max']), kb(r['state_bytes_end']),
        kb(r['state_bytes_mean']), r['dead_tup_max'] if not r['mode'].startswith('forst') else '-',
        r['autovacuums'] if not r['mode'].startswith('forst') else '-',
        int(r['wal_bytes']) / 1e6, r['loadavg']))
print()

digests = {r['output_digest'] for r in runs}
print('Outputs (q5_hot_items, q7_highest_bid, seller_activity): %s' % (
    'identical in every run (md5 %s)' % digests.pop() if len(digests) == 1
    else 'DIFFER between runs: %s' % ', '.join(sorted(digests))))
print()

by = defaultdict(dict)
for r in runs:
    by[r['round']][r['mode']] = r
RATIO_KEYS = ('events_per_s', 'step_p50_ms', 'step_p99_ms', 'state_bytes_max', 'state_bytes_mean',
              'wal_bytes')


def ratio_table(num, den):
    """The ratios num / den within each round, and their mean; {} if no round has both."""
    ratios = defaultdict(list)
    rows = []
    for rnd in sorted(by, key=int):
        m = by[rnd]
        if num not in m or den not in m:
            continue
        a, b = m[num], m[den]
        q = {k: float(a[k]) / float(b[k]) if float(b[k]) else float('nan') for k in RATIO_KEYS}
        for k, v in q.items():
            ratios[k].append(v)
        rows.append((rnd, q))
    if not rows:
        return {}
    print('Ratios %s / %s within each round (throughput: > 1 means %s is faster; '
          'latency, state and WAL: < 1 means %s is lower):' % (num, den, num, num))
    print()
    print('| round | %s events/s | %s events/s | events/s | step p50 | step p99 | state max | state mean | WAL |'
          % (num, den))
    print('|---|---|---|---|---|---|---|---|---|')
    fmt = '| %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |'
    for rnd, q in rows:
        print(fmt % (rnd, by[rnd][num]['events_per_s'], by[rnd][den]['events_per_s'], q['events_per_s'],
                     q['step_p50_ms'], q['step_p99_ms'], q['state_bytes_max'], q['state_bytes_mean'],
                     q['wal_bytes']))
    mean = {k: sum(v) / len(v) for k, v in ratios.items()}
    print(fmt % ('mean', '', '', mean['events_per_s'], mean['step_p50_ms'], mean['step_p99_ms'],
                 mean['state_bytes_max'], mean['state_bytes_mean'], mean['wal_bytes']))
    print()
    return ratios


ratios = ratio_table('forst', 'heap')
ratio_table('forst-ckpt', 'heap')
ratio_table('forst-ckpt', 'forst')

# Bounded state: the state's mean size in the last third of each run
# against the middle third (the first holds the ramp from an empty state).
# A state that grows with the events processed keeps rising; a bounded one
# has levelled off.
print('State growth (mean state bytes in the last third of the run / in the middle third):')
print()
growth = {}
per = defaultdict(list)
for s in samples:
    per[(s['round'], s['mode'])].append((float(s['t_s']), int(s['state_bytes'])))
for (rnd, mode), pts in sorted(per.items()):
    if len(pts) < 6:
        continue
    n = len(pts) // 3
    a = sum(b for _, b in pts[n:2 * n]) / n
    z = sum(b for _, b in pts[-n:]) / n
    growth[(rnd, mode)] = z / a if a else float('inf')
    print('- round %s, %s: %.2f (%s -> %s, %d samples)' % (rnd, mode, growth[(rnd, mode)], kb(a), kb(z), len(pts)))
print()
if ratios:
    fast = all(v >= 1.0 for v in ratios['events_per_s'])
    fg = [g for (rnd, mode), g in growth.items() if mode == 'forst']
    bounded = bool(fg) and all(g < 1.5 for g in fg)
    print('Goal (forst sustains at least the heap rate, its state bounded by expiry): %s: '
          'forst/heap events/s %s; forst state %s.' % (
              'MET' if fast and bounded else 'NOT MET',
              'at least 1 in every round' if fast else 'below 1 in %d of %d rounds' % (
                  sum(v < 1.0 for v in ratios['events_per_s']), len(ratios['events_per_s'])),
              'bounded (last third / middle third < 1.5 in every run)' if bounded
              else 'not shown bounded'))
print()
print('(Dead tuples and vacuums: heap modes only; state bytes: forst memtables + SST files of the three '
      'state tables, heap pg_total_relation_size of the three; forst-ckpt: the job\'s forst tables unlogged.)')
