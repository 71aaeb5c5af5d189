#!/usr/bin/env python3
"""bench/pgbench/sample_mem.py POSTMASTER_PID PGDATA OUT [INTERVAL]

Samples, every INTERVAL seconds (default 0.5) until SIGTERM, the memory of
one PostgreSQL server (the postmaster and all its children): the sum of
PSS (proportional set size: shared memory counted once, split between the
processes that touched it) and the sum of RSS, from /proc/PID/smaps_rollup;
plus the bytes in PGDATA/pg_wal.  On exit writes one line to OUT:
  peak_pss_bytes peak_rss_bytes peak_pg_wal_bytes last_pg_wal_bytes samples
"""
import os, signal, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import procmem  # noqa: E402  (bench/procmem.py)

pm, pgdata, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
interval = float(sys.argv[4]) if len(sys.argv) > 4 else 0.5
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)


def server_pids():
    return procmem.server_pids(pm)


mem = procmem.mem


def wal_bytes():
    total = 0
    try:
        with os.scandir(os.path.join(pgdata, 'pg_wal')) as it:
            for e in it:
                if e.is_file(follow_symlinks=False):
                    total += e.stat(follow_symlinks=False).st_size
    except OSError:
        pass
    return total


peak_pss = peak_rss = peak_wal = last_wal = n = 0
while not stop:
    pss = rss = 0
    for p in server_pids():
        a, b = mem(p)
        pss += a
        rss += b
    last_wal = wal_bytes()
    peak_pss, peak_rss, peak_wal = max(peak_pss, pss), max(peak_rss, rss), max(peak_wal, last_wal)
    n += 1
    time.sleep(interval)
with open(out, 'w') as f:
    f.write(f'{peak_pss} {peak_rss} {peak_wal} {last_wal} {n}\n')
