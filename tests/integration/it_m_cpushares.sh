#!/bin/bash
# The CPU comparison of scripts/compare.sh on M_CpuShares, a program that
# times its own three hot methods (25, 30 and 45% of its time): the agent's
# side (the HPROF work-alike's cpu=samples through the layer) must give each
# method the program's own share within 5 points (more only when a loaded
# machine leaves too few samples for that); the report must mark each
# JFR share whose difference from the agent's is beyond the two sides'
# sampling error, and only those, and say how many samples each side has.
. "$(dirname "$0")/lib.sh"
# JDK 8 has no jfr tool: compare.sh reads its recordings with JDK 17's.
[ "$JDK_MAJOR" -ge 9 ] || export JFR_TOOL=$TOOLS_JAVA_HOME/bin/jfr
command -v python3 >/dev/null || skip "python3 is needed for the report"
needs_class M_CpuShares

ROWS="python3 $SOURCE_DIR/tests/integration/compare_rows.py"
export JVMPI_LAYER=$LAYER
note "compare.sh --agent hprof:cpu=samples -- java M_CpuShares 6"
timeout 170 bash "$SOURCE_DIR/scripts/compare.sh" --out "$WORK/cmp" --agent hprof:cpu=samples \
  -- "$JAVA" -cp "$CLASSES" M_CpuShares 6 >"$WORK/cmp.log" 2>&1 || { tail -30 "$WORK/cmp.log"; fail "compare.sh failed"; }
R=$WORK/cmp/report.txt
[ -s "$R" ] || fail "no report"
expect_no_crash

agreement=$($ROWS agreement "$R" 'Hot methods')
note "hot methods: $agreement"
# n_*: the samples in methods both sides sampled, over which shares are taken;
# all_*: every sample of that side.
read -r n_agent all_agent n_jfr all_jfr <<<"$(echo "$agreement" |
  sed -n 's/.*samples in methods both sampled: agent \([0-9,]*\) of \([0-9,]*\), JFR \([0-9,]*\) of \([0-9,]*\);.*/\1 \2 \3 \4/p' | tr -d ,)"
[ -n "${all_jfr:-}" ] || fail "the agreement line does not give each side's samples: $agreement"
# The agent samples two busy threads every 10 ms for 6 s: some 1200 samples,
# fewer on a loaded machine, where its sampling thread runs late.
[ "$all_agent" -ge 300 ] || fail "the agent has $all_agent CPU samples, expected 300 or more"
expect_file_lacks "$R" 'note: this run also tracked allocations'

python3 - "$WORK/cmp.log" "$R" "$n_agent" "$n_jfr" <<'PY' || fail "see above"
import re, subprocess, sys
log, report, n_agent, n_jfr = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
truth = dict(re.findall(r"^truth share (\S+) ([\d.]+)$", open(log).read(), re.M))
if len(truth) != 3:
    sys.exit("FAIL: the program did not print its three shares")
def get(item, col):
    p = subprocess.run(["python3", "%s/tests/integration/compare_rows.py" % __import__("os").environ["SOURCE_DIR"],
                        "get", report, "Hot methods", item, col], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       universal_newlines=True)
    return p.stdout.strip()
bad = []
# A method JFR took no sample of has no row: the report names it, with the
# agent's count, among those "the other side has no sample of" (JDK 11's
# JFR, biased, once gave the three methods 262, 3 and 0 samples).
text = open(report).read()
section = text[text.index("== Hot methods"):]
agent_only = re.search(r"^\s*note: agent: .*? the most: (.*)$", section, re.M)
agent_only = dict((k, int(v)) for k, v in re.findall(r"(\S+) (\d+)(?:, |$)", agent_only.group(1))) if agent_only else {}
counts, no_row = {}, set()
for m in truth:
    l1 = get(m, "l1")
    if l1 == "" and m in agent_only:
        counts[m] = agent_only[m]
        no_row.add(m)
        print("-- %s: no JFR sample; the report names it with the agent's %d" % (m, counts[m]))
    elif l1 == "":
        sys.exit("FAIL: %s has neither a row nor a place among the agent's methods JFR has no sample of" % m)
    else:
        counts[m] = int(l1)
three = sum(counts.values())
for m, t in truth.items():
    share = 100.0 * counts[m] / three            # among the three, as the program times them
    # 5 points; more only where a loaded machine left the sampler too few
    # samples for 5 points to be 3 standard errors.
    p = float(t) / 100
    tol = max(5.0, 300 * (p * (1 - p) / three) ** 0.5)
    print("-- %s: program %.1f%%, agent %.1f%% (%d samples), allowed %.1f points" % (m, float(t), share, counts[m], tol))
    if abs(share - float(t)) > tol:
        bad.append("%s: the agent gives %.1f%%, the program timed %s%%" % (m, share, t))
    if m in no_row:
        continue
    r1 = get(m, "r1")
    jfr = int(r1) if r1 not in ("", "-") else 0
    diff = get(m, "diff")
    d = 100.0 * jfr / n_jfr - 100.0 * counts[m] / n_agent if n_jfr else None
    m_diff = re.match(r"^([+-]\d+\.\d) pp(?: (BEYOND|within) ±(\d+\.\d))?$", diff)
    if not m_diff:
        bad.append("%s: diff cell '%s'" % (m, diff))
        continue
    if abs(float(m_diff.group(1)) - d) > 0.06:
        bad.append("%s: diff %s, the shares give %+.1f" % (m, m_diff.group(1), d))
    if min(n_agent, n_jfr) < 100:
        if m_diff.group(2):
            bad.append("%s: marked with fewer than 100 samples on a side" % m)
        continue
    p1, p2 = counts[m] / n_agent, jfr / n_jfr
    err = 196 * (p1 * (1 - p1) / n_agent + p2 * (1 - p2) / n_jfr) ** 0.5
    want = "BEYOND" if abs(d) > err else "within"
    print("-- %s: JFR %.1f%% of %d, diff %+.1f pp, error ±%.1f: %s" % (m, 100 * p2, n_jfr, d, err, m_diff.group(2)))
    if abs(float(m_diff.group(3)) - err) > 0.06 or m_diff.group(2) != want:
        bad.append("%s: '%s', expected %s ±%.1f" % (m, diff, want, err))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
if [ "$n_jfr" -lt 100 ]; then
  echo "$agreement" | grep -q 'too few to tell a real difference' || fail "JFR has $n_jfr samples and the report does not say they are too few"
fi
note "m_cpushares: all checks passed"
