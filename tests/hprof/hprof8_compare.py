#!/usr/bin/env python3
"""Compares the HPROF work-alike's output (through the layer) with JDK 8's own
JVM TI HPROF on the same program, for tests/integration/it_hprof_jdk8.sh:

  hprof8_compare.py sites   OURS JDK8 TOP TOL MIN  per-class allocated objects
  hprof8_compare.py samples OURS JDK8 TOP MIN AMONG  top methods by CPU samples
  hprof8_compare.py times   OURS JDK8 TOP TOL MIN  calls per method (cpu=times)
  hprof8_compare.py dump    OURS JDK8 TOL          classes in binary heap dumps

TOP is how many of JDK 8's first entries are compared, TOL the relative
difference allowed (0.1 is 10%), MIN how many of the TOP must be within it
(for samples: how many of JDK 8's TOP methods must be among the work-alike's
AMONG first).  Prints one line per item compared and exits 1
when one is out of bounds."""

import struct
import sys
from collections import Counter


def section(path, start, end):
    rows, on = [], False
    with open(path, encoding="latin-1") as f:
        for line in f:
            if line.startswith(start):
                on, rows = True, []
            elif line.startswith(end):
                on = False
            elif on:
                p = line.split()
                if p and p[0].isdigit():
                    rows.append(p)
    return rows


def per_key(rows, col, keycol, keep=lambda k: True):
    c = Counter()
    for p in rows:
        k = " ".join(p[keycol:])
        if keep(k):
            c[k] += int(p[col])
    return c


def within(a, b, tol):
    return abs(a - b) <= tol * max(a, b)


def compare_counts(ours, theirs, top, tol, need, what):
    good = 0
    for k, n in theirs.most_common(top):
        # The work-alike may shorten a long method name; JDK 8's is whole.
        m = ours.get(k)
        if m is None:
            m = sum(v for q, v in ours.items() if len(q) >= 40 and k.startswith(q))
        ok = within(m, n, tol)
        good += ok
        print(f"{'within' if ok else 'outside'} {tol:.0%}: {what} {k}: jdk8 {n}, layer {m}")
    print(f"{good} of JDK 8's top {top} within {tol:.0%} (at least {need} wanted)")
    return 0 if good >= need else 1


def sites(ours, theirs, top, tol, need):
    # Arrays made by bytecode have no OBJECT_ALLOC on JDK 8 yet
    # (docs/differences.md), and java.lang.Class objects are no allocation
    # JDK 8's HPROF counts: both are left out.
    keep = lambda k: not k.endswith("[]") and k != "java.lang.Class"
    o = per_key(section(ours, "SITES BEGIN", "SITES END"), 6, 8, keep)
    t = per_key(section(theirs, "SITES BEGIN", "SITES END"), 6, 8, keep)
    return compare_counts(o, t, top, tol, need, "allocated objects of")


def samples(ours, theirs, top, need, among):
    o = per_key(section(ours, "CPU SAMPLES BEGIN", "CPU SAMPLES END"), 3, 5)
    t = per_key(section(theirs, "CPU SAMPLES BEGIN", "CPU SAMPLES END"), 3, 5)
    mine = [k for k, _ in o.most_common(among)]
    found = 0
    for k, n in t.most_common(top):
        hit = any(k == q or (len(q) >= 40 and k.startswith(q)) for q in mine)
        found += hit
        print(f"{'in' if hit else 'not in'} the layer's top {among}: {k} ({n} samples on jdk8)")
    print(f"{found} of JDK 8's top {top} methods are in the layer's top {among} (at least {need} wanted)")
    return 0 if found >= need else 1


def times(ours, theirs, top, tol, need):
    o = per_key(section(ours, "CPU TIME (ms) BEGIN", "CPU TIME (ms) END"), 3, 5)
    t = per_key(section(theirs, "CPU TIME (ms) BEGIN", "CPU TIME (ms) END"), 3, 5)
    return compare_counts(o, t, top, tol, need, "calls of")


def dump_classes(path):
    """The names of the classes a JAVA PROFILE binary file loads (LOAD CLASS)."""
    with open(path, "rb") as f:
        data = f.read()
    nul = data.index(b"\0")
    idsize = struct.unpack(">I", data[nul + 1:nul + 5])[0]
    pos, names, loaded = nul + 13, {}, []
    idfmt = ">Q" if idsize == 8 else ">I"
    while pos + 9 <= len(data):
        tag, length = data[pos], struct.unpack(">I", data[pos + 5:pos + 9])[0]
        body = data[pos + 9:pos + 9 + length]
        if tag == 0x01:
            names[struct.unpack(idfmt, body[:idsize])[0]] = body[idsize:].decode("utf-8", "replace")
        elif tag == 0x02:
            loaded.append(struct.unpack(idfmt, body[8 + idsize:8 + 2 * idsize])[0])
        pos += 9 + length
    return {java_name(names.get(i, "?")) for i in loaded}


PRIMS = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int",
         "J": "long", "F": "float", "D": "double"}


def java_name(n):
    """One spelling for both: JDK 8's HPROF names arrays as descriptors ([B,
    [Ljava/lang/String;), the work-alike as Java does (byte[])."""
    n = n.replace("/", ".")
    dims = len(n) - len(n.lstrip("["))
    if dims:
        e = n[dims:]
        n = (e[1:-1] if e.startswith("L") else PRIMS.get(e, e)) + "[]" * dims
    return n


def dump(ours, theirs, tol):
    """Every class of the work-alike's dump must be in JDK 8's; JDK 8's may
    have more (TOL of its own at most): its HPROF names every class loaded,
    JVMPI only those prepared (CLASS_LOAD)."""
    # Each HPROF loads a class of its own into the program.
    o = {c for c in dump_classes(ours) if not c.startswith("jvmpi.layer.")}
    t = {c for c in dump_classes(theirs) if not c.startswith("com.sun.demo.jvmti.hprof.")}
    print(f"classes in the dump: jdk8 {len(t)}, layer {len(o)}, both {len(o & t)}")
    for k in sorted(o - t)[:20]:
        print(f"only the layer's: {k}")
    for k in sorted(t - o)[:20]:
        print(f"only jdk8's: {k}")
    ok = len(o) > 0 and not (o - t) and len(t - o) <= tol * len(t)
    print(f"{'ok' if ok else 'FAIL'} {len(o - t)} classes in the layer's dump only (none allowed), "
          f"{len(t - o)} in JDK 8's only (at most {tol:.0%} of {len(t)} allowed)")
    return 0 if ok else 1


def main(argv):
    cmd = argv[1]
    if cmd == "sites":
        return sites(argv[2], argv[3], int(argv[4]), float(argv[5]), int(argv[6]))
    if cmd == "samples":
        return samples(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]))
    if cmd == "times":
        return times(argv[2], argv[3], int(argv[4]), float(argv[5]), int(argv[6]))
    if cmd == "dump":
        return dump(argv[2], argv[3], float(argv[4]))
    print(f"hprof8_compare.py: unknown command '{cmd}'", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv) else 0)
