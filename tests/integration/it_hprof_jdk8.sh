#!/bin/bash
# The HPROF work-alike through the layer against JDK 8's own JVM TI HPROF
# (-agentlib:hprof), on the same javac compilation (5 files of java/util),
# in the same modes; tests/hprof/hprof8_compare.py compares:
#   heap=sites,cutoff=0: allocated objects per class, JDK 8's top 10 classes
#     (arrays and java.lang.Class left out: arrays made by bytecode have no
#     OBJECT_ALLOC on JDK 8 yet), at least 6 of them within 15%;
#   cpu=samples: at least one of JDK 8's 3 most sampled methods among the
#     work-alike's 10 (a short run has few samples, and on a loaded machine
#     the ranking is mostly the load's: of JDK 8's top 5, 2 and then 1 were
#     among the work-alike's 10 in two runs, JDK 8's first in both);
#   cpu=times: calls per method, JDK 8's top 10, at least 5 within 15%
#     (JDK 8's own counts vary from run to run, UnicodeReader.scanChar 147045
#     and then 133508 calls, where the work-alike's came out the same twice);
#   heap=dump,format=b: the classes of the two dumps: every class of the
#     work-alike's is in JDK 8's; JDK 8's may have at most 15% more (its HPROF
#     names every class loaded, JVMPI's CLASS_LOAD only those prepared: on
#     javac about 180 of 1680, interfaces of com.sun.source.tree and arrays of
#     them among them).
# Only JDK 8 has both: JDK 9 removed its HPROF.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"
[ "$JDK_MAJOR" = 8 ] || skip "JDK $JDK_MAJOR has no HPROF of its own (JDK 9 removed it)"
[ -f "$PROJECT_AGENTS_DIR/libhprof.so" ] || fail "hprof work-alike not built"
e_javac_tree 5 || fail "no java.util sources for JDK 8"
CMP="python3 $SOURCE_DIR/tests/hprof/hprof8_compare.py"

# hprof_javac WHO MODE NAME: javac with WHO (layer or jdk8) running hprof in
# MODE, its profile in $WORK/NAME.WHO.
hprof_javac() {
  local agent
  mkdir -p "$WORK/out-$3-$1"
  if [ "$1" = layer ]; then
    agent="-J-agentpath:$LAYER=hprof:$2,file=$WORK/$3.$1"
  else
    agent="-J-agentlib:hprof=$2,file=$WORK/$3.$1"
  fi
  note "javac, $1's hprof $2"
  timeout 400 "$JAVA_HOME/bin/javac" "$agent" -d "$WORK/out-$3-$1" -nowarn -XDignore.symbol.file -proc:none \
    "@$E_TREE/sources.args" >"$WORK/$3.$1.out" 2>"$WORK/$3.$1.err" ||
    { tail -5 "$WORK/$3.$1.err"; fail "javac with $1's hprof $2 failed"; }
  [ -s "$WORK/$3.$1" ] || fail "$1's hprof $2 wrote no $3.$1"
}

for who in layer jdk8; do
  hprof_javac "$who" heap=sites,cutoff=0 sites
  hprof_javac "$who" cpu=samples samples
  hprof_javac "$who" cpu=times times
  hprof_javac "$who" heap=dump,format=b dump
done
expect_no_crash
bad=()
$CMP sites "$WORK/sites.layer" "$WORK/sites.jdk8" 10 0.15 6 || bad+=(heap=sites)
$CMP samples "$WORK/samples.layer" "$WORK/samples.jdk8" 3 1 10 || bad+=(cpu=samples)
$CMP times "$WORK/times.layer" "$WORK/times.jdk8" 10 0.15 5 || bad+=(cpu=times)
$CMP dump "$WORK/dump.layer" "$WORK/dump.jdk8" 0.15 || bad+=(heap=dump,format=b)
[ ${#bad[@]} -eq 0 ] || fail "the work-alike's output differs from JDK 8's HPROF: ${bad[*]}"
echo ok
