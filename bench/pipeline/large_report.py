#!/usr/bin/env python3
"""bench/pipeline/large_report.py RUNS.tsv SETTINGS [SKIPPED]

Markdown report of a bench/pipeline_large.sh run: one row per mode, the
ratios of every s3 mode to the local and heap modes, the state against the
cache and the memory limit, and whether the outputs of the modes that
finished are equal.  Prints to stdout.
"""
import csv
import sys

runs_tsv, settings = sys.argv[1:3]
skipped = sys.argv[3] if len(sys.argv) > 3 else ''
runs = list(csv.DictReader(open(runs_tsv), delimiter='\t'))


def mb(b):
    b = float(b or 0)
    return '%.1f MB' % (b / 1e6) if b else '-'


def num(x):
    return '{:,}'.format(int(float(x)))


print('# Streaming pipeline, large state: forst on S3 vs local vs heap (bench/pipeline_large.sh)')
print()
print('Settings: %s' % settings)
print()
print('| mode | events | events/s | step p50 ms | step p99 ms | step max ms | live state rows | state bytes '
      '| forst.cache_size | memory limit | peak PSS | cgroup peak | GETs/event | disk cache hits '
      '| store request s | WAL MB | load avg | extra conf |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for r in runs:
    hr = ('%.1f%%' % (100 * float(r['cache_hit_ratio']))) if r['cache_hit_ratio'] else '-'
    print('| %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %s | %s |' % (
        r['mode'], num(r['consumed']), '' if r['complete'] == '1' else ' (partial)',
        num(r['events_per_s']), r['step_p50_ms'], r['step_p99_ms'], r['step_max_ms'],
        num(r['state_rows']), mb(r['state_bytes']), mb(r['cache_size']), mb(r['memory_limit']),
        mb(r['peak_pss']), mb(r['memcg_peak']), r['gets_per_event'], hr,
        float(r['store_request_ms']) / 1000, int(r['wal_bytes']) / 1e6, r['loadavg'], r['extra_conf'] or '-'))
print()
if skipped:
    print('Skipped: %s.' % skipped)
    print()

by = {r['mode']: r for r in runs}
for r in runs:
    if r['base'] != 's3':
        continue
    for other in ('local', 'heap'):
        o = by.get(other)
        if not o:
            continue
        print('- %s / %s: events/s %.2f×, step p50 %.2f×, step p99 %.2f×, state bytes %.2f×, peak PSS %.2f×' % (
            r['mode'], other, float(r['events_per_s']) / float(o['events_per_s']),
            float(r['step_p50_ms']) / float(o['step_p50_ms']), float(r['step_p99_ms']) / float(o['step_p99_ms']),
            float(r['state_bytes']) / max(float(o['state_bytes']), 1), float(r['peak_pss']) / max(float(o['peak_pss']), 1)))
    sb, cs, lim = float(r['state_bytes']), float(r['cache_size']), float(r['memory_limit'])
    print('- %s: its state is %.1f× forst.cache_size and %.2f× the memory limit; %s object-store GETs '
          '(%s per event), %.0f%% of disk cache lookups hit' % (
              r['mode'], sb / cs if cs else 0, sb / lim if lim else 0, num(r['store_gets']),
              r['gets_per_event'], 100 * float(r['cache_hit_ratio'] or 0)))
print()
for r in runs:
    if r['base'] == 'heap' or not int(r.get('probe_keys') or 0):
        continue
    k, c, g, ms = int(r['probe_keys']), int(r['probe_conflicts']), int(r['probe_gets']), float(r['probe_ms'])
    print('- probe, %s: the q5 upsert of the batch at 90%% of the stream again (rolled back), background workers idle: '
          '%s keys, %s of them existing; %s object-store GETs = %.2f per existing key; %.0f ms = %.3f ms per key' % (
              r['mode'], num(k), num(c), num(g), g / c if c else 0, ms, ms / k))
print()
done = [r for r in runs if r['complete'] == '1']
digests = {r['output_digest'] for r in done}
if len(done) < 2:
    print('Outputs (q5_hot_items, q7_highest_bid, seller_activity): not compared, %s (a mode stopped by '
          'MAX_SECONDS has consumed only part of the stream)' % (
              'no mode finished' if not done else 'only %s finished' % done[0]['mode']))
else:
    print('Outputs (q5_hot_items, q7_highest_bid, seller_activity) of the %d modes that finished: %s' % (
        len(done), 'identical' if len(digests) == 1 else 'DIFFERENT (%s)' % ', '.join(
            '%s %s' % (r['mode'], r['output_digest'][:8]) for r in done)))
ooms = [r['mode'] for r in runs if int(r['oom_kills'] or 0) > 0]
if ooms:
    print()
    print('OOM kills in the memory cgroup: %s' % ', '.join(ooms))
