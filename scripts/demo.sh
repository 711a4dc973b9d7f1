#!/bin/bash
# The main demo: HPROF's work-alike (legacy_agents/hprof, a legacy JVMPI
# agent written against jvmpi.h alone) profiling a real Java program on a
# current JDK through the layer.
#  1. javac compiling a real source tree (60 files of java.util, from the
#     JDK's own sources), profiled twice, each run by scripts/compare.sh (JFR
#     records the same run, and a class histogram is taken at its end): with
#     javac -J-agentpath:build/lib/libjvmpi.so=hprof:heap=sites for where it
#     allocates, and with hprof:cpu=samples for where it spends its time
#     (tracking every allocation would move CPU samples into the allocating
#     methods, so the CPU comparison takes a run of its own);
#  2. a small program started with the JDK 1.2-5.0 command line
#     java -Xrunhprof:heap=sites,..., the layer added through JAVA_TOOL_OPTIONS.
# Each shows the top rows of the profile with the stack of every row under it.
# Last, how far the javac profile agrees with JFR's and the histogram's view
# of the same run, and where the comparison report is.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

bash scripts/setup.sh
bash scripts/build.sh

if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
  JDK=$JAVA_HOME
elif [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/javac ]; then
  JDK=/usr/lib/jvm/java-17-openjdk-amd64
else
  JDK=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
fi
LAYER=$ROOT/build/lib/libjvmpi.so
DEMO=$ROOT/build/demo
[ -f "$LAYER" ] || { echo "demo: $LAYER was not built" >&2; exit 1; }
[ -f "$ROOT/build/lib/agents/libhprof.so" ] || { echo "demo: libhprof.so was not built" >&2; exit 1; }

rm -rf "$DEMO" && mkdir -p "$DEMO/src/shapes" "$DEMO/out"

cat >"$DEMO/src/shapes/Shape.java" <<'JAVA'
package shapes;

public interface Shape {
    double area();
    String name();
}
JAVA
cat >"$DEMO/src/shapes/Circle.java" <<'JAVA'
package shapes;

public final class Circle implements Shape {
    private final double r;

    public Circle(double r) { this.r = r; }

    public double area() { return Math.PI * r * r; }

    public String name() { return "circle"; }
}
JAVA
cat >"$DEMO/src/shapes/Rect.java" <<'JAVA'
package shapes;

public final class Rect implements Shape {
    private final double w, h;

    public Rect(double w, double h) { this.w = w; this.h = h; }

    public double area() { return w * h; }

    public String name() { return "rect"; }
}
JAVA
cat >"$DEMO/src/shapes/Main.java" <<'JAVA'
package shapes;

import java.util.ArrayList;
import java.util.List;

public class Main {
    // Kept to the end, so that the profile written at exit still finds them
    // live: the program's own sites then rank above the JDK's start-up objects.
    static final List<Shape> shapes = new ArrayList<>();
    static final List<Double> areas = new ArrayList<>();

    static Shape make(int i) {
        return i % 2 == 0 ? new Circle(1 + i % 7) : new Rect(1 + i % 5, 2 + i % 3);
    }

    public static void main(String[] args) throws InterruptedException {
        for (int i = 0; i < 30000; i++) {
            shapes.add(make(i));
        }
        // A second thread computes the areas; boxing each one allocates a
        // java.lang.Double from the program's code, in that thread.
        Thread summer = new Thread(() -> {
            for (Shape s : shapes) {
                areas.add(s.area());
            }
        }, "summer");
        summer.start();
        summer.join();
        double total = 0;
        int circles = 0;
        for (int i = 0; i < shapes.size(); i++) {
            total += areas.get(i);
            if (shapes.get(i).name().equals("circle")) {
                circles++;
            }
        }
        System.out.printf("%d circles, %d rects, total area %.3f%n", circles, shapes.size() - circles, total);
    }
}
JAVA

# top_with_traces FILE SECTION ROWS [PACKAGE MORE]: the first ROWS rows of a
# profile section (SITES, CPU SAMPLES), each followed by the stack of the TRACE
# it names.  A row only gives a trace number, and the TRACE records are spread
# over a file of megabytes, so the stacks are looked up here rather than left
# to the reader.  With PACKAGE, up to MORE rows further down are added whose
# class or stack is in that package: a small program's own sites can rank below
# the JDK's start-up objects.  A file holding several dumps (each kill -3 adds
# one) shows its last, most complete one.  Exits 1 when the section is missing
# or empty, 2 when PACKAGE is given and no row shown is in it.
top_with_traces() {
  awk -v sec="$2" -v rows="$3" -v pkg="${4:-}" -v more="${5:-0}" '
    # Thread serials and names, to say which thread a thread=y trace is from.
    /^THREAD START / { if (match($0, /id = [0-9]+/)) { id = substr($0, RSTART + 5, RLENGTH - 5)
                         if (match($0, /name="[^"]*"/)) tname[id] = substr($0, RSTART + 5, RLENGTH - 5) } }
    # Each trace is written once, before the first section that refers to it.
    /^TRACE [0-9]+:/ { cur = $2; sub(/:$/, "", cur); frames[cur] = ""
                       thr[cur] = match($0, /thread=[0-9]+/) ? substr($0, RSTART + 7, RLENGTH - 7) : ""
                       next }
    /^\t/ && cur != "" { frames[cur] = frames[cur] substr($0, 2) "\n"; next }
    { cur = "" }
    index($0, sec " BEGIN") == 1 { on = 1; n = 0; col = 0; head = "   | " $0; next }
    index($0, sec " END") == 1 { on = 0; next }
    # The trace number is not in the same column in every section: the header
    # line starting with "rank" tells which one.
    on && col == 0 { head = head "\n   | " $0; if ($1 == "rank") for (i = 1; i <= NF; i++) if ($i == "trace") col = i; next }
    on { line[++n] = $0; tr[n] = $col }
    function mine(i,   c) {
      split(line[i], c, " ")
      return pkg != "" && (index(c[col + 1], pkg ".") == 1 || index("\n" frames[tr[i]], "\n" pkg ".") > 0)
    }
    function show(i,   f, k, m, t) {
      print "   | " line[i]
      if (mine(i)) found = 1
      t = thr[tr[i]]
      if (t != "") print "   |          in thread " (t in tname ? tname[t] : t)
      m = split(frames[tr[i]], f, "\n")
      for (k = 1; k < m; k++)
        print "   |          " f[k] (f[k] == "<empty>" ? "   (no Java stack: made before main started, or by the VM)" : "")
    }
    END {
      if (n == 0 || col == 0) exit 1
      print head
      for (i = 1; i <= n && i <= rows; i++) show(i)
      if (pkg == "") exit 0
      shown = 0
      for (i = rows + 1; i <= n && shown < more; i++)
        if (mine(i)) {
          if (shown++ == 0) print "   | ... further down, other rows whose class or stack is in package " pkg ":"
          show(i)
        }
      exit found ? 0 : 2
    }' "$1"
}

# show TITLE FILE SECTION ROWS [PACKAGE MORE]: where the profile is, and the
# top of a section with its stacks (see top_with_traces).
show() {
  local title="$1" f="$2" section="$3" rc=0
  echo
  echo "== $title"
  echo "   profile: $f ($(wc -c <"$f") bytes)"
  top_with_traces "$f" "$section" "${@:4}" || rc=$?
  case $rc in
    0) ;;
    2) echo "demo: no $section row of package $5 in $f" >&2; exit 1 ;;
    *) echo "demo: no $section section in $f, or an empty one" >&2; exit 1 ;;
  esac
}

# A real source tree: java.util from the JDK's own sources.
. "$ROOT/scripts/jdk_sources.sh"
JAVA_HOME=$JDK jdk_sources_tree "$ROOT/build/jdk-sources" 60
TREE=$ROOT/build/jdk-sources

echo
echo "demo: javac ($JDK) compiling 60 files of java.util, profiled by hprof through the layer,"
echo "      with JFR recording the same run (scripts/compare.sh)"
PROFILE=$DEMO/javac.hprof.txt
CPU_PROFILE=$DEMO/javac.cpu.hprof.txt
COMPARE=$DEMO/compare
CPU_COMPARE=$DEMO/compare-cpu
# compare_javac OPTIONS FILE OUT: javac through compare.sh with hprof:OPTIONS.
compare_javac() {
  if ! JVMPI_LAYER=$LAYER bash "$ROOT/scripts/compare.sh" --agent "hprof:$1,depth=6,file=$2" \
    --out "$3" -- "$JDK/bin/javac" --patch-module "java.base=$TREE/src/java.base" -d "$DEMO/out-javac" -nowarn \
    -XDignore.symbol.file -proc:none "@$TREE/sources.args" >"$3.log" 2>&1; then
    tail -20 "$3.log" >&2
    echo "demo: the javac run failed (see $3.log)" >&2
    exit 1
  fi
  grep -q '^compare: the command exited with code 0$' "$3.log" ||
    { tail -20 "$3.log" >&2; echo "demo: javac failed (see $3.log)" >&2; exit 1; }
}
compare_javac heap=sites "$PROFILE" "$COMPARE"
compare_javac cpu=samples "$CPU_PROFILE" "$CPU_COMPARE"
show "javac -J-agentpath:build/lib/libjvmpi.so=hprof:heap=sites,depth=6,file=build/demo/javac.hprof.txt ..." \
  "$PROFILE" "SITES" 5
show "javac -J-agentpath:build/lib/libjvmpi.so=hprof:cpu=samples,depth=6,file=build/demo/javac.cpu.hprof.txt ..." \
  "$CPU_PROFILE" "CPU SAMPLES" 5
# javac's own classes must be among the allocation sites.
grep -q 'com\.sun\.tools\.javac\.' "$PROFILE" || { echo "demo: no javac class in $PROFILE" >&2; exit 1; }

echo
echo "demo: the unchanged -Xrun command line, with the layer in JAVA_TOOL_OPTIONS"
"$JDK/bin/javac" -d "$DEMO/out" "$DEMO"/src/shapes/*.java
# The VM looks -Xrun libraries up itself, in its own lib directory and then on
# LD_LIBRARY_PATH, as JDK 1.2-5.0 did: that is where the agent must be found.
(cd "$DEMO" && LD_LIBRARY_PATH="$ROOT/build/lib/agents${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  JAVA_TOOL_OPTIONS="-agentpath:$LAYER" "$JDK/bin/java" -Xrunhprof:heap=sites,thread=y -cp "$DEMO/out" shapes.Main)
show "LD_LIBRARY_PATH=build/lib/agents JAVA_TOOL_OPTIONS=-agentpath:build/lib/libjvmpi.so java -Xrunhprof:heap=sites,thread=y shapes.Main" \
  "$DEMO/java.hprof.txt" "SITES" 5 shapes 3
# Above, show fails unless some site shown is the program's (class or stack in
# package shapes); here, the program's classes must be in the profile at all.
grep -q 'shapes\.' "$DEMO/java.hprof.txt" || { echo "demo: the program's classes are missing from the profile" >&2; exit 1; }

# The comparison of the javac runs: each section's agreement line, the CPU
# section from the run that sampled CPU alone.
echo
echo "== javac: the hprof profiles against JFR and a class histogram of the same runs"
agreements() {
  awk -v want="$2" '/^== / { title = substr($0, 4); sub(/:.*/, "", title); on = (title ~ want) }
    on && /^   (agreement|note): / { sub(/^   agreement: /, ""); sub(/^   note: /, "   note: ");
      printf "   %-45s %s\n", title, $0; title = "" }' "$1"
}
agreements "$COMPARE/report.txt" '^(Live|Allocation)'
agreements "$CPU_COMPARE/report.txt" '^Hot methods'
awk '/^== Events/ { on = 1; next } on && NF { print "   " substr($0, 4) }' "$COMPARE/report.txt"
for r in "$COMPARE" "$CPU_COMPARE"; do
  [ -s "$r/report.html" ] || { echo "demo: no comparison report in $r" >&2; exit 1; }
done

echo
echo "demo: done; profiles in $DEMO (javac.hprof.txt, javac.cpu.hprof.txt, java.hprof.txt)"
echo "      other modes: heap=dump, cpu=times, monitor=y, format=b (readable by VisualVM), net=host:port;"
echo "      java -agentpath:build/lib/libjvmpi.so=hprof:help lists them all."
echo "demo: the javac runs compared with JFR and a class histogram, tables and charts:"
echo "      $COMPARE/report.html (allocations) and $CPU_COMPARE/report.html (CPU);"
echo "      text beside each as report.txt; docs/compare.md explains them"
