"""GPU tier (issue #29 item 4): one small real workload per mode, each
checking its own result, for docs/compatibility.md. Prints one JSON object:
{"mode": ..., "ok": true|false, ...}. Run natively and under gpusandbox by
tests/gpu/compat_check.sh.

Modes:
  graphs     CUDA graphs: capture a few kernels, replay 10 times, compare
             with eager
  compile    torch.compile of a small MLP (Inductor, Triton kernels)
  triton     a Triton vector-add kernel of our own
  blas_dnn   a cuBLAS matmul and a cuDNN convolution against CPU results
  mp_share   torch.multiprocessing: a CUDA tensor sent to a child process
             (CUDA IPC), which reads it and writes into it
  nccl1      torch.distributed with NCCL, one rank on one GPU: all_reduce
             and broadcast
"""
import json
import os
import sys

import torch

mode = sys.argv[1]
res = {"mode": mode, "ok": False}


def graphs():
    x = torch.randn(1 << 20, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # warm-up on a side stream, as the docs ask
            y = (x * 2 + 1).sin()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = (x * 2 + 1).sin()
    for _ in range(10):
        g.replay()
    torch.cuda.synchronize()
    res["ok"] = bool(torch.allclose(y, (x * 2 + 1).sin()))


def compiled():
    m = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).cuda()
    x = torch.randn(64, 512, device="cuda")
    c = torch.compile(m)
    with torch.no_grad():
        a, b = m(x), c(x)
    res["max_abs_diff"] = float((a - b).abs().max())
    res["ok"] = res["max_abs_diff"] < 1e-3


def triton_add():
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) + tl.load(y_ptr + i, mask=m), mask=m)

    n = 1 << 20
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    res["ok"] = bool(torch.equal(out, x + y))


def blas_dnn():
    a = torch.randn(512, 512)
    conv = torch.nn.Conv2d(3, 8, 3)
    img = torch.randn(2, 3, 32, 32)
    mm = (a.cuda() @ a.cuda()).cpu()
    with torch.backends.cudnn.flags(enabled=True):
        cv = conv.cuda()(img.cuda()).cpu()
    res["cudnn"] = torch.backends.cudnn.version()
    res["ok"] = bool(torch.allclose(mm, a @ a, atol=1e-2) and torch.allclose(cv, conv.cpu()(img), atol=1e-3))


def child(t, q):
    q.put(float(t.sum()))
    t.fill_(7)
    torch.cuda.synchronize()


def mp_share():
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    t = torch.ones(1 << 20, device="cuda")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(t, q))
    p.start()
    seen = q.get(timeout=120)
    p.join(120)
    torch.cuda.synchronize()
    res["child_sum"] = seen
    res["after_child"] = float(t[0])
    res["ok"] = seen == float(1 << 20) and res["after_child"] == 7.0 and p.exitcode == 0


def nccl1():
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=0, world_size=1)
    t = torch.arange(8, device="cuda", dtype=torch.float32)
    dist.all_reduce(t)
    dist.broadcast(t, 0)
    torch.cuda.synchronize()
    res["ok"] = bool(torch.equal(t.cpu(), torch.arange(8, dtype=torch.float32)))
    res["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    dist.destroy_process_group()


if __name__ == "__main__":
    try:
        {"graphs": graphs, "compile": compiled, "triton": triton_add, "blas_dnn": blas_dnn,
         "mp_share": mp_share, "nccl1": nccl1}[mode]()
    except Exception as e:  # reported, not hidden: the row says fail
        res["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
    print(json.dumps(res))
    sys.stdout.flush()
