#!/usr/bin/env python3
"""The comparison report of scripts/compare.sh: what a legacy JVMPI agent was
told (the layer's ledger, the agent's CPU samples) beside what JFR and a class
histogram saw of the same run.  Writes report.txt and report.html into the
output directory and prints the text.  Python's standard library only; the
JFR recording is read through the JDK's own `jfr print --json` (or, with
--jfr-json, from what that printed earlier)."""

import argparse
import datetime
import html
import json
import os
import re
import subprocess
import sys

TOP = 20            # the top items whose overlap is the agreement figure
CHART_ROWS = 15     # bars in a chart
HTML_ROWS = 60      # rows of a table in the page
TEXT_ROWS = 20      # rows of a table on the terminal
FILE_ROWS = 200     # rows of a table in report.txt
MIN_SAMPLES = 100   # fewer CPU samples on a side: shares too rough to compare
Z95 = 1.96          # a difference beyond Z95 standard errors is marked

JVMPI_COLOR = "#1f6fb2"
OTHER_COLOR = "#e07b00"

# JDK 8 has no allocation sample event: its recordings have an event for
# each new TLAB and each allocation outside one (compare_jfc.py).
JFR_EVENTS = ("jdk.ObjectAllocationSample,jdk.ExecutionSample,jdk.GarbageCollection,"
              "jdk.ClassLoadingStatistics,jdk.JavaThreadStatistics,"
              "jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationOutsideTLAB")
TLAB_WEIGHTS = {"jdk.ObjectAllocationInNewTLAB": "tlabSize", "jdk.ObjectAllocationOutsideTLAB": "allocationSize"}


# ---- names -------------------------------------------------------------------

PRIMITIVES = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int", "J": "long",
              "F": "float", "D": "double"}


def plain(name):
    """One spelling for the names each tool gives hidden classes (Foo$$Lambda$12/0x..,
    Foo$$Lambda$12.0x.., Foo$$Lambda$12+0x...123): lambda proxies lose their
    number and address, other hidden classes their address."""
    name = re.sub(r"[./+]0x[0-9a-fA-F]{6,}(\.\d+)?", "", name)
    return re.sub(r"\$\$Lambda\$\d+", "$$Lambda", name)


def class_name(raw):
    """java.lang.String, int[], java.lang.Object[][] from any of the forms the
    JVM's tools print ('java/lang/String', '[I', '[Ljava.lang.Object;')."""
    name = raw.replace("/", ".")
    dims = len(name) - len(name.lstrip("["))
    base = name[dims:]
    if dims:
        if base.startswith("L") and base.endswith(";"):
            base = base[1:-1]
        else:
            base = PRIMITIVES.get(base, base)
    return plain(base) + "[]" * dims


def frame_method(frame):
    method = frame["method"]
    return plain(class_name(method["type"]["name"]) + "." + method["name"])


# ---- reading each side ----------------------------------------------------------


class Missing(Exception):
    """A side the report cannot show, and why."""


def layer_error(stderr_path):
    """The first error line the layer wrote on the JVM's standard error, or None."""
    if not stderr_path or not os.path.exists(stderr_path):
        return None
    with open(stderr_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("JVMPI layer: error: "):
                return line.strip()
    return None


def read_ledger(path, exit_code, stderr_path=None):
    error = layer_error(stderr_path)
    if not os.path.exists(path):
        if error:
            raise Missing("the layer wrote no ledger: it stopped the JVM at start-up: %s" % error)
        raise Missing("the layer wrote no ledger: the JVM or the agent did not start (see the command's output)")
    with open(path, encoding="utf-8", errors="replace") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    if not rows or rows[-1] != ["end"]:
        if error:
            raise Missing("the ledger is incomplete: the layer stopped the JVM (exit code %d): %s" % (exit_code, error))
        raise Missing("the ledger is incomplete: the JVM ended without VM death "
                      "(exit code %d: it was killed, crashed, or halted)" % exit_code)
    led = {"events": {}, "classes": {}, "sites": {}, "agents": [], "array_class_loads": 0, "gc": None}
    for r in rows:
        if r[0] == "event" and len(r) == 6:
            led["events"][r[1]] = {"enabled": r[2] == "1", "delivered": int(r[3]),
                                   "requested": int(r[4]), "from_shutdown": int(r[5])}
        elif r[0] == "class" and len(r) == 8:
            c = led["classes"].setdefault(class_name(r[1]), [0] * 6)
            for k, x in enumerate(r[2:]):
                c[k] += int(x)
        elif r[0] == "site" and len(r) == 4:
            s = led["sites"].setdefault(plain(r[1]), [0, 0])
            s[0] += int(r[2])
            s[1] += int(r[3])
        elif r[0] == "class_loads" and len(r) == 2:
            led["array_class_loads"] = int(r[1])
        elif r[0] == "agent" and len(r) == 2:
            led["agents"].append(r[1])
        elif r[0] == "gc_windows" and len(r) == 4:
            led["gc"] = {"collection_windows": int(r[1]), "collections": int(r[2]), "frees_only_windows": int(r[3])}
    return led


def read_histogram(path):
    if not os.path.exists(path):
        raise Missing("no histogram was taken")
    classes = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", line)
            if m:
                c = classes.setdefault(class_name(m.group(3)), {"bytes": 0, "objects": 0})
                c["objects"] += int(m.group(1))
                c["bytes"] += int(m.group(2))
    if not classes:
        raise Missing("jcmd GC.class_histogram printed no classes (%s)" % path)
    return classes


def read_jfr(jfr_tool, path, json_path=None):
    """The recording at path, read with jfr_tool; or, with json_path, what
    `jfr print --json` printed of it earlier."""
    if json_path:
        if not os.path.exists(json_path):
            raise Missing("no such file: %s" % json_path)
        with open(json_path, "rb") as f:
            printed = f.read()
    else:
        if not os.path.exists(path):
            raise Missing("JFR wrote no recording: the JVM stopped before JFR could start or dump it")
        proc = subprocess.run([jfr_tool, "print", "--json", "--stack-depth", "1", "--events", JFR_EVENTS, path],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise Missing("jfr print failed on %s: %s" % (path, proc.stderr.decode(errors="replace").strip()[:300]))
        printed = proc.stdout
    events = json.loads(printed)["recording"]["events"]
    jfr = {"alloc_class": {}, "alloc_site": {}, "exec": {}, "gc_ids": set(), "class_stats": None,
           "thread_stats": None, "alloc_samples": 0, "exec_samples": 0}
    sample_seen = tlab_seen = False
    for e in events:
        t, v = e["type"], e["values"]
        frames = ((v.get("stackTrace") or {}).get("frames")) or []
        top = frame_method(frames[0]) if frames else "(no Java frame)"
        if t == "jdk.ObjectAllocationSample" or t in TLAB_WEIGHTS:
            # Of a recording that has both, the allocation samples alone.
            if t in TLAB_WEIGHTS:
                tlab_seen = True
                if sample_seen:
                    continue
            elif not sample_seen:
                sample_seen = True
                if tlab_seen:
                    jfr.update(alloc_class={}, alloc_site={}, alloc_samples=0)
            jfr["alloc_samples"] += 1
            for table, key in (("alloc_class", class_name(v["objectClass"]["name"])), ("alloc_site", top)):
                s = jfr[table].setdefault(key, {"bytes": 0, "samples": 0})
                s["bytes"] += v["weight"] if t not in TLAB_WEIGHTS else v[TLAB_WEIGHTS[t]]
                s["samples"] += 1
        elif t == "jdk.ExecutionSample":
            jfr["exec_samples"] += 1
            s = jfr["exec"].setdefault(top, {"samples": 0})
            s["samples"] += 1
        elif t == "jdk.GarbageCollection":
            jfr["gc_ids"].add(v["gcId"])
        elif t == "jdk.ClassLoadingStatistics":
            jfr["class_stats"] = max(jfr["class_stats"] or v, v, key=lambda x: x["startTime"])
        elif t == "jdk.JavaThreadStatistics":
            jfr["thread_stats"] = max(jfr["thread_stats"] or v, v, key=lambda x: x["startTime"])
    return jfr


def read_cpu_samples(path, named=False):
    """The last CPU SAMPLES section of an HPROF text profile: samples by method
    (the top frame; a method may rank under several traces), and the total.
    named: the user named the file (--cpu-samples)."""
    if not os.path.exists(path):
        if named:
            raise Missing("the file --cpu-samples names, %s, does not exist after the run" % path)
        raise Missing("the agent wrote no profile at %s" % path)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    sections = re.findall(r"^CPU SAMPLES BEGIN \(total = (\d+)\)[^\n]*\n(.*?)^CPU SAMPLES END", text, re.M | re.S)
    if not sections:
        raise Missing("the agent's profile %s has no CPU SAMPLES section" % path)
    total, body = sections[-1]
    methods = {}
    for line in body.splitlines():
        p = line.split()
        if len(p) >= 6 and p[0].isdigit():
            s = methods.setdefault(plain(p[5]), {"samples": 0})
            s["samples"] += int(p[3])
    if int(total) == 0:
        raise Missing("the agent's profile %s holds no CPU sample (total = 0)" % path)
    return methods, int(total)


# ---- comparing -------------------------------------------------------------------


class Side:
    """One tool's figures for one comparison: item -> {field: number}."""

    def __init__(self, short, label, fields, values=None, missing=None, total=None):
        self.short, self.label, self.fields = short, label, fields  # fields: [(key, heading)], the first ranks
        self.values, self.missing = values or {}, missing
        self.total = total                          # of the ranking field, when not the sum
        self.sampled_total = total                  # all samples, when values keep only some

    def measure(self, item):
        return self.values.get(item, {}).get(self.fields[0][0], 0)

    def sum(self, field):
        return sum(v.get(field, 0) for v in self.values.values())

    def grand(self):
        return self.total if self.total is not None else self.sum(self.fields[0][0])

    def share(self, item):
        g = self.grand()
        return self.measure(item) / g if g else 0.0

    def top(self, n):
        ranked = sorted(self.values, key=lambda k: (-self.measure(k), k))
        return [k for k in ranked if self.measure(k) > 0][:n]


class Comparison:
    def __init__(self, key, title, item, left, right, explain, relative=True, sampled=False, notes=()):
        self.key, self.title, self.item = key, title, item
        self.left, self.right, self.explain = left, right, explain
        self.relative = relative    # the ranking figures are comparable as they are (else: shares)
        self.sampled = sampled      # each side counts samples: its shares carry a sampling error
        self.notes = list(notes)    # what the reader must know about this run's figures

    def both(self):
        return self.left.missing is None and self.right.missing is None

    def enough_samples(self):
        return self.sampled and self.both() and min(self.left.grand(), self.right.grand()) >= MIN_SAMPLES

    def error(self, item):
        """Z95 standard errors of the difference of item's two shares (each a
        proportion of its side's samples)."""
        var = 0.0
        for s in (self.left, self.right):
            p, n = s.share(item), s.grand()
            var += p * (1 - p) / n if n else 0.0
        return Z95 * var ** 0.5

    def beyond_error(self, item):
        return self.enough_samples() and abs(self.right.share(item) - self.left.share(item)) > self.error(item)

    def agreement(self):
        """The overlap of the two top-n lists (n: TOP, or fewer when a side has
        fewer items), the overlap of the two distributions (sum of the smaller
        share of each item), and each field's totals."""
        if not self.both():
            return None
        n = min(TOP, len(self.left.top(TOP)), len(self.right.top(TOP)))
        common = len(set(self.left.top(n)) & set(self.right.top(n))) if n else 0
        items = set(self.left.values) | set(self.right.values)
        overlap = sum(min(self.left.share(i), self.right.share(i)) for i in items)
        totals = []
        if self.relative:
            l_field, r_field = self.left.fields[0], self.right.fields[0]
            totals.append((l_field[1], self.left.grand(), self.right.grand()))
            l_rest = dict(self.left.fields[1:])
            for k, h in self.right.fields[1:]:
                if k in l_rest:
                    totals.append((h, self.left.sum(k), self.right.sum(k)))
        return {"n": n, "common": common, "overlap": overlap, "totals": totals}

    def rows(self):
        items = set(self.left.values) | set(self.right.values)
        return sorted(items, key=lambda i: (-max(self.left.share(i), self.right.share(i)), i))

    def diff(self, item):
        """(text, number) of how the right side differs from the left on item."""
        if not self.both():
            return "", None
        if self.relative:
            a, b = self.left.measure(item), self.right.measure(item)
            if a == 0 or b == 0:
                return "only " + (self.left.short if a else self.right.short), None
            d = (b - a) / a
            return ("%+.1f%%" % (100 * d) if d < 9.995 else "x%.0f" % (b / a)), d
        d = self.right.share(item) - self.left.share(item)
        text = "%+.1f pp" % (100 * d)
        if self.enough_samples():
            text += " %s ±%.1f" % ("BEYOND" if self.beyond_error(item) else "within", 100 * self.error(item))
        return text, d


def rel(a, b):
    return (b - a) / a if a else None


def fmt_num(x):
    return "{:,}".format(int(round(x)))


def fmt_bytes(x):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(x) >= size:
            return "%.1f %s" % (x / size, unit)
    return "%d bytes" % x


def fmt_rel(d):
    return "n/a" if d is None else "%+.1f%%" % (100 * d)


def missing_text(c):
    both = c.left.missing and c.right.missing
    return "both sides are missing" if both else "one side is missing"


def agreement_text(c):
    a = c.agreement()
    if a is None:
        return "no agreement figure: " + missing_text(c)
    parts = ["top-%d in common: %d (%.0f%%)" % (a["n"], a["common"], 100 * a["common"] / a["n"] if a["n"] else 0),
             "share overlap %.1f%%" % (100 * a["overlap"])]
    for heading, l, r in a["totals"]:
        f = fmt_bytes if "bytes" in heading else fmt_num
        parts.append("total %s: %s vs %s (%s)" % (heading, f(l), f(r), fmt_rel(rel(l, r))))
    if c.sampled:
        parts.append(sampling_text(c, a["n"]))
    return "; ".join(parts)


def sampling_text(c, n):
    counts = "samples in methods both sampled: %s %s of %s, %s %s of %s" % (
        c.left.short, fmt_num(c.left.grand()), fmt_num(c.left.sampled_total),
        c.right.short, fmt_num(c.right.grand()), fmt_num(c.right.sampled_total))
    if not c.enough_samples():
        return counts + "; too few to tell a real difference (fewer than %d on a side)" % MIN_SAMPLES
    top = set(c.left.top(n)) | set(c.right.top(n))
    beyond = sorted(i for i in top if c.beyond_error(i))
    return counts + "; %d of the top-%d methods differ beyond sampling error (95%%)" % (len(beyond), n)


# ---- the comparisons, from what was read --------------------------------------------


def need_events(led, names, what):
    for n in names:
        if not led["events"].get(n, {}).get("enabled"):
            raise Missing("the agent did not enable %s, so the layer delivered no %s" % (n, what))


def side(short, label, fields, build):
    """A Side from build(), or a missing one saying why."""
    try:
        values, total = build()
        return Side(short, label, fields, values, total=total)
    except Missing as m:
        return Side(short, label, fields, missing=str(m))


def comparisons(led, hist, jfr, cpu):
    """led, hist, jfr, cpu: what was read, or a Missing."""
    def get(x):
        if isinstance(x, Missing):
            raise x
        return x

    def live():
        l = get(led)
        need_events(l, ("OBJECT_ALLOC", "OBJECT_FREE"), "allocations and frees to count live objects from")
        vals = {k: {"bytes": v[1] - v[5], "objects": v[0] - v[4]} for k, v in l["classes"].items() if v[0] - v[4] > 0}
        return vals, None

    def alloc_class():
        l = get(led)
        need_events(l, ("OBJECT_ALLOC",), "allocations")
        return {k: {"bytes": v[3], "objects": v[2]} for k, v in l["classes"].items() if v[2] > 0}, None

    def alloc_site():
        l = get(led)
        need_events(l, ("OBJECT_ALLOC",), "allocations")
        return {k: {"bytes": v[1], "objects": v[0]} for k, v in l["sites"].items()}, None

    def jfr_table(name):
        def build():
            j = get(jfr)
            if name != "exec" and j["alloc_samples"] == 0:
                raise Missing("the recording holds no allocation sample (jdk.ObjectAllocationSample)")
            if name == "exec" and j["exec_samples"] == 0:
                raise Missing("the recording holds no execution sample (jdk.ExecutionSample): the program ran too briefly")
            return j[name], None
        return build

    def agent_cpu():
        methods, total = get(cpu)
        return methods, total

    hot_notes = []
    if not isinstance(led, Missing) and led["events"].get("OBJECT_ALLOC", {}).get("enabled"):
        hot_notes.append("this run also tracked allocations (the agent enabled OBJECT_ALLOC): every allocation "
                         "then runs the agent's handler, which moves the agent's CPU samples into allocating "
                         "methods; compare CPU profiles from a run with CPU sampling alone (cpu=samples)")

    def common_methods(c):
        """CPU shares are compared over the methods both sides sampled: what
        one side alone saw (the agent: JFR's own start-up before the
        recording began, threads in native code; JFR: threads the agent did
        not sample) is named in a note, not mixed into the shares."""
        if not c.both():
            return c
        common = set(c.left.values) & set(c.right.values)
        for s in (c.left, c.right):
            alone = sorted(((s.measure(i), i) for i in s.values if i not in common), reverse=True)
            total, outside = s.grand(), sum(n for n, _ in alone)
            s.values = {i: v for i, v in s.values.items() if i in common}
            s.total = None
            s.sampled_total = total
            if outside:
                c.notes.append("%s: %s of its %s samples (%.0f%%) are in methods the other side has no sample of, "
                               "left out of the shares; the most: %s" % (
                                   s.short, fmt_num(outside), fmt_num(total), 100.0 * outside / total,
                                   ", ".join("%s %s" % (i, fmt_num(n)) for n, i in alone[:3])))
        return c

    jvmpi_bytes = [("bytes", "bytes"), ("objects", "objects")]
    jfr_bytes = [("bytes", "bytes (est.)"), ("samples", "samples")]
    comps = [
        Comparison("live", "Live objects at the end, by class", "class",
                   side("JVMPI", "JVMPI (OBJECT_ALLOC - OBJECT_FREE)", jvmpi_bytes, live),
                   side("histogram", "histogram (jcmd GC.class_histogram)", [("bytes", "bytes"), ("objects", "objects")],
                        lambda: (get(hist), None)),
                   "The layer's count of what it told the agent: every OBJECT_ALLOC minus every OBJECT_FREE, per "
                   "class, when the VM died; beside it the class histogram jcmd took of the same heap a moment "
                   "later (after a full collection: reachable objects only). JVMPI counts an unreachable object as "
                   "live until a collection frees it, unless the agent collected at exit (the HPROF work-alike does "
                   "with heap=sites)."),
        Comparison("alloc_class", "Allocation by class", "class",
                   side("JVMPI", "JVMPI (every OBJECT_ALLOC)", jvmpi_bytes, alloc_class),
                   side("JFR", "JFR (allocation samples, weighted)", jfr_bytes, jfr_table("alloc_class")),
                   "Bytes allocated while the program ran: on the JVMPI side every allocation the agent was told of "
                   "(not the objects already in the heap at start-up); on the JFR side the weights of its "
                   "jdk.ObjectAllocationSample events, each standing for the bytes its thread allocated since the "
                   "previous sample. JFR's figures are estimates: an item with k samples is off by roughly "
                   "1/sqrt(k), so rows with few samples can differ a lot, and a thread's first sample also "
                   "stands for what it allocated before the recording started. JFR records from the end of its "
                   "own start-up, the layer from VM init: what JFR's start-up allocates (jdk.jfr.*, "
                   "jdk.internal.org.objectweb.asm.*) is on the JVMPI side only."),
        Comparison("alloc_site", "Allocation by site (the allocating method)", "method",
                   side("JVMPI", "JVMPI (every OBJECT_ALLOC)", jvmpi_bytes, alloc_site),
                   side("JFR", "JFR (allocation samples, weighted)", jfr_bytes, jfr_table("alloc_site")),
                   "The same allocations by the method that made them (the top frame of the stack). Same "
                   "sampling error on the JFR side as above."),
        Comparison("hot", "Hot methods (CPU samples)", "method",
                   side("agent", "agent (CPU SAMPLES)", [("samples", "samples")], agent_cpu),
                   side("JFR", "JFR (execution samples)", [("samples", "samples")], jfr_table("exec")),
                   "Where the threads were running when sampled, by top-frame method: the legacy agent's CPU "
                   "samples (the HPROF work-alike's cpu=samples, every 10 ms) beside JFR's jdk.ExecutionSample, "
                   "taken at the same interval. The two count differently, so shares are compared, not counts. "
                   "Shares are taken over the methods both sides sampled; what one side alone saw is named in a "
                   "note. Each share is an estimate from that side's samples: with n samples a share p is off by "
                   "up to 1.96*sqrt(p(1-p)/n) (95%). The diff column gives the difference of the two shares, and whether "
                   "it is BEYOND that error of both sides together (a real difference between what the two tools "
                   "saw) or within it (sampling noise). With fewer than 100 samples on a side nothing is marked. "
                   "The two tools can really disagree: the agent asks where each thread is at the moment it "
                   "samples, from any state; JFR samples only threads running Java code, and attributes the "
                   "sample to the Java frame it can walk to, so time in intrinsics and in code JFR cannot walk "
                   "lands elsewhere. The agent samples from VM init, JFR from the end of its own start-up.",
                   relative=False, sampled=True, notes=hot_notes),
    ]
    comps[-1] = common_methods(comps[-1])
    return comps


def counts(led, jfr):
    """(what, jvmpi, jfr, note) rows: a figure is a number or a Missing."""
    def ledger_count(event, subtract=None):
        if isinstance(led, Missing):
            return led, ""
        e = led["events"].get(event)
        if not e or not e["enabled"]:
            return Missing("the agent did not enable %s" % event), ""
        return subtract(e) if subtract else (e["delivered"], "")

    def jfr_value(pick, what):
        if isinstance(jfr, Missing):
            return jfr
        try:
            return pick(jfr)
        except (KeyError, TypeError):
            return Missing("the recording holds no %s" % what)

    def gcs(e):
        """GC_START windows that served a collection: the layer delivers a
        collection's frees in a window of its own, and frees the VM posts late
        get another window, with no collection in it."""
        notes = []
        w = led["gc"]
        if w is None:   # a ledger of an earlier layer: windows only
            n = e["delivered"] - e["from_shutdown"]
            notes.append("GC_START windows, some of them for late frees only")
        else:
            n = w["collection_windows"]
            if w["collections"] != n:
                notes.append("standing for %d VM collections" % w["collections"])
            if w["frees_only_windows"]:
                notes.append("+%d GC_START windows for late frees only" % w["frees_only_windows"])
        if e["from_shutdown"]:
            notes.append("+%d in the agent's exit handler, after JFR had stopped" % e["from_shutdown"])
        return n, "; ".join(notes)

    def loads(e):
        arrays = led["array_class_loads"]
        return e["delivered"] - arrays, ("%d array classes left out (JFR does not count them)" % arrays) if arrays else ""

    rows = []
    for what, event, sub, pick, jwhat in (
            ("collections", "GC_START", gcs, lambda j: len(j["gc_ids"]), "jdk.GarbageCollection"),
            ("classes loaded", "CLASS_LOAD", loads, lambda j: j["class_stats"]["loadedClassCount"],
             "jdk.ClassLoadingStatistics"),
            ("classes unloaded", "CLASS_UNLOAD", None, lambda j: j["class_stats"]["unloadedClassCount"],
             "jdk.ClassLoadingStatistics"),
            ("threads started", "THREAD_START", None, lambda j: j["thread_stats"]["accumulatedCount"],
             "jdk.JavaThreadStatistics")):
        (l, note) = ledger_count(event, sub)
        rows.append((what, event, l, jfr_value(pick, jwhat), note, jwhat))
    return rows


# ---- text ---------------------------------------------------------------------------------


def cut(s, n):
    return s if len(s) <= n else s[:n - 3] + "..."


def text_report(meta, comps, count_rows, rows_per_table, cut_names=True):
    """cut_names: names longer than the item column are cut (the terminal);
    otherwise the column is as wide as the longest name (report.txt)."""
    out = []
    out.append("JVMPI migration comparison: %s" % meta["command"])
    out.append("  agent %s through the layer; JDK %s; the command exited with code %d"
               % (meta["agent"], meta["jdk"], meta["exit_code"]))
    if meta["exit_code"] != 0:
        out.append("  note: the command failed: the figures are of a run that may not have done its work")
    for c in comps:
        out.append("")
        out.append("== %s: %s vs %s" % (c.title, c.left.label, c.right.label))
        for s in (c.left, c.right):
            if s.missing:
                out.append("   %s: MISSING: %s" % (s.label, s.missing))
        out.append("   agreement: " + agreement_text(c))
        for note in c.notes:
            out.append("   note: " + note)
        shown = [i for i in c.rows()][:rows_per_table]
        if not shown:
            continue
        width = 52 if cut_names else max([52] + [len(i) for i in shown])
        head = "   %4s  %-*s" % ("rank", width, c.item)
        for s in (c.left, c.right):
            head += "".join(" %14s" % ((s.short + " " + h) if k == 0 else h) for k, (_, h) in enumerate(s.fields))
            head += " |"
        head += " %9s" % "diff"
        out.append(head)
        for n, item in enumerate(shown, 1):
            line = "   %4d  %-*s" % (n, width, cut(item, width))
            for s in (c.left, c.right):
                v = s.values.get(item)
                for f, _ in s.fields:
                    line += " %14s" % ("-" if s.missing or v is None else fmt_num(v.get(f, 0)))
                line += " |"
            line += " %9s" % c.diff(item)[0]
            out.append(line)
    out.append("")
    out.append("== Events: JVMPI (the layer's ledger) vs JFR")
    out.append("   %-18s %-14s %12s %12s %9s  %s" % ("what", "JVMPI event", "JVMPI", "JFR", "diff", "note"))
    for what, event, l, j, note, _ in count_rows:
        lt = "-" if isinstance(l, Missing) else fmt_num(l)
        jt = "-" if isinstance(j, Missing) else fmt_num(j)
        d = "" if isinstance(l, Missing) or isinstance(j, Missing) else fmt_rel(rel(l, j))
        notes = [note] if note else []
        notes += ["JVMPI missing: %s" % l] if isinstance(l, Missing) else []
        notes += ["JFR missing: %s" % j] if isinstance(j, Missing) else []
        out.append("   %-18s %-14s %12s %12s %9s  %s" % (what, event, lt, jt, d, "; ".join(notes)))
    return "\n".join(out) + "\n"


# ---- HTML -----------------------------------------------------------------------------------

E = html.escape


def svg_bars(c):
    """Paired horizontal bars, one pair per item: each side's share of its own total."""
    items = [i for i in c.rows() if c.left.measure(i) > 0 or c.right.measure(i) > 0][:CHART_ROWS]
    if not items:
        return ""
    label_w, bar_w, row_h, top = 330, 420, 34, 46
    peak = max(max(c.left.share(i), c.right.share(i)) for i in items) or 1.0
    h = top + row_h * len(items) + 10
    out = ['<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-label="%s">'
           % (label_w + bar_w + 90, h, label_w + bar_w + 90, h, E(c.title))]
    legend = [(c.left, JVMPI_COLOR, "jvmpi"), (c.right, OTHER_COLOR, "other")]
    for k, (s, color, cls) in enumerate(legend):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (label_w, 4 + 18 * k, color))
        out.append('<text x="%d" y="%d" class="legend">%s%s</text>'
                   % (label_w + 16, 14 + 18 * k, E(s.label), " (missing)" if s.missing else ""))
    for n, item in enumerate(items):
        y = top + n * row_h
        out.append('<text x="%d" y="%d" class="label" text-anchor="end">%s</text>'
                   % (label_w - 8, y + 20, E(cut(item, 46))))
        for k, (s, color, cls) in enumerate(legend):
            if s.missing:
                continue
            share = s.share(item)
            w = max(1, int(round(bar_w * share / peak))) if share > 0 else 0
            by = y + 3 + k * 14
            out.append('<rect class="bar %s" data-item="%s" x="%d" y="%d" width="%d" height="12" fill="%s"/>'
                       % (cls, E(item), label_w, by, w, color))
            out.append('<text x="%d" y="%d" class="value">%.1f%%</text>' % (label_w + w + 4, by + 10, 100 * share))
    out.append("</svg>")
    return "\n".join(out)


def html_table(c, rows):
    lf, rf = c.left.fields, c.right.fields
    head = '<tr><th>#</th><th>%s</th>' % E(c.item)
    head += "".join('<th class="jvmpi">%s<br>%s</th>' % (E(c.left.label) if k == 0 else "", E(h))
                    for k, (_, h) in enumerate(lf))
    head += "".join('<th class="other">%s<br>%s</th>' % (E(c.right.label) if k == 0 else "", E(h))
                    for k, (_, h) in enumerate(rf))
    head += "<th>diff</th></tr>"
    body = []
    for n, item in enumerate(rows, 1):
        cells = ['<td>%d</td><td class="item">%s</td>' % (n, E(item))]
        for s, side_key in ((c.left, "l"), (c.right, "r")):
            v = s.values.get(item)
            for f, _ in s.fields:
                text = "&ndash;" if s.missing or v is None else fmt_num(v.get(f, 0))
                cells.append('<td class="num %s-%s">%s</td>' % (side_key, f, text))
        cells.append('<td class="num diff">%s</td>' % E(c.diff(item)[0]))
        body.append('<tr data-item="%s">%s</tr>' % (E(item), "".join(cells)))
    return '<table class="data" data-table="%s">\n<thead>%s</thead>\n<tbody>\n%s\n</tbody></table>' % (
        c.key, head, "\n".join(body))


def html_agreement(c):
    a = c.agreement()
    if a is None:
        return '<p class="agreement" data-metric="none">No agreement figure: %s.</p>' % missing_text(c)
    items = ['<li data-metric="top">Top-%d in common: <b>%d</b> (%.0f%%): of the %d items each side ranks '
             'highest, how many the other side also ranks among its %d highest</li>'
             % (a["n"], a["common"], 100 * a["common"] / a["n"] if a["n"] else 0, a["n"], a["n"]),
             '<li data-metric="overlap">Share overlap: <b>%.1f%%</b> (the sum, over all items, of the smaller of '
             'the two shares: 100%% when both sides split the total alike)</li>' % (100 * a["overlap"])]
    for heading, l, r in a["totals"]:
        f = fmt_bytes if "bytes" in heading else fmt_num
        items.append('<li data-metric="total-%s">Total %s: %s vs %s, <b>%s</b></li>'
                     % (E(heading.split()[0]), E(heading), f(l), f(r), fmt_rel(rel(l, r))))
    return '<ul class="agreement">%s</ul>' % "".join(items)


def html_counts(count_rows):
    body, bars = [], []
    for n, (what, event, l, j, note, jwhat) in enumerate(count_rows):
        notes = [note] if note else []
        if isinstance(l, Missing):
            notes.append("JVMPI missing: %s" % l)
        if isinstance(j, Missing):
            notes.append("JFR missing: %s" % j)
        lt = "&ndash;" if isinstance(l, Missing) else fmt_num(l)
        jt = "&ndash;" if isinstance(j, Missing) else fmt_num(j)
        d = "" if isinstance(l, Missing) or isinstance(j, Missing) else fmt_rel(rel(l, j))
        body.append('<tr data-item="%s"><td>%s</td><td>%s</td><td class="num l-count">%s</td><td>%s</td>'
                    '<td class="num r-count">%s</td><td class="num diff">%s</td><td>%s</td></tr>'
                    % (E(what), E(what), event, lt, jwhat, jt, d, E("; ".join(notes))))
        vals = [0 if isinstance(x, Missing) else x for x in (l, j)]
        peak = max(vals) or 1
        y = 8 + n * 34
        bars.append('<text x="170" y="%d" class="label" text-anchor="end">%s</text>' % (y + 20, E(what)))
        for k, (v, color, cls) in enumerate(((vals[0], JVMPI_COLOR, "jvmpi"), (vals[1], OTHER_COLOR, "other"))):
            w = int(round(300 * v / peak))
            bars.append('<rect class="bar %s" x="180" y="%d" width="%d" height="12" fill="%s"/>'
                        '<text x="%d" y="%d" class="value">%s</text>'
                        % (cls, y + 3 + 14 * k, w, color, 184 + w, y + 13 + 14 * k, fmt_num(v)))
    svg = ('<svg class="chart" role="img" width="560" height="%d" aria-label="event counts">%s</svg>'
           % (16 + 34 * len(count_rows), "".join(bars)))
    table = ('<table class="data" data-table="counts"><thead><tr><th>what</th><th>JVMPI event</th>'
             '<th class="jvmpi">JVMPI</th><th>JFR event</th><th class="other">JFR</th><th>diff</th><th>note</th>'
             '</tr></thead><tbody>%s</tbody></table>' % "".join(body))
    return svg + table


CSS = """
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ccc; }
.meta td { padding: 1px 12px 1px 0; } .meta td:first-child { color: #666; }
.note { background: #f4f4ff; border-left: 4px solid #66c; padding: 6px 10px; margin: 6px 0; }
.missing { background: #fff0f0; border-left: 4px solid #c00; padding: 6px 10px; margin: 6px 0; }
.failed { background: #fff7e0; border-left: 4px solid #e0a000; padding: 6px 10px; }
.explain { color: #444; max-width: 60em; }
table.data { border-collapse: collapse; margin-top: 10px; font-size: 0.85em; }
table.data th, table.data td { border-bottom: 1px solid #eee; padding: 2px 8px; }
table.data th { text-align: right; vertical-align: bottom; } table.data th:nth-child(2) { text-align: left; } th.jvmpi { color: #1f6fb2; } th.other { color: #b05a00; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } td.item { font-family: monospace; }
svg.chart { display: block; margin: 10px 0; font-size: 12px; }
svg .label { font-family: monospace; font-size: 11px; } svg .value { font-size: 10px; fill: #444; }
svg .legend { font-size: 12px; }
table.summary td, table.summary th { padding: 2px 10px; text-align: left; }
"""


def html_report(meta, comps, count_rows):
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
             "<title>JVMPI comparison: %s</title>" % E(cut(meta["command"], 80)),
             "<style>%s</style></head><body>" % CSS,
             "<h1>JVMPI migration comparison</h1>",
             '<table class="meta">',
             "<tr><td>command</td><td><code>%s</code></td></tr>" % E(meta["command"]),
             "<tr><td>legacy agent</td><td><code>%s</code> through the layer</td></tr>" % E(meta["agent"]),
             "<tr><td>JDK</td><td>%s</td></tr>" % E(meta["jdk"]),
             '<tr><td>exit code</td><td data-metric="exit-code">%d</td></tr>' % meta["exit_code"],
             "<tr><td>written</td><td>%s</td></tr>" % E(meta["when"]),
             "</table>"]
    if meta["exit_code"] != 0:
        parts.append('<p class="failed">The command failed (exit code %d): the figures are of a run that may not '
                     'have done its work.</p>' % meta["exit_code"])
    parts.append('<h2>Summary</h2><table class="summary" data-table="summary"><tr><th>comparison</th>'
                 '<th>agreement</th></tr>')
    for c in comps:
        parts.append('<tr data-item="%s"><td><a href="#%s">%s</a></td><td>%s</td></tr>'
                     % (c.key, c.key, E(c.title), E(agreement_text(c))))
    parts.append("</table>")
    for c in comps:
        parts.append('<section id="%s" data-section="%s"><h2>%s</h2>' % (c.key, c.key, E(c.title)))
        parts.append('<p class="explain">%s</p>' % E(c.explain))
        for s in (c.left, c.right):
            if s.missing:
                parts.append('<p class="missing" data-missing="%s"><b>%s is missing:</b> %s</p>'
                             % ("jvmpi" if s is c.left else "other", E(s.label), E(s.missing)))
        parts.append(html_agreement(c))
        for note in c.notes:
            parts.append('<p class="note" data-note="%s">%s</p>' % (c.key, E(note)))
        parts.append(svg_bars(c))
        rows = c.rows()
        if rows:
            parts.append(html_table(c, rows[:HTML_ROWS]))
        if len(rows) > HTML_ROWS:
            parts.append("<p>%d more rows not shown here; report.txt lists the first %d.</p>"
                         % (len(rows) - HTML_ROWS, FILE_ROWS))
        parts.append("</section>")
    parts.append('<section id="counts" data-section="counts"><h2>Collections, classes, threads</h2>')
    parts.append('<p class="explain">JVMPI events the layer delivered to the agent, beside what JFR recorded. '
                 'Collections: the GC_START windows that served a collection of the VM (one window may '
                 'stand for several collections close together; windows for frees the VM posted late, with no '
                 'collection in them, are in the note); classes: CLASS_LOAD without array classes, against JFR\'s loaded class count '
                 'since the VM started; threads: THREAD_START, against the threads JFR counts as started.</p>')
    parts.append(html_counts(count_rows))
    parts.append("</section></body></html>\n")
    return "\n".join(parts)


# ---- main ---------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--exit-code", type=int, required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--jfr-missing")
    ap.add_argument("--jfr-tool", help="the jfr tool to read the recording with (default: the JDK's)")
    ap.add_argument("--histogram-missing")
    ap.add_argument("--cpu-missing")
    ap.add_argument("--cpu-samples")
    ap.add_argument("--cpu-samples-named", action="store_true",
                    help="the user named the CPU samples file (--cpu-samples of compare.sh)")
    ap.add_argument("--jfr-json", help="what `jfr print --json` printed of the recording, read instead of it")
    ap.add_argument("--jvm-stderr", help="the JVM's standard error, kept by compare.sh")
    a = ap.parse_args()

    def attempt(f, *args):
        try:
            return f(*args)
        except Missing as m:
            return m
        except Exception as e:  # one side the report cannot read: the rest is still shown
            first = (str(e).strip().splitlines() or [""])[0]
            return Missing("could not be read: %s%s" % (type(e).__name__, ": " + first if first else ""))

    led = attempt(read_ledger, os.path.join(a.out, "ledger.tsv"), a.exit_code, a.jvm_stderr)
    hist = Missing(a.histogram_missing) if a.histogram_missing else attempt(
        read_histogram, os.path.join(a.out, "histogram.txt"))
    jfr = Missing(a.jfr_missing) if a.jfr_missing else attempt(
        read_jfr, a.jfr_tool or os.path.join(a.jdk, "bin", "jfr"), os.path.join(a.out, "recording.jfr"), a.jfr_json)
    if a.cpu_missing:
        cpu = Missing(a.cpu_missing)
    elif a.cpu_samples:
        cpu = attempt(read_cpu_samples, a.cpu_samples, a.cpu_samples_named)
    else:
        cpu = Missing("no CPU samples file was named")
    meta = {"command": a.command, "exit_code": a.exit_code, "agent": a.agent, "jdk": a.jdk,
            "when": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")}
    comps = comparisons(led, hist, jfr, cpu)
    count_rows = counts(led, jfr)
    with open(os.path.join(a.out, "report.txt"), "w", encoding="utf-8") as f:
        f.write(text_report(meta, comps, count_rows, FILE_ROWS, cut_names=False))
    page = os.path.join(a.out, "report.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(html_report(meta, comps, count_rows))
    sys.stdout.write("\n" + text_report(meta, comps, count_rows, TEXT_ROWS))
    print("\nreport: %s (full tables: %s)" % (page, os.path.join(a.out, "report.txt")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
