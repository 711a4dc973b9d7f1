#!/bin/bash
# The main demo: a legacy JVMPI agent (classtrace, the class-load tracer of
# JVMPI spec section 8.1) running unchanged on a current JDK through the layer.
#  1. javac, compiling a small multi-file program, traced with
#     -J-agentpath:build/lib/libjvmpi.so=classtrace:file=...
#  2. the compiled program, started with the JDK 1.2-5.0 command line
#     java -Xrunclasstrace:..., the layer added through JAVA_TOOL_OPTIONS.
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
[ -f "$ROOT/build/lib/agents/libclasstrace.so" ] || { echo "demo: libclasstrace.so was not built" >&2; exit 1; }

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

# show TITLE FILE: where the trace is, its first lines, its summary.
show() {
  local title="$1" f="$2"
  echo
  echo "== $title"
  echo "   trace: $f ($(grep -c '^CLASS_LOAD ' "$f") CLASS_LOAD lines)"
  head -8 "$f" | sed 's/^/   | /'
  echo "   | ..."
  grep '^classtrace: ' "$f" | sed 's/^/   | /'
  grep -q '^classtrace: [0-9]* classes loaded' "$f" || { echo "demo: no summary line in $f" >&2; exit 1; }
}

echo
echo "demo: javac ($JDK) compiling $DEMO/src with classtrace through the layer"
"$JDK/bin/javac" "-J-agentpath:$LAYER=classtrace:file=$DEMO/classtrace.txt" \
  -d "$DEMO/out" "$DEMO"/src/shapes/*.java
show "javac -J-agentpath:build/lib/libjvmpi.so=classtrace:file=build/demo/classtrace.txt" "$DEMO/classtrace.txt"
# javac's own compiler classes must be among the traced ones.
grep -q '^CLASS_LOAD com\.sun\.tools\.javac\.main\.Main ' "$DEMO/classtrace.txt" \
  || { echo "demo: javac's main class missing from the trace" >&2; exit 1; }

echo
echo "demo: the unchanged -Xrun command line, with the layer in JAVA_TOOL_OPTIONS"
# The VM looks -Xrun libraries up itself, in its own lib directory and then on
# LD_LIBRARY_PATH, as JDK 1.2-5.0 did: that is where the agent must be found.
LD_LIBRARY_PATH="$ROOT/build/lib/agents${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
JAVA_TOOL_OPTIONS="-agentpath:$LAYER" "$JDK/bin/java" \
  "-Xrunclasstrace:file=$DEMO/classtrace-xrun.txt,methods=y" -cp "$DEMO/out" shapes.Main
show "LD_LIBRARY_PATH=build/lib/agents JAVA_TOOL_OPTIONS=-agentpath:build/lib/libjvmpi.so java -Xrunclasstrace:file=build/demo/classtrace-xrun.txt,methods=y shapes.Main" \
  "$DEMO/classtrace-xrun.txt"
echo "   the program's own classes, with methods=y:"
awk '/^CLASS_LOAD / { mine = ($2 ~ /^shapes\./) } mine { print "   | " $0 }' "$DEMO/classtrace-xrun.txt"
grep -q '^CLASS_LOAD shapes\.Main (Main\.java) ' "$DEMO/classtrace-xrun.txt" \
  || { echo "demo: shapes.Main missing from the trace" >&2; exit 1; }

echo
echo "demo: done; traces in $DEMO"
