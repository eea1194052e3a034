#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier, issue #17 item 9: UVM external mappings made by the supervisor.
# (1) what CUDA programs see: PyTorch, JAX and CuPy out of memory and
# recovery, nvidia-smi inside, PyTorch's expandable segments (VMM: maps
# and unmaps at offsets) filling and freeing; (2) the attack: a cuMemAlloc'd
# handle freed with a raw RM_FREE while UVM maps it (uvm_hold.sh, judged
# by the driver's device-wide memory.used); (3) the 2 MiB pair natively,
# under GPUSANDBOX_BASE (the binary before) and GPUSANDBOX (this one),
# interleaved; (4) --sm 25/50/75 alone. Prints what it saw; logs under $OUT.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
BASE=${GPUSANDBOX_BASE:-build/gpusandbox-static-base}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
echo "== PyTorch under --mem 4g: OOM, then recovery"
HOLD_S=1 timeout 120 $B --user root --mem 4g --audit-log "$OUT/torch.jsonl" -- python3 tests/gpu/torch_quota.py; echo "rc=$?"
grep -c '"call":"UVM_' "$OUT/torch.jsonl" | sed 's/^/audited UVM records: /'
echo "== nvidia-smi inside --mem 4g"
timeout 60 $B --user root --mem 4g -- nvidia-smi --query-gpu=memory.total,memory.used --format=csv,noheader; echo "rc=$?"
. tests/gpu/common.sh
echo "== JAX under --mem 2g (preallocation off)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 $B --user root --mem 2g -- python3 -c "$OOM_JAX" 2>&1 | grep -v Warning | tail -3
echo "== CuPy under --mem 4g"
timeout 120 $B --user root --mem 4g -- python3 -c "$OOM_CUPY" 2>&1 | tail -3
echo "== PyTorch expandable segments: fill 24 GiB in 64 MiB tensors under --mem 30g, natively and sandboxed"
for pre in "" "$B --user root --mem 30g --"; do
	PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 120 $pre python3 tests/gpu/bench_torch.py fill64; echo " rc=$?"
done
EXP='import torch
x = [torch.empty(64 << 20, dtype=torch.uint8, device="cuda") for _ in range(40)]
del x; torch.cuda.empty_cache()
y = [torch.empty(64 << 20, dtype=torch.uint8, device="cuda") for _ in range(40)]
print("expandable refill ok", torch.cuda.memory_reserved() >> 20, "MiB reserved")'
echo "== expandable segments under --mem 4g: 2.5 GiB, freed with empty_cache, 2.5 GiB again"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 120 $B --user root --mem 4g --audit-log "$OUT/exp.jsonl" -- python3 -c "$EXP" 2>&1 | tail -4
echo "== the attack: raw RM_FREE of a UVM-mapped handle (uvm_hold.sh)"
GPUSANDBOX=$B timeout 200 bash tests/gpu/uvm_hold.sh 2>&1 | tail -14
echo "== 2 MiB pairs: native, base, new"
pairs_interleaved 3 || exit 1
echo "== where the supervisor's time goes (GPUSANDBOX_PROFILE, new)"
GPUSANDBOX_PROFILE=1 timeout 60 $B --user root --mem 120g -- /tmp/bench_memalloc 2 3000 2>&1 | tail -12
echo "== --sm alone (matmul, 10 s each)"
for s in 25 50 75; do
	timeout 60 $B --user root --mem 16g --sm $s --audit-log "$OUT/sm$s.jsonl" -- python3 tests/gpu/sm_load.py matmul 10 | tail -1
	grep '"event":"summary"' "$OUT/sm$s.jsonl" | grep -o '"achieved_share":[0-9.]*' | head -1
done
echo "== Xid lines in the kernel log since boot: $(dmesg 2>/dev/null | grep -c 'NVRM: Xid')"
