"""Prints sandbox/native ratios of medians from a bench.txt written by tests/gpu/bench.sh.

Usage: bench_summary.py bench.txt
Throughput-style figures (pairs/s, TFLOP/s) are reported as sandbox/native
(higher is better, 1.00 = no overhead); time-style figures (init, fill) as
native/sandbox throughput too, so every ratio reads "fraction of native".
"""
import re
import statistics as st
import sys

TIME_KINDS = {"init", "fill"}
vals = {}
header = ""
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    if line.startswith("#"):
        header = line
        continue
    kind, mode, rest = line.split(" ", 2)
    if kind == "memalloc":
        kind += re.search(r"size_mib=(\d+)", rest).group(1) + "MiB"
        v = float(re.search(r"pairs_per_s=([\d.]+)", rest).group(1))
    elif kind == "trap":
        vals.setdefault(("trap_executed_control_us", mode), []).append(
            float(re.search(r"control_ns=(\d+)", rest).group(1)) / 1e3)
        kind, v = "trap_foreign_us", float(re.search(r"foreign_ns=(\d+)", rest).group(1)) / 1e3
    else:
        m = re.search(r'"(init_s|fill_s|tflops)": ([\d.]+)', rest)
        v = float(m.group(2))
        if kind == "matmul":
            vals.setdefault(("matmul_checksum", mode), []).append(
                float(re.search(r'"checksum": ([-\d.e+]+)', rest).group(1)))
    vals.setdefault((kind, mode), []).append(v)

print(header)
print(f"{'figure':28s} {'native':>12s} {'sandbox':>12s} {'of native':>10s}  n")
for kind in sorted({k for k, _ in vals}):
    n, s = vals.get((kind, "native")), vals.get((kind, "sandbox"))
    if not n or not s:
        continue
    mn, ms = st.median(n), st.median(s)
    if kind == "matmul_checksum":
        print(f"{kind:28s} {mn:12.6g} {ms:12.6g} {'identical' if set(n) == set(s) else 'DIFFER':>10s}  {len(n)}")
        continue
    if kind.startswith("trap"):
        print(f"{kind:28s} {mn:12.2f} {ms:12.2f} {'+%.2f us' % (ms - mn):>10s}  {len(n)}")
        continue
    ratio = mn / ms if kind in TIME_KINDS else ms / mn
    print(f"{kind:28s} {mn:12.5g} {ms:12.5g} {ratio:10.3f}  {len(n)}")
