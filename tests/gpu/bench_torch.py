"""GPU tier benchmarks in PyTorch. Usage: bench_torch.py init|fill|fill64|matmul

init:   seconds for CUDA init and the first allocation, in-process
fill:   seconds to fill 32 GiB with expandable_segments (1 GiB tensors)
fill64: seconds to fill 24 GiB in 64 MiB tensors (issue #16's figure; run
        it with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
matmul: bf16 8192^3 TFLOP/s in steady state, and a checksum of the result
Prints one JSON object.
"""
import json
import sys
import time

mode = sys.argv[1]
t_import = time.perf_counter()
import torch  # noqa: E402

res = {"mode": mode}
if mode == "init":
    t0 = time.perf_counter()
    torch.cuda.init()
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    res["init_s"] = time.perf_counter() - t0
elif mode == "fill":
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    held = [torch.empty(1 << 30, dtype=torch.uint8, device="cuda") for _ in range(32)]
    torch.cuda.synchronize()
    res["fill_s"] = time.perf_counter() - t0
    res["reserved"] = torch.cuda.memory_reserved()
elif mode == "fill64":
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    held = [torch.empty(64 << 20, dtype=torch.uint8, device="cuda") for _ in range(24 * 16)]
    torch.cuda.synchronize()
    res["fill_s"] = time.perf_counter() - t0
    res["reserved"] = torch.cuda.memory_reserved()
elif mode == "matmul":
    g = torch.Generator(device="cuda").manual_seed(1234)
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    for _ in range(5):
        c = a @ b
    torch.cuda.synchronize()
    iters = 50
    t0 = time.perf_counter()
    for _ in range(iters):
        c = a @ b
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    res["tflops"] = 2 * n ** 3 * iters / dt / 1e12
    res["checksum"] = float(c.float().sum().item())
print(json.dumps(res))
