#!/bin/bash
# hprof binary output: format=b,heap=all on H_Sites (1000 live
# H_Big with known field values).  The file must start with
# "JAVA PROFILE 1.0.1\0"; tests/hprof/HprofWalk.java (the project's own
# record walker, from the HPROF formats of JDK 1.4/5.0) checks framing and references;
# then the heap library of Debian's visualvm package, an independent reader,
# loads it (tests/hprof/HprofHeapCheck.java, compiled here against the jar)
# and its instance counts must agree with the agent's own ALLOC SITES record
# in the same file, and with the known 1000 H_Big (fields read back too).
# cutoff=0: ALLOC SITES leaves out sites below the cutoff (0.0001 of the live
# bytes by default), and the per-class sums compared here need every site.
# Skips (77) only when the visualvm package is not installed: scripts/setup.sh
# installs it.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/hprof/hprof_lib.sh"
require_hprof H_Sites H_Big
export LC_ALL=C
build_walker

f="$WORK/h.hprof"
run_java run "$(hprof_arg "format=b,heap=all,cutoff=0,file=$f")" -cp "$CLASSES" H_Sites ||
  { tail -20 "$WORK/run.err"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/run.out" '^H_Sites done kept=1000 idsum=499500$'
expect_binary_header "$f"
walk "$f" "$WORK/walk.txt"
expect_file_has "$WORK/walk.txt" '^HEADER JAVA PROFILE 1.0.1 idsize=[48]$'
for t in 01 02 04 05 06; do
  expect_file_has "$WORK/walk.txt" "^TAG 0x$t "
done
grep -q '^TAG 0x\(0C\|1C\) ' "$WORK/walk.txt" || fail "heap=all: no HEAP DUMP record"
# The agent's own sites: H_Big 1000 live / 1000 allocated, 48 bytes each.
expect_file_has "$WORK/walk.txt" '^SITE H_Big 1000 48000 1000 48000$'
expect_file_has "$WORK/walk.txt" '^DUMP H_Big 1000$'
note "walker: $(grep -c '^SITE' "$WORK/walk.txt") classes in ALLOC SITES, $(grep -c '^DUMP' "$WORK/walk.txt") in the heap dump, $(grep '^END' "$WORK/walk.txt")"

# --- the independent reader ---------------------------------------------------
[ -f "$VISUALVM_JAR" ] || skip "the visualvm package is not installed ($VISUALVM_JAR missing); scripts/setup.sh installs it"
mkdir -p "$WORK/vv"
# VisualVM's library needs JDK 9's API: on JDK 8 the build's JDK reads the dump.
vvjdk=$JAVA_HOME
[ "$JDK_MAJOR" -ge 9 ] || vvjdk=$TOOLS_JAVA_HOME
"$vvjdk/bin/javac" -cp "$VISUALVM_JAR" -d "$WORK/vv" "$HPROF_TOOLS/HprofHeapCheck.java" ||
  fail "HprofHeapCheck.java does not compile against $VISUALVM_JAR"
timeout 60 "$vvjdk/bin/java" -cp "$WORK/vv:$VISUALVM_JAR" HprofHeapCheck "$f" >"$WORK/vv.txt" 2>"$WORK/vv.err"
rc=$?
[ $rc = 0 ] || { head -30 "$WORK/vv.txt"; tail -5 "$WORK/vv.err"; fail "VisualVM's heap library could not read the dump (exit $rc)"; }
expect_file_has "$WORK/vv.txt" '^COUNT H_Big 1000$'
expect_file_has "$WORK/vv.txt" '^BIG 1000 idsum=499500 bad=0$'
note "VisualVM: $(grep '^CLASSES' "$WORK/vv.txt"), $(grep '^BIG' "$WORK/vv.txt")"

# Every class the instance dumps hold must have the same count in VisualVM
# (the same records read by two readers).
awk '$1 == "DUMP" && $2 !~ /\[\]$/ { print $2, $3 }' "$WORK/walk.txt" | sort >"$WORK/dump.counts"
awk '$1 == "COUNT" && $2 !~ /\[\]$/ { print $2, $3 }' "$WORK/vv.txt" | sort >"$WORK/vv.counts"
diff "$WORK/dump.counts" "$WORK/vv.counts" >"$WORK/dump-vv.diff" ||
  { head -20 "$WORK/dump-vv.diff"; fail "VisualVM's instance counts differ from the INSTANCE DUMP records (< walker, > VisualVM)"; }

# The agent's ALLOC SITES (live objects per class, from OBJECT_ALLOC and
# OBJECT_FREE) against the heap dump as VisualVM reads it, for every plain
# class with at least 100 live instances on either side.  Program classes:
# exact.  JDK classes: within 10% + 10, because the sites are taken before
# the heap dump is taken and the JDK allocates in between (the shutdown hooks
# and the agent's own requests run Java code), and objects that became garbage
# but were not collected yet count as live in the sites and may or may not
# appear in a dump.  Left out: java.lang.reflect.Field, Method and
# Constructor, held in the reflection caches of Class objects' own fields,
# which JVM TI's FollowReferences (the layer's heap walk) does not follow:
# they live on, without OBJECT_FREE, and no dump has them.  A plain JVM TI
# agent counted, after a collection at VMDeath of H_Sites, 27
# Class$ReflectionData objects on JDK 8 (its launcher uses reflection) and 2
# on JDK 17, and FollowReferences reached none.
awk '$1 == "SITE" { print $2, $3 }' "$WORK/walk.txt" | sort >"$WORK/sites.counts"
join -a1 -a2 -e 0 -o 0,1.2,2.2 "$WORK/sites.counts" "$WORK/vv.counts" >"$WORK/joined.txt"
awk '
  ($2 >= 100 || $3 >= 100) && $1 != "java.lang.Class" && $1 !~ /^java\.lang\.reflect\.(Field|Method|Constructor)$/ {
    n++
    d = $2 - $3; if (d < 0) d = -d
    m = ($2 > $3 ? $2 : $3)
    exact = ($1 ~ /^H_/)
    if ((exact && d != 0) || (!exact && d > 0.10 * m + 10)) {
      print "  " $1 ": sites " $2 " live, heap dump " $3; bad = 1 }
  }
  END { print "compared " n " classes"; if (n < 5) { print "  too few classes to compare"; bad = 1 } exit bad }' \
  "$WORK/joined.txt" >"$WORK/compare.txt" || { cat "$WORK/compare.txt"; fail "ALLOC SITES and the heap dump disagree"; }
note "sites vs heap dump: $(tail -1 "$WORK/compare.txt")"
note "hprof binary: all checks passed"
exit 0
