#!/bin/bash
# Faults and bad input at start-up and in writing, each said in one line that
# names the real cause and the agent as the user named it: full output files
# (/dev/full) for classtrace, hprof and the layer's log file; an agent built
# for another machine; a ninth agent (run from a private copy); empty or
# malformed JVMPI_LAYER_OPTIONS; an empty -agentpath '='; a 100,000-byte
# option; an -Xrun library without JVM_OnLoad (JDK 25 crashed on it).
. "$(dirname "$0")/lib.sh"

CT="$PROJECT_AGENTS_DIR/libclasstrace.so"
for f in "$CT" "$PROJECT_AGENTS_DIR/libhprof.so" "$AGENTS_DIR/libb_noonload.so"; do
  [ -f "$f" ] || fail "$f not built"
done
[ -f "$CLASSES/CtHello.class" ] || fail "CtHello.class missing from $CLASSES"

# one_line NAME PATTERN: stderr of run NAME has exactly one line matching.
one_line() {
  local count
  count=$(grep -c -- "$2" "$WORK/$1.err")
  [ "$count" = 1 ] || { cat "$WORK/$1.err"; fail "$1: expected one line with '$2' on stderr, found $count"; }
  note "$1: $(grep -- "$2" "$WORK/$1.err" | cut -c1-200)"
}
# refused NAME: the VM did not start the program.
refused() {
  [ "$rc" != 0 ] || fail "$1: java exited 0"
  expect_no_crash
  expect_file_lacks "$WORK/$1.out" '^hello from'
}

# 1. classtrace on a full disk: said once; the program's exit code is kept
# (a tracer does not own it).
run_java ctfull "-agentpath:$LAYER=classtrace:file=/dev/full" -cp "$CLASSES" CtHello
rc=$?
[ "$rc" = 0 ] || { cat "$WORK/ctfull.err"; fail "ctfull: exit code $rc"; }
expect_file_has "$WORK/ctfull.out" '^hello from 1$'
one_line ctfull '^classtrace: writing the trace to /dev/full failed: No space left on device'

# 2. hprof on a full disk: its header cannot be written, so it refuses the
# start rather than run unprofiled.
run_java hpfull "-agentpath:$LAYER=hprof:heap=sites,file=/dev/full" -cp "$CLASSES" CtHello
rc=$?
refused hpfull
one_line hpfull '^HPROF ERROR: writing the profile failed: No space left on device'

# 3. The layer's log file on a full disk: said once on stderr, where the
# lines then go (none is lost unseen).
JVMPI_LAYER_OPTIONS=log=info,logfile=/dev/full \
  run_java logfull "-agentpath:$LAYER=classtrace:file=$WORK/logfull.txt" -cp "$CLASSES" CtHello
rc=$?
[ "$rc" = 0 ] || { cat "$WORK/logfull.err"; fail "logfull: exit code $rc"; }
one_line logfull '^JVMPI layer: error: cannot write to logfile /dev/full: No space left on device'
one_line logfull "^JVMPI layer: info: starting JVMPI agent 'classtrace'"

# 4. An agent built for another machine (a copy whose ELF header says
# AArch64): said as such, not as a missing file.
cp "$CT" "$WORK/libarm.so"
printf '\267\000' | dd of="$WORK/libarm.so" bs=1 seek=18 conv=notrunc 2>/dev/null
run_java arch "-agentpath:$LAYER=$WORK/libarm.so" -cp "$CLASSES" CtHello
rc=$?
refused arch
one_line arch "cannot load JVMPI agent '$WORK/libarm.so'.*for AARCH64, and this VM runs on AMD 64"
expect_file_lacks "$WORK/arch.err" 'No such file'

# 5. A ninth agent: refused in one line that names it as the user did, not
# the private copy in the temporary directory it runs from.
args=()
for i in 1 2 3 4 5 6 7 8 9; do args+=("-agentpath:$LAYER=classtrace:file=$WORK/nine.$i.txt"); done
run_java nine "${args[@]}" -cp "$CLASSES" CtHello
rc=$?
refused nine
one_line nine '^JVMPI layer: error: GetEnv(JVMPI) from classtrace: the layer serves at most 8'
expect_file_lacks "$WORK/nine.err" 'libjvmpi-agent-'

# 6. Empty and malformed layer options are refused like an unknown one.
for o in '=' ',,,' 'log=info,' 'foo'; do
  n="lopt$(echo "$o" | tr -c 'a-z' '_')"
  JVMPI_LAYER_OPTIONS="$o" run_java "$n" "-agentpath:$LAYER=classtrace:file=$WORK/$n.txt" -cp "$CLASSES" CtHello
  rc=$?
  refused "$n"
  one_line "$n" '^JVMPI layer: error: JVMPI_LAYER_OPTIONS: '
done

# 7. -agentpath:libjvmpi.so= names no agent: said, not taken as no '='.
run_java empty "-agentpath:$LAYER=" -cp "$CLASSES" CtHello
rc=$?
refused empty
one_line empty "^JVMPI layer: error: .*no agent named after '='"

# 8. A 100,000-byte option: every line printed is short, and says the length.
long=$(head -c 100000 /dev/zero | tr '\0' x)
for a in classtrace hprof; do
  note "java -agentpath:$LAYER=$a:file=$WORK/long.txt,<100,000 x> -cp $CLASSES CtHello"
  JVMPI_LAYER_OPTIONS=log=info timeout 120 "$JAVA" "-agentpath:$LAYER=$a:file=$WORK/long.txt,$long" -cp "$CLASSES" \
    CtHello >"$WORK/long$a.out" 2>"$WORK/long$a.err"
  rc=$?
  refused "long$a"
  awk -v n="long$a" 'length($0) > 400 { print n ": a line of " length($0) " bytes: " substr($0, 1, 100); bad = 1 }
    END { exit bad }' "$WORK/long$a.err" || fail "long$a: a line was not shortened"
  grep -q '100000 bytes in all' "$WORK/long$a.err" || { cat "$WORK/long$a.err"; fail "long$a: no length given"; }
done

# 9. An -Xrun library without JVM_OnLoad: one line naming it, no crash.  JDK
# 17 says it itself before the layer runs; JDK 25 would crash, so the layer
# looks first.
LD_LIBRARY_PATH="$AGENTS_DIR" run_java noonload "-agentpath:$LAYER" -Xrunb_noonload -cp "$CLASSES" CtHello
rc=$?
refused noonload
cat "$WORK/noonload.out" >>"$WORK/noonload.err" # JDK 17 says it on stdout
one_line noonload 'b_noonload.*JVM_OnLoad\|JVM_OnLoad.*b_noonload'
note "b_faults: all checks passed"
exit 0
