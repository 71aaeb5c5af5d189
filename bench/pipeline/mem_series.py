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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import procmem  # noqa: E402  (bench/procmem.py)

pm, out = int(sys.argv[1]), sys.argv[2]
interval = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)


def server_pids():
    return procmem.server_pids(pm)


def pss(pid):
    return procmem.mem(pid)[0]


with open(out, 'a') as f:
    while not stop:
        f.write('%.3f %d\n' % (time.time(), sum(pss(p) for p in server_pids())))
        f.flush()
        time.sleep(interval)
