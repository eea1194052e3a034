"""GPU tier: PyTorch under a memory quota.

Allocates 1 GiB tensors until PyTorch raises torch.OutOfMemoryError, checks
what the program is told (message, mem_get_info), frees one tensor and
allocates again. Prints one JSON object. Run it under gpusandbox --mem.
"""
import json
import os
import sys
import time

import torch

GIB = 1 << 30
res = {"pid": os.getpid()}
held = []
t0 = time.time()
try:
    while len(held) < 256:
        held.append(torch.empty(GIB, dtype=torch.uint8, device="cuda"))
        held[-1].fill_(1)
    res["oom"] = False
except torch.OutOfMemoryError as e:  # what a full GPU looks like
    res["oom"] = True
    res["oom_message"] = str(e).splitlines()[0][:400]
res["allocated_gib_at_oom"] = len(held)
free, total = torch.cuda.mem_get_info()
res["mem_get_info"] = [free, total]
res["memory_allocated"] = torch.cuda.memory_allocated()
# Let an outside monitor sample the driver's per-process usage at the peak.
time.sleep(float(os.environ.get("HOLD_S", "2")))
if held:
    del held[0]
    torch.cuda.empty_cache()
try:
    held.append(torch.empty(GIB, dtype=torch.uint8, device="cuda"))
    held[-1].fill_(2)
    torch.cuda.synchronize()
    res["realloc_after_free"] = True
except torch.OutOfMemoryError as e:
    res["realloc_after_free"] = False
    res["realloc_error"] = str(e).splitlines()[0][:200]
# A matmul proves the context still works after the refusals.
a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
b = (a @ a).float().sum().item()
res["matmul_ok"] = b == b
res["elapsed_s"] = round(time.time() - t0, 3)
print(json.dumps(res))
sys.stdout.flush()
