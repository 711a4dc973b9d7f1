#!/usr/bin/env python3
"""Counts the files one recorded event path passes (scripts/pathtrace.sh).

    count.py [--source DIR] [--handler-caller FN] [--longest] [--calls-too]
             [--max-reentries N] [--max-climbs N] CALLS_FILE

CALLS_FILE is what scripts/pathtrace/recorder.c wrote: the library, then for
each recorded allocation its calls ("DEPTH OFFSET", in order).  The first
allocation whose path enters FN (default deliver_now, the function that
calls the agent's NotifyEvent) is counted, or with --longest the longest
of them (one that announces something first, as a rule).  What the agent's
handler calls in the layer (GetEnv, JVMPI functions) is left out: that is
the agent's work, not the event's way.  Each function is mapped to the
source file that holds it (addr2line; an inline function of a header is the
header's).  A step is a call into a function of another file than its
caller's; a re-entry is a step into a file already entered earlier on the
path (the file of bk_on_sampled_alloc counts as entered); a climb is a step
from jvmpi/ into jvmti_backend/.  Exits 1 when a --max figure is exceeded,
2 when no recorded path reached the handler.
"""
import argparse
import collections
import os
import subprocess
import sys


def read_calls(path):
    lib, paths = None, []
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] == '#':
                continue
            if words[0] == 'lib':
                lib = words[1]
            elif words[0] == 'alloc':
                paths.append({'nth': int(words[1]), 'overflowed': 'overflowed' in words, 'calls': []})
            else:
                paths[-1]['calls'].append((int(words[0]), int(words[1], 16), 'outside' in words[2:]))
    return lib, paths


def symbolize(lib, offsets, source):
    offsets = sorted(set(offsets))
    out = subprocess.run(['addr2line', '-f', '-e', lib] + ['%#x' % o for o in offsets],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    names = {}
    for i, off in enumerate(offsets):
        fn, loc = out[2 * i], out[2 * i + 1]
        fname = loc.rsplit(':', 1)[0]
        if fname.startswith(source + os.sep):
            fname = fname[len(source) + 1:]
        names[off] = (fn, fname)
    return names


def count(calls, names):
    """The per-call records of one path, (depth, function, file, caller's
    file), less what the agent's handler asked of the layer (calls from
    outside it, with all they called), and the number of those left out."""
    stack, rows, skip_below, left_out = [], [], None, 0
    for depth, off, outside in calls:
        if skip_below is not None and depth > skip_below:
            continue
        skip_below = None
        if outside and depth > 0:  # the VM calls the callback itself
            skip_below, left_out = depth, left_out + 1
            continue
        fn, fname = names[off]
        del stack[depth:]
        rows.append((depth, fn, fname, stack[-1] if stack else None))
        stack.append(fname)
    return rows, left_out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('calls')
    ap.add_argument('--source', default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument('--handler-caller', default='deliver_now')
    ap.add_argument('--max-reentries', type=int)
    ap.add_argument('--max-climbs', type=int)
    ap.add_argument('--longest', action='store_true',
                    help='count the longest path that reached the handler, not the first')
    ap.add_argument('--calls-too', action='store_true', help='print every call, indented by depth')
    args = ap.parse_args()
    source = os.path.realpath(args.source)

    lib, paths = read_calls(args.calls)
    if lib is None or not paths:
        print('count.py: %s holds no recorded path' % args.calls, file=sys.stderr)
        return 2
    names = symbolize(lib, [off for p in paths for _, off, _ in p['calls']], source)
    delivered = [p for p in paths if not p['overflowed'] and
                 any(names[off][0] == args.handler_caller for _, off, _ in p['calls'])]
    if not delivered:
        print('count.py: no recorded allocation reached %s (%d recorded)' % (args.handler_caller, len(paths)),
              file=sys.stderr)
        return 2

    chosen = max(delivered, key=lambda p: len(p['calls'])) if args.longest else delivered[0]
    rows, left_out = count(chosen['calls'], names)
    entered = collections.Counter({rows[0][2]: 1})
    sequence, steps, reentries, climbs = [rows[0][2]], 0, 0, 0
    for depth, fn, fname, caller in rows[1:]:
        if fname == caller:
            continue
        steps += 1
        if entered[fname]:
            reentries += 1
        if caller.startswith('jvmpi/') and fname.startswith('jvmti_backend/'):
            climbs += 1
        entered[fname] += 1
        sequence.append(fname)

    print('allocation %d: %d calls, %d files (and %d calls of the agent into the layer, not counted)' %
          (chosen['nth'], len(rows), len(entered), left_out))
    if args.calls_too:
        for depth, fn, fname, _ in rows:
            print('  %s%s (%s)' % ('  ' * depth, fn, fname))
    print('files in order: ' + ' > '.join(sequence))
    print('entries per file:')
    for fname, n in entered.most_common():
        print('  %3d %s' % (n, fname))
    print('steps: %d' % steps)
    print('re-entries: %d' % reentries)
    print('climbs from jvmpi/ into jvmti_backend/: %d' % climbs)

    failed = False
    if args.max_reentries is not None and reentries > args.max_reentries:
        print('count.py: %d re-entries, over the %d allowed' % (reentries, args.max_reentries), file=sys.stderr)
        failed = True
    if args.max_climbs is not None and climbs > args.max_climbs:
        print('count.py: %d climbs, over the %d allowed' % (climbs, args.max_climbs), file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
