#!/usr/bin/env python3
"""bench/pipeline/mem_series.py POSTMASTER_PID OUT [INTERVAL]

Samples, every INTERVAL seconds (default 1) until SIGTERM, the memory of one
PostgreSQL server (the postmaster and all its children): the sum of PSS
(shared memory counted once, split between the processes that touched it)
from /proc/PID/smaps_rollup.  Appends one line per sample to OUT:
  unix_time pss_bytes
(bench/pgbench/sample_mem.py keeps only the peak; bench/pipeline_large.sh
plots the series.)
"""
import os
import signal
import sys
import time

pm, out = int(sys.argv[1]), sys.argv[2]
interval = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
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


def pss(pid):
    try:
        with open(f'/proc/{pid}/smaps_rollup') as f:
            for line in f:
                if line.startswith('Pss:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


with open(out, 'a') as f:
    while not stop:
        f.write('%.3f %d\n' % (time.time(), sum(pss(p) for p in server_pids())))
        f.flush()
        time.sleep(interval)
