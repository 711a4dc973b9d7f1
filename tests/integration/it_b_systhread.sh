#!/bin/bash
# CreateSystemThread (agent b_systhread): refused with JNI_ERR in JVM_OnLoad;
# after JVM_INIT_DONE, threads of maximum, minimum and normal priority run,
# get THREAD_START, see their own java.lang.Thread through JNI, and appear in
# the VM's thread dump with their names, priorities and as daemons
# (B_ListThreads).  Thread.getAllStackTraces() is no help: HotSpot leaves
# JVM TI agent threads out of it.
. "$(dirname "$0")/lib.sh"

[ -f "$AGENTS_DIR/libb_systhread.so" ] || fail "libb_systhread.so not built"
out="$WORK/systhread.txt"
list="$WORK/threads.txt"
run_java st "$(agent_arg b_systhread "$out")" -cp "$CLASSES" B_ListThreads "$list" b-max b-min b-normal \
  || { tail -30 "$WORK/st.err"; cat "$WORK/st.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/st.out" '^B_ListThreads end$'
expect_no_agent_failures "$out"
# 3 EnableEvent + OnLoad refusal + 3 CreateSystemThread + 2 + 5 per thread.
expect_summary "$out" b_systhread 24
expect_file_has "$out" '^ok CreateSystemThread in JVM_OnLoad, before JVM_INIT_DONE, returns JNI_ERR'
# dump|name|priority|daemon, from the VM's thread dump.
expect_file_has "$list" '^dump|main|'
expect_file_has "$list" '^dump|b-max|10|true$'
expect_file_has "$list" '^dump|b-min|1|true$'
expect_file_has "$list" '^dump|b-normal|5|true$'
expect_file_lacks "$list" '|b-too-early|'
note "b_systhread: all checks passed"
exit 0
