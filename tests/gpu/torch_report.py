"""GPU tier: what PyTorch is told about the GPU. Prints one JSON object.

mem_get_info, get_device_properties().total_memory, and the out-of-memory
message for a request larger than what is left. Run under gpusandbox --mem.
"""
import json
import torch

GIB = 1 << 30
res = {}
x = torch.ones(1 << 20, device="cuda")
free, total = torch.cuda.mem_get_info()
res["mem_get_info_gib"] = [round(free / GIB, 3), round(total / GIB, 3)]
res["total_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / GIB, 3)
try:
    y = torch.empty(8 * GIB, dtype=torch.uint8, device="cuda")
    res["oom"] = False
except torch.OutOfMemoryError as e:
    res["oom"] = True
    res["oom_message"] = str(e).splitlines()[0][:300]
print(json.dumps(res))
