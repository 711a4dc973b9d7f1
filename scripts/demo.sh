#!/bin/bash
# The main demo: HPROF's work-alike (legacy_agents/hprof, a legacy JVMPI
# agent written against jvmpi.h alone) profiling a real Java program on a
# current JDK through the layer.
#  1. javac compiling a real source tree (60 files of java.util, from the
#     JDK's own sources), profiled with
#     javac -J-agentpath:build/lib/libjvmpi.so=hprof:heap=sites,cpu=samples
#  2. a small program started with the JDK 1.2-5.0 command line
#     java -Xrunhprof:heap=sites,..., the layer added through JAVA_TOOL_OPTIONS.
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
    static double total;

    public static void main(String[] args) throws InterruptedException {
        List<Shape> shapes = new ArrayList<>();
        shapes.add(new Circle(1.5));
        shapes.add(new Rect(2, 3));
        Thread summer = new Thread(() -> {
            for (Shape s : shapes) {
                total += s.area();
            }
        }, "summer");
        summer.start();
        summer.join();
        for (Shape s : shapes) {
            System.out.printf("%-6s %8.3f%n", s.name(), s.area());
        }
        System.out.printf("total  %8.3f%n", total);
    }
}
JAVA

# show TITLE FILE SECTION ROWS: where the profile is and the top of a section.
show() {
  local title="$1" f="$2" section="$3" rows="$4"
  echo
  echo "== $title"
  echo "   profile: $f ($(wc -c <"$f") bytes)"
  awk -v s="^$section BEGIN" -v n="$rows" '$0 ~ s { on = 1 } on { print "   | " $0; if (++k >= n + 3) exit }' "$f"
  grep -q "^$section BEGIN" "$f" || { echo "demo: no $section section in $f" >&2; exit 1; }
}

# A real source tree: java.util from the JDK's own sources.
. "$ROOT/scripts/jdk_sources.sh"
JAVA_HOME=$JDK jdk_sources_tree "$ROOT/build/jdk-sources" 60
TREE=$ROOT/build/jdk-sources

echo
echo "demo: javac ($JDK) compiling 60 files of java.util, profiled by hprof through the layer (about a minute)"
PROFILE=$DEMO/javac.hprof.txt
"$JDK/bin/javac" "-J-agentpath:$LAYER=hprof:heap=sites,cpu=samples,depth=6,file=$PROFILE" \
  --patch-module "java.base=$TREE/src/java.base" -d "$DEMO/out-javac" -nowarn -XDignore.symbol.file -proc:none \
  "@$TREE/sources.args"
show "javac -J-agentpath:build/lib/libjvmpi.so=hprof:heap=sites,cpu=samples,depth=6,file=build/demo/javac.hprof.txt ..." \
  "$PROFILE" "SITES" 10
show "(same run)" "$PROFILE" "CPU SAMPLES" 10
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
  "$DEMO/java.hprof.txt" "SITES" 6
grep -q 'shapes\.' "$DEMO/java.hprof.txt" || { echo "demo: the program's classes are missing from the profile" >&2; exit 1; }

echo
echo "demo: done; profiles in $DEMO (javac.hprof.txt, java.hprof.txt)"
echo "      other modes: heap=dump, cpu=times, monitor=y, format=b (readable by VisualVM), net=host:port;"
echo "      java -agentpath:build/lib/libjvmpi.so=hprof:help lists them all."
