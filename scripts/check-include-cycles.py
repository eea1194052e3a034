#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-include-cycles.py [ROOT] - no two files include each other in a circle.

A file and its header are one module (sandbox.c + sandbox.h); a module
depends on every module whose header it includes. The modules of
supervisor/, policy/, include/ and arch/ must form no cycle: a cycle means
a layer reaches back up into one above it (issue #10). Prints each cycle
found, then "N passed, M failed" (one check for a synthetic cycle the
checker must find, one for the tree). Exit status 1 on failure.
"""
import os
import re
import sys
import tempfile

FOLDERS = ("supervisor", "policy", "include", "arch")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def graph(root):
    files = []
    for folder in FOLDERS:
        d = os.path.join(root, folder)
        if os.path.isdir(d):
            files += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith((".c", ".h"))]
    module = lambda p: os.path.splitext(os.path.basename(p))[0]
    headers = {os.path.basename(p): module(p) for p in files if p.endswith(".h")}
    edges = {}
    for p in files:
        with open(p, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            target = headers.get(os.path.basename(inc))
            if target and target != module(p):
                edges.setdefault(module(p), set()).add(target)
    return edges


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
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
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def self_test():
    """The checker must see a circle of three files."""
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "supervisor"))
        for name, inc in (("a", "b"), ("b", "c"), ("c", "a")):
            with open(os.path.join(d, "supervisor", name + ".h"), "w") as f:
                f.write('#include "%s.h"\n' % inc)
        return cycles(graph(d)) == [["a", "b", "c"]]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    passed = failed = 0
    if self_test():
        passed += 1
    else:
        print("FAIL self-test: a synthetic include cycle was not found")
        failed += 1
    found = cycles(graph(root))
    for c in found:
        print("FAIL include cycle among: " + ", ".join(c))
    if found:
        failed += 1
    else:
        passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
