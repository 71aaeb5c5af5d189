#!/usr/bin/env python3
"""Report of bench/pg_regress_compat.sh: PostgreSQL's regression suite on
heap and with default_table_access_method = forst, side by side.

usage: pg_regress_compat_report.py WORKDIR SCHEDULE PG_SOURCE ERRORS_TSV
"""
import collections
import os
import re
import sys

work, schedule, source, errors_tsv = sys.argv[1:5]
MODES = ('heap', 'forst')
LINE = re.compile(r'^(?:test\s+|\s+)?(\S+)\s+\.\.\.\s+(ok|FAILED|failed \(ignored\))')


def statuses(mode):
    st = {}
    with open(os.path.join(work, 'pg_regress-%s.log' % mode), errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if m:
                st[m.group(1)] = 'ok' if m.group(2) == 'ok' else 'failed'
    return st


def normalize(msg):
    msg = re.sub(r'"[^"]*"', '"…"', msg)
    msg = re.sub(r'\b\d+\b', 'N', msg)
    return msg.strip()


def errors(mode, test):
    path = os.path.join(work, 'out-%s' % mode, 'results', test + '.out')
    found = collections.Counter()
    if not os.path.exists(path):
        return found
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('ERROR:  '):
                found[line[len('ERROR:  '):].rstrip('\n')] += 1
    return found


def crashes(mode):
    path = os.path.join(work, 'server-%s.log' % mode)
    n = 0
    with open(path, errors='replace') as f:
        for line in f:
            if 'terminated by signal' in line:
                n += 1
    return n


st = {m: statuses(m) for m in MODES}
tests = sorted(set(st['heap']) | set(st['forst']))
passed = {m: sum(1 for t in tests if st[m].get(t) == 'ok') for m in MODES}
regressed = [t for t in tests if st['heap'].get(t) == 'ok' and st['forst'].get(t) != 'ok']
fixed = [t for t in tests if st['heap'].get(t) != 'ok' and st['forst'].get(t) == 'ok']

groups = collections.Counter()
group_tests = collections.defaultdict(set)
total_heap = total_forst = total_only = 0
with open(errors_tsv, 'w') as out:
    out.write('test\tmessage\n')
    for t in tests:
        h, f = errors('heap', t), errors('forst', t)
        total_heap += sum(h.values())
        total_forst += sum(f.values())
        only = f - h
        for msg, n in only.items():
            total_only += n
            key = normalize(msg)
            groups[key] += n
            group_tests[key].add(t)
            for _ in range(n):
                out.write('%s\t%s\n' % (t, msg.replace('\t', ' ')))

print('# PostgreSQL 15 regression suite with default_table_access_method = forst (bench/pg_regress_compat.sh)')
print()
print('Source: `%s`, %s schedule, %d tests; each run on a fresh server with forst preloaded and '
      'the extension created.' % (os.path.basename(source.rstrip('/')), schedule, len(tests)))
print()
print('| | heap | forst |')
print('|---|---|---|')
print('| tests passed | %d | %d |' % (passed['heap'], passed['forst']))
print('| ERROR lines in the results | %d | %d |' % (total_heap, total_forst))
print('| backends ended by a signal (server log) | %d | %d |' % (crashes('heap'), crashes('forst')))
print()
print('%d tests pass on heap and fail on forst; %d fail on heap and pass on forst (%s).' % (
    len(regressed), len(fixed), ', '.join(fixed) or 'none'))
print()
print('%d ERRORs of the forst run are not in the heap run (per test, counted as a multiset). '
      'By message (names and numbers masked), most frequent first:' % total_only)
print()
print('| errors | tests | message |')
print('|---|---|---|')
for key, n in groups.most_common(40):
    print('| %d | %d | %s |' % (n, len(group_tests[key]), key.replace('|', '\\|')))
if len(groups) > 40:
    rest = sum(n for k, n in groups.most_common()[40:])
    print('| %d | | (%d other messages) |' % (rest, len(groups) - 40))
print()
print('Tests that pass on heap and fail on forst: %s' % (' '.join(regressed) or 'none'))
print()
print('Every forst-only error: `%s`.' % os.path.basename(errors_tsv))
