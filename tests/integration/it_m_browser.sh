#!/bin/bash
# The comparison report's HTML page in a real browser (Debian's chromium,
# headless): the DOM it builds from the page holds the sections, the
# agreement figures and M_Known's rows with the same figures as the text
# report; a screenshot shows bars of both colours; and a page of a run with
# missing sides shows why each is missing.
. "$(dirname "$0")/lib.sh"
# What the page shows does not depend on the JDK; compare.sh's figures on
# each JDK are m_compare's.
full_run "the report's page in a browser" || exit 0
# JDK 8 has no jfr tool: compare.sh reads its recordings with JDK 17's.
[ "$JDK_MAJOR" -ge 9 ] || export JFR_TOOL=$TOOLS_JAVA_HOME/bin/jfr
command -v python3 >/dev/null || skip "python3 is needed for the report"
if ! CHROMIUM=$(command -v chromium || command -v chromium-browser); then
  # CI installs it (scripts/setup.sh --tests): there, its absence is a failure.
  [ "${CI:-}" = true ] && fail "no chromium under CI (scripts/setup.sh --tests installs Debian's)"
  skip "no chromium (scripts/setup.sh --tests installs Debian's)"
fi

COMPARE=$SOURCE_DIR/scripts/compare.sh
export JVMPI_LAYER=$LAYER

compare() {
  local name=$1; shift
  note "compare.sh $*"
  timeout 170 bash "$COMPARE" --out "$WORK/$name" "$@" >"$WORK/$name.log" 2>&1 ||
    { tail -30 "$WORK/$name.log"; fail "$name: compare.sh failed"; }
  [ -s "$WORK/$name/report.html" ] || fail "$name: no page"
}

# browse NAME: the page's DOM as chromium built it (NAME.dom), and a screenshot (NAME.png).
browse() {
  local page="file://$WORK/$1/report.html" flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars
    --user-data-dir="$WORK/chromium-profile" --window-size=1280,2600)
  timeout 90 "$CHROMIUM" "${flags[@]}" --dump-dom "$page" >"$WORK/$1.dom" 2>"$WORK/$1.chromium.err"
  [ -s "$WORK/$1.dom" ] || { tail -5 "$WORK/$1.chromium.err"; fail "chromium gave no DOM for $1"; }
  (cd "$WORK" && timeout 90 "$CHROMIUM" "${flags[@]}" --screenshot="$WORK/$1.png" "$page" >>"$WORK/$1.chromium.err" 2>&1)
  [ -s "$WORK/$1.png" ] || { tail -5 "$WORK/$1.chromium.err"; fail "chromium took no screenshot of $1"; }
}

compare known -- "$JAVA" -XX:TLABSize=16k -XX:-ResizeTLAB -cp "$CLASSES" M_Known 500
compare nostart -- "$JAVA" -XX:+NoSuchFlag -cp "$CLASSES" M_Known
browse known
browse nostart

python3 - "$WORK" "$SOURCE_DIR/tests/integration/compare_rows.py" <<'PY' || fail "the page does not show what it should (above)"
import html.parser, struct, subprocess, sys, zlib

work, rows_tool = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


class Dom(html.parser.HTMLParser):
    """What the tests look at: sections, rows and their cells, metrics,
    missing notes, chart bars, and the text of each."""

    def __init__(self):
        super().__init__()
        self.stack, self.sections, self.rows, self.metrics, self.missing, self.bars = [], [], {}, {}, [], []
        self.title, self.section, self.table, self.row, self.cell = "", None, None, None, None
        self.texts = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.stack.append(tag)
        if tag == "section":
            self.section = a.get("data-section")
            self.sections.append(self.section)
        elif tag == "table":
            self.table = a.get("data-table")
        elif tag == "tr" and "data-item" in a:
            self.row = self.rows.setdefault((self.table, a["data-item"]), {})
        elif tag == "td" and self.row is not None:
            self.cell = [c for c in a.get("class", "").split() if c != "num"]
            self.texts = []
        elif tag in ("li", "td", "p") and ("data-metric" in a or "data-missing" in a):
            self.metric = (self.section, a.get("data-metric"), a.get("data-missing"))
            self.texts = []
        elif tag == "rect" and "bar" in a.get("class", ""):
            self.bars.append((self.section, a["class"].split()[1], a.get("data-item"), int(a["width"]), a["fill"]))

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()
        if tag == "td" and self.cell is not None:
            if self.cell:
                self.row[self.cell[0]] = "".join(self.texts).strip()
            self.cell = None
        elif tag == "tr":
            self.row = None
        elif tag in ("li", "td", "p") and getattr(self, "metric", None):
            sec, metric, missing = self.metric
            text = " ".join("".join(self.texts).split())
            if missing:
                self.missing.append((sec, missing, text))
            else:
                self.metrics[(sec, metric)] = text
            self.metric = None

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "title":
            self.title += data
        self.texts.append(data)


def dom(name):
    d = Dom()
    with open("%s/%s.dom" % (work, name), encoding="utf-8") as f:
        d.feed(f.read())
    return d


def text_report(*args):
    out = subprocess.run([sys.executable, rows_tool, args[0], "%s/known/report.txt" % work] + list(args[1:]),
                         stdout=subprocess.PIPE, universal_newlines=True)
    return out.stdout.strip()


def text_figure(section, item, col):
    return text_report("get", section, item, col)


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), "PNG depth %d colour type %d" % (depth, color)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


# ---- the page of a full run ---------------------------------------------------------
d = dom("known")
check("JVMPI comparison" in d.title, "title: %r" % d.title)
check(d.sections == ["live", "alloc_class", "alloc_site", "hot", "counts"], "sections: %s" % d.sections)
check(d.metrics.get((None, "exit-code")) == "0", "exit code shown: %s" % d.metrics.get((None, "exit-code")))
for sec in ("live", "alloc_class", "alloc_site", "hot"):
    top = d.metrics.get((sec, "top"), "")
    check(top.startswith("Top-"), "%s: no top-N agreement shown (%r)" % (sec, top))
    check((sec, "overlap") in d.metrics, "%s: no share overlap shown" % sec)
# The page's agreement figures are the text report's.
for sec, title in (("live", "Live objects"), ("alloc_class", "Allocation by class"), ("hot", "Hot methods")):
    text = text_report("agreement", title)
    page_top = d.metrics.get((sec, "top"), "").split(":")[0:2]
    check(page_top and text.startswith(page_top[0].lower() + ":" + page_top[1].split("(")[0]),
          "%s: page %r, text %r" % (sec, d.metrics.get((sec, "top")), text))
    overlap = d.metrics.get((sec, "overlap"), "").split(":")[1].split("(")[0].strip()
    check("share overlap %s" % overlap in text, "%s: page overlap %s, text %r" % (sec, overlap, text))
check(("live", "total-bytes") in d.metrics, "live: no total bytes shown")
check(not d.missing, "missing sides shown for a full run: %s" % d.missing)

blob = d.rows.get(("live", "M_Known$Blob"), {})
check(blob.get("l-objects") == "20,000" and blob.get("r-objects") == "20,000", "live Blobs shown: %s" % blob)
for table, item, cell, section, col in (
        ("live", "M_Known$Blob", "l-bytes", "Live objects", "l1"),
        ("alloc_class", "M_Known$Blob", "l-objects", "Allocation by class", "l2"),
        ("alloc_class", "M_Known$Blob", "r-bytes", "Allocation by class", "r1"),
        ("alloc_site", "M_Known.fill", "l-objects", "Allocation by site", "l2"),
        ("alloc_site", "M_Known.makeBlob", "r-samples", "Allocation by site", "r2")):
    shown = d.rows.get((table, item), {}).get(cell, "?").replace(",", "")
    check(shown == text_figure(section, item, col), "%s %s %s: page %s, text %s"
          % (table, item, cell, shown, text_figure(section, item, col)))
check(d.rows.get(("alloc_class", "M_Known$Blob"), {}).get("l-objects") == "200,000", "200,000 Blobs allocated")
counts = [k[1] for k in d.rows if k[0] == "counts"]
check(counts == ["collections", "classes loaded", "classes unloaded", "threads started"], "events rows: %s" % counts)

bars = [b for b in d.bars if b[0] == "live" and b[2] == "M_Known$Blob"]
check(sorted(b[1] for b in bars) == ["jvmpi", "other"] and all(b[3] > 0 for b in bars), "Blob's bars: %s" % bars)
for sec in ("live", "alloc_class", "alloc_site", "hot", "counts"):
    kinds = {b[1] for b in d.bars if b[0] == sec and b[3] > 0}
    check(kinds == {"jvmpi", "other"}, "%s: bars drawn for %s" % (sec, kinds))

# The screenshot shows both colours, in bars' worth of pixels (a bar is 12 px high).
w, h, rows = png_pixels("%s/known.png" % work)
def near(p, q):
    return all(abs(a - b) <= 12 for a, b in zip(p, q))
blue = sum(1 for r in rows for p in r if near(p, (0x1f, 0x6f, 0xb2)))
orange = sum(1 for r in rows for p in r if near(p, (0xe0, 0x7b, 0x00)))
print("screenshot %dx%d: %d px of the JVMPI colour, %d of the other" % (w, h, blue, orange))
check(blue > 5000 and orange > 5000, "bars in the screenshot: %d blue px, %d orange px" % (blue, orange))

# ---- the page of a run that never started ------------------------------------------
d = dom("nostart")
check(d.metrics.get((None, "exit-code")) == "1", "nostart: exit code %s" % d.metrics.get((None, "exit-code")))
reasons = {(s, side): text for s, side, text in d.missing}
for sec, side, words in (("live", "jvmpi", "the layer wrote no ledger"),
                         ("live", "other", "no histogram was taken"),
                         ("alloc_class", "other", "JFR wrote no recording"),
                         ("hot", "jvmpi", "the agent wrote no profile")):
    check(words in reasons.get((sec, side), ""), "nostart %s %s: %r" % (sec, side, reasons.get((sec, side))))
check(all(d.metrics.get((s, "none")) for s in ("live", "alloc_class", "alloc_site", "hot")),
      "nostart: 'no agreement figure' not said")
sys.exit(1 if failures else 0)
PY
note "all checks passed"
