#!/bin/bash
# scripts/compare.sh on M_Known, a program whose allocations, survivors, hot
# method, threads and collections are known: each side of the report must
# show that truth, the JVMPI side (the layer's ledger) exactly, the class
# histogram exactly, JFR within its sampling error.  Then bad input: a
# command that fails, a JVM that does not start, an agent that writes no CPU
# samples, a JDK without JFR, an agent the layer cannot load; the report
# says which side is missing and why, and still shows the rest.  A command
# that is no JDK launcher is refused before anything is made.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the report"
# JDK 8 has no jfr tool: compare.sh reads its recordings with JDK 17's.
[ "$JDK_MAJOR" -ge 9 ] || export JFR_TOOL=$TOOLS_JAVA_HOME/bin/jfr

COMPARE=$SOURCE_DIR/scripts/compare.sh
ROWS="python3 $SOURCE_DIR/tests/integration/compare_rows.py"
export JVMPI_LAYER=$LAYER

# compare NAME compare-args...: runs compare.sh, keeping its output in NAME.log.
compare() {
  local name=$1; shift
  note "compare.sh $*"
  timeout 170 bash "$COMPARE" --out "$WORK/$name" "$@" >"$WORK/$name.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || { tail -30 "$WORK/$name.log"; fail "$name: compare.sh exited with code $rc"; }
  [ -s "$WORK/$name/report.txt" ] && [ -s "$WORK/$name/report.html" ] || fail "$name: no report written"
  expect_file_has "$WORK/$name.log" "^report: $WORK/$name/report.html"
}
# figure NAME SECTION ITEM COLUMN
figure() { $ROWS get "$WORK/$1/report.txt" "$2" "$3" "$4" || fail "$1: no figure $4 of $3 in '$2'"; }
# within A B PERCENT: A is within PERCENT % of B
within() { python3 -c "import sys; a, b, p = map(float, sys.argv[1:]); sys.exit(abs(a - b) > b * p / 100)" "$1" "$2" "$3"; }

# ---- the truth ---------------------------------------------------------------------
# JFR samples allocations at TLAB refills: small fixed TLABs give it a sample
# every 16 KB, some 400 for the Blobs (see JFR's tolerance below).  A young
# generation larger than all M_Known allocates leaves its 3 System.gc() the
# only collections while it runs.
SPIN_MS=2500
HEAP=(-Xms256m -Xmn192m -XX:TLABSize=16k -XX:-ResizeTLAB)
compare known -- "$JAVA" "${HEAP[@]}" -cp "$CLASSES" M_Known $SPIN_MS
R=$WORK/known/report.txt
expect_file_has "$WORK/known.log" '^truth live M_Known\$Blob 20000$'
expect_file_has "$R" 'exited with code 0$'
expect_no_crash
# The same without the 3 workers, for the threads below.
compare noworkers -- "$JAVA" "${HEAP[@]}" -cp "$CLASSES" M_Known 300 0
expect_file_has "$WORK/noworkers.log" '^truth threads m-worker 0,'

# The live tables agree: the ledger and the histogram count the same heap
# (20 of the top 20 and 98% on JDK 17, 19 and 97.5% on JDK 25, when written).
agreement=$($ROWS agreement "$R" 'Live objects')
read -r top_n common overlap <<<"$(echo "$agreement" | sed -n 's/^top-\([0-9]*\) in common: \([0-9]*\) ([0-9]*%); share overlap \([0-9.]*\)%.*/\1 \2 \3/p')"
[ "${top_n:-0}" = 20 ] && [ "$common" -ge 18 ] && python3 -c "import sys; sys.exit(float(sys.argv[1]) < 95)" "$overlap" ||
  fail "live objects: '$agreement', expected top-20 in common 18 or more and a share overlap of 95% or more"

# Live at the end: 20000 Blobs, on both sides exactly, and the same bytes.
[ "$(figure known 'Live objects' 'M_Known$Blob' l2)" = 20000 ] || fail "JVMPI live Blobs: $(figure known 'Live objects' 'M_Known$Blob' l2), expected 20000"
[ "$(figure known 'Live objects' 'M_Known$Blob' r2)" = 20000 ] || fail "histogram live Blobs: $(figure known 'Live objects' 'M_Known$Blob' r2), expected 20000"
blob_live_bytes=$(figure known 'Live objects' 'M_Known$Blob' l1)
[ "$blob_live_bytes" = "$(figure known 'Live objects' 'M_Known$Blob' r1)" ] || fail "live Blob bytes differ"
blob=$((blob_live_bytes / 20000))
[ $((blob * 20000)) = "$blob_live_bytes" ] && [ $blob -ge 24 ] || fail "a Blob's size: $blob_live_bytes / 20000"
# None of the buffers or pads survives (the table is there, without a Pad row).
$ROWS get "$R" 'Live objects' 'M_Known$Blob' l2 >/dev/null || fail "no live objects table"
! $ROWS get "$R" 'Live objects' 'M_Known$Pad' l2 >/dev/null 2>&1 || fail "Pads counted live by JVMPI"

# Allocated: every one of the 200000 Blobs, by M_Known.makeBlob (which may
# also make what loading Blob makes, hence a little more), the 500 buffers by
# M_Known.fill.
[ "$(figure known 'Allocation by class' 'M_Known$Blob' l2)" = 200000 ] || fail "JVMPI allocated Blobs: $(figure known 'Allocation by class' 'M_Known$Blob' l2)"
[ "$(figure known 'Allocation by class' 'M_Known$Blob' l1)" = $((200000 * blob)) ] || fail "JVMPI Blob bytes"
made=$(figure known 'Allocation by site' 'M_Known.makeBlob' l2)
[ "$made" -ge 200000 ] && [ "$made" -le 200100 ] || fail "JVMPI allocations in makeBlob: $made, expected 200000 (+ a few of the class's loading)"
[ "$(figure known 'Allocation by site' 'M_Known.fill' l2)" = 500 ] || fail "JVMPI allocations in fill: $(figure known 'Allocation by site' 'M_Known.fill' l2)"
fill_bytes=$(figure known 'Allocation by site' 'M_Known.fill' l1)
[ "$fill_bytes" -ge $((500 * 16384)) ] && [ "$fill_bytes" -le $((500 * (16384 + 32))) ] || fail "fill's bytes: $fill_bytes"

# JFR: each allocation sample weighs the bytes its thread allocated since the
# previous one.  The Blob phase is sampled at some 400 TLAB refills of 16 KB
# (a few more or fewer where JFR's 1000 a second limit bites), each buffer of
# fill on its own (the program pauses between them): the estimates are then
# within a sample or two of the truth, about 1% here.  15% is allowed for a
# loaded machine, where fewer and heavier samples make the error grow as
# 1/sqrt(samples); below 50 samples the bound would not hold, and that fails.
# JDK 8's JFR has no allocation samples: it records new TLABs and
# allocations outside them, and only part of them (275 events for some 400
# TLABs the Blobs filled, 256 of fill's 500 arrays, in one run): there its
# estimates are only held not to exceed the truth by more than 15%.
jfr_close() { # ESTIMATE TRUTH
  if [ "$JDK_MAJOR" -ge 9 ]; then within "$1" "$2" 15; else [ "$1" -gt 0 ] && [ "$1" -le $(($2 * 115 / 100)) ]; fi
}
blob_samples=$(figure known 'Allocation by class' 'M_Known$Blob' r2)
[ "$blob_samples" -ge 50 ] || fail "JFR took only $blob_samples samples of Blobs"
jfr_blob=$(figure known 'Allocation by class' 'M_Known$Blob' r1)
jfr_close "$jfr_blob" $((200000 * blob)) || fail "JFR's estimate of Blob bytes $jfr_blob is not within 15% of $((200000 * blob))"
jfr_fill=$(figure known 'Allocation by site' 'M_Known.fill' r1)
jfr_close "$jfr_fill" "$fill_bytes" || fail "JFR's estimate of fill's bytes $jfr_fill is not within 15% of $fill_bytes"
jfr_make=$(figure known 'Allocation by site' 'M_Known.makeBlob' r1)
jfr_close "$jfr_make" $((200000 * blob)) || fail "JFR's estimate of makeBlob's bytes $jfr_make is not within 15%"

# Hot: M_Known.spin first on both sides.  Both sample every 10 ms, so its
# SPIN_MS ms of CPU are SPIN_MS/10 samples at most.  The work-alike's sampler
# sleeps its interval and then walks every thread, so it takes fewer: about
# 70% of them on a quiet 2-core machine, far fewer on a busy one, where each
# walk waits for a safepoint (45% in one clean CI run, 22% in another, on
# JDK 8, whose stack walks of other threads are each a VM operation).  How
# many is the machine's affair; the low bound of a tenth only catches a
# sampler that does not keep its interval at all.
top=$($ROWS top "$R" 'Hot methods' l)
[ "$top" = M_Known.spin ] || fail "side l ranks $top first, not M_Known.spin"
n=$(figure known 'Hot methods' M_Known.spin l1)
[ "$n" -ge $((SPIN_MS / 100)) ] && [ "$n" -le $((SPIN_MS / 10 + 10)) ] ||
  fail "M_Known.spin: $n samples (l1), expected about $((SPIN_MS / 10))"
# JFR's side must be what JFR recorded: its execution samples whose top
# frame is spin, counted here from the recording itself.  How many JFR takes
# is JFR's own affair and varies: JDK 8's takes few (82 in one loaded run),
# and JDK 21's took 1 of spin's 250 in one CI run, none at all in another,
# where 212 is usual.  Spin must rank first on JFR's side only when JFR took
# a third of its samples; fewer are noted, so that a run that shows it can
# be read, and none at all must be reported as a missing side.
jfr_tool=${JFR_TOOL:-$JAVA_HOME/bin/jfr}
read -r recorded all_recorded <<<"$("$jfr_tool" print --events jdk.ExecutionSample "$WORK/known/recording.jfr" |
  awk '/^jdk\.ExecutionSample/ { all++ } /stackTrace = \[/ { top = 1; next }
       top { if ($1 ~ /^M_Known\.spin\(/) n++; top = 0 } END { print n + 0, all + 0 }')"
if [ "$all_recorded" = 0 ]; then
  expect_file_has "$R" 'JFR (execution samples): MISSING: the recording holds no execution sample'
  note "JFR itself took no execution sample in this run (about $((SPIN_MS / 10)) of M_Known.spin is usual)"
else
  n=$(figure known 'Hot methods' M_Known.spin r1)
  [ "$n" = "$recorded" ] || fail "M_Known.spin: the report shows $n JFR samples where the recording has $recorded"
  [ "$n" -le $((SPIN_MS / 10 + 10)) ] || fail "M_Known.spin: $n JFR samples, more than $((SPIN_MS / 10)) can be"
  if [ "$n" -ge $((SPIN_MS / 30)) ]; then
    top=$($ROWS top "$R" 'Hot methods' r)
    [ "$top" = M_Known.spin ] || fail "side r ranks $top first, not M_Known.spin"
  else
    note "JFR itself took only $n samples of M_Known.spin in this run (about $((SPIN_MS / 10)) is usual)"
  fi
fi

# Collections: the 3 System.gc() on both sides.  The layer's windows serve
# the collections JFR saw and the one the layer makes at VM init (for the
# objects already in the heap), before JFR starts; two collections close
# together may share a window; windows for late frees only are no collection.
read -r gc_l gc_r <<<"$($ROWS count "$R" collections)"
gc_note=$($ROWS note "$R" collections)
served=$(echo "$gc_note" | sed -n 's/.*standing for \([0-9]*\) VM collections.*/\1/p')
served=${served:-$gc_l}
# JDK 8's default collector runs a young collection before each full one:
# JFR counts the two, where JVM TI reports one collection.
[ "$JDK_MAJOR" -ge 9 ] || gc_r=$((gc_r / 2))
[ "$gc_r" -ge 3 ] && [ "$served" -ge "$gc_r" ] && [ "$served" -le $((gc_r + 1)) ] && [ "$gc_l" -le "$served" ] && [ "$gc_l" -ge 2 ] ||
  fail "collections: JVMPI $gc_l windows ($gc_note), JFR $gc_r: expected JFR 3 or more, the windows serving JFR's collections and at most one more"
# Threads: the run with 3 workers started exactly 3 more, on both sides.
read -r th_l th_r <<<"$($ROWS count "$R" 'threads started')"
read -r th0_l th0_r <<<"$($ROWS count "$WORK/noworkers/report.txt" 'threads started')"
[ $((th_l - th0_l)) = 3 ] && [ $((th_r - th0_r)) = 3 ] ||
  fail "threads started: JVMPI $th_l and JFR $th_r with 3 workers, $th0_l and $th0_r without: expected 3 more on both sides"
# Classes unloaded: M_Known$Gone, whose loader M_Known dropped, on both sides.
expect_file_has "$WORK/known.log" '^truth unloadable M_Known\$Gone 1$'
read -r un_l un_r <<<"$($ROWS count "$R" 'classes unloaded')"
[ "$un_l" -ge 1 ] && [ "$un_r" -ge 1 ] || fail "classes unloaded: JVMPI $un_l, JFR $un_r, expected 1 or more each"
read -r cl_l cl_r <<<"$($ROWS count "$R" 'classes loaded')"
# Before JDK 17 the layer puts its allocation hooks into the classes loaded
# before VM init by retransforming them, and JFR (like -Xlog:class+load)
# counts each retransformed class as loaded again: some 360 more of 1,400.
if [ "$JDK_MAJOR" -ge 17 ]; then
  within "$cl_l" "$cl_r" 15 || fail "classes loaded: JVMPI $cl_l, JFR $cl_r"
else
  [ "$cl_r" -ge "$cl_l" ] && [ "$cl_r" -le $((cl_l * 14 / 10)) ] ||
    fail "classes loaded: JVMPI $cl_l, JFR $cl_r, expected JFR's count to be JVMPI's plus the classes retransformed at VM init"
fi
[ "$cl_l" -ge 500 ] || fail "classes loaded: JVMPI $cl_l, expected 500 or more"

# The page stands alone: no script, nothing fetched.
expect_file_lacks "$WORK/known/report.html" '<script'
expect_file_lacks "$WORK/known/report.html" 'src='
expect_file_lacks "$WORK/known/report.html" 'href="http'

# A launcher other than java (the main demo runs javac so): the layer and JFR
# go to its JVM through -J, and every side is there.
mkdir -p "$WORK/javac-out"
compare javac -- "$JAVA_HOME/bin/javac" -d "$WORK/javac-out" "$SOURCE_DIR/tests/java/M_Known.java"
[ -s "$WORK/javac-out/M_Known.class" ] || fail "javac: compiled nothing under compare.sh"
for side in l2 r2; do
  [ "$(figure javac 'Live objects' 'java.lang.String' $side)" -gt 0 ] || fail "javac: no live Strings on side $side"
done
$ROWS missing "$WORK/javac/report.txt" 'Allocation by class' | grep -q MISSING &&
  fail "javac: a side of the allocations is missing: $($ROWS missing "$WORK/javac/report.txt" 'Allocation by class')"

# ---- bad input ---------------------------------------------------------------------
# A command that fails: the run happened, the report says so and shows it.
if full_run "a command that fails"; then
  compare nomain -- "$JAVA" -cp "$CLASSES" M_NoSuchClass
  expect_file_has "$WORK/nomain/report.txt" 'exited with code 1$'
  expect_file_has "$WORK/nomain/report.txt" '^  note: the command failed'
  [ "$(figure nomain 'Live objects' 'java.lang.String' l2)" -gt 0 ] || fail "nomain: no live Strings shown"
fi

# A JVM that never starts: every side missing, each saying why.
if full_run "a JVM that never starts"; then
  compare nostart -- "$JAVA" -XX:+NoSuchFlag -cp "$CLASSES" M_Known
  expect_file_has "$WORK/nostart/report.txt" 'JVMPI (OBJECT_ALLOC - OBJECT_FREE): MISSING: the layer wrote no ledger'
  expect_file_has "$WORK/nostart/report.txt" 'histogram (jcmd GC.class_histogram): MISSING: no histogram was taken'
  expect_file_has "$WORK/nostart/report.txt" 'JFR (allocation samples, weighted): MISSING: JFR wrote no recording'
fi

# An agent the layer cannot load: the layer stops the JVM at start-up, and
# the report quotes the layer's line instead of blaming a killed JVM.
if full_run "an agent the layer cannot load"; then
  compare noagent --agent nosuchagent -- "$JAVA" -version
  $ROWS missing "$WORK/noagent/report.txt" 'Live objects' |
    grep -q "JVMPI (OBJECT_ALLOC - OBJECT_FREE): MISSING: the ledger is incomplete: the layer stopped the JVM (exit code 1): JVMPI layer: error: cannot find JVMPI agent 'nosuchagent'" ||
    fail "noagent: the layer's error is not quoted: $($ROWS missing "$WORK/noagent/report.txt" 'Live objects')"
fi

# A command that is no JDK launcher: one line, nothing made.
note "compare.sh -- ls"
timeout 60 bash "$COMPARE" --out "$WORK/notjdk" -- ls >"$WORK/notjdk.log" 2>&1 && fail "notjdk: compare.sh ran ls"
[ "$(wc -l <"$WORK/notjdk.log")" = 1 ] && expect_file_has "$WORK/notjdk.log" "^compare: 'ls' is not a JDK launcher" ||
  { cat "$WORK/notjdk.log"; fail "notjdk: not one line saying ls is no JDK launcher"; }
[ ! -e "$WORK/notjdk" ] || fail "notjdk: the output directory was made"
# --help is the script's opening comment, and no line of its code.
bash "$COMPARE" --help >"$WORK/help.txt" || fail "--help failed"
expect_file_has "$WORK/help.txt" '^compare.sh \[--agent'
expect_file_has "$WORK/help.txt" 'no report could be made\.$'
expect_file_lacks "$WORK/help.txt" 'set -\|ROOT='

# An agent that writes no CPU samples (and enables no allocation event).
if full_run "an agent that writes no CPU samples"; then
  compare classtrace --agent "classtrace:file=$WORK/ct.txt" -- "$JAVA" -cp "$CLASSES" M_Known 1000
  $ROWS missing "$WORK/classtrace/report.txt" 'Hot methods' | grep -q "agent (CPU SAMPLES): MISSING: the agent 'classtrace' writes no CPU samples" ||
    fail "classtrace: the missing CPU samples are not explained"
  $ROWS missing "$WORK/classtrace/report.txt" 'Allocation by class' | grep -q 'MISSING: the agent did not enable OBJECT_ALLOC' ||
    fail "classtrace: the missing allocations are not explained"
  [ "$($ROWS top "$WORK/classtrace/report.txt" 'Hot methods' r)" = M_Known.spin ] || fail "classtrace: JFR's side is not shown"
  read -r cl_l cl_r <<<"$($ROWS count "$WORK/classtrace/report.txt" 'classes loaded')"
  [ "$cl_l" -ge 500 ] && [ "$cl_r" -ge 500 ] || fail "classtrace: classes loaded $cl_l / $cl_r"
fi

# The HPROF work-alike asked for no CPU samples, or for its binary format: the
# agent's side of the hot methods is missing and the report says why; its
# allocations are still there.
if full_run "the work-alike without CPU samples or in its binary format"; then
  compare nosamples --agent hprof:heap=sites -- "$JAVA" -cp "$CLASSES" M_Known 300
  $ROWS missing "$WORK/nosamples/report.txt" 'Hot methods' |
    grep -q 'MISSING: the agent was not asked for CPU samples (add cpu=samples to its options)' ||
    fail "nosamples: the missing CPU samples are not explained: $($ROWS missing "$WORK/nosamples/report.txt" 'Hot methods')"
  [ "$(figure nosamples 'Allocation by class' 'M_Known$Blob' l2)" = 200000 ] || fail "nosamples: the allocations are not shown"
  compare binary --agent hprof:heap=sites,cpu=samples,format=b -- "$JAVA" -cp "$CLASSES" M_Known 300
  $ROWS missing "$WORK/binary/report.txt" 'Hot methods' | grep -q "MISSING: the agent writes HPROF's binary format (format=b)" ||
    fail "binary: the missing CPU samples are not explained: $($ROWS missing "$WORK/binary/report.txt" 'Hot methods')"
fi

# A JVM jcmd cannot attach to: the histogram's side is missing, with jcmd's
# own words; the ledger's and JFR's are shown.
compare noattach -- "$JAVA" -XX:+DisableAttachMechanism -cp "$CLASSES" M_Known 300
$ROWS missing "$WORK/noattach/report.txt" 'Live objects' |
  grep -q 'histogram (jcmd GC.class_histogram): MISSING: jcmd GC.class_histogram failed: com.sun.tools.attach.AttachNotSupportedException: The VM does not support the attach mechanism$' ||
  fail "noattach: the missing histogram is not explained: $($ROWS missing "$WORK/noattach/report.txt" 'Live objects')"
[ "$(figure noattach 'Live objects' 'M_Known$Blob' l2)" = 20000 ] || fail "noattach: the ledger is not shown"

# Another agent's CPU samples named with --cpu-samples: read from that file,
# here the one the HPROF work-alike wrote in the known run.
if full_run "samples named with --cpu-samples"; then
  compare named --agent "classtrace:file=$WORK/ct2.txt" --cpu-samples "$WORK/known/agent.hprof.txt" -- \
    "$JAVA" -cp "$CLASSES" M_Known 300
  [ "$($ROWS top "$WORK/named/report.txt" 'Hot methods' l)" = M_Known.spin ] ||
    fail "named: the samples of --cpu-samples are not shown: $($ROWS top "$WORK/named/report.txt" 'Hot methods' l)"
  compare namedgone --agent "classtrace:file=$WORK/ct3.txt" --cpu-samples "$WORK/no-such-file.txt" -- \
    "$JAVA" -cp "$CLASSES" M_Known 300
  $ROWS missing "$WORK/namedgone/report.txt" 'Hot methods' | grep -q 'MISSING' ||
    fail "namedgone: a --cpu-samples file that is not there is not said missing"
fi

# A JDK without JFR: a runtime image of java.base and jcmd alone.  The JDKs
# that need a newer glibc than the system's (21, 26 and 27 from Debian's
# later releases) run through launchers that scripts/jdks.sh points at a
# private glibc; jlink copies the JDK's own launchers, which would not start
# here: those of the image are pointed at the same glibc.
same_glibc() {
  local image=$1 rel libc f
  rel=$(sed -n 's|^libc=\$here/||p' "$JAVA_HOME/bin/java" 2>/dev/null)
  [ -n "$rel" ] || return 0
  libc=$(realpath "$JAVA_HOME/bin/$rel") || return 1
  for f in "$image"/bin/*; do
    [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    patchelf --set-interpreter "$libc/ld-linux-x86-64.so.2" --force-rpath \
      --set-rpath "$libc:$(patchelf --print-rpath "$f")" "$f" || return 1
  done
}
jlink=$JAVA_HOME/bin/jlink
if [ "$JDK_MAJOR" -lt 9 ]; then
  # (compare.sh tells such a JDK 8, one older than 8u262, by its missing jfr.jar.)
  note "JDK 8 has no jlink to make a JDK without JFR: that case is not run"
elif [ -x "$jlink" ] && "$jlink" --add-modules java.base,jdk.jcmd --output "$WORK/nojfr-jdk" >"$WORK/jlink.log" 2>&1 &&
  same_glibc "$WORK/nojfr-jdk" >>"$WORK/jlink.log" 2>&1; then
  compare nojfr -- "$WORK/nojfr-jdk/bin/java" -cp "$CLASSES" M_Known 300
  expect_file_has "$WORK/nojfr/report.txt" 'JFR (allocation samples, weighted): MISSING: the JDK at .* has no JFR: its runtime image lacks the jdk.jfr module'
  [ "$(figure nojfr 'Live objects' 'M_Known$Blob' r2)" = 20000 ] || fail "nojfr: the histogram is not shown"
  [ "$(figure nojfr 'Live objects' 'M_Known$Blob' l2)" = 20000 ] || fail "nojfr: the ledger is not shown"
  [ "$($ROWS get "$WORK/nojfr/report.txt" 'Hot methods' M_Known.spin l1)" -gt 0 ] || fail "nojfr: the agent's samples are not shown"
else
  # CI's JDKs can be linked (Debian's ships its jmods): there, this is a failure.
  [ "${CI:-}" = true ] && fail "jlink could not make a JDK without JFR under CI: $(tail -1 "$WORK/jlink.log")"
  note "jlink could not make a JDK without JFR here ($(tail -1 "$WORK/jlink.log")): that case is not run"
fi
note "all checks passed"
