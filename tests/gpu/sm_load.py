"""A GPU workload for the compute-share (--sm) benchmark.

Usage: sm_load.py KIND SECONDS
KIND: matmul  - bf16 8192^3 matmuls (compute-bound);
      small   - many small elementwise kernels (launch-heavy);
      graph   - the same small kernels replayed as a CUDA graph;
      latency - one tiny kernel and a synchronize at a time: per-window
                p50/p99/max round-trip latency in ms (what an interactive
                or latency-sensitive job sees of the duty cycle).
Prints one JSON line per 1-second window:
  {"t": seconds since start, "ops": operations completed in the window,
   "wall": the window's end in time.time(), to line tenants up}
Environment: SM_LOAD_WINDOW_S overrides the window (default 1 s);
SM_LOAD_IDLE_AFTER_S stops issuing work after that many seconds and idles,
alive, to the end (a tenant that stops working: tests/gpu/coord_bench.sh).
and at the end {"kind", "total_ops", "seconds", "checksum"}: the checksum is
a SHA-256 of the final result's bytes, for comparing runs bit for bit.
Work is issued in batches and synchronised, so ops are counted when done.
"""
import hashlib
import json
import os
import sys
import time

import torch

MATMUL_N = 8192
SMALL_N = 1 << 16
SMALL_BATCH = 200
MATMUL_BATCH = 4
GRAPH_KERNELS = 200
WINDOW_S = float(os.environ.get("SM_LOAD_WINDOW_S", "1.0"))
IDLE_AFTER_S = float(os.environ.get("SM_LOAD_IDLE_AFTER_S", "0"))
# SM_LOAD_CHURN=PROGRAM: a fighting tenant (issue #13): while the load runs,
# a thread starts PROGRAM again and again, each a new process with a CUDA
# context of its own (tests/gpu/ctx_alloc), churning the sandbox's clients.
CHURN = os.environ.get("SM_LOAD_CHURN", "")


def setup(kind):
    g = torch.Generator(device="cuda").manual_seed(1234)
    if kind == "matmul":
        a = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16, generator=g)
        b = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16, generator=g)
        out = torch.empty_like(a)

        def step():
            for _ in range(MATMUL_BATCH):
                torch.matmul(a, b, out=out)
            return MATMUL_BATCH
        return step, lambda: out
    x = torch.randn(SMALL_N, device="cuda", generator=g)
    y = torch.zeros_like(x)

    def kernels():
        for _ in range(GRAPH_KERNELS if kind == "graph" else SMALL_BATCH):
            y.mul_(0.5).add_(x)
    if kind == "small":
        def step():
            kernels()
            return SMALL_BATCH * 2
        return step, lambda: y
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        kernels()  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        kernels()

    def step():
        graph.replay()
        return GRAPH_KERNELS * 2
    return step, lambda: y


def latency(seconds):
    x = torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    start = time.monotonic()
    win_start, lat = start, []
    while True:
        t = time.monotonic()
        x.add_(1.0)
        torch.cuda.synchronize()
        now = time.monotonic()
        lat.append(now - t)
        if now - win_start >= WINDOW_S:
            lat.sort()
            print(json.dumps({"t": round(now - start, 3), "ops": len(lat),
                              "p50_ms": round(lat[len(lat) // 2] * 1e3, 3),
                              "p99_ms": round(lat[int(len(lat) * 0.99)] * 1e3, 3),
                              "max_ms": round(lat[-1] * 1e3, 3)}), flush=True)
            win_start, lat = now, []
        if now - start >= seconds:
            break
    print(json.dumps({"kind": "latency", "seconds": round(now - start, 3),
                      "checksum": hashlib.sha256(x.cpu().numpy().tobytes()).hexdigest()}))


def churn(stop):
    import subprocess
    n = 0
    while not stop.is_set():
        subprocess.run([CHURN, "8"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        n += 1
    print(json.dumps({"churned": n}), flush=True)


def main():
    kind, seconds = sys.argv[1], float(sys.argv[2])
    if CHURN:
        import threading
        stop = threading.Event()
        t = threading.Thread(target=churn, args=(stop,), daemon=True)
        t.start()
        try:
            return run(kind, seconds)
        finally:
            stop.set()
            t.join()
    return run(kind, seconds)


def run(kind, seconds):
    if kind == "latency":
        return latency(seconds)
    step, result = setup(kind)
    torch.cuda.synchronize()
    start = time.monotonic()
    win_start, win_ops, total = start, 0, 0
    idle_logged = False
    while True:
        if IDLE_AFTER_S and time.monotonic() - start >= IDLE_AFTER_S:
            if not idle_logged:
                print(json.dumps({"idle_at_wall": round(time.time(), 3)}), flush=True)
                idle_logged = True
            time.sleep(min(WINDOW_S, max(0.0, seconds - (time.monotonic() - start))))
            n = 0
        else:
            n = step()
            torch.cuda.synchronize()
        now = time.monotonic()
        win_ops += n
        total += n
        if now - win_start >= WINDOW_S:
            print(json.dumps({"t": round(now - start, 3), "ops": win_ops,
                              "rate": round(win_ops / (now - win_start), 2),
                              "wall": round(time.time(), 3)}), flush=True)
            win_start, win_ops = now, 0
        if now - start >= seconds:
            break
    digest = hashlib.sha256(result().float().cpu().numpy().tobytes()).hexdigest()
    print(json.dumps({"kind": kind, "total_ops": total, "seconds": round(now - start, 3),
                      "checksum": digest}), flush=True)


if __name__ == "__main__":
    main()
