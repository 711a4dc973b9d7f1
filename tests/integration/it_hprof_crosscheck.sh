#!/bin/bash
# hprof against the modern JDK tools.
# 1. H_Stable builds a stable heap (300 H_StA, 1000 H_StB, 150 H_StC,
#    200 long[16]), says "ready" and waits allocating nothing.  At that point
#    the test takes `jcmd <pid> GC.class_histogram`, then SIGQUIT makes the
#    agent write SITES and HEAP DUMP (heap=all, cutoff=0 so that no site is
#    left out of the per-class sums).  For every class with >= 100 instances
#    in the histogram the agent's live counts must agree:
#      - the program's H_St* classes: exactly (nothing creates or drops
#        them between the two snapshots);
#      - JDK classes: within 10% + 20, because the snapshots are not taken at
#        the same instant: jcmd's attach (the Attach Listener thread, its
#        strings and buffers) and the histogram's own full GC happen between
#        the program's readiness and the agent's dump, and objects the JDK
#        allocates after the histogram (attach, signal handling) are in the
#        agent's dump only;
#      - java.lang.Class is left out: jcmd counts the Class mirrors, JVMPI
#        never reports them as objects (CLASS_LOAD instead);
#      - a plain class with no CLS record in the agent's heap dump is one the
#        JVM loaded but never linked: its objects come from the CDS archive
#        (jdk.internal.math.FDBigInteger's cache), and JVM TI can describe no
#        unlinked class, so no JVMPI event can name them.  jcmd counts them.
#        Such classes must show 0 in the agent's output (nothing else may
#        name them) and be few (at most 3); they are listed.
# 2. cpu=samples and cpu=times each rank H_Hot.spin first; cpu=times also
#    counts exactly the calls H_Hot made.  cpu=times needs METHOD_ENTRY/EXIT
#    from the layer: if the agent says it is unavailable, that FAILS.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/hprof/hprof_lib.sh"
require_hprof H_Stable H_StA H_StB H_StC H_Hot
export LC_ALL=C
JCMD="$JAVA_HOME/bin/jcmd"
[ -x "$JCMD" ] || fail "no jcmd in $JAVA_HOME/bin"

# --- 1. live counts against jcmd GC.class_histogram ------------------------
go="$WORK/go"
out="$WORK/x.txt"
start_java x "$(hprof_arg "heap=all,cutoff=0,file=$out")" -cp "$CLASSES" H_Stable "$go"
wait_for "$WORK/x.out" '^ready pid=' 40 "$JPID" || { cat "$WORK/x.err"; fail "H_Stable never got ready"; }
jpid=$JPID
timeout 30 "$JCMD" "$jpid" GC.class_histogram >"$WORK/histo.txt" 2>&1 ||
  { cat "$WORK/histo.txt"; fail "jcmd $jpid GC.class_histogram failed"; }
grep -q '^ *1: ' "$WORK/histo.txt" || { head "$WORK/histo.txt"; fail "no histogram from jcmd"; }
# The histogram's GC frees objects; the layer delivers their OBJECT_FREEs in a
# window after the GC: give it a moment before the dump.
sleep 1
kill -QUIT "$jpid"
wait_for "$out" '^HEAP DUMP END' 40 "$jpid" || { tail -5 "$out" 2>/dev/null; fail "no HEAP DUMP within 40 s of SIGQUIT"; }
wait_for "$out" '^SITES END' 10 "$jpid" || fail "no SITES section within 10 s of SIGQUIT"
touch "$go"
wait_exit "$jpid" 60
[ "$JRC" = 0 ] || { tail "$WORK/x.err"; fail "H_Stable exited $JRC"; }
expect_file_has "$WORK/x.out" '^H_Stable done held=1650$'
expect_no_crash

# jcmd's names to hprof's: [B -> byte[], [Ljava.lang.String; -> java.lang.String[].
awk '$1 ~ /^[0-9]+:$/ {
    n = $4; dims = ""
    while (substr(n, 1, 1) == "[") { dims = dims "[]"; n = substr(n, 2) }
    if (dims != "") {
      if (n ~ /^L.*;$/) n = substr(n, 2, length(n) - 2)
      else if (n == "B") n = "byte"; else if (n == "C") n = "char"; else if (n == "I") n = "int"
      else if (n == "J") n = "long"; else if (n == "S") n = "short"; else if (n == "Z") n = "boolean"
      else if (n == "F") n = "float"; else if (n == "D") n = "double"
    }
    print n dims, $2 }' "$WORK/histo.txt" | sort >"$WORK/histo.counts"
# The first SITES section and the first HEAP DUMP are the SIGQUIT ones.
sites_rows "$out" 1 | awk '{ c[$9] += $5 } END { for (k in c) print k, c[k] }' | sort >"$WORK/sites.counts"
awk '/^HEAP DUMP BEGIN/ { d++ } d == 1 && /^OBJ / { if (match($0, /class=[^@]*@/)) c[substr($0, RSTART + 6, RLENGTH - 7)]++ }
     /^HEAP DUMP END/ && d == 1 { exit } END { for (k in c) print k, c[k] }' "$out" | sort >"$WORK/dump.counts"

# Classes the agent's (first) heap dump has a CLS record for.
awk '/^HEAP DUMP BEGIN/ { d++ } d == 1 && /^CLS / { if (match($0, /name=[^,)]*/)) print substr($0, RSTART + 5, RLENGTH - 5) }
     /^HEAP DUMP END/ && d == 1 { exit }' "$out" | sort -u >"$WORK/dump.classes"

# compare WHAT FILE: every histogram class with >= 100 instances (plain
# classes only for the heap dump's OBJ lines).
compare() {
  local what="$1" counts="$2" plain="$3"
  join -a1 -e 0 -o 0,1.2,2.2 "$WORK/histo.counts" "$counts" | awk -v what="$what" -v plain="$plain" -v classes="$WORK/dump.classes" '
    BEGIN { while ((getline c < classes) > 0) known[c] = 1 }
    $2 >= 100 && $1 != "java.lang.Class" && !(plain && $1 ~ /\[\]$/) && !($1 ~ /\[\]$/ || ($1 in known)) {
      if ($3 != 0) { print "  " $1 ": no CLS record, yet hprof " what " " $3; bad = 1 }
      else { unlinked++; print "  unlinked " $1 ": jcmd " $2 ", hprof " what " 0 (CDS archive, never linked)" }
      next
    }
    $2 >= 100 && $1 != "java.lang.Class" && !(plain && $1 ~ /\[\]$/) {
      n++
      d = $2 - $3; if (d < 0) d = -d
      exact = ($1 ~ /^H_St/)
      if ((exact && d != 0) || (!exact && d > 0.10 * $2 + 20)) {
        print "  " $1 ": jcmd " $2 ", hprof " what " " $3; bad = 1 }
      else print "  ok " $1 ": jcmd " $2 ", hprof " what " " $3
    }
    END { print "compared " n " classes, " unlinked + 0 " never linked"
          if (n < 5) { print "  too few classes"; bad = 1 }
          if (unlinked > 3) { print "  too many classes never linked"; bad = 1 }
          exit bad }'
}
compare SITES "$WORK/sites.counts" 0 >"$WORK/cmp.sites" ||
  { grep -v '  ok ' "$WORK/cmp.sites"; fail "SITES live counts differ from jcmd GC.class_histogram"; }
grep '  unlinked ' "$WORK/cmp.sites" || true
compare "HEAP DUMP" "$WORK/dump.counts" 1 >"$WORK/cmp.dump" ||
  { grep -v '  ok ' "$WORK/cmp.dump"; fail "HEAP DUMP object counts differ from jcmd GC.class_histogram"; }
for c in H_StA:300 H_StB:1000 H_StC:150; do
  grep -q "^  ok ${c%%:*}: jcmd ${c#*:}, " "$WORK/cmp.sites" || fail "${c%%:*}: not $((${c#*:})) in both jcmd and SITES"
  grep -q "^  ok ${c%%:*}: jcmd ${c#*:}, " "$WORK/cmp.dump" || fail "${c%%:*}: not $((${c#*:})) in both jcmd and HEAP DUMP"
done
note "vs jcmd: SITES $(tail -1 "$WORK/cmp.sites"), HEAP DUMP $(tail -1 "$WORK/cmp.dump")"

# --- 2. the hot method ---------------------------------------------------------
# rank1 FILE BEGIN-REGEX: the first row of the section.
rank1() { awk -v b="$2" '$0 ~ b { on = 1; next } on && $1 == "1" { print; exit }' "$1"; }

# JDK 8's C2 leaves the safepoint poll out of a counted loop (JDK 10's loop
# strip mining keeps one) and inlines spin into main's compiled loop, so
# every sample, taken at a safepoint, shows main: JDK 8's own JVM TI HPROF
# ranks main first as well.  The flag puts the poll back into spin's loop.
samples_opts=()
[ "$JDK_MAJOR" -ge 10 ] || samples_opts=(-XX:+UseCountedLoopSafepoints)
run_java cs "${samples_opts[@]}" "$(hprof_arg "cpu=samples,file=$WORK/cs.txt")" -cp "$CLASSES" H_Hot 2 ||
  { tail "$WORK/cs.err"; fail "cpu=samples: java exited non-zero"; }
expect_file_has "$WORK/cs.out" '^H_Hot done spin calls='
expect_file_has "$WORK/cs.txt" '^CPU SAMPLES BEGIN (total = [0-9]*) '
expect_file_has "$WORK/cs.txt" '^CPU SAMPLES END'
r=$(rank1 "$WORK/cs.txt" '^CPU SAMPLES BEGIN')
read -r _ _ _ count tr meth <<<"$r"
[ "$meth" = H_Hot.spin ] || { sed -n '/^CPU SAMPLES BEGIN/,/^CPU SAMPLES END/p' "$WORK/cs.txt" | head -12; fail "cpu=samples: rank 1 is '$meth', not H_Hot.spin"; }
trace_frames "$WORK/cs.txt" "$tr" | head -1 | grep -q '^H_Hot\.spin(H_Hot\.java:13)$' ||
  { trace_frames "$WORK/cs.txt" "$tr"; fail "cpu=samples: rank 1 trace $tr does not start at H_Hot.spin(H_Hot.java:13)"; }
note "cpu=samples rank 1: $r"

run_java ct "$(hprof_arg "cpu=times,file=$WORK/ct.txt")" -cp "$CLASSES" H_Hot 2 ||
  { tail "$WORK/ct.err"; fail "cpu=times: java exited non-zero"; }
cat "$WORK/ct.out" "$WORK/ct.err" >"$WORK/ct.all"
if grep -qiE 'not available|unavailable|not supported' "$WORK/ct.all"; then
  grep -iE 'not available|unavailable|not supported' "$WORK/ct.all"
  fail "cpu=times: the agent reports METHOD_ENTRY/EXIT unavailable, though the layer carries them"
fi
calls=$(sed -n 's/^H_Hot done spin calls=\([0-9]*\) .*/\1/p' "$WORK/ct.out")
[ -n "$calls" ] || fail "cpu=times: H_Hot did not finish"
expect_file_has "$WORK/ct.txt" '^CPU TIME (ms) BEGIN (total = [0-9]*) '
expect_file_has "$WORK/ct.txt" '^CPU TIME (ms) END'
r=$(rank1 "$WORK/ct.txt" '^CPU TIME [(]ms[)] BEGIN')
read -r _ _ _ count tr meth <<<"$r"
[ "$meth" = H_Hot.spin ] || { sed -n '/^CPU TIME/,/^CPU TIME (ms) END/p' "$WORK/ct.txt" | head -12; fail "cpu=times: rank 1 is '$meth', not H_Hot.spin"; }
# count = calls: spin is called from one line of main, so one trace holds them all.
[ "$count" = "$calls" ] || fail "cpu=times: H_Hot.spin's row counts $count calls, the program made $calls"
note "cpu=times rank 1: $r ($calls calls)"

# HPROF switches method events off in its JVM_SHUT_DOWN handler.  By then no
# class runs long enough to gain from losing its hooks, so the layer must not
# retransform the loaded classes back: on JDK 8 that alone outlasted the whole
# run (its VM empties the compiled code's caches once for each class).
JVMPI_LAYER_OPTIONS=log=debug run_java ctd "$(hprof_arg "cpu=times,file=$WORK/ctd.txt")" -cp "$CLASSES" H_Hot 1 ||
  { tail "$WORK/ctd.err"; fail "cpu=times, log=debug: java exited non-zero"; }
sed -n '/: VM death$/,$p' "$WORK/ctd.err" >"$WORK/ctd.death"
grep -q 'DisableEvent(METHOD_ENTRY)' "$WORK/ctd.death" ||
  fail "cpu=times, log=debug: no DisableEvent(METHOD_ENTRY) after the layer's 'VM death' line (see $WORK/ctd.err)"
if grep 'loaded classes retransformed' "$WORK/ctd.death"; then
  fail "cpu=times: the classes were retransformed again after VM death began, when HPROF switched method events off"
fi

note "hprof crosscheck: all checks passed"
exit 0
