"""--sm on several GPUs: bf16 matmuls on every visible GPU at once.

Usage: sm_multi.py SECONDS
Prints, per GPU, matmuls per second over the run after a 5 s warm-up, and
a SHA-256 of each GPU's final result.
"""
import hashlib
import json
import sys
import threading
import time

import torch

N = 8192
BATCH = 4
WARM_S = 5.0


def worker(dev, seconds, out):
    torch.cuda.set_device(dev)
    g = torch.Generator(device=dev).manual_seed(1234)
    a = torch.randn(N, N, device=dev, dtype=torch.bfloat16, generator=g)
    b = torch.randn(N, N, device=dev, dtype=torch.bfloat16, generator=g)
    c = torch.empty_like(a)
    start = time.monotonic()
    ops = 0
    t_warm = None
    while True:
        for _ in range(BATCH):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize(dev)
        now = time.monotonic()
        if t_warm is None and now - start >= WARM_S:
            t_warm, ops = now, 0
        elif t_warm is not None:
            ops += BATCH
        if now - start >= seconds:
            break
    out[dev] = {"gpu": dev, "rate": round(ops / (now - t_warm), 2),
                "checksum": hashlib.sha256(c.float().cpu().numpy().tobytes()).hexdigest()[:16]}


def main():
    seconds = float(sys.argv[1])
    out = {}
    threads = [threading.Thread(target=worker, args=(d, seconds, out))
               for d in range(torch.cuda.device_count())]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for d in sorted(out):
        print(json.dumps(out[d]))


if __name__ == "__main__":
    main()
