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

pm, pgdata, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
interval = float(sys.argv[4]) if len(sys.argv) > 4 else 0.5
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)


def server_pids():
    pids = [pm]
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open(f'/proc/{d}/stat') as f:
                s = f.read()
            ppid = int(s[s.rindex(')') + 2:].split()[1])
        except (OSError, ValueError):
            continue
        if ppid == pm:
            pids.append(int(d))
    return pids


def mem(pid):
    pss = rss = 0
    try:
        with open(f'/proc/{pid}/smaps_rollup') as f:
            for line in f:
                if line.startswith('Pss:'):
                    pss = int(line.split()[1]) * 1024
                elif line.startswith('Rss:'):
                    rss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return pss, rss


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
