#!/bin/bash
# Agents that cannot be loaded: each failure gives one clear line naming the
# agent on stderr, and the JVM does not start the program.  And an agent given
# by bare name is found on LD_LIBRARY_PATH and java.library.path.
. "$(dirname "$0")/lib.sh"

for a in b_noonload b_failonload b_simple; do
  [ -f "$AGENTS_DIR/lib$a.so" ] || fail "lib$a.so not built"
done

# expect_refused NAME PATTERN: run NAME failed, the program never ran, and
# stderr has exactly one line matching PATTERN.
expect_refused() {
  local n="$1" pat="$2" count
  [ "$rc" != 0 ] || { cat "$WORK/$n.out"; fail "$n: java exited 0"; }
  expect_no_crash
  expect_file_lacks "$WORK/$n.out" '^B_Main start'
  count=$(grep -c -- "$pat" "$WORK/$n.err")
  [ "$count" = 1 ] || { cat "$WORK/$n.err"; fail "$n: expected one line with '$pat' on stderr, found $count"; }
  note "$n: $(grep -- "$pat" "$WORK/$n.err")"
}

# 1. A bare name that no directory has.
LD_LIBRARY_PATH="$AGENTS_DIR" run_java unknown "-agentpath:$LAYER=b_nosuchagent" -cp "$CLASSES" B_Main
rc=$?
expect_refused unknown b_nosuchagent

# 2. A path to a file that does not exist.
run_java nofile "-agentpath:$LAYER=$AGENTS_DIR/libb_nosuchfile.so" -cp "$CLASSES" B_Main
rc=$?
expect_refused nofile b_nosuchfile

# 3. A library without JVM_OnLoad; the line says what is missing.
run_java noonload "$(agent_arg b_noonload)" -cp "$CLASSES" B_Main
rc=$?
expect_refused noonload b_noonload
grep b_noonload "$WORK/noonload.err" | grep -q JVM_OnLoad \
  || fail "noonload: the line does not say JVM_OnLoad is missing"

# 4. JVM_OnLoad returns JNI_ERR (after being called with its options).
run_java failonload "$(agent_arg b_failonload opt1=x)" -cp "$CLASSES" B_Main
rc=$?
expect_file_has "$WORK/failonload.out" "^FAILONLOAD: JVM_OnLoad called, options 'opt1=x', returning JNI_ERR\$"
expect_refused failonload b_failonload

# 5. Bare name found through LD_LIBRARY_PATH, options passed on.
LD_LIBRARY_PATH="$AGENTS_DIR" run_java bare "-agentpath:$LAYER=b_simple:hello=1" -cp "$CLASSES" B_Main \
  || { cat "$WORK/bare.err"; fail "b_simple by bare name on LD_LIBRARY_PATH: java exited non-zero"; }
expect_no_crash
f="$WORK/bare.out"
expect_file_has "$f" "^b_simple: JVM_OnLoad options 'hello=1'\$"
expect_file_has "$f" '^b_simple: JVM_INIT_DONE$'
expect_file_has "$f" '^B_Main end$'
expect_file_has "$f" '^b_simple: JVM_SHUT_DOWN$'
expect_no_agent_failures "$f"

# 6. The same through java.library.path alone.
LD_LIBRARY_PATH= run_java libpath "-Djava.library.path=$AGENTS_DIR" "-agentpath:$LAYER=b_simple" -cp "$CLASSES" B_Main \
  || { cat "$WORK/libpath.err"; fail "b_simple by bare name on java.library.path: java exited non-zero"; }
expect_file_has "$WORK/libpath.out" '^b_simple: JVM_INIT_DONE$'
expect_file_has "$WORK/libpath.out" '^B_Main end$'

# 7. Neither: the bare name is not found (b_simple is not in the layer's own
# agents directory), which shows that 5 and 6 really used the search path.
LD_LIBRARY_PATH= run_java nopath "-agentpath:$LAYER=b_simple" -cp "$CLASSES" B_Main
rc=$?
expect_refused nopath b_simple
# 8. A 100 KB agent name: the line shows it shortened, with its length, and
# the reason after it intact.
long=$(head -c 102400 /dev/zero | tr '\0' x)
run_java longname "-agentpath:$LAYER=$long" -cp "$CLASSES" B_Main
rc=$?
expect_refused longname "cannot find JVMPI agent"
line=$(grep "cannot find JVMPI agent" "$WORK/longname.err")
[ ${#line} -lt 1000 ] || fail "longname: the line is ${#line} bytes long"
echo "$line" | grep -q "102400 bytes in all" || fail "longname: the line does not give the name's length: $line"
echo "$line" | grep -q "in the JDK library directory, LD_LIBRARY_PATH, java.library.path or " ||
  fail "longname: the reason was cut off: $line"

# 9. With logfile= (a path with a comma in it), the error that stops the VM
# is in the file and on the terminal.
JVMPI_LAYER_OPTIONS="log=warn,logfile=$WORK/layer,1.log" LD_LIBRARY_PATH= \
  run_java logfile "-agentpath:$LAYER=b_nosuchagent" -cp "$CLASSES" B_Main
rc=$?
expect_refused logfile b_nosuchagent
expect_file_has "$WORK/layer,1.log" "cannot find JVMPI agent 'b_nosuchagent'"
note "b_loaderr: all checks passed"
exit 0
