#!/bin/bash
# COMPILED_METHOD_LOAD / _UNLOAD: D_Jit (with -Xbatch, so
# hotBefore is compiled before the agent enables the event) checks the
# replay during EnableEvent, a method compiled afterwards, line tables
# (offsets inside the code, lines within the method's CLASS_LOAD lines) and
# the unload of a method whose class is unloaded with its loader.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libd_jit.so"
[ -f "$lib" ] || fail "libd_jit.so not built"
out="$WORK/jit.txt"
run_java jit "$(agent_arg d_jit "out=$out")" -Xbatch -Dagent.lib="$lib" -cp "$CLASSES" D_Jit ||
  { tail -30 "$WORK/jit.err"; [ -f "$out" ] && grep '^FAIL' "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/jit.out" '^D_Jit: hotAfter=true spin=true unloaded=true '
[ -s "$out" ] || fail "agent wrote nothing"
grep -E '^COMPILED' "$out" | sort | uniq -c | sed 's/^/   /'
expect_no_agent_failures "$out"
# 4 EnableEvent, replay, hotAfter, spin load, spin unload, 3 tables, bit.
expect_summary "$out" d_jit 12
exit 0
