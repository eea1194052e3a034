"""Summarises an --sm benchmark directory (tests/gpu/sm_bench.sh output).

Usage: sm_summary.py DIR [WARMUP_S]
For each run NAME (NAME.jsonl from sm_load.py, NAME.util.jsonl from
sm_util_monitor.py, NAME.audit.jsonl from gpusandbox) prints, over the
windows after WARMUP_S seconds (default 5):
  - the throughput ratio against the native run of the same kind in DIR
    (mean, min and max of the per-window ratios to the native mean);
  - the busy share NVML reports: the device's (gpu_util, the workload's own
    share when it runs alone) and the per-process figure (proc_util, which
    leaves out samples taken while the engine was idle);
  - the share gpusandbox measured (its summary record) and its last duty;
  - the mean SM clock;
  - whether the result checksum equals the native run's.
"""
import json
import os
import statistics
import sys


def lines(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip().startswith("{")]
    except OSError:
        return []


def windows(d, name, warm):
    return [w for w in lines(f"{d}/{name}.jsonl") if "rate" in w and w["t"] > warm]


def final(d, name):
    rec = [w for w in lines(f"{d}/{name}.jsonl") if "checksum" in w]
    return rec[-1] if rec else {}


def main():
    d = sys.argv[1]
    warm = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    names = sorted(n[:-6] for n in os.listdir(d)
                   if n.endswith(".jsonl") and not n.endswith((".util.jsonl", ".audit.jsonl")))
    print(f"{'run':<18}{'ratio':>7}{'min':>7}{'max':>7}{'dev':>7}{'proc':>7}{'gs':>7}{'duty':>7}"
          f"{'MHz':>6}  same")
    for name in names:
        kind = name.split("_")[0]
        ws = windows(d, name, warm)
        if not ws:
            continue
        nat = windows(d, f"{kind}_native", warm)
        base = statistics.mean(w["rate"] for w in nat) if nat else None
        ratios = [w["rate"] / base for w in ws] if base else []
        util = [u for u in lines(f"{d}/{name}.util.jsonl") if u["t"] > warm and u["gpu_util"] > 0]
        nvml = statistics.mean(u["proc_util"] for u in util) / 100 if util else float("nan")
        dev = statistics.mean(u["gpu_util"] for u in util) / 100 if util else float("nan")
        mhz = statistics.mean(u["sm_mhz"] for u in util) if util else float("nan")
        summ = [r for r in lines(f"{d}/{name}.audit.jsonl") if r.get("event") == "summary"]
        gs = duty = float("nan")
        if summ and summ[-1].get("sm"):
            g = summ[-1]["sm"]["gpus"].get("0", {})
            gs = g.get("achieved_share") or float("nan")
            duty = g.get("duty", float("nan"))
        same = final(d, name).get("checksum") == final(d, f"{kind}_native").get("checksum")
        r = (statistics.mean(ratios), min(ratios), max(ratios)) if ratios else (float("nan"),) * 3
        print(f"{name:<18}{r[0]:>7.3f}{r[1]:>7.3f}{r[2]:>7.3f}{dev:>7.3f}{nvml:>7.3f}{gs:>7.3f}{duty:>7.3f}"
              f"{mhz:>6.0f}  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
