#!/bin/bash
# OBJECT_ALLOC completeness: C_Alloc allocates known
# numbers of C_Marker objects and arrays by every path (new, newarray,
# anewarray, multianewarray, clone, reflection, JNI, strings), on main and on
# the thread "c-alloc-worker"; the c_alloc agent counts them exactly, checks
# that they are those very objects (jobject2jobjectID), in their thread, with
# arena 1, fresh IDs, sizes and class IDs defined by an earlier CLASS_LOAD.
# Three runs: OBJECT_ALLOC enabled in JVM_OnLoad, at JVM_INIT_DONE, and from
# main() (the layer must count all of main's allocations in each case; on
# JDK 17 the first ~512 KB on main are the known trap); a fourth, enabled in
# JVM_OnLoad, with allocs=hooks: the layer's allocation hooks, JDK 8's and
# 11's way, on this JDK.  No JVM flags: the default heap and TLABs are what
# must work.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_alloc.so"
[ -f "$lib" ] || fail "libc_alloc.so not built"
# JDK 25 loses the tag of a clone set in its allocation event (see
# clone_ids in c_alloc.c): there the clones are counted, not identified.
clone=kept
[ "$JDK_MAJOR" -ge 21 ] && clone=lost
compact=$(compact_headers)
for mode in onload init late hooks; do
  out="$WORK/alloc-$mode.txt"
  enable=$mode layer_opts=
  [ "$mode" = hooks ] && enable=onload layer_opts=allocs=hooks
  JVMPI_LAYER_OPTIONS=$layer_opts run_java "alloc-$mode" "$(agent_arg c_alloc "out=$out,enable=$enable,clone_ids=$clone,compact_headers=$compact")" -Dagent.lib="$lib" -cp "$CLASSES" C_Alloc ||
    { tail -30 "$WORK/alloc-$mode.err"; [ -f "$out" ] && grep -E '^(FAIL|window)' "$out" | head -40
      fail "java exited non-zero (enable=$mode)"; }
  expect_no_crash
  expect_file_has "$WORK/alloc-$mode.out" '^C_Alloc done'
  [ -s "$out" ] || fail "agent wrote nothing (enable=$mode)"
  expect_file_has "$out" "^START enable=$enable"
  grep '^window ' "$out" | sed 's/^/   /'
  expect_no_agent_failures "$out"
  for w in new newarray anewarray multianewarray clone reflection jni strings worker-new worker-newarray \
           worker-jni new-again; do
    expect_file_has "$out" "^ok window $w: "
  done
  # 4 or 5 EnableEvent, 12 windows, the window total.
  expect_summary "$out" c_alloc 18
  note "enable=$mode: $(grep '^JVM_SHUT_DOWN' "$out")"
done
exit 0
