"""Samples the driver's own per-process GPU memory (NVML) until a pid exits.

Usage: nvml_monitor.py PID OUTFILE [INTERVAL_S]
Writes JSON: max bytes used by any process of the pid's tree as NVML reports
it, the device's global used memory at start and its maximum, and samples.
"""
import json
import os
import sys
import time

import pynvml

from proctree import tree


def main():
    pid, out = int(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    base = pynvml.nvmlDeviceGetMemoryInfo(h).used
    max_proc, max_used, n = 0, base, 0
    while os.path.exists(f"/proc/{pid}"):
        pids = tree(pid)
        procs = pynvml.nvmlDeviceGetComputeRunningProcesses(h)
        s = sum(p.usedGpuMemory or 0 for p in procs if p.pid in pids)
        max_proc = max(max_proc, s)
        max_used = max(max_used, pynvml.nvmlDeviceGetMemoryInfo(h).used)
        n += 1
        time.sleep(interval)
    json.dump({"max_process_bytes": max_proc, "device_used_at_start": base,
               "device_used_max": max_used, "samples": n}, open(out, "w"))


main()
