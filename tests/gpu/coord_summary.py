#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Prints the tables of tests/gpu/coord_bench.sh from its raw files.

Usage: coord_summary.py DIR

For every run, over the interval in which all its tenants were working
(from 2 s after the last one's first window to the first one's last):
  share  each tenant's GPU-time share: the mean of NVML's per-process SM
         utilization of its process tree (sm_util_monitor.py);
  ratio  its throughput (matmuls per second) as a fraction of `alone`;
  sum    the sum of the ratios (issue #13's target: >= 0.95);
and from the supervisor's stop line (GPUSANDBOX_SM_DEBUG=1) the mean and
largest switch cost (one disable or enable of all the sandbox's channels)
and the longest off phase (the longest the tenant waited for its window).
The idle run: when tenant 1 stopped working, and how long until tenant 2's
0.25-s windows reached 0.9 of the alone throughput.
"""
import glob
import json
import os
import re
import sys

SETTLE_S = 2.0
HANDOVER_LEVEL = 0.9
REPORT_RE = re.compile(r"reported idle: rule (\w+) quiet (\d+) quiet_own \d+ wall=([\d.]+)")
SWITCH_RE = re.compile(r"switches (\d+) switch_us_mean ([\d.]+) switch_us_max ([\d.]+) "
                       r"longest_off_ms ([\d.]+) plans (\d+) hosted (\d+)")


def lines(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def windows(d, tag):
    return [r for r in lines(os.path.join(d, tag + ".jsonl")) if "rate" in r and "wall" in r]


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def alone_rate(d):
    w = windows(d, "alone_t1")
    return mean([r["rate"] for r in w[3:]]) if len(w) > 3 else float("nan")


def switch_figures(d, tag):
    try:
        with open(os.path.join(d, tag + ".err")) as f:
            m = None
            for line in f:
                m = SWITCH_RE.search(line) or m
    except OSError:
        return None
    return m


def run_table(d, name, base):
    tags = sorted({os.path.basename(p)[:-len(".jsonl")]
                   for p in glob.glob(os.path.join(d, name + "_t*.jsonl"))})
    tags = [t for t in tags if "." not in t]  # not the .util.jsonl or .audit.jsonl files
    per = {t: windows(d, t) for t in tags}
    if not tags or not all(per.values()):
        print(f"{name}: no complete data ({', '.join(t for t in tags if not per[t]) or 'no tenants'})")
        return
    lo = max(w[0]["wall"] for w in per.values()) + SETTLE_S
    hi = min(w[-1]["wall"] for w in per.values())
    total = 0.0
    print(f"{name}  (common interval {hi - lo:.1f} s)")
    for t in tags:
        rate = mean([r["rate"] for r in per[t] if lo <= r["wall"] <= hi])
        util = [u["proc_util"] for u in lines(os.path.join(d, t + ".util.jsonl"))
                if "wall" in u and lo <= u["wall"] <= hi and u.get("proc_samples")]
        ratio = rate / base
        total += ratio
        sw = switch_figures(d, t)
        extra = (f"  switch {float(sw.group(2)):.0f} us mean, {float(sw.group(3)):.0f} us max; "
                 f"longest wait {float(sw.group(4)):.1f} ms; plans {sw.group(5)}"
                 if sw else "")
        print(f"  {t}: share {mean(util) / 100:.3f}  ratio {ratio:.3f}{extra}")
    print(f"  sum of ratios {total:.3f}")


def idle_table(d, base):
    t1 = lines(os.path.join(d, "idle_t1.jsonl"))
    idle = [r["idle_at_wall"] for r in t1 if "idle_at_wall" in r]
    w2 = windows(d, "idle_t2")
    if not idle or not w2:
        print("idle: no data")
        return
    at = idle[0]
    before = mean([r["rate"] for r in w2 if at - 5 <= r["wall"] < at]) / base
    after = [r for r in w2 if r["wall"] > at]
    reached = next((r["wall"] - at for r in after if r["rate"] / base >= HANDOVER_LEVEL), None)
    late = mean([r["rate"] for r in after if r["wall"] > at + 2]) / base
    print(f"idle: tenant 2 at {before:.3f} of alone before tenant 1 stopped, {late:.3f} from 2 s after;")
    print("  reached %.1f of alone %s" % (HANDOVER_LEVEL, f"{reached:.2f} s after the stop"
                                          if reached is not None else "never"))
    # Tenant 1's supervisor says when (wall clock) and by which rule it
    # reported the workload idle (GPUSANDBOX_SM_DEBUG=1): the part of the
    # hand-over that is the idle rule's; the rest is the plan's 100 ms
    # lead and tenant 2's 0.25 s measurement windows.
    try:
        with open(os.path.join(d, "idle_t1.err")) as f:
            reps = [REPORT_RE.search(line) for line in f]
    except OSError:
        reps = []
    reps = [(m.group(1), int(m.group(2)), float(m.group(3))) for m in reps if m]
    first = next((r for r in reps if r[2] >= at), None)
    if first:
        print(f"  tenant 1 reported idle {first[2] - at:.2f} s after the stop "
              f"({first[0]} rule, after {first[1]} samples not naming it)")


def main():
    d = sys.argv[1]
    base = alone_rate(d)
    print(f"alone: {base:.2f} matmuls/s")
    for name in ("native2", "cap_30_70", "cap_50_50", "cap_25_25_50",
                 "guarantee_30_70", "guarantee_50_50", "guarantee_25_25_50", "fight", "fightfree"):
        run_table(d, name, base)
    idle_table(d, base)


if __name__ == "__main__":
    main()
