#!/usr/bin/env python3
"""The comparison report's figures (scripts/compare_report.py) on inputs made
here, whose agreement is worked out by hand below: top-N in common, share
overlap, totals and each row's diff, an item only one side has, a side that
is missing or cannot be read, and the events table.  No JVM: the ledger, the
histogram, the agent's CPU samples and what `jfr print --json` prints of a
recording are written by this test.  Also checks that
tests/integration/compare_rows.py, which the it_m_*.sh tests read reports
with, reads back the same figures.  Exits 1 on any failure."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
REPORT = os.path.join(SOURCE, "scripts", "compare_report.py")
ROWS = os.path.join(HERE, "compare_rows.py")
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
import compare_report as cr  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def equal(got, want, what):
    check(got == want, "%s: %r, expected %r" % (what, got, want))


# ---- the inputs ---------------------------------------------------------------------
# Live at the end (allocs - frees), JVMPI:      A 100 obj 1000 B, B 50/500, C 30/300, D 20/200
# (D only JVMPI); the histogram:                A 100/1000, B 60/600, C 10/100, E 45/400.
# Run allocations, JVMPI:                       A 10/1000, B 5/500, C 3/300, D 2/200
# by site:                                      M.a 1 alloc 100 B, M.b 19 / 1900 B.
LEDGER = """jvmpi-ledger\t1
pid\t4242
agent\t/opt/agents/libold.so
event\tOBJECT_ALLOC\t1\t200\t0\t0
event\tOBJECT_FREE\t1\t10\t0\t2
event\tGC_START\t1\t6\t0\t1
event\tGC_FINISH\t1\t6\t0\t1
event\tCLASS_LOAD\t1\t110\t0\t0
event\tCLASS_UNLOAD\t1\t2\t0\t0
event\tTHREAD_START\t1\t7\t0\t0
event\tMONITOR_WAIT\t0\t0\t0\t0
class_loads\t10
gc_windows\t3\t4\t2
class\tA\t110\t1100\t10\t1000\t10\t100
class\tB\t50\t500\t5\t500\t0\t0
class\tC\t30\t300\t3\t300\t0\t0
class\tD\t20\t200\t2\t200\t0\t0
site\tM.a\t1\t100
site\tM.b\t19\t1900
end
"""

HISTOGRAM = """ num     #instances         #bytes  class name (module)
-------------------------------------------------------
   1:           100           1000  A
   2:            60            600  B
   3:            45            400  E
   4:            10            100  C
Total           215           2100
"""

# JFR: allocation samples (class, weight, top frame or none), execution samples.
# By class: A 1200 (2 samples), B 500, F 100 (only JFR); by site: M.a 1100,
# M.b 600, (no Java frame) 100.  Execution: M.spin 3, M.other 1.
# Collections 0..3 (one of them reported twice, as phases are); class and
# thread statistics twice, the later one counts.


def frame(cls, name):
    return {"stackTrace": {"frames": [{"method": {"type": {"name": cls}, "name": name}}]}}


def jfr_events(alloc_class_of_first="A"):
    ev = []
    for cls, w, fr in ((alloc_class_of_first, 600, frame("M", "b")), ("A", 600, frame("M", "a")),
                       ("B", 500, frame("M", "a")), ("F", 100, {})):
        v = {"objectClass": None if cls is None else {"name": cls}, "weight": w}
        v.update(fr)
        ev.append({"type": "jdk.ObjectAllocationSample", "values": v})
    for m in ("spin", "spin", "spin", "other"):
        ev.append({"type": "jdk.ExecutionSample", "values": frame("M", m)})
    for g in (0, 1, 2, 3, 3):
        ev.append({"type": "jdk.GarbageCollection", "values": {"gcId": g}})
    for t, loaded in (("2024-01-01T10:00:01Z", 90), ("2024-01-01T10:00:02Z", 104)):
        ev.append({"type": "jdk.ClassLoadingStatistics",
                   "values": {"startTime": t, "loadedClassCount": loaded, "unloadedClassCount": 2}})
        ev.append({"type": "jdk.JavaThreadStatistics", "values": {"startTime": t, "accumulatedCount": loaded // 13}})
    return {"recording": {"events": ev}}


# The agent's CPU samples: M.spin 6, M.main 4 of 10.
CPU = """JAVA PROFILE 1.0.1, created Mon Jan  1 10:00:00 2024

CPU SAMPLES BEGIN (total = 10) Mon Jan  1 10:00:03 2024
rank   self  accum   count trace method
   1 60.00% 60.00%       6 300001 M.spin
   2 40.00% 100.00%       4 300002 M.main
CPU SAMPLES END
"""


def write(d, name, text):
    with open(os.path.join(d, name), "w", encoding="utf-8") as f:
        f.write(text)


def make_run(d, ledger=LEDGER, histogram=HISTOGRAM, jfr=None, cpu=CPU):
    os.makedirs(d, exist_ok=True)
    if ledger is not None:
        write(d, "ledger.tsv", ledger)
    if histogram is not None:
        write(d, "histogram.txt", histogram)
    write(d, "jfr.json", json.dumps(jfr if jfr is not None else jfr_events()))
    if cpu is not None:
        write(d, "agent.hprof.txt", cpu)


def report(d, *extra):
    cmd = [sys.executable, REPORT, "--out", d, "--command", "java Crafted", "--exit-code", "0",
           "--agent", "old", "--jdk", "/nonexistent-jdk", "--jfr-json", os.path.join(d, "jfr.json"),
           "--cpu-samples", os.path.join(d, "agent.hprof.txt")] + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    check(p.returncode == 0, "compare_report.py exited with %d: %s" % (p.returncode, p.stderr.strip()[-400:]))
    check("Traceback" not in p.stderr, "a traceback: %s" % p.stderr[-400:])
    return os.path.join(d, "report.txt")


def rows_tool(*args):
    p = subprocess.run([sys.executable, ROWS] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.stdout.strip() if p.returncode == 0 else "ERROR: " + p.stderr.strip()


def main():
    work = os.environ.get("WORK_ROOT") or tempfile.mkdtemp(prefix="test_compare_report.")
    shutil.rmtree(work, ignore_errors=True)

    # ---- CPU shares with enough samples: the sampling error of each difference ----------
    # agent M.a 250, M.b 300, M.c 450 of 1000; JFR M.a 590, M.b 310, M.c 100 of 1000.
    # 1.96 * sqrt(p1(1-p1)/1000 + p2(1-p2)/1000): M.a .25/.59: 4.1 pp, +34.0 beyond;
    # M.b .30/.31: 4.0 pp, +1.0 within; M.c .45/.10: 3.6 pp, -35.0 beyond.
    sampled = os.path.join(work, "sampled")
    ev = [{"type": "jdk.ExecutionSample", "values": frame("M", m)}
          for m, k in (("a", 590), ("b", 310), ("c", 100)) for _ in range(k)]
    make_run(sampled, ledger=LEDGER.replace("event\tOBJECT_ALLOC\t1", "event\tOBJECT_ALLOC\t0"),
             jfr={"recording": {"events": ev}},
             cpu=CPU.replace("total = 10", "total = 1000").replace(
                 "   1 60.00% 60.00%       6 300001 M.spin\n   2 40.00% 100.00%       4 300002 M.main\n",
                 "   1 45.00% 45.00%     450 300001 M.c\n   2 30.00% 75.00%     300 300002 M.b\n"
                 "   3 25.00% 100.00%     250 300003 M.a\n"))
    txt = report(sampled)
    for item, want in (("M.a", "+34.0 pp BEYOND ±4.1"), ("M.b", "+1.0 pp within ±4.0"),
                       ("M.c", "-35.0 pp BEYOND ±3.6")):
        equal(rows_tool("get", txt, "Hot methods", item, "diff"), want, "sampled hot %s diff" % item)
    equal(rows_tool("agreement", txt, "Hot methods"),
          "top-3 in common: 3 (100%); share overlap 65.0%; samples in methods both sampled: agent 1,000 of "
          "1,000, JFR 1,000 of 1,000; "
          "2 of the top-3 methods differ beyond sampling error (95%)", "sampled hot agreement")
    with open(txt, encoding="utf-8") as f:
        check("note: this run also tracked allocations" not in f.read(), "an allocation note without OBJECT_ALLOC")

    # ---- a full run -------------------------------------------------------------------
    full = os.path.join(work, "full")
    make_run(full)
    txt = txt_full = report(full)

    # The agreement lines, from the figures worked out above.
    # live: top-4 of each side, A B C in both; shares (bytes) JVMPI A .5 B .25 C .15 D .1,
    # histogram A 10/21 B 6/21 C 1/21 E 4/21: overlap 10/21 + .25 + 1/21 = 77.4%.
    equal(rows_tool("agreement", txt, "Live objects"),
          "top-4 in common: 3 (75%); share overlap 77.4%; total bytes: 2.0 KB vs 2.1 KB (+5.0%); "
          "total objects: 200 vs 215 (+7.5%)", "live agreement")
    # by class: JFR has 3 items, so top-3: A B C against A B F; overlap .5 + .25 (A's 2/3
    # and B's 5/18 are above JVMPI's); bytes 2000 vs 1800.
    equal(rows_tool("agreement", txt, "Allocation by class"),
          "top-3 in common: 2 (67%); share overlap 75.0%; total bytes: 2.0 KB vs 1.8 KB (-10.0%)",
          "allocation by class agreement")
    # by site: top-2 M.b M.a against M.a M.b; overlap min(.05, 11/18) + min(.95, 6/18) = 38.3%.
    equal(rows_tool("agreement", txt, "Allocation by site"),
          "top-2 in common: 2 (100%); share overlap 38.3%; total bytes: 2.0 KB vs 1.8 KB (-10.0%)",
          "allocation by site agreement")
    # hot: shares over the methods both sides sampled, M.spin alone: 6 of the agent's 10
    # samples, 3 of JFR's 4; M.main (agent) and M.other (JFR) named in notes.  Too few
    # samples for any difference to be told from sampling noise.
    equal(rows_tool("agreement", txt, "Hot methods"),
          "top-1 in common: 1 (100%); share overlap 100.0%; samples in methods both sampled: agent 6 of 10, "
          "JFR 3 of 4; too few to tell a real difference (fewer than 100 on a side)", "hot methods agreement")
    with open(txt, encoding="utf-8") as f:
        text = f.read()
    for note in ("   note: this run also tracked allocations (the agent enabled OBJECT_ALLOC)",
                 "   note: agent: 4 of its 10 samples (40%) are in methods the other side has no sample of, "
                 "left out of the shares; the most: M.main 4",
                 "   note: JFR: 1 of its 4 samples (25%) are in methods the other side has no sample of, "
                 "left out of the shares; the most: M.other 1"):
        check(note in text, "no line '%s'" % note)

    # Rows: the figures of each side, the diff; items only one side has.
    for section, item, col, want in (
            ("Live objects", "A", "l1", "1000"), ("Live objects", "A", "r2", "100"),
            ("Live objects", "A", "diff", "+0.0%"), ("Live objects", "B", "diff", "+20.0%"),
            ("Live objects", "C", "diff", "-66.7%"),
            ("Live objects", "D", "r1", "-"), ("Live objects", "D", "diff", "only JVMPI"),
            ("Live objects", "E", "l1", "-"), ("Live objects", "E", "diff", "only histogram"),
            ("Allocation by class", "A", "r1", "1200"), ("Allocation by class", "A", "r2", "2"),
            ("Allocation by class", "A", "diff", "+20.0%"), ("Allocation by class", "F", "diff", "only JFR"),
            ("Allocation by site", "M.a", "diff", "x11"), ("Allocation by site", "M.b", "diff", "-68.4%"),
            ("Allocation by site", "(no Java frame)", "r1", "100"),
            ("Allocation by site", "(no Java frame)", "diff", "only JFR"),
            ("Hot methods", "M.spin", "diff", "+0.0 pp")):
        equal(rows_tool("get", txt, section, item, col), want, "%s %s %s" % (section, item, col))
    equal(rows_tool("top", txt, "Hot methods", "r"), "M.spin", "JFR's hottest method")

    # The events: collections are the windows that served one (3 of the 6 GC_START,
    # 1 from JVM_SHUT_DOWN on, 2 for late frees only) against 4 distinct gcIds;
    # classes without the 10 array classes; JFR's later statistics.
    equal(rows_tool("count", txt, "collections"), "3 4", "collections")
    equal(rows_tool("count", txt, "classes loaded"), "100 104", "classes loaded")
    equal(rows_tool("count", txt, "classes unloaded"), "2 2", "classes unloaded")
    equal(rows_tool("count", txt, "threads started"), "7 8", "threads started")
    with open(txt, encoding="utf-8") as f:
        text = f.read()
    for words in ("standing for 4 VM collections", "+2 GC_START windows for late frees only",
                  "+1 in the agent's exit handler", "10 array classes left out"):
        check(words in text, "events note '%s' not in report.txt" % words)

    # The same figures computed in-process, and n never above the items a side has.
    cr.TOP = 2
    c = [x for x in cr.comparisons(cr.read_ledger(os.path.join(full, "ledger.tsv"), 0),
                                   cr.read_histogram(os.path.join(full, "histogram.txt")),
                                   cr.read_jfr(None, None, os.path.join(full, "jfr.json")),
                                   cr.read_cpu_samples(os.path.join(full, "agent.hprof.txt")))
         if x.key == "live"][0]
    a = c.agreement()
    equal((a["n"], a["common"]), (2, 2), "live top-2 (A B on both sides)")
    check(abs(a["overlap"] - (10 / 21 + 0.25 + 1 / 21)) < 1e-12, "live overlap %r" % a["overlap"])
    cr.TOP = 20

    # Long names are written whole in report.txt, cut on the terminal only.
    long_name = "pkg.with.a.rather.long.name.Outer$Inner$AnotherInner$YetAnotherInnerClass"
    longrun = os.path.join(work, "long")
    make_run(longrun, ledger=LEDGER.replace("class\tD\t", "class\t%s\t" % long_name),
             histogram=HISTOGRAM.replace("  E\n", "  %sX\n" % long_name))
    txt = report(longrun)
    equal(rows_tool("get", txt, "Live objects", long_name, "l1"), "200", "a long name's row")
    equal(rows_tool("get", txt, "Live objects", long_name + "X", "r1"), "400", "a long name one letter longer")

    # ---- missing sides ---------------------------------------------------------------
    # No histogram: its side is missing, the live table has no agreement figure, the rest is there.
    nohist = os.path.join(work, "nohist")
    make_run(nohist, histogram=None)
    txt = report(nohist, "--histogram-missing", "no histogram was taken: the JVM ended without VM death")
    equal(rows_tool("missing", txt, "Live objects"),
          "histogram (jcmd GC.class_histogram): MISSING: no histogram was taken: the JVM ended without VM death",
          "no histogram: missing line")
    equal(rows_tool("agreement", txt, "Live objects"), "no agreement figure: one side is missing",
          "no histogram: agreement")
    equal(rows_tool("get", txt, "Live objects", "D", "l1"), "200", "no histogram: JVMPI's side still shown")
    equal(rows_tool("get", txt, "Live objects", "D", "diff"), "", "no histogram: no diff")
    check(rows_tool("agreement", txt, "Allocation by class").startswith("top-3 in common: 2"),
          "no histogram: the other tables are still compared")

    # A recording whose JSON the reader trips on (a sample with no class): JFR's
    # sides are missing with a one-line reason, the rest of the report is written.
    badjfr = os.path.join(work, "badjfr")
    make_run(badjfr, jfr=jfr_events(alloc_class_of_first=None))
    txt = report(badjfr)
    got = rows_tool("missing", txt, "Allocation by class")
    check(got.startswith("JFR (allocation samples, weighted): MISSING: could not be read: TypeError")
          and "\n" not in got, "unreadable JFR: %r" % got)
    equal(rows_tool("count", txt, "collections"), "3 -", "unreadable JFR: the ledger's side of the events")
    check(rows_tool("agreement", txt, "Live objects").startswith("top-4 in common: 3"),
          "unreadable JFR: the live table is still compared")

    # The layer stopped the JVM at start-up (an agent it could not load): the ledger
    # has its first two lines only, and the report quotes the layer's error line.
    noagent = os.path.join(work, "noagent")
    make_run(noagent, ledger="jvmpi-ledger\t1\npid\t4242\n", histogram=None, cpu=None)
    error = "JVMPI layer: error: cannot find JVMPI agent 'nosuch': no libnosuch.so in the JDK library directory"
    write(noagent, "stderr.txt", "Picked up JAVA_TOOL_OPTIONS: -Dx=y\n%s\nError occurred during "
          "initialization of VM\n" % error)
    txt = report(noagent, "--jvm-stderr", os.path.join(noagent, "stderr.txt"),
                 "--histogram-missing", "no histogram was taken: the JVM ended without VM death")
    equal(rows_tool("missing", txt, "Live objects").splitlines()[0],
          "JVMPI (OBJECT_ALLOC - OBJECT_FREE): MISSING: the ledger is incomplete: the layer stopped the JVM "
          "(exit code 0): " + error, "agent not loaded")
    # Without the layer's line, an incomplete ledger is a JVM that died.
    txt = report(noagent, "--histogram-missing", "none")
    check("killed, crashed, or halted" in rows_tool("missing", txt, "Live objects"),
          "incomplete ledger without an error line")
    # A CPU samples file the user named that is not there.
    txt = report(noagent, "--cpu-samples-named")
    check("the file --cpu-samples names, %s, does not exist after the run" % os.path.join(noagent, "agent.hprof.txt")
          in rows_tool("missing", txt, "Hot methods"), "a named CPU samples file that is missing")

    # ---- JDK 8's recording: allocations from TLAB events ----------------------------------
    # The full run's allocation samples as JDK 8 records them (a new TLAB weighs its size,
    # an allocation outside one its own): the same figures.  Beside allocation samples
    # (a later JDK recording both), the TLAB events are left out.
    def as_tlab(e, kind):
        if e["type"] != "jdk.ObjectAllocationSample":
            return e
        v = dict(e["values"])
        w = v.pop("weight")
        if kind == "jdk.ObjectAllocationInNewTLAB":
            v["tlabSize"], v["allocationSize"] = w, 16
        else:
            v["allocationSize"] = w
        return {"type": kind, "values": v}
    events = jfr_events()["recording"]["events"]
    tlab = [as_tlab(e, "jdk.ObjectAllocationInNewTLAB" if i % 2 else "jdk.ObjectAllocationOutsideTLAB")
            for i, e in enumerate(events)]
    extra = [as_tlab(e, "jdk.ObjectAllocationInNewTLAB") for e in events if e["type"] == "jdk.ObjectAllocationSample"]
    for name, evs in (("jdk8", tlab), ("both", extra + events + extra)):
        d = os.path.join(work, name)
        make_run(d, jfr={"recording": {"events": evs}})
        t = report(d)
        for section in ("Allocation by class", "Allocation by site"):
            equal(rows_tool("agreement", t, section), rows_tool("agreement", txt_full, section),
                  "%s: %s agreement as from allocation samples" % (name, section))

    if failures:
        print("%d checks failed (inputs and reports in %s)" % (len(failures), work))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
