#!/bin/bash
# OBJECT_ALLOC names the right class while collections move class mirrors.
# The layer's class cache (jvmti_backend/classcache.c) remembers each
# thread's classes by mirror address, valid until the next collection pause;
# C_Classes loads classes in rounds, allocates instances and arrays of them
# on four threads under young and full collections, and prints how many of
# each it made; the c_classes agent must count exactly those per class, and
# see one size per class.  Run with each collector that moves objects only in
# pauses (the cache on: it must have hits, and no sampled check may
# disagree), with ZGC (the cache off), and with classcache=off.  On JDK 8
# the cache stays off (expect_cache_used): the counts are checked all the same.
. "$(dirname "$0")/lib.sh"

# run_case NAME LAYER_OPTIONS java-options...: runs C_Classes; checks the counts.
run_case() {
  local name=$1 opts=$2 out="$WORK/$1.txt" log="$WORK/$1.log" line cls rest
  shift 2
  JVMPI_LAYER_OPTIONS="log=info,logfile=$log${opts:+,$opts}" \
    run_java "$name" "$(agent_arg c_classes "out=$out")" "$@" -Xmx256m -cp "$CLASSES" C_Classes ||
    { tail -20 "$WORK/$name.err"; fail "java exited non-zero ($name)"; }
  expect_no_crash
  expect_file_has "$WORK/$name.out" '^C_Classes done'
  expect_summary "$out" c_classes 16
  [ "$(grep -c '^expect ' "$WORK/$name.out")" = 16 ] || fail "C_Classes printed no counts ($name)"
  while read -r _ cls rest; do
    grep -qx "count $cls $rest" "$out" ||
      fail "$name: the program made $cls $rest; the agent counted $(grep "^count $cls " "$out" | cut -d' ' -f3-)"
  done < <(grep '^expect ' "$WORK/$name.out")
  expect_file_lacks "$log" 'disagreed'
  note "$name: $(grep 'class cache:' "$log" | sed 's/.*class cache: //')"
}

# expect_cache_used NAME: the cache was on and answered most lookups.  On
# JDK 8 the layer cannot read the VM's arguments (JDK 8 has no
# jdk.internal.misc.VM.getRuntimeArguments), so it cannot rule out a
# collector that moves objects while the program runs, and keeps the cache
# off: every allocation asks JVM TI, and the counts must still be exact.
expect_cache_used() {
  if [ "$JDK_MAJOR" -lt 9 ]; then
    expect_file_has "$WORK/$1.log" "class cache off: the VM's arguments cannot be read"
    return
  fi
  expect_file_has "$WORK/$1.log" 'class cache on:'
  local hits
  hits=$(sed -n 's/.*class cache: about \([0-9]*\) hits.*/\1/p' "$WORK/$1.log")
  [ "${hits:-0}" -gt 100000 ] || fail "$1: the class cache had ${hits:-no} hits"
}

for gc in G1 Serial Parallel; do
  run_case "gc-$gc" "" "-XX:+Use${gc}GC"
  expect_cache_used "gc-$gc"
done

# ZGC relocates objects while the program runs: the cache must stay off.
if "$JAVA" -XX:+UseZGC -version >/dev/null 2>&1; then
  run_case gc-Z "" -XX:+UseZGC
  expect_file_has "$WORK/gc-Z.log" 'class cache off: ZGC moves objects while the program runs'
else
  note "this JVM has no ZGC: that case is skipped"
fi

run_case cache-off classcache=off
expect_file_has "$WORK/cache-off.log" 'class cache off: JVMPI_LAYER_OPTIONS has classcache=off'
exit 0
