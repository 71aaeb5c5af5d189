"""bench/procmem.py -- the memory of one PostgreSQL server, from /proc, for
bench/pgbench/sample_mem.py (peaks) and bench/pipeline/mem_series.py (a
series): the postmaster's pid and its children's, and each process's PSS
(proportional set size: shared memory counted once, split between the
processes that touched it) and RSS from /proc/PID/smaps_rollup.
"""
import os


def server_pids(pm):
    """The postmaster pm and its children."""
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
    """(pss_bytes, rss_bytes) of pid; (0, 0) once it is gone."""
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
