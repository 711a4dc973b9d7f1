#!/usr/bin/env python3
"""What README.md and the user docs quote must be what the program does.

  * Every message quoted from the layer ("JVMPI layer: <level>: ..."), from
    the launcher ("jvmpi: ...") and from scripts/compare.sh ("compare: ...")
    must be one the source can print: it is matched against the string
    literals of jvmpi/, jvmti_backend/, launcher/jvmpi and scripts/compare.sh
    (read as pieces of those literals in order, as a message built from
    several is; in the docs, <name> and "..." stand for anything).
  * Every script a doc tells users to run exists, and every --option given
    to it is one the script takes.
  * The user pages (README.md and docs/ but design.md) total at most 8,000
    words and name no test, test file or bench script: those notes are the
    developers', in docs/design.md.
  * docs/jvmpi.1 lists the layer's own options, no more, no fewer.
  * Every option list given to the project's agents (hprof:..., classtrace:...,
    -Xrunhprof:..., -Xrunclasstrace:...) and every JVMPI_LAYER_OPTIONS value
    is run: the JVM starts with it, the agent and the layer accept it (exit 0,
    no error line).
Environment: SOURCE_DIR, LAYER (libjvmpi.so), JAVA_HOME, CLASSES (the test
programs, CtHello among them), WORK_ROOT.  Exits 1 after naming each quote
that does not hold."""

import os
import re
import shutil
import subprocess
import sys

SRC = os.environ["SOURCE_DIR"]
DOCS = ["README.md"] + ["docs/" + f for f in ("usage.md", "troubleshooting.md", "hprof.md", "compare.md",
                                               "differences.md")]
failures = []


def fail(doc, what):
    failures.append("%s: %s" % (doc, what))
    print("FAIL: %s: %s" % (doc, what))


def read(path):
    with open(os.path.join(SRC, path), encoding="utf-8") as f:
        return f.read()


# ---- the messages the source can print -----------------------------------------------

LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
CONVERSION = re.compile(r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspn]")


def c_messages(paths):
    """The string literals, adjacent ones joined as C joins them."""
    out = []
    for p in paths:
        for run in re.findall(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*', read(p)):
            out.append("".join(LITERAL.findall(run)))
    return [bytes(m, "utf-8").decode("unicode_escape") for m in out]


def shell_messages(path, name):
    """The strings of a shell script, its variables as %s, without the
    "name: " its messages start with (where die() does not add it)."""
    out = []
    for line in read(path).splitlines():
        for m in re.findall(r'"([^"]*)"', line):
            m = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$\([^)]*\)", "%s", m)
            out.append(m[len(name) + 2:] if m.startswith(name + ": ") else m)
    return out


def words(formats):
    """Every word of the source's literals."""
    return set(w for f in formats for w in re.findall(r"[A-Za-z][A-Za-z_]+", f))


WILD = None


def pattern(text, wild_re):
    """text as a list of characters, with WILD where wild_re matches."""
    out = []
    for k, piece in enumerate(re.split(wild_re, text)):
        if k:
            out.append(WILD)
        out.extend(piece)
    return out


def intersect(a, b):
    """Whether two patterns of characters and WILDs (each WILD: any text)
    match a common string."""
    seen = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] is WILD:
            todo += [(i + 1, j)] + ([(i, j + 1)] if j < len(b) else [])
        if j < len(b) and b[j] is WILD:
            todo += [(i, j + 1)] + ([(i + 1, j)] if i < len(a) else [])
        if i < len(a) and j < len(b) and a[i] is not WILD and a[i] == b[j]:
            todo.append((i + 1, j + 1))
    return False


def printable(quote, formats, known):
    """The quote is one line a format prints (conversions being anything),
    and each of its words is a word of the source (a format's %s may be
    filled by another literal).  <name> and "..." in a quote stand for
    anything."""
    doc_wild = r"<[^<>]*>|\.\.\."
    # An example's values (a quoted name, a path, a file) are what the
    # program was given, not its own words.
    text = re.sub(r"'[^']*'|\"[^\"]*\"|\S*[/.]\S*", " ", re.sub(doc_wild, " ", quote))
    if not set(re.findall(r"[A-Za-z][A-Za-z_]{2,}", text)) <= known:
        return False
    doc = pattern(quote, doc_wild)
    head = re.split(doc_wild, quote)[0][:6]
    for f in formats:
        if len(CONVERSION.sub("", f).strip()) < 10 or (head and head not in CONVERSION.sub("\x00", f)[:len(head) + 40]
                                                       and not f.startswith("%")):
            continue  # "%s: %s" would match anything
        if intersect(doc, pattern(f, CONVERSION.pattern)):
            return True
    return False


def c_sources(dirs):
    return [os.path.join(d, f) for d in dirs for f in sorted(os.listdir(os.path.join(SRC, d))) if f.endswith(".c")]


def layer_line_cells(text):
    """Quotes in a table column headed "the layer's line": the layer's
    messages without their "JVMPI layer: error: " start."""
    out, col = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            col = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if col is None:
            col = next((k for k, c in enumerate(cells) if c == "the layer's line"), None)
            continue
        if col < len(cells) and not set(cells[col]) <= set("-: "):
            first = re.match(r"`([^`]+)`", cells[col])
            if first:
                out.append("JVMPI layer: error: " + first.group(1))
    return out


def quoted(text):
    """What a doc quotes: its inline code spans and its code blocks' lines."""
    return re.findall(r"`([^`\n]+)`", text) + [l for b in re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
                                               for l in b.splitlines()]


def check_messages():
    prefixes = []
    for rx, formats in (
            (r"JVMPI layer: (?:error|warning|info|debug): (.+)", c_messages(c_sources(["jvmpi", "jvmti_backend"]))),
            (r"^jvmpi: (.+)", shell_messages("launcher/jvmpi", "jvmpi")),
            (r"^compare: (.+)", shell_messages("scripts/compare.sh", "compare"))):
        prefixes.append((re.compile(rx), formats, words(formats)))
    n = 0
    for doc in DOCS:
        text = read(doc)
        for q in quoted(text) + layer_line_cells(text):
            for rx, formats, known in prefixes:
                m = rx.search(q)
                if not m:
                    continue
                msg = m.group(1).rstrip()
                n += 1
                if not printable(msg, formats, known):
                    fail(doc, "no source prints the message quoted as %r" % q)
    return n


# ---- scripts and their options ----------------------------------------------------------

def check_scripts():
    n = 0
    for doc in DOCS:
        text = read(doc)
        for line in quoted(text):
            for m in re.finditer(r"(?:^|[\s(])(?:bash )?(scripts/[A-Za-z0-9_.]+\.(?:sh|py))((?: +[^ |;&)]+)*)", line):
                script, args = m.group(1), m.group(2)
                n += 1
                if not os.path.exists(os.path.join(SRC, script)):
                    fail(doc, "%s does not exist (quoted in %r)" % (script, line))
                    continue
                body = read(script)
                for opt in re.findall(r"(?:^| )(--[a-z][a-z0-9-]*)", args.split(" -- ")[0]):
                    if opt not in body:
                        fail(doc, "%s takes no option %s (quoted in %r)" % (script, opt, line))
    return n


# ---- option lists, run -------------------------------------------------------------------

def run_java(args, env_extra, work):
    env = dict(os.environ)
    env.pop("JAVA_TOOL_OPTIONS", None)
    env.pop("JVMPI_LAYER_OPTIONS", None)
    env.update(env_extra)
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    p = subprocess.run([java] + args + ["-cp", os.environ["CLASSES"], "CtHello"], cwd=work, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def concrete(opts):
    return "<" not in opts and "..." not in opts and "$" not in opts and "[" not in opts


def check_options(work):
    layer = os.environ["LAYER"]
    seen = set()
    n = 0
    for doc in DOCS:
        text = read(doc)
        for agent, opts in re.findall(r"(?:=|-Xrun)(hprof|classtrace):([^\s`'\"|]+)", text):
            opts = opts.rstrip(".,;)")
            if not concrete(opts) or (agent, opts) in seen or "help" in opts.split(",") or "net=" in opts:
                continue
            seen.add((agent, opts))
            # Files go to the work directory, where relative ones already do.
            run_opts = ",".join(o for o in opts.split(",") if not o.startswith("file="))
            run_opts = (run_opts + "," if run_opts else "") + "file=%s/out-%d.txt" % (work, len(seen))
            rc, out = run_java(["-agentpath:%s=%s:%s" % (layer, agent, run_opts)], {}, work)
            n += 1
            if rc != 0 or "JVMPI layer: error" in out:
                fail(doc, "%s:%s does not run (exit %d): %s" % (agent, opts, rc, out.strip().splitlines()[-1:]))
        for value in re.findall(r"JVMPI_LAYER_OPTIONS=([^\s`'\"|]+)", text):
            value = value.rstrip(".,;)")
            if not concrete(value) or value in seen:
                continue
            seen.add(value)
            value = re.sub(r"(logfile|ledger)=[^,]*", lambda m: "%s=%s/%s.out" % (m.group(1), work, m.group(1)), value)
            value = re.sub(r"ledgerhold=\d+", "ledgerhold=0", value)
            rc, out = run_java(["-agentpath:%s=classtrace:file=%s/ct.txt" % (layer, work)],
                               {"JVMPI_LAYER_OPTIONS": value}, work)
            n += 1
            if rc != 0 or "JVMPI layer: error" in out:
                fail(doc, "JVMPI_LAYER_OPTIONS=%s does not run (exit %d): %s" % (value, rc, out.strip().splitlines()[-1:]))
    return n


# ---- the user pages stay short, and for users ------------------------------------------

WORD_LIMIT = 8000
# What is the project's developers' and not a user's: test files and names,
# bench scripts, the test suite's switches.
DEVELOPER_ONLY = re.compile(r"\btests/|\bbench/[\w.-]+\.sh\b|\bit_\w+\.sh\b|\bit\.\w+\.jdk\d+|\bTEST_JDKS\b|\bIT_SCALE\b")


def check_user_pages():
    """The user pages together stay within WORD_LIMIT words (as wc -w counts),
    and name no test, test file or bench script."""
    total = 0
    for doc in DOCS:
        text = read(doc)
        total += len(text.split())
        for n, line in enumerate(text.splitlines(), 1):
            m = DEVELOPER_ONLY.search(line)
            if m:
                fail(doc, "line %d names %s, which is for the project's developers (docs/design.md)" % (n, m.group(0)))
    if total > WORD_LIMIT:
        fail("the user pages", "%d words, more than %d: say each thing once, and move developer notes to "
             "docs/design.md" % (total, WORD_LIMIT))
    return total


# ---- the man page ------------------------------------------------------------------------

def check_man_page():
    """docs/jvmpi.1 names every option of the layer's own table (jvmpi/options.c)
    and no option the layer does not have."""
    doc = "docs/jvmpi.1"
    man = read(doc).replace("\\", "")
    known = re.findall(r'\{"([a-z]+)", OPT_[A-Z]+', read("jvmpi/options.c"))
    if not known:
        fail(doc, "no options found in jvmpi/options.c's table")
    for name in known:
        if not re.search(r"^\.B[IR]? %s=" % name, man, re.M):
            fail(doc, "the layer's option %s= is not listed" % name)
    for name in re.findall(r"^\.B[IR]? ([a-z]+)=", man, re.M):
        if name not in known:
            fail(doc, "lists %s=, which is no option of the layer" % name)
    return len(known)


def main():
    work = os.environ["WORK_ROOT"]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    counts = (check_messages(), check_scripts(), check_options(work), check_man_page(), check_user_pages())
    print("docs: %d quoted messages, %d script commands, %d option lists run, %d layer options in the man page, "
          "%d words in the user pages" % counts)
    if failures:
        print("%d quotes do not hold" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
