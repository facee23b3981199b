#!/usr/bin/env python3
"""deps_test.py: the source tree's dependency directions hold.

Reads every `#include "..."` under src/ and checks, as
docs/architecture.md ("Dependency directions") states them:

  1. each module includes only the modules below it (ALLOWED);
  2. no cycle between modules, and none between files, where a file is a
     .c together with its own .h (demo.c and demo.h are one node);
  3. no two source files of the parent's side (src/cli/, src/proc/) or of a
     worker (src/worker/ and the backends) use each other's functions: a
     helper two files need belongs to a module below both, whatever header
     declares it.

Usage: deps_test.py [ROOT]   (default: the tree this file is in)
Exit 0 when all hold, 1 with one line per finding otherwise.
"""
import os
import re
import sys

# Module -> the modules it may include (besides itself). The module of a
# file is its folder under src/ (src/core/protocol/ is a module of its
# own), "include" for include/kproof/, "config" for the generated
# kp_config.h.
ALLOWED = {
    "cli": {"proc", "core", "config", "include"},
    "proc": {"core", "proto", "config", "include"},
    "core/protocol": {"core", "ops", "proto", "include"},
    "core": {"ops", "proto", "include"},
    "ops": {"include"},
    "proto": {"include"},
    "worker": {"proto", "include"},
    "host": {"worker", "proto", "include"},
    "cuda": {"worker", "proto", "include"},
    "include": set(),
    "config": set(),
}
# Where two files may not use each other's functions (check 3).
NO_MUTUAL = ({"cli"}, {"proc"}, {"worker", "host", "cuda"})

SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def module_of(rel):
    parts = rel.split("/")
    if parts[0] == "include":
        return "include"
    if parts[0] == "config":
        return "config"
    if parts[1] == "core" and len(parts) > 3 and parts[2] == "protocol":
        return "core/protocol"
    return parts[1]


def node_of(rel):
    """A .c and the .h of the same name in its folder are one node."""
    return os.path.splitext(rel)[0]


def sources(root):
    out = []
    for top in ("src", "include"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(SOURCE_EXT):
                    out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def resolve(root, rel, name):
    if name == "kp_config.h":
        return "config/kp_config.h"
    for base in (os.path.dirname(rel), "src", "include"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def find_cycles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return comps


def function_uses(root, files):
    """(user, definer, name) for every function or variable with external
    linkage that one file defines and another names."""
    text, defs = {}, {}
    def_re = re.compile(r"^(?!static\b)(?:const\s+)?[A-Za-z_][\w \*]*?\b(kp\w*)\s*(?:\([^;{]*\)\s*\{|(?:\[[^\]]*\])?\s*=)", re.M)
    for f in files:
        t = strip_comments(open(os.path.join(root, f), encoding="utf-8").read())
        t = re.sub(r'"(\\.|[^"\\\n])*"', '""', t)
        text[f] = t
        for m in def_re.finditer(t):
            defs.setdefault(m.group(1), set()).add(f)
    uses = []
    for f in files:
        for name, where in defs.items():
            if f in where or not re.search(r"\b%s\b" % re.escape(name), text[f]):
                continue
            uses.extend((f, g, name) for g in sorted(where))
    return uses


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    files = sources(root)
    problems = []
    mod_edges, node_edges = {}, {}
    for rel in files:
        if not rel.startswith("src/"):
            continue
        text = strip_comments(open(os.path.join(root, rel), encoding="utf-8").read())
        for name in INCLUDE_RE.findall(text):
            target = resolve(root, rel, name)
            if target is None:
                problems.append('%s: #include "%s" names no file under src/ or include/' % (rel, name))
                continue
            a, b = module_of(rel), module_of(target)
            if a not in ALLOWED:
                problems.append("%s: module %s is not in deps_test.py's table (docs/architecture.md)" % (rel, a))
                continue
            if a != b:
                mod_edges.setdefault(a, set()).add(b)
                if b not in ALLOWED[a]:
                    problems.append('%s: #include "%s": %s may not depend on %s (docs/architecture.md, '
                                    '"Dependency directions")' % (rel, name, a, b))
            na, nb = node_of(rel), node_of(target)
            if na != nb:
                node_edges.setdefault(na, set()).add(nb)
    for comp in find_cycles(mod_edges):
        problems.append("modules include each other: %s" % " <-> ".join(comp))
    for comp in find_cycles(node_edges):
        problems.append("files include each other: %s" % " <-> ".join(comp))

    for group in NO_MUTUAL:
        members = [f for f in files if f.startswith("src/") and f.endswith((".c", ".cu"))
                   and module_of(f) in group]
        used = {}
        for user, definer, name in function_uses(root, members):
            used.setdefault((user, definer), []).append(name)
        for (a, b), names in sorted(used.items()):
            if a < b and (b, a) in used:
                problems.append("%s and %s use each other's functions (%s uses %s; %s uses %s): move the shared "
                                "piece below both" % (a, b, a, ", ".join(names), b, ", ".join(used[(b, a)])))
    for p in problems:
        print("deps: " + p)
    if not problems:
        n = sum(1 for f in files if f.startswith("src/"))
        print("deps: %d files under src/, %d modules: directions hold, no cycles" % (n, len(mod_edges)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
