"""Samples GPU busy time (NVML) for a process tree, once per interval.

Usage: sm_util_monitor.py PID OUTFILE [INTERVAL_S]
Writes JSON lines: {"t", "gpu_util": device utilization %, "proc_util": sum of
the per-process SM utilization of the tree's processes (NVML's process
utilization, from the driver's samples since the last call), "sm_mhz", "power_w"}.
"""
import json
import os
import sys
import time

import pynvml

from proctree import tree


def main():
    pid, out = int(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    start = time.monotonic()
    last_ts = int(time.time() * 1e6)
    with open(out, "w") as f:
        while os.path.exists(f"/proc/{pid}"):
            time.sleep(interval)
            pids = tree(pid)
            try:
                samples = pynvml.nvmlDeviceGetProcessUtilization(h, last_ts)
            except pynvml.NVMLError:
                samples = []
            last_ts = int(time.time() * 1e6)
            mine = [s.smUtil for s in samples if s.pid in pids]
            util = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
            f.write(json.dumps({
                "t": round(time.monotonic() - start, 2), "wall": round(time.time(), 3), "gpu_util": util,
                "proc_util": sum(mine), "proc_samples": len(mine),
                "sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "power_w": round(pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0, 1)}) + "\n")
            f.flush()


if __name__ == "__main__":
    main()
