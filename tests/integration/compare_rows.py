#!/usr/bin/env python3
"""Reads figures back from a comparison report (report.txt of
scripts/compare.sh), for the it_m_*.sh tests:

  compare_rows.py get REPORT SECTION ITEM COLUMN   one figure of a table row
  compare_rows.py top REPORT SECTION SIDE           the item ranked first by SIDE (l or r)
  compare_rows.py count REPORT WHAT                 "<jvmpi> <jfr>" of an events row
  compare_rows.py note REPORT WHAT                  the note of an events row
  compare_rows.py missing REPORT SECTION            the MISSING lines of a section
  compare_rows.py agreement REPORT SECTION          a section's agreement line

SECTION is the start of a section's title ("Live objects"); COLUMN is l1, l2,
r1, r2 (the left and right side's figures, in order) or diff.  Figures are
printed without thousands separators; "-" when the side has none.  Exits 1,
with a line saying why, when the section or the row is not there."""

import re
import sys


def sections(path):
    out, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("== "):
                cur = out.setdefault(line[3:], [])
            elif cur is not None:
                cur.append(line)
    return out


def section(path, title):
    for name, lines in sections(path).items():
        if name.startswith(title):
            return lines
    sys.exit("no section '%s' in %s" % (title, path))


# A table row: "<rank>  <item> <left figures> | <right figures> | <diff>".
# The item may hold spaces ("(no Java frame)"); figures are numbers or "-".
ROW = re.compile(r"^\s+(\d+)  (.*?)((?:\s+(?:-|[\d,]+))+)\s*$")


def rows(lines):
    """item -> {l1.., r1.., diff, rank}; an item on two rows is an error."""
    out = {}
    for line in lines:
        parts = line.split(" |")
        if len(parts) != 3:
            continue
        m = ROW.match(parts[0])
        if not m:
            continue
        item = m.group(2).strip()
        row = {"rank": m.group(1)}
        for side, cells in (("l", m.group(3).split()), ("r", parts[1].split())):
            for k, v in enumerate(cells, 1):
                row["%s%d" % (side, k)] = v.replace(",", "")
        row["diff"] = parts[2].strip()
        if item in out:
            sys.exit("two rows of '%s' (a name cut short?)" % item)
        out[item] = row
    return out


def main(argv):
    cmd, path = argv[1], argv[2]
    if cmd == "get":
        table = rows(section(path, argv[3]))
        if argv[4] not in table:
            sys.exit("no row '%s' in section '%s' of %s" % (argv[4], argv[3], path))
        print(table[argv[4]].get(argv[5], "-"))
    elif cmd == "top":
        table = rows(section(path, argv[3]))
        col = argv[4] + "1"
        ranked = sorted((int(r[col]) for r in table.values() if r.get(col, "-") != "-"), reverse=True)
        best = [i for i, r in table.items() if ranked and r.get(col) == str(ranked[0])]
        print(best[0] if best else "-")
    elif cmd in ("count", "note"):
        for line in section(path, "Events"):
            if line[3:21].strip() == argv[3]:
                if cmd == "count":
                    print(line[37:49].strip().replace(",", ""), line[50:62].strip().replace(",", ""))
                else:
                    print(line[74:].strip())
                return
        sys.exit("no events row '%s' in %s" % (argv[3], path))
    elif cmd == "agreement":
        for line in section(path, argv[3]):
            if line.startswith("   agreement: "):
                print(line[len("   agreement: "):])
    elif cmd == "missing":
        for line in section(path, argv[3]):
            if "MISSING:" in line:
                print(line.strip())
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
