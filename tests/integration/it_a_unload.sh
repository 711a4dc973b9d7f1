#!/bin/bash
# CLASS_UNLOAD: A_UnloadMe, loaded by throw-away URLClassLoaders, must be
# reported unloaded with the class_id its CLASS_LOAD carried.  Run with the
# default collector (G1) and with Serial; both unload classes on System.gc().
# A_Unload keeps calling System.gc() for up to 60 s until the agent reports.
. "$(dirname "$0")/lib.sh"

for gc in G1 Serial; do
  out="$WORK/agent-$gc.txt"
  run_java "run-$gc" "-XX:+Use${gc}GC" "$(agent_arg a_unload "out=$out")" -cp "$CLASSES" A_Unload "$out" ||
    { tail -3 "$WORK/run-$gc.out"; cat "$WORK/run-$gc.err"; fail "java exited non-zero ($gc)"; }
  expect_file_has "$WORK/run-$gc.out" '^unload seen'
  expect_file_has "$out" '^START'
  expect_file_has "$out" '^DONE '
  expect_no_agent_failures "$out"
  # The IDs unloaded must be among those loaded.
  n_loaded=$(grep -c '^LOADED A_UnloadMe ' "$out")
  [ "$n_loaded" = 3 ] || fail "$gc: CLASS_LOAD of A_UnloadMe seen $n_loaded times, expected 3"
  grep '^UNLOADED A_UnloadMe ' "$out" | while read -r _ _ id; do
    grep -q "^LOADED A_UnloadMe $id\$" "$out" || fail "$gc: unloaded id $id was never loaded"
  done || exit 1
  note "$gc: $(grep -c '^UNLOADED A_UnloadMe ' "$out") of 3 unloads seen; $(grep '^DONE' "$out")"
done
exit 0
