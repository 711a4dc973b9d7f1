#!/usr/bin/env python3
"""debfetch.py - fetch binary packages from Debian's archive without apt.

    debfetch.py CACHE_DIR SUITES PACKAGE...

SUITES is a space-separated list, tried in order: each PACKAGE comes from the
first suite whose index has it, so that a package which leaves a release (an
old one moved off the mirror, say) is still found in the next.  Every .deb is
checked against the SHA256 the index gives before it is kept.  Prints one line
per package: NAME<TAB>VERSION<TAB>SUITE<TAB>PATH<TAB>LIBC, LIBC being the
libc6 version the package depends on at least (empty when none).

Used by scripts/jdks.sh, which unpacks the packages beside the system's own:
nothing here installs anything.  DEBIAN_MIRROR overrides the archive's URL.
"""
import hashlib
import lzma
import os
import re
import sys
import urllib.request

MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian").rstrip("/")
ARCH = "amd64"
TIMEOUT = 120


def fail(msg):
    print(f"debfetch: {msg}", file=sys.stderr)
    sys.exit(1)


def fetch(url, dest):
    tmp = dest + ".part"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as r, open(tmp, "wb") as f:
            while True:
                chunk = r.read(1 << 20)
                if not chunk:
                    break
                f.write(chunk)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fail(f"cannot fetch {url}: {e}")
    os.replace(tmp, dest)


def index(cache, suite):
    """The suite's package stanzas, keyed by name (the index is read again on
    each call of the script: a stale one names .debs the mirror no longer has)."""
    path = os.path.join(cache, f"Packages-{suite}.xz")
    fetch(f"{MIRROR}/dists/{suite}/main/binary-{ARCH}/Packages.xz", path)
    stanzas = {}
    with lzma.open(path, "rt", encoding="utf-8", errors="replace") as f:
        for block in f.read().split("\n\n"):
            fields = dict(re.findall(r"^([A-Za-z0-9-]+): ?(.*)$", block, re.M))
            if "Package" in fields:
                stanzas[fields["Package"]] = fields
    os.unlink(path)
    return stanzas


def libc_floor(fields):
    deps = fields.get("Depends", "") + ", " + fields.get("Pre-Depends", "")
    m = re.search(r"(?:^|,)\s*libc6 \(>= ([0-9.]+)", deps)
    return m.group(1) if m else ""


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main(argv):
    if len(argv) < 4:
        fail("usage: debfetch.py CACHE_DIR SUITES PACKAGE...")
    cache, suites, packages = argv[1], argv[2].split(), argv[3:]
    os.makedirs(cache, exist_ok=True)
    indexes = {}
    for pkg in packages:
        for suite in suites:
            if suite not in indexes:
                indexes[suite] = index(cache, suite)
            fields = indexes[suite].get(pkg)
            if fields:
                break
        else:
            fail(f"{pkg} is in none of Debian's {' '.join(suites)} indexes at {MIRROR}")
        deb = os.path.join(cache, os.path.basename(fields["Filename"]))
        want = fields.get("SHA256", "")
        if not want:
            fail(f"{pkg} ({suite}): the index gives no SHA256")
        if not (os.path.exists(deb) and sha256(deb) == want):
            fetch(f"{MIRROR}/{fields['Filename']}", deb)
            got = sha256(deb)
            if got != want:
                os.unlink(deb)
                fail(f"{pkg} {fields['Version']} ({suite}): SHA256 {got}, the index says {want}")
        print("\t".join([pkg, fields["Version"], suite, deb, libc_floor(fields)]))


if __name__ == "__main__":
    main(sys.argv)
