#!/bin/bash
# hprof ASCII output on H_Sites, whose allocations are known:
# 1000 H_Big kept live to the end (48 bytes each, allocated at
# H_Sites.java:27 in keep <- build :20 <- main :39), 50000 H_Small allocated
# and dropped by the thread "h-worker" (H_Sites.java:33), then System.gc().
# Checks SITES (order, counts, the trace of H_Big's site), TRACE options
# (thread=y, lineno=n, depth=2, cutoff=0), THREAD START/END, HEAP DUMP
# (OBJ/CLS/ARR/ROOT, all 1000 H_Big), and output on SIGQUIT before exit.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/hprof/hprof_lib.sh"
require_hprof H_Sites H_Big H_Small H_Ctors

run_sites() { # NAME OPTIONS
  run_java "$1" "$(hprof_arg "$2,file=$WORK/$1.txt")" -cp "$CLASSES" H_Sites ||
    { tail -20 "$WORK/$1.err"; fail "$1: java exited non-zero"; }
  expect_no_crash
  expect_file_has "$WORK/$1.out" '^H_Sites done kept=1000 idsum=499500$'
  [ -s "$WORK/$1.txt" ] || fail "$1: $1.txt not written"
}

# check_sites_order ROWSFILE: ranks 1..n, live bytes not increasing, self% and
# accum% consistent.
check_sites_order() {
  awk '
    { if ($1 != NR) { print "rank " $1 " on row " NR; bad = 1 }
      if (NR > 1 && $4 > prev) { print "row " NR " has more live bytes (" $4 ") than row " NR-1 " (" prev ")"; bad = 1 }
      prev = $4
      s = $2; a = $3; sub(/%/, "", s); sub(/%/, "", a); s += 0; a += 0
      acc += s
      if (a - acc > 0.05 * NR || acc - a > 0.05 * NR) { print "accum " a "% on row " NR ", self% sum " acc; bad = 1 }
      if ($5 > $7 || $4 > $6) { print "row " NR " has more live than allocated: " $0; bad = 1 } }
    END { if (a > 100.05) { print "accum ends at " a "%"; bad = 1 } exit bad }' "$1" ||
    fail "SITES not ordered by live bytes or inconsistent ($(basename "$1"))"
}

# --- 1. heap=sites with the defaults ----------------------------------------
run_sites s1 heap=sites
f="$WORK/s1.txt"
expect_file_has "$f" '^SITES BEGIN (ordered by live bytes) '
expect_file_has "$f" '^SITES END'
# The two header lines of the section.
grep -A2 '^SITES BEGIN' "$f" | grep -q 'percent.*live.*alloc.ed.*stack.*class' || fail "SITES header line 1 missing"
grep -A2 '^SITES BEGIN' "$f" | grep -q 'rank.*self.*accum.*bytes.*objs.*bytes.*objs.*trace.*name' || fail "SITES header line 2 missing"
expect_file_lacks "$f" '^HEAP DUMP BEGIN'
sites_rows "$f" >"$WORK/s1.rows"
[ -s "$WORK/s1.rows" ] || fail "SITES section has no rows"
check_sites_order "$WORK/s1.rows"
# H_Big: one site (one allocation line), 1000 live of 1000 allocated, 48 bytes
# each (the size on a 64-bit HotSpot with compressed class pointers; see
# H_Sites.java).
big=$(awk '$9 == "H_Big"' "$WORK/s1.rows")
[ "$(echo "$big" | grep -c .)" = 1 ] || { head -30 "$WORK/s1.rows"; fail "expected exactly one SITES row for H_Big, got: $big"; }
read -r _ _ _ lb lo ab ao tr _ <<<"$big"
[ "$lo" = 1000 ] && [ "$ao" = 1000 ] || fail "H_Big site: $lo live / $ao allocated objects, expected 1000 / 1000 ($big)"
[ "$lb" = 48000 ] && [ "$ab" = 48000 ] || fail "H_Big site: $lb live / $ab allocated bytes, expected 48000 (48 bytes each) ($big)"
note "H_Big site: $big"
# Its trace: keep (the allocating method) <- build <- main, with lines.
trace_frames "$f" "$tr" >"$WORK/s1.big.trace"
[ -s "$WORK/s1.big.trace" ] || fail "no TRACE $tr: record for H_Big's site"
want=$'H_Sites.keep(H_Sites.java:27)\nH_Sites.build(H_Sites.java:20)\nH_Sites.main(H_Sites.java:39)'
[ "$(cat "$WORK/s1.big.trace")" = "$want" ] ||
  { echo "--- TRACE $tr:"; cat "$WORK/s1.big.trace"; fail "TRACE $tr of H_Big is not keep:27 <- build:20 <- main:39"; }
# thread=n (default): no (thread=N).
expect_file_lacks "$f" '^TRACE [0-9]*: (thread='
# The named thread: THREAD START with its name and group, and a THREAD END with
# the same id.
start=$(grep '^THREAD START (obj=[0-9a-fA-Fx]*, id = [0-9]*, name="h-worker", group="main")' "$f")
[ -n "$start" ] || { grep '^THREAD' "$f"; fail "no THREAD START line for h-worker"; }
wid=$(echo "$start" | sed -n 's/.*id = \([0-9]*\),.*/\1/p' | head -1)
grep -q "^THREAD END (id = $wid)" "$f" || { grep '^THREAD' "$f"; fail "no THREAD END (id = $wid) for h-worker"; }
grep -q '^THREAD START (obj=[0-9a-fA-Fx]*, id = [0-9]*, name="main", group="main")' "$f" ||
  { grep '^THREAD' "$f"; fail "no THREAD START line for main"; }
# Every trace a SITES row names is in the file.
for t in $(awk '{print $8}' "$WORK/s1.rows" | sort -u); do
  grep -q "^TRACE $t:" "$f" || fail "SITES names trace $t, which has no TRACE record"
done

# --- 2. thread=y, lineno=n, depth=2, cutoff=0 -------------------------------
run_sites s2 heap=sites,thread=y,lineno=n,depth=2,cutoff=0
f="$WORK/s2.txt"
sites_rows "$f" >"$WORK/s2.rows"
check_sites_order "$WORK/s2.rows"
big=$(awk '$9 == "H_Big"' "$WORK/s2.rows")
read -r _ _ _ lb lo ab ao tr _ <<<"$big"
[ "$lo" = 1000 ] && [ "$ao" = 1000 ] || fail "s2: H_Big site wrong: $big"
# thread=y: every TRACE line names a thread, and H_Big's names main's id.
[ -z "$(traces_without_thread "$f")" ] ||
  { traces_without_thread "$f" | head; fail "thread=y: a TRACE with frames but without (thread=N)"; }
mid=$(sed -n 's/^THREAD START (obj=[0-9a-fA-Fx]*, id = \([0-9]*\), name="main", group="main")$/\1/p' "$f" | head -1)
[ -n "$mid" ] || fail "s2: no THREAD START for main"
grep -q "^TRACE $tr: (thread=$mid)$" "$f" || { grep "^TRACE $tr:" "$f"; fail "thread=y: H_Big's TRACE $tr does not say (thread=$mid) (main)"; }
# depth=2: keep and build only; lineno=n: no line numbers anywhere.
trace_frames "$f" "$tr" >"$WORK/s2.big.trace"
[ "$(wc -l <"$WORK/s2.big.trace")" = 2 ] || { cat "$WORK/s2.big.trace"; fail "depth=2: H_Big's trace does not have 2 frames"; }
sed -n 1p "$WORK/s2.big.trace" | grep -q '^H_Sites\.keep(H_Sites\.java' || fail "depth=2: first frame is not H_Sites.keep"
sed -n 2p "$WORK/s2.big.trace" | grep -q '^H_Sites\.build(H_Sites\.java' || fail "depth=2: second frame is not H_Sites.build"
maxd=$(awk '/^TRACE [0-9]+:/{n=0; on=1; next} on && /^[ \t]/{n++; if (n>m) m=n; next} {on=0} END{print m+0}' "$f")
[ "$maxd" -le 2 ] || fail "depth=2, but a trace has $maxd frames"
expect_file_lacks "$f" '\.java:[0-9][0-9]*)'
# cutoff=0: every site is listed, the dropped H_Small ones too: 50000
# allocated in all; the program dropped them and ran System.gc(), so (with
# OBJECT_FREE) far fewer are live.
small=$(awk '$9 == "H_Small" { lo += $5; ao += $7 } END { print lo + 0, ao + 0 }' "$WORK/s2.rows")
read -r slo sao <<<"$small"
[ "$sao" = 50000 ] || { grep H_Small "$WORK/s2.rows"; fail "cutoff=0: H_Small sites add up to $sao allocated, expected 50000"; }
[ "$slo" -lt 5000 ] || fail "H_Small: $slo of 50000 still live after they were dropped and System.gc() ran (OBJECT_FREE not counted?)"
note "H_Small: $slo live of $sao allocated"
# With cutoff=0 at least as many rows as with the default cutoff.
[ "$(wc -l <"$WORK/s2.rows")" -ge "$(wc -l <"$WORK/s1.rows")" ] || fail "cutoff=0 lists fewer sites than the default cutoff"

# --- 3. heap=dump -------------------------------------------------------------
run_sites d1 heap=dump
f="$WORK/d1.txt"
expect_file_has "$f" '^HEAP DUMP BEGIN ([0-9]* objects, [0-9]* bytes) '
expect_file_has "$f" '^HEAP DUMP END'
expect_file_lacks "$f" '^SITES BEGIN'
for k in ROOT CLS OBJ ARR; do
  grep -q "^$k [0-9a-fA-Fx]* (" "$f" || fail "heap dump has no $k lines"
done
cls=$(grep '^CLS [0-9a-fA-Fx]* (name=H_Big, trace=[0-9]*)' "$f")
[ "$(echo "$cls" | grep -c .)" = 1 ] || fail "expected one CLS line for H_Big, got: $cls"
cid=$(echo "$cls" | awk '{print $2}')
nbig=$(grep -c "^OBJ [0-9a-fA-Fx]* (sz=[0-9]*, trace=[0-9]*, class=H_Big@$cid)" "$f")
[ "$nbig" = 1000 ] || fail "heap dump has $nbig OBJ lines of H_Big@$cid, expected 1000"
nsz=$(grep -c "^OBJ [0-9a-fA-Fx]* (sz=48, trace=[0-9]*, class=H_Big@$cid)" "$f")
[ "$nsz" = 1000 ] || fail "heap dump: $nsz of 1000 H_Big OBJ lines say sz=48"
# The H_Big objects carry their allocation trace: keep:27 first.
btr=$(grep -m1 "^OBJ [0-9a-fA-Fx]* (sz=[0-9]*, trace=[0-9]*, class=H_Big@$cid)" "$f" | sed 's/.*trace=\([0-9]*\),.*/\1/')
trace_frames "$f" "$btr" | head -1 | grep -q '^H_Sites\.keep(H_Sites\.java:27)$' ||
  { trace_frames "$f" "$btr"; fail "H_Big OBJ lines name trace $btr, whose first frame is not H_Sites.keep(H_Sites.java:27)"; }
# The array that holds them: 1000 elements.
grep -q '^ARR [0-9a-fA-Fx]* (sz=[0-9]*, trace=[0-9]*, nelems=1000, elem type=' "$f" ||
  fail "no ARR line with nelems=1000 (the H_Big[] kept by H_Sites)"
note "heap dump: $(grep '^HEAP DUMP BEGIN' "$f"), $nbig H_Big"

# --- 4. SIGQUIT: output before exit, and again at exit --------------------------
go="$WORK/go"
start_java q "$(hprof_arg "heap=all,file=$WORK/q.txt")" -cp "$CLASSES" H_Sites "$go"
wait_for "$WORK/q.out" '^ready pid=' 40 "$JPID" || { cat "$WORK/q.err"; fail "H_Sites never got ready"; }
jpid=$(sed -n 's/^ready pid=//p' "$WORK/q.out")
[ "$jpid" = "$JPID" ] || fail "H_Sites says pid $jpid, started $JPID"
kill -QUIT "$jpid"
wait_for "$WORK/q.txt" '^HEAP DUMP END' 30 "$jpid"; rc=$?
[ $rc = 0 ] || { [ -f "$WORK/q.txt" ] && tail -5 "$WORK/q.txt"; fail "no complete output in q.txt within 30 s of SIGQUIT (wait status $rc)"; }
wait_for "$WORK/q.txt" '^SITES END' 10 "$jpid" || fail "no SITES section within 10 s of SIGQUIT"
kill -0 "$jpid" 2>/dev/null || fail "the JVM ended after SIGQUIT"
expect_file_lacks "$WORK/q.out" '^H_Sites done'
expect_file_has "$WORK/q.txt" '^SITES END'
cp "$WORK/q.txt" "$WORK/q.before.txt"
touch "$go"
wait_exit "$jpid" 60
[ "$JRC" = 0 ] || { tail "$WORK/q.err"; fail "H_Sites exited $JRC after SIGQUIT"; }
expect_file_has "$WORK/q.out" '^H_Sites done kept=1000 idsum=499500$'
[ "$(grep -c '^SITES BEGIN' "$WORK/q.before.txt")" = 1 ] || fail "one SIGQUIT, but $(grep -c '^SITES BEGIN' "$WORK/q.before.txt") SITES sections before exit"
[ "$(grep -c '^SITES BEGIN' "$WORK/q.txt")" = 2 ] || fail "SIGQUIT + exit: expected 2 SITES sections, found $(grep -c '^SITES BEGIN' "$WORK/q.txt")"
[ "$(grep -c '^HEAP DUMP BEGIN' "$WORK/q.txt")" = 2 ] || fail "SIGQUIT + exit: expected 2 HEAP DUMP sections"
big=$(sites_rows "$WORK/q.before.txt" 1 | awk '$9 == "H_Big"')
read -r _ _ _ lb lo ab ao tr _ <<<"$big"
[ "$lo" = 1000 ] || fail "SIGQUIT SITES: H_Big row wrong: $big"
n=$(awk '/^HEAP DUMP BEGIN/{d++} d==1 && /^OBJ .*class=H_Big@/{n++} END{print n+0}' "$WORK/q.before.txt")
[ "$n" = 1000 ] || fail "SIGQUIT heap dump: $n H_Big objects, expected 1000"

# --- 5. traces through constructors ----------------------------------------------
# An object's trace starts at the method that made it, not in the
# constructors that ran for it (on JDK 8 its OBJECT_ALLOC comes from
# java.lang.Object's); an object made inside another's constructor starts
# in that constructor.
run_java c "$(hprof_arg "heap=sites,depth=3,file=$WORK/c.txt")" -cp "$CLASSES" H_Ctors ||
  { tail -20 "$WORK/c.err"; fail "H_Ctors: java exited non-zero"; }
expect_file_has "$WORK/c.out" '^H_Ctors done 500$'
sites_rows "$WORK/c.txt" >"$WORK/c.rows"
check_ctor_trace() { # CLASS WANT
  local row tr
  row=$(awk -v c="$1" '$9 == c' "$WORK/c.rows")
  [ "$(echo "$row" | grep -c .)" = 1 ] || fail "expected one SITES row for $1, got: $row"
  read -r _ _ _ _ _ _ _ tr _ <<<"$row"
  [ "$(trace_frames "$WORK/c.txt" "$tr")" = "$2" ] ||
    { trace_frames "$WORK/c.txt" "$tr"; fail "the trace of $1's site is not: $2"; }
}
check_ctor_trace H_CSub 'H_Ctors.main(H_Ctors.java:12)'
check_ctor_trace H_CPart $'H_CBase.<init>(H_Ctors.java:21)\nH_CSub.<init>(H_Ctors.java:27)\nH_Ctors.main(H_Ctors.java:12)'

note "hprof ascii: all checks passed"
exit 0
