# SPDX-License-Identifier: MIT
# torch_restart.py: PyTorch's side of tests/gpu/agent_container.sh
# --restart-after S. Allocates 1 GiB tensors one every 0.5 s until the quota refuses one (the agent is
# killed and restarted meanwhile), then frees them and allocates again.
# Prints one JSON line: how many GiB before the out-of-memory error, whether
# the refusal was torch.OutOfMemoryError, the total the memory report shows,
# and whether allocating after the free worked.
import json, time
import torch

GIB = 1 << 30
held, oom, oom_type = [], None, None
t0 = time.monotonic()
for i in range(16):
    try:
        held.append(torch.ones(GIB, dtype=torch.uint8, device="cuda"))
        torch.cuda.synchronize()
        print(json.dumps({"allocated_gib": len(held), "t": round(time.monotonic() - t0, 2)}), flush=True)
    except torch.OutOfMemoryError as e:
        oom, oom_type = len(held), type(e).__name__
        break
    time.sleep(0.5)
got = len(held)
held.clear()
torch.cuda.empty_cache()
# Memory UVM mapped before the restart stays charged until the container
# ends (SECURITY.md, "Across an agent restart"), so this can be refused
# like a full GPU: said, not raised.
try:
    again = torch.ones(GIB, dtype=torch.uint8, device="cuda")
    realloc = int(again[:4096].sum()) == 4096
except torch.OutOfMemoryError:
    realloc = False
free, total = torch.cuda.mem_get_info()
print(json.dumps({"gib_before_oom": oom, "allocated": got, "oom_type": oom_type,
                  "mem_total_mib": total >> 20, "realloc_after_free": realloc,
                  "elapsed_s": round(time.monotonic() - t0, 2)}), flush=True)
