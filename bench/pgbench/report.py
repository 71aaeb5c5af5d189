#!/usr/bin/env python3
"""bench/pgbench/report.py RUNS.tsv LOADS.tsv AFTER.md PROFILES.md SETTINGS

Markdown report of a bench/pgbench_vs_heap.sh run: per phase, workload and
client count, heap and forst side by side with forst/heap ratios (tps, WAL
bytes per row), peak server memory, then the load and size table, the
goals of issue 3 and what the script recorded after the runs.
"""
import csv, sys

runs_f, loads_f, after_f, prof_f, settings = sys.argv[1:6]
runs = list(csv.DictReader(open(runs_f), delimiter='\t'))
loads = list(csv.DictReader(open(loads_f), delimiter='\t'))
MiB = 1 << 20


def get(phase, wl, t, c):
    for r in runs:
        if (r['phase'], r['workload'], r['table'], r['clients']) == (phase, wl, t, c):
            return r
    return None


def f(x):
    return float(x) if x not in (None, '') else float('nan')


print('# pgbench: forst table vs heap table\n')
print(f'Settings: {settings}\n')
phases = list(dict.fromkeys(r['phase'] for r in runs))
goals = []
for phase in phases:
    rows = next(r['rows'] for r in runs if r['phase'] == phase)
    print(f'## {phase} state ({int(rows):,} rows)\n')
    print('| workload | clients | heap tps | forst tps | forst/heap | heap WAL B/row | forst WAL B/row | forst/heap WAL | heap peak PSS | forst peak PSS | forst slot lag after |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for wl in dict.fromkeys(r['workload'] for r in runs if r['phase'] == phase):
        for c in dict.fromkeys(r['clients'] for r in runs if r['phase'] == phase and r['workload'] == wl):
            h, fo = get(phase, wl, 'h', c), get(phase, wl, 'f', c)
            if not h or not fo:
                continue
            ratio = f(fo['tps']) / f(h['tps'])
            wh = f(h['wal_bytes']) / max(1, f(h['txns']))
            wf = f(fo['wal_bytes']) / max(1, f(fo['txns']))
            wr = f'{wf / wh:.2f}' if wl == 'upsert' and wh > 0 else '–'
            if h.get('wal_fpi') not in (None, '') and f(h['txns']) > 0:
                wh_s = f"{wh:,.0f} ({f(h['wal_fpi']) / f(h['txns']):.2f} FPI)"
            else:
                wh_s = f'{wh:,.0f}'
            print(f"| {wl} | {c} | {f(h['tps']):,.0f} | {f(fo['tps']):,.0f} | **{ratio:.2f}×** | {wh_s} | {wf:,.0f} | {wr} | "
                  f"{f(h['peak_pss']) / MiB:,.0f} MiB | {f(fo['peak_pss']) / MiB:,.0f} MiB | {f(fo['slot_lag']) / MiB:,.1f} MiB |")
            goals.append((phase, wl, c, ratio, wf / wh if wh > 0 else float('nan')))
    print()
    io = [r for r in runs if r['phase'] == phase and r.get('disk_read_bytes') not in (None, '')]
    if io:
        print('Disk traffic during each run (/proc/diskstats, the whole machine), bytes per transaction:\n')
        print('| workload | clients | heap read | forst read | heap written | forst written |')
        print('|---|---|---|---|---|---|')
        for wl in dict.fromkeys(r['workload'] for r in io):
            for c in dict.fromkeys(r['clients'] for r in io if r['workload'] == wl):
                h, fo = get(phase, wl, 'h', c), get(phase, wl, 'f', c)
                if not h or not fo:
                    continue
                per = lambda r, k: f(r[k]) / max(1, f(r['txns']))
                print(f"| {wl} | {c} | {per(h, 'disk_read_bytes'):,.0f} | {per(fo, 'disk_read_bytes'):,.0f} | "
                      f"{per(h, 'disk_write_bytes'):,.0f} | {per(fo, 'disk_write_bytes'):,.0f} |")
        print()
print('## Load and size on disk\n')
print('| phase | table | rows | load s | size after load | slot lag | memtables |')
print('|---|---|---|---|---|---|---|')
for l in loads:
    print(f"| {l['phase']} | {'heap (table + index)' if l['table'] == 'h' else 'forst (SST files)'} | {int(l['rows']):,} | {l['load_seconds']} | "
          f"{f(l['bytes']) / MiB:,.0f} MiB | {f(l['slot_lag']) / MiB:,.1f} MiB | {f(l['forst_memtable_bytes']) / MiB:,.1f} MiB |")
print('\n## Goals (issue 3)\n')
for phase, wl, c, ratio, wr in goals:
    if phase == 'large' and wl == 'upsert':
        print(f'- upsert tps ≥ 2× heap, large state, {c} client(s): {ratio:.2f}× — {"met" if ratio >= 2 else "NOT met"}')
    if phase == 'small' and wl == 'read':
        print(f'- point reads ≥ 1× heap, warm (small state), {c} client(s): {ratio:.2f}× — {"met" if ratio >= 1 else "NOT met"}')
    if wl == 'upsert':
        print(f'- WAL bytes per row ≤ 0.5× heap, {phase} state, {c} client(s): {wr:.2f}× — {"met" if wr <= 0.5 else "NOT met"}')
print()
for p in (after_f, prof_f):
    txt = open(p).read()
    if txt.strip():
        print(txt)
