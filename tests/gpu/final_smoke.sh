#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier: a short check of a final binary after small changes: PyTorch
# out of memory and recovery, --sm 50, the freed-but-mapped attack under
# --mem 2g (uvm_hold.sh), and the 2 MiB pair natively and sandboxed,
# interleaved. Prints what it saw; logs under $OUT.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
echo "== PyTorch under --mem 4g"
HOLD_S=1 timeout 120 $B --user root --mem 4g -- python3 tests/gpu/torch_quota.py | cut -c1-120; echo "rc=$?"
echo "== --sm 50 alone (matmul, 10 s)"
timeout 60 $B --user root --mem 16g --sm 50 --audit-log "$OUT/sm50.jsonl" -- python3 tests/gpu/sm_load.py matmul 10 | tail -1
grep '"event":"summary"' "$OUT/sm50.jsonl" | grep -o '"achieved_share":[0-9.]*' | head -1
echo "== the attack under --mem 2g"
GPUSANDBOX=$B timeout 200 bash tests/gpu/uvm_hold.sh 2>&1 | grep '^== uvmfree'
echo "== 2 MiB pairs"
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
for i in 1 2 3; do
	echo "pair native $(timeout 60 /tmp/bench_memalloc 2 3000)"
	echo "pair new $(timeout 60 $B --user root --mem 120g -- /tmp/bench_memalloc 2 3000)"
done
