#!/usr/bin/env python3
"""Check that the folders of src/ call each other only downwards.

The folders are layers, listed in LAYERS from the bottom up: code in a
folder may use (call, or read a variable of) its own folder and the folders
below it, never one above it.  So there is no call circle between folders,
and a reader can understand a folder knowing only the ones below it.

Reads the symbols each built object file defines and uses (nm), maps every
object to its folder, and reports every use that goes upwards, by file and
symbol.  Exit status 1 when there is one.

    python3 tools/layout_check.py          after make
    python3 tools/layout_check.py --graph  also print the folder graph
"""

# Bottom first.  src/am/forst.c (the module's entry point, "am") is on top.
LAYERS = [
    'lsm',              # the engine: SST files, manifests, memtables
    'store',            # object storage (file://, s3://) and the disk cache
    'am/base',          # settings, error reports, privileges, progress, counters
    'am/shmem',         # shared memory: memtable slabs, the table registry
    'am/objects',       # this server's objects in the store, manifests
    'am/keys',          # key encoding, relation facts, TIDs, the tuple slot
    'am/expiry',        # windowed state: TTL and watermarks
    'am/read',          # the read path: SST readers, lookups, cursors, MVCC
    'am/wal',           # WAL records, replay, the slot, base backups
    'am/checkpoint',    # checkpoints, attach, GC, savepoints, prewarm
    'am/compact',       # compaction and its workers
    'am/flush',         # flush and the flush worker
    'am/write',         # the write path: DML, key and row locks, ON CONFLICT
    'am/ddl',           # DDL hooks, migration, rekey, drops
    'am/tableam',       # the table and index access methods
    'am/scaleout',      # tables over several servers: statements on the others
    'am/functions',     # SQL functions and views
    'am',               # the module's entry point, _PG_init
]
import collections
import glob
import os
import subprocess
import sys


def folder(obj):
    parts = obj.split(os.sep)
    if parts[1] == 'am':
        return 'am' if len(parts) == 3 else 'am/' + parts[2]
    return parts[1]


def main():
    objs = sorted(glob.glob('src/am/*.o') + glob.glob('src/am/*/*.o') +
                  glob.glob('src/lsm/*.o') + glob.glob('src/store/*.o'))
    if not objs:
        sys.exit('layout_check: no object files under src/; run make first')
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        out = subprocess.run(['nm', o], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRC':
                defs[p[2]] = o
            elif len(p) == 2 and p[0] == 'U':
                uses[o].add(p[1])
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for o, syms in uses.items():
        for s in syms:
            d = defs.get(s)
            if d and folder(d) != folder(o):
                edges[folder(o)][folder(d)].add('%s -> %s: %s' % (
                    o[:-2], d[:-2], s))
    nodes = sorted({folder(o) for o in objs})
    unknown = [v for v in nodes if v not in LAYERS]
    if unknown:
        sys.exit('layout_check: folders missing from LAYERS: %s' %
                 ', '.join(unknown))
    rank = {v: i for i, v in enumerate(LAYERS)}
    up = []
    for a in nodes:
        for b in sorted(edges[a]):
            if rank[b] > rank[a]:
                up.extend(sorted(edges[a][b]))
    for why in up:
        print('layout_check: upward use: ' + why)
    # Tarjan's strongly connected components.
    index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    if '--graph' in sys.argv:
        for v in nodes:
            print('%-16s -> %s' % (v, ' '.join(sorted(edges[v]))))
    bad = [c for c in sccs if len(c) > 1]
    for c in bad:
        print('layout_check: call circle between folders: %s' % ', '.join(c))
        for a in c:
            for b in c:
                for why in sorted(edges[a].get(b, ())):
                    print('    ' + why)
    if bad or up:
        return 1
    print('layout_check: %d folders, every use goes downwards' % len(nodes))
    return 0


if __name__ == '__main__':
    sys.exit(main())
