#!/bin/bash
# Objects older than the agent: with OBJECT_ALLOC enabled
# in JVM_OnLoad the c_replay agent must get OBJECT_ALLOC for the objects
# already in the heap (thousands), then CLASS_LOAD, THREAD_START and
# JVM_INIT_DONE, in that order, with consistent IDs; later, objects made
# while OBJECT_ALLOC was off resolve through RequestEvent(OBJECT_ALLOC, id),
# and IDs no live object has are refused without killing the JVM.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_replay.so"
[ -f "$lib" ] || fail "libc_replay.so not built"
out="$WORK/replay.txt"
# JDK 8's heap holds fewer objects at VM init than the 5000 the agent asks
# for: 4583 (counted by a plain JVM TI agent's IterateThroughHeap at VMInit),
# JDK 17's 23417.
old=5000
[ "$JDK_MAJOR" -ge 9 ] || old=4000
run_java replay "$(agent_arg c_replay "out=$out,old=$old")" -Dc.compact="$(compact_headers)" -Dagent.lib="$lib" -cp "$CLASSES" C_Replay ||
  { tail -30 "$WORK/replay.err"; [ -f "$out" ] && grep -v '^ok' "$out" | head -40; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/replay.out" '^C_Replay done'
[ -s "$out" ] || fail "agent wrote nothing"
grep -E '^(JVM_INIT_DONE|JVM_SHUT_DOWN)' "$out" | sed 's/^/   /'
expect_no_agent_failures "$out"
expect_file_has "$out" '^ok start-up order OBJECT_ALLOC\*, CLASS_LOAD\*, THREAD_START\*, JVM_INIT_DONE'
for what in 'C_Marker' 'int\[4711\]' 'C_Marker\[5\]' 'C_Marker\[2\]\[3\]' 'Thread c-replay-late' \
            'Thread main (GetThreadObject)'; do
  expect_file_has "$out" "^ok $what: obj_id .* is the one asked for"
done
expect_file_has "$out" '^ok the ID of a collected object: RequestEvent(OBJECT_ALLOC, .*) refused'
expect_file_has "$out" '^bogus requests done'
# 5 enables, 9 at JVM_INIT_DONE, 5 probes x 2 x 7 + 4, 2 + 2 x 7 for threads,
# disable, doomed, 3 refusals.
expect_summary "$out" c_replay 100
exit 0
