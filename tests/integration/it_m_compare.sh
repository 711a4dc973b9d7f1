#!/bin/bash
# scripts/compare.sh on M_Known, a program whose allocations, survivors, hot
# method, threads and collections are known: each side of the report must
# show that truth, the JVMPI side (the layer's ledger) exactly, the class
# histogram exactly, JFR within its sampling error.  Then bad input: a
# command that fails, a JVM that does not start, an agent that writes no CPU
# samples, a JDK without JFR; the report says which side is missing and why,
# and still shows the rest.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the report"

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
# every 16 KB, some 400 for the Blobs (see JFR's tolerance below).
SPIN_MS=2500
compare known -- "$JAVA" -XX:TLABSize=16k -XX:-ResizeTLAB -cp "$CLASSES" M_Known $SPIN_MS
R=$WORK/known/report.txt
expect_file_has "$WORK/known.log" '^truth live M_Known\$Blob 20000$'
expect_file_has "$R" 'exited with code 0$'
expect_no_crash

# Live at the end: 20000 Blobs, on both sides exactly, and the same bytes.
[ "$(figure known 'Live objects' 'M_Known$Blob' l2)" = 20000 ] || fail "JVMPI live Blobs: $(figure known 'Live objects' 'M_Known$Blob' l2), expected 20000"
[ "$(figure known 'Live objects' 'M_Known$Blob' r2)" = 20000 ] || fail "histogram live Blobs: $(figure known 'Live objects' 'M_Known$Blob' r2), expected 20000"
blob_live_bytes=$(figure known 'Live objects' 'M_Known$Blob' l1)
[ "$blob_live_bytes" = "$(figure known 'Live objects' 'M_Known$Blob' r1)" ] || fail "live Blob bytes differ"
blob=$((blob_live_bytes / 20000))
[ $((blob * 20000)) = "$blob_live_bytes" ] && [ $blob -ge 24 ] || fail "a Blob's size: $blob_live_bytes / 20000"
# None of the buffers or pads survives.
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
blob_samples=$(figure known 'Allocation by class' 'M_Known$Blob' r2)
[ "$blob_samples" -ge 50 ] || fail "JFR took only $blob_samples samples of Blobs"
jfr_blob=$(figure known 'Allocation by class' 'M_Known$Blob' r1)
within "$jfr_blob" $((200000 * blob)) 15 || fail "JFR's estimate of Blob bytes $jfr_blob is not within 15% of $((200000 * blob))"
jfr_fill=$(figure known 'Allocation by site' 'M_Known.fill' r1)
within "$jfr_fill" "$fill_bytes" 15 || fail "JFR's estimate of fill's bytes $jfr_fill is not within 15% of $fill_bytes"
jfr_make=$(figure known 'Allocation by site' 'M_Known.makeBlob' r1)
within "$jfr_make" $((200000 * blob)) 15 || fail "JFR's estimate of makeBlob's bytes $jfr_make is not within 15%"

# Hot: M_Known.spin first on both sides.  Both sample every 10 ms, so its
# SPIN_MS ms of CPU are SPIN_MS/10 samples at most; on a busy 2-core machine
# a sampler runs late and takes fewer, hence the low bound of half.
for side in l r; do
  top=$($ROWS top "$R" 'Hot methods' $side)
  [ "$top" = M_Known.spin ] || fail "side $side ranks $top first, not M_Known.spin"
done
for col in l1 r1; do
  n=$(figure known 'Hot methods' M_Known.spin $col)
  [ "$n" -ge $((SPIN_MS / 20)) ] && [ "$n" -le $((SPIN_MS / 10 + 10)) ] ||
    fail "M_Known.spin: $n samples ($col), expected about $((SPIN_MS / 10))"
done

# Events: 3 System.gc() and the workers, on both sides.
read -r gc_l gc_r <<<"$($ROWS count "$R" collections)"
[ "$gc_l" -ge 3 ] && [ "$gc_r" -ge 3 ] || fail "collections: JVMPI $gc_l, JFR $gc_r, expected 3 or more each"
read -r th_l th_r <<<"$($ROWS count "$R" 'threads started')"
[ "$th_l" -ge 4 ] && [ "$th_r" -ge 4 ] && [ $((th_l - th_r)) -le 3 ] && [ $((th_r - th_l)) -le 3 ] ||
  fail "threads started: JVMPI $th_l, JFR $th_r"
read -r cl_l cl_r <<<"$($ROWS count "$R" 'classes loaded')"
[ "$cl_l" -ge 500 ] && within "$cl_l" "$cl_r" 15 || fail "classes loaded: JVMPI $cl_l, JFR $cl_r"

# The page stands alone: no script, nothing fetched.
expect_file_lacks "$WORK/known/report.html" '<script'
expect_file_lacks "$WORK/known/report.html" 'src='
expect_file_lacks "$WORK/known/report.html" 'href="http'

# ---- bad input ---------------------------------------------------------------------
# A command that fails: the run happened, the report says so and shows it.
compare nomain -- "$JAVA" -cp "$CLASSES" M_NoSuchClass
expect_file_has "$WORK/nomain/report.txt" 'exited with code 1$'
expect_file_has "$WORK/nomain/report.txt" '^  note: the command failed'
[ "$(figure nomain 'Live objects' 'java.lang.String' l2)" -gt 0 ] || fail "nomain: no live Strings shown"

# A JVM that never starts: every side missing, each saying why.
compare nostart -- "$JAVA" -XX:+NoSuchFlag -cp "$CLASSES" M_Known
expect_file_has "$WORK/nostart/report.txt" 'JVMPI (OBJECT_ALLOC - OBJECT_FREE): MISSING: the layer wrote no ledger'
expect_file_has "$WORK/nostart/report.txt" 'histogram (jcmd GC.class_histogram): MISSING: no histogram was taken'
expect_file_has "$WORK/nostart/report.txt" 'JFR (allocation samples, weighted): MISSING: JFR wrote no recording'

# An agent that writes no CPU samples (and enables no allocation event).
compare classtrace --agent "classtrace:file=$WORK/ct.txt" -- "$JAVA" -cp "$CLASSES" M_Known 1000
$ROWS missing "$WORK/classtrace/report.txt" 'Hot methods' | grep -q "agent (CPU SAMPLES): MISSING: the agent 'classtrace' writes no CPU samples" ||
  fail "classtrace: the missing CPU samples are not explained"
$ROWS missing "$WORK/classtrace/report.txt" 'Allocation by class' | grep -q 'MISSING: the agent did not enable OBJECT_ALLOC' ||
  fail "classtrace: the missing allocations are not explained"
[ "$($ROWS top "$WORK/classtrace/report.txt" 'Hot methods' r)" = M_Known.spin ] || fail "classtrace: JFR's side is not shown"
read -r cl_l cl_r <<<"$($ROWS count "$WORK/classtrace/report.txt" 'classes loaded')"
[ "$cl_l" -ge 500 ] && [ "$cl_r" -ge 500 ] || fail "classtrace: classes loaded $cl_l / $cl_r"

# A JDK without JFR: a runtime image of java.base and jcmd alone.
jlink=$JAVA_HOME/bin/jlink
if [ -x "$jlink" ] && "$jlink" --add-modules java.base,jdk.jcmd --output "$WORK/nojfr-jdk" >"$WORK/jlink.log" 2>&1; then
  compare nojfr -- "$WORK/nojfr-jdk/bin/java" -cp "$CLASSES" M_Known 300
  expect_file_has "$WORK/nojfr/report.txt" 'JFR (allocation samples, weighted): MISSING: the JDK at .* has no JFR: its runtime image lacks the jdk.jfr module'
  [ "$(figure nojfr 'Live objects' 'M_Known$Blob' r2)" = 20000 ] || fail "nojfr: the histogram is not shown"
  [ "$(figure nojfr 'Live objects' 'M_Known$Blob' l2)" = 20000 ] || fail "nojfr: the ledger is not shown"
  [ "$($ROWS get "$WORK/nojfr/report.txt" 'Hot methods' M_Known.spin l1)" -gt 0 ] || fail "nojfr: the agent's samples are not shown"
else
  note "jlink could not make a JDK without JFR here ($(tail -1 "$WORK/jlink.log")): that case is not run"
fi
note "all checks passed"
