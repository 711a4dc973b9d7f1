#!/bin/bash
# EnableEvent / DisableEvent return codes for -1..70, in JVM_OnLoad and in the
# live phase; the expected table is in tests/agents/a_enable.c.
. "$(dirname "$0")/lib.sh"
# The live round enables every event, method and instruction events included, after
# JVM_OnLoad: by default (the class rewriter) they need no start-up capability.

out="$WORK/agent.txt"
run_java run "$(agent_arg a_enable "out=$out")" -cp "$CLASSES" A_Hello ||
  { cat "$WORK/run.err"; fail "java exited non-zero"; }
expect_file_has "$WORK/run.out" '^hello done'
[ -s "$out" ] || fail "agent wrote nothing (not loaded?)"
expect_file_has "$out" '^START'
for phase in onload live; do
  n=$(grep -c "^RC $phase " "$out")
  [ "$n" = 72 ] || fail "$phase round tried $n numbers, expected 72 (-1..70)"
done
expect_file_has "$out" '^DONE rounds=2 '
if grep -q '^FAIL' "$out"; then
  echo "--- numbers whose return codes differ from the table (RC phase n enable disable):"
  grep '^FAIL' "$out"
  fail "EnableEvent/DisableEvent return codes differ from the table"
fi
note "$(grep '^DONE' "$out")"
exit 0
