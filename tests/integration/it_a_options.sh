#!/bin/bash
# The option string a legacy agent's JVM_OnLoad receives, on every way of
# loading it:
#   -agentpath:$LAYER=<agent>:<options>   (options = all text after the first ':')
#   JAVA_TOOL_OPTIONS=-agentpath:$LAYER  java -Xrun<name>:<options>   (unchanged
#     command line; the VM itself calls JVM_OnLoad, LD_LIBRARY_PATH finds the agent)
# Without a ':' the agent gets NULL, as -Xrun always gave; with a trailing ':'
# it gets "" (HotSpot's -Xrun does the same, and the layer follows it).
. "$(dirname "$0")/lib.sh"

LIB="$AGENTS_DIR/liba_options.so"
[ -f "$LIB" ] || fail "$LIB not built"
export A_OPTIONS_OUT

# check NAME EXPECTED-LINE java-args...
check() {
  local name="$1" want="$2"; shift 2
  A_OPTIONS_OUT="$WORK/$name.txt"
  : >"$A_OPTIONS_OUT"
  run_java "$name" "$@" -cp "$CLASSES" A_Hello ||
    { cat "$WORK/$name.err"; fail "$name: java exited non-zero"; }
  expect_file_has "$WORK/$name.out" '^hello done'
  local got
  got=$(grep '^OPTIONS' "$A_OPTIONS_OUT")
  [ "$(grep -c '^OPTIONS' "$A_OPTIONS_OUT")" = 1 ] ||
    fail "$name: JVM_OnLoad ran $(grep -c '^OPTIONS' "$A_OPTIONS_OUT") times: $got"
  [ "$got" = "$want" ] || fail "$name: agent got '$got', expected '$want'"
  expect_file_has "$A_OPTIONS_OUT" '^GETENV 0$'
  note "$name: $got"
}

opts='a=1,b=x:y'
check agentpath "OPTIONS [$opts] length ${#opts}" "-agentpath:$LAYER=$LIB:$opts"
opts='file=/tmp/x:y=z,depth=8:=:'
check agentpath-colons "OPTIONS [$opts] length ${#opts}" "-agentpath:$LAYER=$LIB:$opts"
opts='with space;and&more=1'
check agentpath-special "OPTIONS [$opts] length ${#opts}" "-agentpath:$LAYER=$LIB:$opts"
check agentpath-none "OPTIONS NULL" "-agentpath:$LAYER=$LIB"
check agentpath-empty "OPTIONS [] length 0" "-agentpath:$LAYER=$LIB:"
# A bare name is looked up as -Xrun did: lib<name>.so, here on LD_LIBRARY_PATH.
opts='a=1,b=x:y'
LD_LIBRARY_PATH="$AGENTS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  check agentpath-byname "OPTIONS [$opts] length ${#opts}" "-agentpath:$LAYER=a_options:$opts"

# The unchanged -Xrun command line.
export JAVA_TOOL_OPTIONS="-agentpath:$LAYER"
export LD_LIBRARY_PATH="$AGENTS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
opts='a=1,b=x:y'
check xrun "OPTIONS [$opts] length ${#opts}" "-Xruna_options:$opts"
check xrun-none "OPTIONS NULL" "-Xruna_options"
check xrun-empty "OPTIONS [] length 0" "-Xruna_options:"
exit 0
