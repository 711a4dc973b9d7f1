#!/bin/bash
# DATA_RESET_REQUEST: JVM TI has no twin; the layer sends
# it on SIGUSR1.  D_Reset waits while the script sends the signal twice; the
# d_reset agent must count exactly two, delivered on a Java thread.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libd_reset.so"
[ -f "$lib" ] || fail "libd_reset.so not built"
out="$WORK/reset.txt"
note "java ... D_Reset 2 (in the background)"
timeout 60 "$JAVA" "$(agent_arg d_reset "out=$out,want=2")" -Dagent.lib="$lib" -cp "$CLASSES" D_Reset 2 \
  >"$WORK/reset.out" 2>"$WORK/reset.err" &
jpid=$!
for _ in $(seq 1 300); do
  grep -q '^D_Reset: ready' "$WORK/reset.out" 2>/dev/null && break
  sleep 0.1
done
pid=$(sed -n 's/^D_Reset: ready pid=\([0-9]*\)$/\1/p' "$WORK/reset.out")
[ -n "$pid" ] || { kill "$jpid" 2>/dev/null; cat "$WORK/reset.err"; fail "D_Reset never said it was ready"; }
kill -USR1 "$pid"
sleep 0.5
kill -USR1 "$pid"
wait "$jpid"
rc=$?
note "exit code $rc"
[ "$rc" = 0 ] || { tail -20 "$WORK/reset.err"; fail "java exited with $rc"; }
expect_no_crash
expect_file_has "$WORK/reset.out" '^D_Reset: resets=2$'
expect_no_agent_failures "$out"
expect_summary "$out" d_reset 4
exit 0
