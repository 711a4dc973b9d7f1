#!/bin/bash
# OBJECT_ALLOC switched off and on while OBJECT_FREE stays on (the
# c_allocswitch agent, five rounds while C_AllocSwitch allocates): an object
# made while OBJECT_ALLOC was off, or whose OBJECT_ALLOC was on its way when
# the event went off, was never announced, and its OBJECT_FREE must not
# reach the agent once OBJECT_ALLOC is on again: no event names an object
# before its defining event.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_allocswitch.so"
[ -f "$lib" ] || fail "libc_allocswitch.so not built"
out="$WORK/allocswitch.txt"
run_java allocswitch "$(agent_arg c_allocswitch "out=$out,rounds=5")" -Xmx64m -cp "$CLASSES" C_AllocSwitch 3000 ||
  { tail -30 "$WORK/allocswitch.err"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/allocswitch.out" '^C_AllocSwitch done'
grep -E 'OBJECT_ALLOCs' "$out" | sed 's/^/   /'
expect_no_agent_failures "$out"
expect_summary "$out" c_allocswitch 12
exit 0
