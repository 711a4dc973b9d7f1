#!/bin/bash
# hprof net=host:port: the agent sends its output to a TCP
# listener on loopback (tests/java/H_Listen.java, started here in the
# background, writes what it receives to a file) instead of a file.  Two
# separate runs cannot be byte-identical (dates, object IDs, and the JDK's own
# objects differ from run to run), so the received data is compared with the
# file a run with the same options writes on what is deterministic:
#   format=b,cutoff=0 (so that the H_Small sites, none of them live, are
#     listed): a complete, well-formed JAVA PROFILE 1.0.1 stream (walker), the
#     same record kinds, the same H_Big site (1000/48000 live and allocated)
#     and H_Small allocation count;
#   format=a (net=localhost:port, a host name this time): the same preamble
#     and section sequence with digits (dates, ids, counts) taken out, the same
#     H_Big SITES numbers and the same H_Big trace.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/hprof/hprof_lib.sh"
require_hprof H_Sites H_Listen
build_walker

# listen NAME: starts H_Listen; sets PORT and LPID; received bytes go to NAME.recv.
listen() {
  rm -f "$WORK/$1.port"
  start_java "$1-listener" -cp "$CLASSES" H_Listen "$WORK/$1.port" "$WORK/$1.recv"
  LPID=$JPID
  wait_for "$WORK/$1.port" '^[0-9][0-9]*$' 30 "$LPID" || { cat "$WORK/$1-listener.err"; fail "listener did not start"; }
  PORT=$(cat "$WORK/$1.port")
}

# received NAME: waits for the listener to see the end of the stream.
received() {
  wait_exit "$LPID" 30
  [ "$JRC" = 0 ] || { cat "$WORK/$1-listener.err"; fail "$1: listener exit $JRC (no connection, or the agent never closed it)"; }
  expect_file_has "$WORK/$1-listener.out" '^H_Listen received [1-9][0-9]* bytes$'
  note "$1: $(cat "$WORK/$1-listener.out")"
}

# --- format=b -----------------------------------------------------------------
mkdir -p "$WORK/nb" && cd "$WORK/nb" || exit 1
listen nb
run_java nb "$(hprof_arg "format=b,heap=sites,cutoff=0,net=127.0.0.1:$PORT")" -cp "$CLASSES" H_Sites ||
  { tail "$WORK/nb.err"; fail "format=b,net=: java exited non-zero"; }
expect_file_has "$WORK/nb.out" '^H_Sites done kept=1000 idsum=499500$'
received nb
[ -z "$(ls -A "$WORK/nb")" ] || { ls -la "$WORK/nb"; fail "net= given, yet the agent wrote a file in the working directory"; }
cd "$WORK" || exit 1
expect_binary_header "$WORK/nb.recv"
walk "$WORK/nb.recv" "$WORK/nb.walk"

run_java fb "$(hprof_arg "format=b,heap=sites,cutoff=0,file=$WORK/fb.hprof")" -cp "$CLASSES" H_Sites ||
  { tail "$WORK/fb.err"; fail "format=b,file=: java exited non-zero"; }
expect_binary_header "$WORK/fb.hprof"
walk "$WORK/fb.hprof" "$WORK/fb.walk"
[ "$(grep '^TAG' "$WORK/nb.walk" | cut -d' ' -f2)" = "$(grep '^TAG' "$WORK/fb.walk" | cut -d' ' -f2)" ] ||
  { grep '^TAG' "$WORK/nb.walk" "$WORK/fb.walk"; fail "format=b: the stream and the file have different record kinds"; }
for w in nb fb; do
  expect_file_has "$WORK/$w.walk" '^SITE H_Big 1000 48000 1000 48000$'
  grep -q '^SITE H_Small [0-9]* [0-9]* 50000 800000$' "$WORK/$w.walk" ||
    { grep '^SITE H_Small' "$WORK/$w.walk"; fail "$w: H_Small site is not 50000 allocated (16 bytes each)"; }
done
# Sizes are close: same program, same options.
nbs=$(stat -c %s "$WORK/nb.recv"); fbs=$(stat -c %s "$WORK/fb.hprof")
awk -v a="$nbs" -v b="$fbs" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.2 * b) }' ||
  fail "format=b: received $nbs bytes, the file has $fbs (more than 20% apart)"
note "format=b: received $nbs bytes, file $fbs bytes"

# --- format=a, host name ----------------------------------------------------------
listen na
run_java na "$(hprof_arg "heap=sites,net=localhost:$PORT")" -cp "$CLASSES" H_Sites ||
  { tail "$WORK/na.err"; fail "net=localhost: java exited non-zero"; }
expect_file_has "$WORK/na.out" '^H_Sites done kept=1000 idsum=499500$'
received na
[ ! -e "$WORK/java.hprof.txt" ] || fail "net= given, yet java.hprof.txt was written"
run_java fa "$(hprof_arg "heap=sites,file=$WORK/fa.txt")" -cp "$CLASSES" H_Sites ||
  { tail "$WORK/fa.err"; fail "format=a,file=: java exited non-zero"; }
# Preamble: everything before the first THREAD/TRACE/SITES line, digits out,
# and without the line quoting the option string (net= there, file= here).
pre() { awk '/^(THREAD|TRACE|SITES|HEAP|CPU|MONITOR)/ { exit } !/options: "/ { print }' "$1" | tr -d '0-9'; }
[ -n "$(pre "$WORK/fa.txt")" ] || fail "fa.txt has no preamble before its first section"
[ "$(pre "$WORK/na.recv")" = "$(pre "$WORK/fa.txt")" ] ||
  { diff <(pre "$WORK/na.recv") <(pre "$WORK/fa.txt") | head; fail "format=a: the received preamble differs from the file's"; }
# Section sequence (THREAD/TRACE lines vary in number with the JDK's own threads).
secs() { grep -E '^(SITES|HEAP DUMP|CPU|MONITOR) ' "$1" | sed 's/ (.*//; s/ [A-Z][a-z][a-z] [A-Z][a-z][a-z] .*//' | tr -d '0-9'; }
[ "$(secs "$WORK/na.recv")" = "$(secs "$WORK/fa.txt")" ] ||
  { diff <(secs "$WORK/na.recv") <(secs "$WORK/fa.txt"); fail "format=a: different sections received and in the file"; }
expect_file_has "$WORK/na.recv" '^SITES END'
for w in na.recv fa.txt; do
  sites_rows "$WORK/$w" | awk '$9 == "H_Big"' >"$WORK/$w.big"
  [ "$(wc -l <"$WORK/$w.big")" = 1 ] || fail "$w: not one H_Big SITES row"
  trace_frames "$WORK/$w" "$(awk '{print $8}' "$WORK/$w.big")" >"$WORK/$w.trace"
done
[ "$(cut -d' ' -f4-7 "$WORK/na.recv.big")" = "$(cut -d' ' -f4-7 "$WORK/fa.txt.big")" ] ||
  fail "H_Big site received '$(cat "$WORK/na.recv.big")', in the file '$(cat "$WORK/fa.txt.big")'"
[ "$(cut -d' ' -f4-7 "$WORK/fa.txt.big")" = "48000 1000 48000 1000" ] || fail "H_Big site wrong: $(cat "$WORK/fa.txt.big")"
cmp -s "$WORK/na.recv.trace" "$WORK/fa.txt.trace" && [ -s "$WORK/fa.txt.trace" ] ||
  { cat "$WORK/na.recv.trace" "$WORK/fa.txt.trace"; fail "H_Big's trace differs between the stream and the file"; }

note "hprof net: all checks passed"
exit 0
