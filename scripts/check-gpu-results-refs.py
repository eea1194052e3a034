#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every reference to a kept GPU run must resolve (issue #33).

docs/gpu-results/ keeps only the runs that documents, tests and code
comments cite, so a run removed while something still names it leaves a
dangling citation. This walks the repository's text files and checks three
kinds of reference:
  - a path under docs/gpu-results/ (also when a comment or a paragraph
    wraps it after "docs/gpu-results/" or after a hyphen);
  - a run folder's name (DATE-GPU-WHAT), alone or with a path inside it, as
    run READMEs and tests/audit-review/logs/PROVENANCE.md write them: it
    resolves inside docs/gpu-results/; a "*" in it is a glob that must match;
  - a shortened name "…-WHAT" (docs/compute-share.md): some run folder must
    end in "-WHAT".
Prints FAIL lines for what does not resolve and ends with the
"N passed, M failed" line tests/run-tests.sh adds up.
"""
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS = os.path.join(ROOT, "docs", "gpu-results")
SKIP_DIRS = {".git", "build", "__pycache__"}
MAX_BYTES = 1 << 20  # the results' raw logs are far smaller; larger files are not documents

# A wrapped reference: "docs/gpu-results/" or a run name cut at a hyphen,
# continued on the next line after indentation and a comment leader.
WRAP = re.compile(r"(docs/gpu-results/|\d-h\d00(?:x\d)?-|[a-z0-9]-)\n[ \t]*(?:\*|#|//)?[ \t]*(?=[0-9a-z])")
PATH_CHARS = r"[A-Za-z0-9_.,*+-]"
FULL = re.compile(r"docs/gpu-results(?:/" + PATH_CHARS + r"+)*")
RUN = re.compile(r"(?<![\w/.-])(20\d\d-\d\d-\d\d-h\d00(?:x\d)?-" + PATH_CHARS + r"+(?:/" + PATH_CHARS + r"+)*)")
SHORT = re.compile(r"…-([a-z0-9]+(?:-[a-z0-9]+)*)")


def text_files():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in files:
            path = os.path.join(top, name)
            try:
                if os.path.getsize(path) > MAX_BYTES:
                    continue
                with open(path, encoding="utf-8") as f:
                    yield path, f.read()
            except (UnicodeDecodeError, OSError):
                continue


def exists(base, ref):
    ref = ref.rstrip(".,")
    if "*" in ref:
        return bool(glob.glob(os.path.join(base, ref)))
    return os.path.exists(os.path.join(base, ref))


def references(text):
    joined = WRAP.sub(r"\1", text)
    for m in FULL.finditer(joined):
        yield m.group(0), lambda r: exists(ROOT, r)
    for m in RUN.finditer(joined):
        yield m.group(1), lambda r: exists(RESULTS, r)
    runs = os.listdir(RESULTS) if os.path.isdir(RESULTS) else []
    for m in SHORT.finditer(joined):
        yield "…-" + m.group(1), lambda r: any(d.endswith(r[1:]) for d in runs)


def main():
    passed = failed = 0
    for path, text in text_files():
        if path == os.path.abspath(__file__):
            continue
        seen = set()
        for ref, resolves in references(text):
            if ref in seen:
                continue
            seen.add(ref)
            if resolves(ref):
                passed += 1
            else:
                failed += 1
                print(f"FAIL {os.path.relpath(path, ROOT)}: {ref} does not resolve")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
