#!/usr/bin/env python3
"""compare_jfc.py DEFAULT_JFC INTERVAL_MS: the default JFR settings of JDK 8 to
16, as scripts/compare.sh records with them, on standard output.

Before JDK 17, JFR takes its settings from a .jfc file alone (JDK 17 takes
them on the command line too).  From the JDK's default.jfc: execution samples
every INTERVAL_MS, as often as the agent samples; an event for each new TLAB
and each allocation outside one, the only allocation events before JDK 16;
class loading and thread statistics once, at the end of the recording."""
import sys
import xml.etree.ElementTree as ET

CHANGES = {
    "jdk.ExecutionSample": {"enabled": "true", "period": None},
    "jdk.ObjectAllocationInNewTLAB": {"enabled": "true", "stackTrace": "true"},
    "jdk.ObjectAllocationOutsideTLAB": {"enabled": "true", "stackTrace": "true"},
    "jdk.ClassLoadingStatistics": {"enabled": "true", "period": "endChunk"},
    "jdk.JavaThreadStatistics": {"enabled": "true", "period": "endChunk"},
}


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        sys.exit("usage: compare_jfc.py DEFAULT_JFC INTERVAL_MS")
    tree = ET.parse(sys.argv[1])
    seen = set()
    for event in tree.getroot().iter("event"):
        wanted = CHANGES.get(event.get("name"))
        if wanted is None:
            continue
        seen.add(event.get("name"))
        for name, value in wanted.items():
            setting = next((s for s in event.iter("setting") if s.get("name") == name), None)
            if setting is None:
                setting = ET.SubElement(event, "setting", name=name)
            setting.text = value if value is not None else "%s ms" % sys.argv[2]
            setting.attrib.pop("control", None)  # no control may set it back
    missing = sorted(set(CHANGES) - seen)
    if missing:
        sys.exit("compare_jfc.py: %s has no %s" % (sys.argv[1], ", ".join(missing)))
    sys.stdout.write(ET.tostring(tree.getroot(), encoding="unicode") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
