#!/bin/bash
# No deadlock, nothing lost under load: the c_load agent
# holds a raw monitor from GC_START to GC_FINISH and calls RequestEvent
# (CLASS_LOAD for unknown classes, OBJECT_ALLOC every 1000th allocation) from
# its OBJECT_ALLOC handler, under that monitor; C_Load runs 8 threads
# allocating 200000 markers each.  The run must finish, and the agent's
# marker count must equal the program's.
# -Xmx64m: a small heap, so that many GCs (and GC windows) happen while the
# threads allocate.  The time limit (150 s) stays under ctest's 180 s.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_load.so"
[ -f "$lib" ] || fail "libc_load.so not built"
out="$WORK/load.txt"
note "java -Xmx64m ... C_Load (limit 150 s)"
start=$(date +%s)
timeout -s KILL 150 "$JAVA" -Xmx64m "$(agent_arg c_load "out=$out")" -Dagent.lib="$lib" -cp "$CLASSES" C_Load \
  >"$WORK/load.out" 2>"$WORK/load.err"
rc=$?
note "exit code $rc after $(( $(date +%s) - start )) s"
[ $rc = 137 ] && { [ -f "$out" ] && tail -5 "$out"; fail "C_Load did not finish within 150 s (deadlock?)"; }
[ $rc = 0 ] || { tail -30 "$WORK/load.err"; [ -f "$out" ] && grep -v '^ok' "$out" | head -40; fail "java exited $rc"; }
expect_no_crash
expect_file_has "$WORK/load.out" '^C_Load done'
[ -s "$out" ] || fail "agent wrote nothing"
grep -E '^(program made|JVM_SHUT_DOWN)' "$out" | sed 's/^/   /'
prog=$(sed -n 's/^C_Load allocated \([0-9]*\) markers$/\1/p' "$WORK/load.out")
[ "$prog" = 1600000 ] || fail "the program says it made '$prog' markers, expected 1600000"
expect_file_has "$out" "^ok OBJECT_ALLOC of C_Marker: $prog, the program made $prog\$"
expect_no_agent_failures "$out"
expect_summary "$out" c_load 10
exit 0
