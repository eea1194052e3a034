#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU probe: what nvidia-smi (and NVML) and a 2 MiB cuMemAlloc/cuMemFree loop
# ask of the driver natively, with the driver's own answers (rmlog.so).
#  1. nvidia-smi's default view, -q, --query-gpu, --query-compute-apps and
#     dmon -c 1: every distinct control and class with its status and size
#     (issue #29 item 3: which calls a sandbox must answer, and how the
#     driver answers them);
#  2. bench_memalloc 2 3000 with and without RMLOG_NO_P2P=1 (issue #31,
#     the P2P object refused as a driver without it would): does the pair
#     still work, and how many REGISTER/UNREGISTER_VIDMEM controls remain;
#     PyTorch and CuPy allocating and computing under the same.
# Usage: tests/gpu/native_calls.sh [OUTDIR]
cd "$(dirname "$0")/../.." || exit 2
set -u
OUT=${1:-/tmp/native_calls}
mkdir -p "$OUT"
gcc -O2 -shared -fPIC -Iinclude -o /tmp/rmlog.so tests/gpu/rmlog.c -ldl || exit 1
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) $(uname -r)"
i=0
for args in "" "-q" "--query-gpu=name,memory.used,memory.total,utilization.gpu --format=csv" \
	"--query-compute-apps=pid,used_memory --format=csv" "dmon -c 1"; do
	i=$((i + 1)); rm -f "$OUT/smi$i.rmlog"
	RMLOG="$OUT/smi$i.rmlog" LD_PRELOAD=/tmp/rmlog.so nvidia-smi $args > "$OUT/smi$i.out" 2>&1
	echo "== nvidia-smi $args: rc=$? calls=$(wc -l < "$OUT/smi$i.rmlog")"
	echo "   classes: $(grep -o 'alloc .*' "$OUT/smi$i.rmlog" | sed -E 's/.*class=(0x[0-9a-f]+) size=([0-9]+) status=(0x[0-9a-f]+)/\1:\2:\3/' | sort | uniq -c | tr '\n' ' ')"
	echo "   non-zero control answers: $(grep -o 'cmd=.*' "$OUT/smi$i.rmlog" | grep -v 'status=0x0$' | sort | uniq -c | tr '\n' ';')"
done
cut -d' ' -f2- "$OUT"/smi*.rmlog | grep -o 'cmd=.*' | sort | uniq -c > "$OUT/smi-controls.txt"
echo "distinct controls over all views: $(wc -l < "$OUT/smi-controls.txt") (smi-controls.txt)"

for p2p in 0 1; do
	rm -f "$OUT/pair$p2p.rmlog"
	RMLOG_NO_P2P=$p2p RMLOG="$OUT/pair$p2p.rmlog" LD_PRELOAD=/tmp/rmlog.so /tmp/bench_memalloc 2 3000 > "$OUT/pair$p2p.out" 2>&1
	echo "== pair, RMLOG_NO_P2P=$p2p: rc=$? $(tr '\n' ' ' < "$OUT/pair$p2p.out")"
	echo "   P2P allocs: $(grep -c 'class=0x503c ' "$OUT/pair$p2p.rmlog") register: $(grep -c 'cmd=0x503c0104' "$OUT/pair$p2p.rmlog") unregister: $(grep -c 'cmd=0x503c0105' "$OUT/pair$p2p.rmlog") calls: $(wc -l < "$OUT/pair$p2p.rmlog")"
	grep -o 'cmd=0x503c[0-9a-f]* .*' "$OUT/pair$p2p.rmlog" | sort | uniq -c | head -5
done
for p2p in 0 1; do
	for i in 1 2 3; do
		echo "pair timing NO_P2P=$p2p: $(RMLOG_NO_P2P=$p2p RMLOG=/dev/null LD_PRELOAD=/tmp/rmlog.so /tmp/bench_memalloc 2 3000 2>&1 | tr '\n' ' ')"
	done
done
RMLOG_NO_P2P=1 RMLOG=/dev/null LD_PRELOAD=/tmp/rmlog.so timeout 120 python3 -c '
import torch
x = torch.randn(8192, 8192, device="cuda"); y = x @ x; torch.cuda.synchronize()
z = [torch.empty(256 << 20, dtype=torch.uint8, device="cuda") for _ in range(8)]
print("torch no_p2p: matmul", float(y[0, 0]) == float(y[0, 0]), "allocated GiB", torch.cuda.memory_allocated() / 2**30)' 2>&1 | tail -3
RMLOG_NO_P2P=1 RMLOG=/dev/null LD_PRELOAD=/tmp/rmlog.so timeout 120 python3 -c '
import cupy as cp
a = cp.arange(1 << 26, dtype=cp.float32); print("cupy no_p2p: sum", float(a.sum()))' 2>&1 | tail -2
RMLOG_NO_P2P=1 RMLOG=/dev/null LD_PRELOAD=/tmp/rmlog.so timeout 120 python3 -c '
import jax, jax.numpy as jnp
x = jnp.ones((4096, 4096)); print("jax no_p2p:", float((x @ x)[0, 0]))' 2>&1 | tail -2
