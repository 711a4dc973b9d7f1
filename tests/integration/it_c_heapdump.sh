#!/bin/bash
# HEAP_DUMP at levels 0, 1, 2 and NULL, and OBJECT_DUMP.
# C_HeapGraph builds a known object graph and asks for the dumps through the
# c_heapdump agent's JNI natives; the agent reads every byte with its own
# reader (tests/agents/dump_reader.h, written from the JVMPI specification's
# dump format only) and
# checks traces, roots, values, references, IDs and object dumps.
# Two runs: with OBJECT_ALLOC enabled (IDs mostly known before the dump), and
# without (every object ID of the dump must resolve through RequestEvent).
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_heapdump.so"
[ -f "$lib" ] || fail "libc_heapdump.so not built"

# NAME AGENT-OPTIONS: one JVM run; the checks come after both runs, so a
# failure of the first still leaves the second's results to read.
run_one() {
  local name="$1" out="$WORK/$1.txt"
  run_java "$name" "$(agent_arg c_heapdump "out=$out,$2")" -Dagent.lib="$lib" -cp "$CLASSES" C_HeapGraph
  echo $? >"$WORK/$name.rc"
}

check_one() {
  local name="$1" out="$WORK/$1.txt"
  [ "$(cat "$WORK/$name.rc")" = 0 ] ||
    { tail -30 "$WORK/$name.err"; [ -f "$out" ] && grep -m 30 '^FAIL' "$out"; fail "$name: java exited non-zero"; }
  [ -s "$out" ] || fail "$name: the agent wrote nothing (not loaded?)"
  grep '^HEAP_DUMP level' "$out" | grep -e 'walked' -e 'IDs:' | sed "s/^/-- $name: /"
  expect_file_has "$out" '^self-test of the dump reader: passed$'
  for lv in 0 1 2 NULL; do
    expect_file_has "$out" "^HEAP_DUMP level $lv: walked [0-9]* bytes to end"
    expect_file_has "$out" "^HEAP_DUMP level $lv: RequestEvent returned 0, 1 events$"
  done
  for o in sub 'Object\[\]' 'CHgMarker\[\]\[\]' 'int\[\]' 'double\[\]' CHgSub.class; do
    expect_file_has "$out" "^OBJECT_DUMP of $o: [0-9]* bytes, same as the level 2 heap dump's record$"
  done
  expect_file_has "$out" '^HEAP_DUMP bad level 7: RequestEvent returned [^0]'
  expect_file_has "$WORK/$name.out" '^bad level 7 rc=[1-9-]'
  expect_file_has "$WORK/$name.out" '^C_HeapGraph done '
  expect_no_agent_failures "$out"
  expect_summary "$out" c_heapdump 400
  note "$name: $(grep '^c_heapdump: finished' "$out")"
}

run_one alloc "alloc=1"
run_one noalloc "alloc=0,sample=200,cap=600"
expect_no_crash
check_one alloc
check_one noalloc
exit 0
