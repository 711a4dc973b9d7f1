#!/bin/bash
# hprof options (the usage table of the JVMPI specification, section 7.1, and
# what JDK 5 to 8's HPROF added): the defaults (java.hprof.txt in the working
# directory at exit, heap=all content; java.hprof for format=b; file=
# renames), every option with each of its value forms accepted, interval=
# setting the sampling period, force=n keeping an existing file, verbose=
# saying each dump, msa=y refused in one line, 'help' printing the usage and
# bad options one line naming them, the JVM not starting.  Both ways of
# loading: -agentpath:$LAYER=hprof[:opts] and the unchanged -Xrunhprof[:opts]
# with the layer in JAVA_TOOL_OPTIONS.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/hprof/hprof_lib.sh"
require_hprof H_Sites
build_walker

# in_dir DIR NAME java-args...: run_java with DIR as the working directory.
in_dir() {
  local d="$1"; shift
  mkdir -p "$d"
  (cd "$d" && run_java "$@")
}
ran_ok() { # NAME: java exited 0 and the program finished
  expect_file_has "$WORK/$1.out" '^H_Sites done kept=1000 idsum=499500$'
  expect_file_lacks "$WORK/$1.err" 'HPROF usage'
  expect_no_crash
}

# --- 1. defaults: no options at all -------------------------------------
in_dir "$WORK/d1" plain "$(hprof_arg)" -cp "$CLASSES" H_Sites ||
  { cat "$WORK/plain.err"; fail "java with hprof and no options exited non-zero"; }
ran_ok plain
f="$WORK/d1/java.hprof.txt"
[ -s "$f" ] || { ls -la "$WORK/d1"; fail "no java.hprof.txt in the working directory after exit"; }
# heap=all is the default: both the sites and the dump.
expect_file_has "$f" '^SITES BEGIN (ordered by live bytes)'
expect_file_has "$f" '^SITES END'
expect_file_has "$f" '^HEAP DUMP BEGIN ('
expect_file_has "$f" '^HEAP DUMP END'
# cpu is off and monitor=n by default.
expect_file_lacks "$f" '^CPU SAMPLES BEGIN'
expect_file_lacks "$f" '^CPU TIME (ms) BEGIN'
expect_file_lacks "$f" '^CPU TIME (old format) BEGIN'
expect_file_lacks "$f" '^MONITOR TIME BEGIN'
# depth=4 is the default: no trace longer than 4 frames, and H_Big's (keep <-
# build <- main) has its 3.
maxd=$(awk '/^TRACE [0-9]+:/{n=0; on=1; next} on && /^[ \t]/{n++; if (n>m) m=n; next} {on=0} END{print m+0}' "$f")
[ "$maxd" -le 4 ] || fail "default depth is 4, but a trace has $maxd frames"
[ "$maxd" -ge 3 ] || fail "no trace has 3 frames or more with the default depth 4"
# lineno=y is the default, thread=n too.
grep -q $'^\t.*(H_Sites\.java:27)$' "$f" || grep -q '^ .*(H_Sites\.java:27)$' "$f" ||
  fail "default lineno=y: no frame H_Sites.java:27"
expect_file_lacks "$f" '^TRACE [0-9]*: (thread='
[ ! -e "$WORK/d1/java.hprof" ] || fail "format=a default, but a binary java.hprof was written too"
note "defaults: java.hprof.txt $(wc -c <"$f") bytes, max depth $maxd"

# The unchanged command line, no options: the same file.  On JDK 8
# -Xrunhprof is the JDK's own HPROF (docs/differences.md): not run there.
if [ "$JDK_MAJOR" -ge 9 ]; then
LD_LIBRARY_PATH="$PROJECT_AGENTS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
JAVA_TOOL_OPTIONS="-agentpath:$LAYER" in_dir "$WORK/d2" xrun -Xrunhprof -cp "$CLASSES" H_Sites ||
  { cat "$WORK/xrun.err"; fail "java -Xrunhprof exited non-zero"; }
ran_ok xrun
f="$WORK/d2/java.hprof.txt"
[ -s "$f" ] || { ls -la "$WORK/d2"; fail "-Xrunhprof: no java.hprof.txt in the working directory"; }
expect_file_has "$f" '^SITES BEGIN (ordered by live bytes)'
expect_file_has "$f" '^HEAP DUMP END'
fi

# --- 2. file= and format=b defaults ------------------------------------
in_dir "$WORK/d3" named "$(hprof_arg heap=sites,file=custom.out)" -cp "$CLASSES" H_Sites ||
  { cat "$WORK/named.err"; fail "file=custom.out: java exited non-zero"; }
ran_ok named
[ -s "$WORK/d3/custom.out" ] || { ls -la "$WORK/d3"; fail "file=custom.out: no custom.out"; }
[ ! -e "$WORK/d3/java.hprof.txt" ] || fail "file=custom.out, but java.hprof.txt was written too"
expect_file_has "$WORK/d3/custom.out" '^SITES END'
expect_file_lacks "$WORK/d3/custom.out" '^HEAP DUMP BEGIN'

in_dir "$WORK/d4" bin "$(hprof_arg format=b)" -cp "$CLASSES" H_Sites ||
  { cat "$WORK/bin.err"; fail "format=b: java exited non-zero"; }
ran_ok bin
[ -s "$WORK/d4/java.hprof" ] || { ls -la "$WORK/d4"; fail "format=b: no java.hprof in the working directory"; }
[ ! -e "$WORK/d4/java.hprof.txt" ] || fail "format=b, but java.hprof.txt was written too"
expect_binary_header "$WORK/d4/java.hprof"
walk "$WORK/d4/java.hprof" "$WORK/bin.walk"
# heap=all by default in binary too: sites and a heap dump.
expect_file_has "$WORK/bin.walk" '^TAG 0x06 '
grep -q '^TAG 0x\(0C\|1C\) ' "$WORK/bin.walk" || fail "format=b with the default heap=all: no HEAP DUMP record"

# --- 3. every option, every value form --------------------------------------
# Four runs cover: heap=dump|sites|all, cpu=samples|times|old, monitor=y|n,
# format=a|b, file=, depth=, cutoff=, lineno=y|n, thread=y|n, doe=y|n.
# (net=host:port is it_hprof_net.sh.)  cpu=times and monitor=y run on the
# layer's METHOD_ENTRY/EXIT and monitor events; here they must be accepted
# and the run must succeed (with MONITOR TIME written for monitor=y);
# it_hprof_crosscheck.sh checks the cpu=times figures.
cd "$WORK" || exit 1
run_java A "$(hprof_arg "heap=dump,cpu=samples,monitor=y,format=a,depth=1,lineno=y,thread=y,doe=y,file=$WORK/A.txt")" \
  -cp "$CLASSES" H_Sites || { cat "$WORK/A.err"; fail "run A: java exited non-zero"; }
ran_ok A
expect_file_has A.txt '^HEAP DUMP END'
expect_file_lacks A.txt '^SITES BEGIN'
expect_file_has A.txt '^CPU SAMPLES BEGIN (total = '
expect_file_has A.txt '^CPU SAMPLES END'
maxd=$(awk '/^TRACE [0-9]+:/{n=0; on=1; next} on && /^[ \t]/{n++; if (n>m) m=n; next} {on=0} END{print m+0}' A.txt)
[ "$maxd" = 1 ] || fail "depth=1: the longest trace has $maxd frames"
# thread=y: every trace names its thread.
[ -z "$(traces_without_thread A.txt)" ] ||
  { traces_without_thread A.txt | head; fail "thread=y: a TRACE with frames but without (thread=N)"; }
expect_file_has A.txt '^MONITOR TIME BEGIN'

run_java B "$(hprof_arg "heap=sites,cpu=times,monitor=n,format=b,depth=10,lineno=n,thread=n,doe=y,file=$WORK/B.hprof")" \
  -cp "$CLASSES" H_Sites || { cat "$WORK/B.err"; fail "run B: java exited non-zero"; }
ran_ok B
expect_binary_header B.hprof
walk B.hprof B.walk
expect_file_has B.walk '^TAG 0x06 '
! grep -q '^TAG 0x\(0C\|1C\) ' B.walk || fail "heap=sites in binary wrote a HEAP DUMP record"
[ ! -e java.hprof ] && [ ! -e java.hprof.txt ] || fail "file= given, yet a default-named file was written"

run_java C "$(hprof_arg "heap=all,cpu=old,format=a,cutoff=0.2,lineno=n,thread=n,file=$WORK/C.txt")" \
  -cp "$CLASSES" H_Sites || { cat "$WORK/C.err"; fail "run C: java exited non-zero"; }
ran_ok C
expect_file_has C.txt '^SITES END'
expect_file_has C.txt '^HEAP DUMP END'
# lineno=n: no line numbers in any frame.
expect_file_lacks C.txt '\.java:[0-9][0-9]*)'
# ... but native frames keep their mark (cpu=samples tells a thread blocked in
# native code by it), e.g. Thread.start0 of H_Sites's threads.
expect_file_has C.txt '(Native method)'
# cutoff=0.2: SITES lists only sites with at least 20% of the live bytes (the
# cutoff applies to the column the section is ordered by), so at most 5 rows.
sites_rows C.txt >C.rows
awk '{ v = $2; sub(/%/, "", v); if (v + 0 < 20.0) { print "row below the cutoff: " $0; bad = 1 } } END { exit bad }' C.rows ||
  fail "cutoff=0.2: rows under 20% listed"
[ "$(wc -l <C.rows)" -le 5 ] || fail "cutoff=0.2: more than 5 rows"

run_java D "$(hprof_arg "heap=sites,doe=n,file=$WORK/D.txt")" -cp "$CLASSES" H_Sites ||
  { cat "$WORK/D.err"; fail "run D: java exited non-zero"; }
ran_ok D
# doe=n: nothing is dumped at exit (there was no SIGQUIT either).
[ ! -e D.txt ] || expect_file_lacks D.txt '^SITES BEGIN'

# --- 5. the options JDK 5 to 8 added ------------------------------------------
# verbose=y is the default: each dump is said on stderr, in JDK 8's words.
expect_file_has "$WORK/plain.err" '^Dumping Java heap \.\.\. allocation sites \.\.\. done\.$'
expect_file_has "$WORK/A.err" '^Dumping contended monitor usage \.\.\. Java heap \.\.\. CPU usage by sampling running threads \.\.\. done\.$'
# lineno=n prints frames as JDK 8 did; cpu=old alone makes a java -prof listing.
expect_file_has C.txt '(H_Sites\.java:Unknown line)$'
expect_file_has C.txt '^count callee caller time$'
# Every option and value of JDK 5 to 8 is taken: those with an effect here,
# the obsolete gc_okay, msa=n, and the switches for debugging HPROF itself;
# and a trailing comma, as JDK 8 took it.
run_java E "$(hprof_arg "heap=sites,interval=15,force=y,verbose=n,msa=n,gc_okay=y,primfields=n,primarrays=y,logflags=0,debugflags=0,coredump=n,errorexit=n,pause=n,debug=n,exitpause=n,precrash=n,X=0,file=$WORK/E.txt,")" \
  -cp "$CLASSES" H_Sites || { cat "$WORK/E.err"; fail "run E (the options of JDK 5 to 8): java exited non-zero"; }
ran_ok E
expect_file_has E.txt '^SITES END'
expect_file_lacks E.err 'Dumping'   # verbose=n
# heap= given twice adds up, as in JDK 8; depth over 1024 and cutoff over 1
# are taken (JDK 8 took them); with cutoff=2 no site is listed.
run_java F "$(hprof_arg "heap=sites,heap=dump,depth=5000,cutoff=2,gc_okay=n,verbose=y,file=$WORK/F.txt")" -cp "$CLASSES" H_Sites ||
  { cat "$WORK/F.err"; fail "run F: java exited non-zero"; }
ran_ok F
expect_file_has F.txt '^HEAP DUMP END'
expect_file_has F.txt '^SITES END'
[ -z "$(sites_rows F.txt)" ] || fail "cutoff=2 listed sites"
expect_file_has F.err '^Dumping Java heap \.\.\. allocation sites \.\.\. done\.$'

# interval=20: H_Hot's main thread spins for 1.5 s; sampled every 20 ms it
# cannot be seen in H_Hot's methods more than 75 times (98 with a margin),
# and every 10 ms (the default) it is seen more often.  (H_Hot's methods, not
# spin alone: JDK 8's JIT inlines spin, and the samples land in main.)
if has_class H_Hot; then
  spin_samples() { awk '/^CPU SAMPLES BEGIN/ { n = 0 } $NF ~ /^H_Hot\./ { n += $4 } END { print n + 0 }' "$1"; }
  run_java I10 "$(hprof_arg "cpu=samples,file=$WORK/I10.txt")" -cp "$CLASSES" H_Hot 1.5 ||
    { cat "$WORK/I10.err"; fail "cpu=samples: java exited non-zero"; }
  run_java I20 "$(hprof_arg "cpu=samples,interval=20,file=$WORK/I20.txt")" -cp "$CLASSES" H_Hot 1.5 ||
    { cat "$WORK/I20.err"; fail "cpu=samples,interval=20: java exited non-zero"; }
  s10=$(spin_samples I10.txt) s20=$(spin_samples I20.txt)
  note "samples in H_Hot's methods over 1.5 s: $s10 every 10 ms, $s20 every 20 ms"
  [ "$s20" -ge 10 ] || fail "interval=20: only $s20 samples in H_Hot in 1.5 s"
  [ "$s20" -le 98 ] || fail "interval=20: $s20 samples in H_Hot in 1.5 s, more than one each 20 ms"
  [ "$s20" -lt "$s10" ] || fail "interval=20 took as many samples ($s20) as the default 10 ms ($s10)"
  expect_file_has I20.txt 'every interval=20 ms'
fi

# force=n: an existing file is kept, and the profile goes beside it with the
# process id in its name, as JDK 8's HPROF did (java.hprof.<pid>.txt,
# java.hprof.<pid> in binary); force=y (the default) overwrites.
mkdir -p "$WORK/d5" && cd "$WORK/d5" || exit 1
echo keep >java.hprof.txt && echo keep >java.hprof && echo keep >mine.txt
run_java force-a "$(hprof_arg heap=sites,force=n)" -cp "$CLASSES" CtHello || fail "force=n: java exited non-zero"
run_java force-b "$(hprof_arg heap=sites,force=n,format=b)" -cp "$CLASSES" CtHello || fail "force=n,format=b: java exited non-zero"
run_java force-c "$(hprof_arg heap=sites,force=y,file=mine.txt)" -cp "$CLASSES" CtHello || fail "force=y: java exited non-zero"
[ "$(cat java.hprof.txt)" = keep ] && [ "$(cat java.hprof)" = keep ] || fail "force=n overwrote the existing file"
ls java.hprof.[0-9]*.txt >/dev/null 2>&1 || { ls -la; fail "force=n: no java.hprof.<pid>.txt"; }
expect_file_has "$(ls java.hprof.[0-9]*.txt | head -1)" '^SITES END'
f=$(ls java.hprof.[0-9]* | grep -v '\.txt$' | head -1)
[ -n "$f" ] || { ls -la; fail "force=n,format=b: no java.hprof.<pid>"; }
expect_binary_header "$f"
expect_file_has mine.txt '^SITES END'
cd "$WORK" || exit 1

# --- 4. help and bad options -------------------------------------------------
# The usage must name every option of the table, and those JDK 5 to 8 added.
expect_usage() { # FILE
  local o
  for o in 'heap=dump|sites|all' 'cpu=samples|times|old' 'monitor=y|n' 'format=a|b' 'file=' \
           'net=host:port' 'depth=' 'cutoff=' 'lineno=y|n' 'thread=y|n' 'doe=y|n' \
           'interval=' 'msa=y|n' 'force=y|n' 'verbose=y|n' 'gc_okay=y|n'; do
    grep -qF -- "$o" "$1" || { cat "$1"; fail "usage lacks '$o'"; }
  done
}
# help is asked for: the usage on stdout, exit code 0, the program never
# started, and no line of a failed start (from the layer or the VM).
forms="agentpath xrun"
[ "$JDK_MAJOR" -ge 9 ] || forms=agentpath
for form in $forms; do
  if [ $form = agentpath ]; then
    run_java help-$form "$(hprof_arg help)" -cp "$CLASSES" H_Sites; rc=$?
  else
    LD_LIBRARY_PATH="$PROJECT_AGENTS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" JAVA_TOOL_OPTIONS="-agentpath:$LAYER" \
      run_java help-$form -Xrunhprof:help -cp "$CLASSES" H_Sites; rc=$?
  fi
  [ "$rc" = 0 ] || { cat "$WORK/help-$form.err"; fail "$form: help exited $rc, not 0"; }
  expect_usage "$WORK/help-$form.out"
  expect_file_lacks "$WORK/help-$form.out" '^H_Sites done'
  expect_file_lacks "$WORK/help-$form.err" 'JVMPI layer'
  expect_file_lacks "$WORK/help-$form.err" 'Error occurred during initialization'
done
[ ! -e "$WORK/java.hprof.txt" ] || fail "help wrote java.hprof.txt"

# bad NAME OPTIONS WORD: the JVM must not start; hprof says what was wrong in
# one line, which names WORD (and says bad/invalid/unknown/...), as JDK 8's
# HPROF did, and prints no usage to bury it under.
bad() {
  local name="$1" opts="$2" word="$3"
  if run_java "$name" "$(hprof_arg "$opts")" -cp "$CLASSES" H_Sites; then
    fail "java ran with the bad option string '$opts'"
  fi
  cat "$WORK/$name.out" "$WORK/$name.err" >"$WORK/$name.all"
  expect_file_lacks "$WORK/$name.all" 'HPROF usage'
  expect_file_lacks "$WORK/$name.out" '^H_Sites done'
  [ "$(grep -c '^HPROF' "$WORK/$name.all")" = 1 ] || { cat "$WORK/$name.all"; fail "'$opts': not one HPROF line"; }
  grep '^HPROF' "$WORK/$name.all" | grep -F -- "$word" | grep -qiE 'bad|invalid|unknown|illegal|unrecogni|missing|wrong|error|expect' ||
    { cat "$WORK/$name.all"; fail "'$opts': no line says that '$word' is wrong"; }
  note "$opts: $(grep '^HPROF' "$WORK/$name.all")"
}
bad bad-name 'heap=sites,bogus=1' 'bogus'
bad bad-heap 'heap=foo' 'heap'
bad bad-cpu 'cpu=fast' 'cpu'
bad bad-format 'format=x' 'format'
bad bad-depth 'depth=x' 'depth'
bad bad-cutoff 'cutoff=abc' 'cutoff'
bad bad-lineno 'lineno=maybe' 'lineno'
bad bad-noeq 'heap' 'heap'
bad bad-net 'net=nohostport' 'net'
bad bad-interval0 'cpu=samples,interval=0' 'interval=0'
bad bad-interval 'interval=20ms' 'interval=20ms'
bad bad-force 'force=yes' 'force'
bad bad-verbose 'verbose=1' 'verbose'
bad bad-gcokay 'gc_okay=x' 'gc_okay'
bad bad-empty 'heap=sites,,cpu=samples' 'heap=sites,,cpu=samples'
# msa=y was micro state accounting, on Solaris only: the line says so.
bad bad-msa 'msa=y' 'msa=y'
grep '^HPROF' "$WORK/bad-msa.all" | grep -q 'Solaris' || fail "msa=y: the line does not say it was for Solaris"
[ ! -e "$WORK/java.hprof.txt" ] || fail "a bad option run wrote java.hprof.txt"

note "hprof options: all checks passed"
exit 0
