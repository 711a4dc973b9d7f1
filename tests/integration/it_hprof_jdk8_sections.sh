#!/bin/bash
# The work-alike's ascii output laid out as JDK 8's own HPROF lays it out, for
# scripts that parse it: on JDK 8, one small program (written below) run under
# both, in three modes, and compared:
#   heap=all,cpu=samples,monitor=y: the sections in the same order (MONITOR
#     DUMP, HEAP DUMP, SITES, CPU SAMPLES; the work-alike adds MONITOR TIME
#     after MONITOR DUMP, which JDK 8's never wrote: docs/hprof.md), their
#     header lines the same but for numbers and dates, the same "Dumping ...
#     done." line on stderr, the same WAIT: and WAITED: lines for main's
#     Thread.join, SITES led by the program's 3000 kept objects
#     (96000 bytes) in both, and JDK 8's 6 first classes among the
#     work-alike's 10 first (java.lang.Class left out: JDK 8 did not count
#     Class objects);
#   cpu=times,thread=y: the same CPU TIME (ms) header, TRACE lines shaped
#     "TRACE n: (thread=m)", and the 10 calls of spin in each of 3 threads;
#   cpu=old: both files a java -prof listing (no preamble, no THREAD lines,
#     "count callee caller time" first), with the same row for the 3000
#     constructor calls.
# About 15 s: six short runs.  it_hprof_jdk8.sh compares the figures on javac.
. "$(dirname "$0")/lib.sh"
[ "$JDK_MAJOR" = 8 ] || skip "JDK $JDK_MAJOR has no HPROF of its own (JDK 9 removed it)"
[ -f "$PROJECT_AGENTS_DIR/libhprof.so" ] || fail "hprof work-alike not built"

mkdir -p "$WORK/src" "$WORK/cls"
cat >"$WORK/src/H_Jdk8Cmp.java" <<'EOF'
/* 3000 objects kept live; three threads contend for one lock around a
 * CPU-bound method, called 10 times by each.  No lambdas: JDK 8's own HPROF
 * stops the VM on them with cpu=times. */
public class H_Jdk8Cmp {
    static final Object lock = new Object();
    static H_Jdk8Keep[] kept;
    static volatile long sink;

    static long spin(int n) {
        long x = 0;
        for (int i = 0; i < n; i++) { x = x * 31 + (i ^ (x >>> 7)); }
        return x;
    }

    public static void main(String[] args) throws Exception {
        kept = new H_Jdk8Keep[3000];
        for (int i = 0; i < kept.length; i++)
            kept[i] = new H_Jdk8Keep(i);
        Thread[] ts = new Thread[3];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(new Runnable() {
                public void run() {
                    for (int k = 0; k < 10; k++)
                        synchronized (lock) {
                            sink += spin(2000000);
                            try { Thread.sleep(5); } catch (InterruptedException e) { }
                        }
                }
            }, "cmp-" + t);
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        System.out.println("H_Jdk8Cmp done kept=" + kept.length);
    }
}

class H_Jdk8Keep {
    final long a, b;
    H_Jdk8Keep(int i) { a = i; b = -i; }
}
EOF
"$JAVA_HOME/bin/javac" -d "$WORK/cls" "$WORK/src/H_Jdk8Cmp.java" || fail "H_Jdk8Cmp.java does not compile"

# both MODE NAME: the program under each HPROF; $WORK/NAME.{jdk8,layer}.{txt,err}.
both() {
  local who agent
  for who in jdk8 layer; do
    if [ $who = jdk8 ]; then agent="-agentlib:hprof=$1,file=$WORK/$2.$who.txt"
    else agent="-agentpath:$LAYER=hprof:$1,file=$WORK/$2.$who.txt"; fi
    run_java "$2.$who" "$agent" -cp "$WORK/cls" H_Jdk8Cmp ||
      { tail -5 "$WORK/$2.$who.err"; fail "$who's hprof $1: java exited non-zero"; }
    expect_file_has "$WORK/$2.$who.out" '^H_Jdk8Cmp done kept=3000$'
    [ -s "$WORK/$2.$who.txt" ] || fail "$who's hprof $1 wrote nothing"
  done
}
# sections FILE: the sections in order, one a line.
sections() { grep -E '^[A-Z][A-Z ()a-z]* BEGIN|^count callee caller time$' "$1" | sed 's/ BEGIN.*//'; }
# headers FILE: each section's BEGIN line and its column lines, numbers as N
# and dates as DATE.
headers() {
  awk '/^[A-Z][A-Z ()a-z]* BEGIN/ { print; h = 1; next }
       h && (/^ *percent/ || /^ *rank /) { print; next } { h = 0 }' "$1" |
    sed -E 's/[0-9]+/N/g; s/[A-Z][a-z]{2} [A-Z][a-z]{2} +N N:N:N N/DATE/'
}
# top_classes FILE N: the first N distinct classes of the last SITES section.
top_classes() {
  awk '/^SITES BEGIN/ { delete seen; n = 0; on = 1; next } /^SITES END/ { on = 0 }
       on && $1 ~ /^[0-9]+$/ && $9 != "java.lang.Class" && !seen[$9]++ && n < '"$2"' { top[++n] = $9 }
       END { for (i = 1; i <= n; i++) print top[i] }' "$1"
}
bad=()

# ---- 1. heap=all,cpu=samples,monitor=y ----
both heap=all,cpu=samples,monitor=y all
a=$WORK/all.jdk8.txt w=$WORK/all.layer.txt
sections "$a" >"$WORK/all.jdk8.sec"; sections "$w" >"$WORK/all.layer.sec"
note "sections, JDK 8: $(tr '\n' ';' <"$WORK/all.jdk8.sec")  work-alike: $(tr '\n' ';' <"$WORK/all.layer.sec")"
grep -v '^MONITOR TIME$' "$WORK/all.jdk8.sec" | diff - <(grep -v '^MONITOR TIME$' "$WORK/all.layer.sec") ||
  bad+=("sections or their order")
grep -qx 'MONITOR TIME' "$WORK/all.layer.sec" && ! grep -A1 -x 'MONITOR DUMP' "$WORK/all.layer.sec" | grep -qx 'MONITOR TIME' &&
  bad+=("MONITOR TIME not right after MONITOR DUMP")
headers "$a" | grep -v '^MONITOR DUMP' >"$WORK/all.jdk8.hdr"
headers "$w" | grep -v '^MONITOR DUMP' | grep -v '^MONITOR TIME' | grep -v ' monitor$' >"$WORK/all.layer.hdr"
diff "$WORK/all.jdk8.hdr" "$WORK/all.layer.hdr" || bad+=("section header lines")
expect_file_has "$w" '^MONITOR TIME BEGIN (total = [0-9]* ms) '
# The dump said on stderr (verbose=y, the default), in the same words.
d8=$(grep '^Dumping' "$WORK/all.jdk8.err") dl=$(grep '^Dumping' "$WORK/all.layer.err")
note "stderr: $dl"
[ -n "$d8" ] && [ "$d8" = "$dl" ] || bad+=("the 'Dumping ... done.' line (JDK 8: '$d8', work-alike: '$dl')")
# monitor=y: Object.wait told as it happens (here main's Thread.join), in one shape.
for f in "$a" "$w"; do
  grep -qE '^WAIT: MONITOR Ljava/lang/Thread;, timeout=0, thread [0-9]+$' "$f" &&
    grep -qE '^WAITED: MONITOR Ljava/lang/Thread;, time_waited=[0-9]+, thread [0-9]+$' "$f" ||
    bad+=("no WAIT: and WAITED: lines for Thread.join in $(basename "$f")")
  grep -E '^(WAIT|WAITED|SLEEP):' "$f" | grep -vE '^WAIT(ED)?: MONITOR [^ ]+, (timeout|time_waited)=[0-9]+, thread [0-9]+$' |
    head -3 | grep . && bad+=("WAIT lines of another shape in $(basename "$f")")
done
# SITES: the program's own objects first, the same count and bytes.
for f in "$a" "$w"; do
  awk '/^SITES BEGIN/ { getline; getline; getline; print $4, $5, $9; exit }' "$f" | grep -qx '96000 3000 H_Jdk8Keep' ||
    bad+=("the first SITES row of $(basename "$f") is not 3000 H_Jdk8Keep of 96000 bytes")
done
top_classes "$a" 6 >"$WORK/top.jdk8"; top_classes "$w" 10 >"$WORK/top.layer"
note "SITES, JDK 8's first: $(tr '\n' ' ' <"$WORK/top.jdk8")"
note "SITES, the work-alike's: $(tr '\n' ' ' <"$WORK/top.layer")"
missing=$(grep -vxF -f "$WORK/top.layer" "$WORK/top.jdk8")
[ "$(wc -l <"$WORK/top.jdk8")" = 6 ] && [ -z "$missing" ] || bad+=("top SITES classes (missing: $missing)")

# ---- 2. cpu=times,thread=y ----
both cpu=times,thread=y times
diff <(headers "$WORK/times.jdk8.txt") <(headers "$WORK/times.layer.txt") || bad+=("CPU TIME header lines")
for who in jdk8 layer; do
  f=$WORK/times.$who.txt
  # JDK 8's preamble explains TRACE records in lines that start with TRACE too.
  grep '^TRACE [0-9]' "$f" | grep -vE '^TRACE [0-9]+: \(thread=[0-9]+\)$' | grep -vE '^TRACE [0-9]+:$' | head -3 |
    grep . && bad+=("TRACE lines of $who")
  grep -qE '^TRACE [0-9]+: \(thread=[0-9]+\)$' "$f" || bad+=("no TRACE n: (thread=m) in $who's")
  n=$(grep -cE '^ +[0-9]+ +[0-9.]+% +[0-9.]+% +10 +[0-9]+ H_Jdk8Cmp\.spin$' "$f")
  note "$who: $n traces of H_Jdk8Cmp.spin with 10 calls"
  [ "$n" = 3 ] || bad+=("$who's CPU TIME has $n rows of spin with 10 calls, not 3")
done

# ---- 3. cpu=old ----
both cpu=old old
for who in jdk8 layer; do
  f=$WORK/old.$who.txt
  [ "$(head -1 "$f")" = "count callee caller time" ] || bad+=("$who's cpu=old file does not start with the listing's header")
  grep -qE '^(JAVA PROFILE|THREAD START|CPU TIME)' "$f" && bad+=("$who's cpu=old file has more than the listing")
  grep -qE '^3000 H_Jdk8Keep\.<init>\(I\)V H_Jdk8Cmp\.main\(\[Ljava/lang/String;\)V [0-9]+$' "$f" ||
    bad+=("$who's cpu=old listing lacks the 3000 H_Jdk8Keep.<init> calls from main")
done

expect_no_crash
[ ${#bad[@]} -eq 0 ] || fail "the work-alike's layout differs from JDK 8's HPROF: $(printf '%s; ' "${bad[@]}")"
echo "ok: the same sections, headers and top sites as JDK 8's HPROF"
