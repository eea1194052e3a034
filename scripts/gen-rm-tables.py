#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen-rm-tables.py - per-branch RM parameter rows, measured from the driver.

Given a git directory of NVIDIA/open-gpu-kernel-modules, a base tag (the one
include/nvrm/v580/ was read from) and one tag per branch, this:

  1. extracts at each tag (git archive, no checkout) the SDK headers
     (src/common/sdk/nvidia/inc), the class table
     (src/nvidia/src/kernel/rmapi/resource_list.h: each RS_ENTRY's class and
     RS_REQUIRED(T) / RS_OPTIONAL(T) / RS_NONE) and the exported control
     tables (src/nvidia/generated/g_*_nvoc.c: methodId, paramSize =
     sizeof(T), and the handler's name);
  2. writes a C probe that includes the SDK headers and prints each class's
     number and sizeof(T), and each control's sizeof(T); compiles it with the
     host's cc and runs it (types that do not compile at a tag are dropped
     and reported);
  3. compares every class and control that our identity tables
     (include/nvrm/classes.def, controls.def) name with the base tag, and
     writes include/nvrm/v<branch>/classes.def and controls.def holding only
     the rows that differ: a new size, RM_PARAMS_ABSENT for a class or
     control the branch does not export, or RM_PARAMS_ABSENT for a control
     number that another handler owns on that branch (a reused number).

Only numbers and our own row names are written; no driver text. Identity
(groups, kinds, relocation rules) stays hand-written: a control whose size
changes keeps the base row's embedded-pointer description, which the
generator cannot measure, and the row says so.

The base tag is also checked against include/nvrm/v580/: a size that the
probe measures differently from the committed 580 row is reported (exit 1).

Usage: scripts/gen-rm-tables.sh GITDIR   (see docs/rm-tables.md)
"""
import argparse
import os
import re
import subprocess
import sys
import tarfile
import io
import tempfile

SDK = "src/common/sdk/nvidia/inc"
RESOURCE_LIST = "src/nvidia/src/kernel/rmapi/resource_list.h"
GENERATED = "src/nvidia/generated"
ABSENT = "RM_PARAMS_ABSENT"

# Layout facts the supervisor acts on beyond a params size, per branch
# (v<branch>/facts.def, every branch, 580 too): our name, and the C
# expression over the driver's own types that measures it.
UTIL_PARAMS = "NV2080_CTRL_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2_PARAMS"
UTIL_SAMPLE = "NV2080_CTRL_PERF_GPUMON_PERFMON_UTIL_SAMPLE"
UTIL_ENGINE = "NV2080_CTRL_PERF_GPUMON_ENGINE_UTIL_SAMPLE"
FACTS = [
    ("UTIL_SAMPLES_SIZE", "sizeof(%s)" % UTIL_PARAMS),
    ("UTIL_SAMPLES_OFF", "offsetof(%s, samples)" % UTIL_PARAMS),
    ("UTIL_SAMPLE_COUNT", "NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL"),
    ("UTIL_BUFFER_SIZE", "NV2080_CTRL_PERF_GPUMON_PERFMON_UTIL_BUFFER_SIZE"),
    ("UTIL_SAMPLE_SIZE", "sizeof(%s)" % UTIL_SAMPLE),
    ("UTIL_SAMPLE_TS_OFF", "offsetof(%s, base.timeStamp)" % UTIL_SAMPLE),
    ("UTIL_SAMPLE_GR_OFF", "offsetof(%s, gr)" % UTIL_SAMPLE),
    ("UTIL_ENGINE_UTIL_OFF", "offsetof(%s, util)" % UTIL_ENGINE),
    ("UTIL_ENGINE_PROC_ID_OFF", "offsetof(%s, procId)" % UTIL_ENGINE),
]
ALLOC_PARAMS_DRIVER_BOUND = 4096   # supervisor/core/pipeline/scratch.h


def git(gitdir, *args, binary=False):
    out = subprocess.run(["git", "--git-dir=" + gitdir, *args], check=True,
                         stdout=subprocess.PIPE)
    return out.stdout if binary else out.stdout.decode("utf-8", "replace")


def extract(gitdir, tag, dest):
    nvoc = [p for p in git(gitdir, "ls-tree", "--name-only", tag, GENERATED + "/").split()
            if p.endswith("_nvoc.c")]
    data = git(gitdir, "archive", "--format=tar", tag, SDK, RESOURCE_LIST, *nvoc, binary=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        t.extractall(dest)
    commit = git(gitdir, "rev-parse", tag + "^{commit}").strip()
    return nvoc, commit


RS_ENTRY = re.compile(r"RS_ENTRY\s*\((.*?)\n\)", re.S)


def parse_classes(path):
    """{class macro: (type or None, required)}"""
    text = open(path, encoding="utf-8", errors="replace").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = {}
    for m in RS_ENTRY.finditer(text):
        fields = [f.strip() for f in re.split(r",\s*\n", m.group(1))]
        name = fields[0]
        info = next((f for f in fields if f.startswith("RS_REQUIRED") or
                     f.startswith("RS_OPTIONAL") or f == "RS_NONE"), None)
        if info is None:
            continue
        mm = re.match(r"RS_(REQUIRED|OPTIONAL)\((\w+)\)", info)
        out[name] = (mm.group(2), mm.group(1) == "REQUIRED") if mm else (None, False)
    return out


# One exported method: the handler (the non-NULL pFunc of the entry; the
# NULL one is the disabled-by-flag branch), its methodId and its paramSize.
METHOD = re.compile(r"/\*pFunc=\*/\s*\(void \(\*\)\(void\)\)\s*&?(?!NULL\b)(\w+),"
                    r"(?:(?!/\*pFunc=).)*?"
                    r"/\*methodId=\*/\s*(0x[0-9a-fA-F]+)u,\s*"
                    r"/\*paramSize=\*/\s*(sizeof\((\w+)\)|0)", re.S)


def parse_controls(paths):
    """{methodId: (type or None, handler)}"""
    out = {}
    for p in paths:
        text = open(p, encoding="utf-8", errors="replace").read()
        for m in METHOD.finditer(text):
            # The handler's name, without the suffix NVOC adds on some tags.
            handler = re.sub(r"_(IMPL|DISPATCH)$", "", m.group(1))
            out[int(m.group(2), 16)] = (m.group(4), handler)
    return out


def probe(root, classes, controls):
    """Compile and run a probe; {('C', name): (num, size)}, {('K', id): size}."""
    inc = os.path.join(root, SDK)
    headers = sorted(os.path.relpath(os.path.join(d, f), inc)
                     for sub in ("class", "alloc", "ctrl")
                     for d, _, fs in os.walk(os.path.join(inc, sub)) for f in fs if f.endswith(".h"))
    types = {t for t, _ in classes.values() if t} | {t for t, _ in controls.values() if t}
    dropped = set()
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        for _attempt in range(20):
            with open(src, "w") as f:
                f.write('#include <stdio.h>\n#include <stddef.h>\n#include "nvtypes.h"\n#include "nvos.h"\n')
                f.writelines('#include "%s"\n' % h for h in headers)
                f.write("int main(void)\n{\n")
                for name, (t, _) in sorted(classes.items()):
                    if t in dropped:
                        continue
                    size = "sizeof(%s)" % t if t else "0"
                    f.write('#ifdef %s\n\tprintf("C %s %%u %%zu\\n", (unsigned)(%s), (size_t)%s);\n#endif\n'
                            % (name, name, name, size))
                for mid, (t, _) in sorted(controls.items()):
                    if t in dropped:
                        continue
                    size = "sizeof(%s)" % t if t else "0"
                    f.write('\tprintf("K %u %%zu\\n", (size_t)%s);\n' % (mid, size))
                for name, expr in FACTS:
                    f.write('\tprintf("F %s %%zu\\n", (size_t)(%s));\n' % (name, expr))
                f.write("\treturn 0;\n}\n")
            r = subprocess.run(["cc", "-w", "-I" + inc, "-I" + os.path.join(inc, "ctrl"),
                                "-o", exe, src], stderr=subprocess.PIPE, text=True)
            if r.returncode == 0:
                break
            bad = set(re.findall(r"'(\w+)' undeclared", r.stderr)) & types
            bad |= set(re.findall(r"unknown type name '(\w+)'", r.stderr)) & types
            if not bad:
                sys.exit("probe does not compile:\n" + r.stderr[:4000])
            dropped |= bad
        else:
            sys.exit("probe does not compile after dropping types")
        lines = subprocess.run([exe], check=True, stdout=subprocess.PIPE, text=True).stdout
    cls, ctl, facts = {}, {}, {}
    for line in lines.splitlines():
        w = line.split()
        if w[0] == "F":
            facts[w[1]] = int(w[2])
        elif w[0] == "C":
            cls[w[1]] = (int(w[2]), int(w[3]), classes[w[1]][1])
        else:
            ctl[int(w[1])] = (int(w[2]), controls[int(w[1])][1])
    return cls, ctl, facts, dropped


def measure(gitdir, tag):
    with tempfile.TemporaryDirectory() as root:
        nvoc, commit = extract(gitdir, tag, root)
        classes = parse_classes(os.path.join(root, RESOURCE_LIST))
        controls = parse_controls([os.path.join(root, p) for p in nvoc])
        cls, ctl, facts, dropped = probe(root, classes, controls)
    if dropped:
        print("%s: types that do not compile, rows skipped: %s" % (tag, " ".join(sorted(dropped))),
              file=sys.stderr)
    # supervisor/core/pipeline/scratch.h: GS_ALLOC_PARAMS_DRIVER_BOUND must cover every
    # class's params, or the supervisor's buffer is not cleared far enough.
    biggest = max(size for _, size, _ in cls.values())
    if biggest >= ALLOC_PARAMS_DRIVER_BOUND:
        sys.exit("%s: an alloc params struct of %d bytes; raise GS_ALLOC_PARAMS_DRIVER_BOUND"
                 % (tag, biggest))
    # By class number: the numbers are what the identity rows key on.
    by_num = {num: (name, size, req) for name, (num, size, req) in cls.items()}
    return by_num, ctl, commit, facts


# Controls whose params go to GSP or BinaryApi as opaque bytes: what their
# numbers mean is defined by the firmware and libcuda of a release, not by the
# open source, and ours were seen in 580 traces only. On another branch the
# generator cannot tell whether a number is the same control, so it is not
# carried over: refused until that branch's traces are reviewed.
OPAQUE_CMDS = {0x20810108}          # NV2081_BINAPI_CTRL (RM_CTRL row)


def read_identity(repo):
    classes, ctrls, opaque = {}, {}, set()
    for line in open(os.path.join(repo, "include/nvrm/classes.def")):
        m = re.match(r"RM_CLASS\((0x[0-9a-fA-F]+),\s*(\w+)", line)
        if m:
            classes[int(m.group(1), 16)] = m.group(2)
    for line in open(os.path.join(repo, "include/nvrm/controls.def")):
        m = re.match(r"RM_CTRL\((0x[0-9a-fA-F]+),\s*(\w+)", line)
        if m:
            ctrls[int(m.group(1), 16)] = m.group(2)
            if int(m.group(1), 16) in OPAQUE_CMDS:
                opaque.add(m.group(2))
            continue
        m = re.match(r"RM_CTRL_OPAQUE\((\w+),\s*(0x[0-9a-fA-F]+)", line)
        if m:   # nvrm_abi.h names these NAME_number
            name = "%s_%s" % (m.group(1), m.group(2))
            ctrls[int(m.group(2), 16)] = name
            opaque.add(name)
    return classes, ctrls, opaque


def read_base_rows(repo, base_dir):
    """The committed base branch rows: {NAME: (size, rest-of-row)}."""
    cls, ctl = {}, {}
    for line in open(os.path.join(repo, base_dir, "classes.def")):
        m = re.match(r"RM_CLASS_PARAMS\((\w+),\s*(\d+),\s*(\w+)\)", line)
        if m:
            cls[m.group(1)] = (int(m.group(2)), m.group(3))
    for line in open(os.path.join(repo, base_dir, "controls.def")):
        m = re.match(r"RM_CTRL_PARAMS\((\w+),\s*(\d+),\s*(.*)\)\s*(/\*.*)?$", line.rstrip())
        if m:
            ctl[m.group(1)] = (int(m.group(2)), m.group(3))
    return cls, ctl


def check_base(base, ident_cls, ident_ctl, rows_cls, rows_ctl):
    """The probe at the base tag must reproduce the committed base rows."""
    cls, ctl = base[0], base[1]
    bad = []
    for num, name in ident_cls.items():
        if name in rows_cls and num in cls and cls[num][1] != rows_cls[name][0]:
            bad.append("class %s: probe %d, v580 %d" % (name, cls[num][1], rows_cls[name][0]))
    for num, name in ident_ctl.items():
        if name in rows_ctl and num in ctl and rows_ctl[name][0] and ctl[num][0] != rows_ctl[name][0]:
            bad.append("control %s: probe %d, v580 %d" % (name, ctl[num][0], rows_ctl[name][0]))
    return bad


def class_diffs(base, tag_m, ident_cls, rows_cls):
    out = []
    for num in sorted(ident_cls):
        name = ident_cls[num]
        if name not in rows_cls:
            continue
        if num not in tag_m[0]:
            out.append("RM_CLASS_PARAMS(%-44s %s, OPTIONAL) /* not in this branch's class table */"
                       % (name + ",", ABSENT))
            continue
        _, size, req = tag_m[0][num]
        if num in base[0] and (size, req) == base[0][num][1:]:
            continue
        out.append("RM_CLASS_PARAMS(%-44s %5d, %s) /* 580: %d */"
                   % (name + ",", size, "REQUIRED" if req else "OPTIONAL", rows_cls[name][0]))
    return out


def ctrl_diffs(base, tag_m, ident_ctl, rows_ctl, opaque):
    out = []
    for num in sorted(ident_ctl):
        name = ident_ctl[num]
        if name in opaque and name in rows_ctl:
            out.append("RM_CTRL_PARAMS(%s, %s, 0) /* opaque (GSP / BinaryApi): seen in 580 traces only */"
                       % (name, ABSENT))
            continue
        if name not in rows_ctl or num not in base[1]:
            continue          # not an exported method at the base tag: not measurable
        bsize, bhandler = base[1][num]
        if num not in tag_m[1]:
            out.append("RM_CTRL_PARAMS(%s, %s, 0) /* not exported on this branch */" % (name, ABSENT))
            continue
        size, handler = tag_m[1][num]
        if handler != bhandler:
            out.append("RM_CTRL_PARAMS(%s, %s, 0) /* number reused: %s here, %s on 580 */"
                       % (name, ABSENT, handler, bhandler))
        elif size != bsize:
            out.append("RM_CTRL_PARAMS(%s, %d, %s) /* 580: %d%s */"
                       % (name, size, rows_ctl[name][1], bsize,
                          "" if rows_ctl[name][1] == "0" else "; embedded-pointer rows as on 580"))
    return out


HEADER = """/* SPDX-License-Identifier: MIT */
/*
 * v%(branch)s/%(file)s - GENERATED by scripts/gen-rm-tables.sh; do not edit.
 * The rows of v580/%(file)s that differ on driver branch %(branch)s, measured
 * from open-gpu-kernel-modules tag %(tag)s (commit %(commit)s) against the base
 * tag %(base)s by compiling the driver's SDK headers (sizeof) and reading its
 * class table (resource_list.h) and exported-control tables (g_*_nvoc.c).
 * Numbers only; no NVIDIA code or text. RM_PARAMS_ABSENT: refused as unknown.
 */
"""


def write(path, branch, fname, tag, commit, base, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(HEADER % dict(branch=branch, file=fname, tag=tag, commit=commit[:10], base=base))
        f.writelines(r + "\n" for r in rows)


FACTS_HEADER = """/* SPDX-License-Identifier: MIT */
/*
 * v%(branch)s/facts.def - GENERATED by scripts/gen-rm-tables.sh; do not edit.
 * Layouts the supervisor reads on driver branch %(branch)s (sizes and offsets in
 * bytes), measured from open-gpu-kernel-modules tag %(tag)s (commit %(commit)s)
 * by compiling the driver's SDK headers. Numbers only.
 *
 *   RM_FACT(NAME, value)
 */
"""


def write_facts(path, branch, tag, commit, facts):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(FACTS_HEADER % dict(branch=branch, tag=tag, commit=commit[:10]))
        f.writelines("RM_FACT(%s, %d)\n" % (name, facts[name]) for name, _ in FACTS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git", required=True, help="git dir of open-gpu-kernel-modules")
    ap.add_argument("--repo", default=".", help="gpusandbox checkout")
    ap.add_argument("--base", default="580.142")
    ap.add_argument("--check-only", action="store_true", help="compare, write nothing")
    ap.add_argument("branches", nargs="+", help="BRANCH:TAG, e.g. 535:535.288.01")
    a = ap.parse_args()

    ident_cls, ident_ctl, opaque = read_identity(a.repo)
    rows_cls, rows_ctl = read_base_rows(a.repo, "include/nvrm/v580")
    base = measure(a.git, a.base)
    bad = check_base(base, ident_cls, ident_ctl, rows_cls, rows_ctl)
    for b in bad:
        print("base %s disagrees with include/nvrm/v580: %s" % (a.base, b), file=sys.stderr)
    status = 1 if bad else 0
    if not a.check_only:
        write_facts(os.path.join(a.repo, "include/nvrm/v580/facts.def"), "580", a.base, base[2], base[3])
    for spec in a.branches:
        branch, tag = spec.split(":")
        m = measure(a.git, tag)
        crow = class_diffs(base, m, ident_cls, rows_cls)
        krow = ctrl_diffs(base, m, ident_ctl, rows_ctl, opaque)
        print("%s (%s): %d class rows, %d control rows differ" % (branch, tag, len(crow), len(krow)))
        if a.check_only:
            continue
        d = os.path.join(a.repo, "include/nvrm/v" + branch)
        write(os.path.join(d, "classes.def"), branch, "classes.def", tag, m[2], a.base, crow)
        write(os.path.join(d, "controls.def"), branch, "controls.def", tag, m[2], a.base, krow)
        write_facts(os.path.join(d, "facts.def"), branch, tag, m[2], m[3])
    return status


if __name__ == "__main__":
    sys.exit(main())
