#!/bin/bash
# Every pair of the project's agents (hprof, classtrace), each named by
# -agentpath:libjvmpi.so=<agent> or by -Xrun<agent>, in either order: each
# agent writes its own complete output, or the layer refuses the pair at
# start-up in one line (only -Xrun<same> twice, which the VM would start as
# one library twice).  Two copies of one agent must not share its globals:
# hprof named twice once left the first profile with its header only.
. "$(dirname "$0")/lib.sh"

for a in hprof classtrace; do
  [ -f "$PROJECT_AGENTS_DIR/lib$a.so" ] || fail "lib$a.so not built in $PROJECT_AGENTS_DIR"
done
[ -f "$CLASSES/CtHello.class" ] || fail "CtHello.class missing from $CLASSES"

# opts AGENT SLOT FILE: the agent's options, which differ between the two
# slots so that each output shows which copy wrote it.
opts() {
  case "$1.$2" in
  hprof.1) echo "heap=sites,file=$3" ;;
  hprof.2) echo "cpu=samples,file=$3" ;;
  classtrace.*) echo "file=$3" ;;
  esac
}

# arg FORM AGENT OPTIONS: the command-line word naming the agent.
arg() {
  case "$1" in
  A) echo "-agentpath:$LAYER=$2:$3" ;;
  X) echo "-Xrun$2:$3" ;;
  esac
}

# check_out AGENT SLOT FILE NAME: the agent's own output is whole.
check_out() {
  local f="$3"
  [ -s "$f" ] || fail "$4: $(basename "$f") is empty or missing"
  case "$1" in
  hprof)
    expect_file_has "$f" '^THREAD START (obj=[0-9a-fA-Fx]*, id = [0-9]*, name="ct-worker"'
    if [ "$2" = 1 ]; then
      expect_file_has "$f" '^SITES BEGIN' && expect_file_has "$f" '^SITES END'
      expect_file_lacks "$f" '^CPU SAMPLES BEGIN'
    else
      expect_file_has "$f" '^CPU SAMPLES BEGIN' && expect_file_has "$f" '^CPU SAMPLES END'
      expect_file_lacks "$f" '^SITES BEGIN'
    fi
    ;;
  classtrace)
    expect_file_has "$f" '^CLASS_LOAD CtHello (CtHello\.java) '
    expect_file_has "$f" '^THREAD_END ct-worker$'
    expect_file_has "$f" '^classtrace: [0-9]* classes loaded, 0 unloaded, [0-9]* threads$'
    [ "$(grep -c '^JVM_INIT_DONE$' "$f")" = 1 ] || fail "$4: $(basename "$f") has not one JVM_INIT_DONE"
    ;;
  esac
}

runs=0
for first in hprof classtrace; do
  for second in hprof classtrace; do
    for forms in AA AX XA XX; do
      n="$first.$second.$forms"
      o1="$WORK/$n.1.txt" o2="$WORK/$n.2.txt"
      a1=$(arg "${forms:0:1}" "$first" "$(opts "$first" 1 "$o1")")
      a2=$(arg "${forms:1:1}" "$second" "$(opts "$second" 2 "$o2")")
      layer=()
      [ "$forms" = XX ] && layer=("-agentpath:$LAYER")
      LD_LIBRARY_PATH="$PROJECT_AGENTS_DIR" run_java "$n" "${layer[@]}" "$a1" "$a2" -cp "$CLASSES" CtHello
      rc=$?
      expect_no_crash
      runs=$((runs + 1))
      if [ "$forms" = XX ] && [ "$first" = "$second" ]; then
        # The one refusal: one line, naming the agent, and the program never ran.
        [ "$rc" != 0 ] || fail "$n: -Xrun$first twice was not refused"
        [ "$(grep -c "^JVMPI layer: error: -Xrun$first is given twice" "$WORK/$n.err")" = 1 ] ||
          { cat "$WORK/$n.err"; fail "$n: no one-line refusal"; }
        expect_file_lacks "$WORK/$n.out" 'hello from'
        continue
      fi
      [ "$rc" = 0 ] || { tail -20 "$WORK/$n.err"; fail "$n: java exited with $rc"; }
      expect_file_has "$WORK/$n.out" '^hello from 1$'
      expect_file_lacks "$WORK/$n.err" 'JVMPI layer: error'
      check_out "$first" 1 "$o1" "$n"
      check_out "$second" 2 "$o2" "$n"
      note "$n: both outputs complete"
    done
  done
done
[ "$runs" = 16 ] || fail "ran $runs pairs, expected 16"
note "b_pairs: all checks passed"
exit 0
