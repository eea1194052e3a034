#!/bin/bash
# GPU tier: the acceptance re-run after a structural change. Memory quota
# (PyTorch, JAX, CuPy out of memory and recovery; nvidia-smi inside), --sm
# 25/50/75 alone, and the 2 MiB / 256 MiB allocation pair against native,
# interleaved. Prints what it saw; writes logs under $OUT.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
$B --version | head -20
echo "== PyTorch under --mem 4g: OOM, then recovery"
HOLD_S=1 $B --mem 4g --audit-log "$OUT/torch.jsonl" -- python3 tests/gpu/torch_quota.py; echo "rc=$?"
echo "== nvidia-smi inside --mem 4g"
$B --mem 4g -- nvidia-smi --query-gpu=memory.total,memory.used --format=csv,noheader; echo "rc=$?"
. "$(cd "$(dirname "$0")" && pwd)/common.sh"
echo "== JAX under --mem 2g (preallocation off)"
XLA_PYTHON_CLIENT_PREALLOCATE=false $B --mem 2g -- python3 -c "$OOM_JAX" 2>&1 | grep -v Warning | tail -3
echo "== CuPy under --mem 4g"
$B --mem 4g -- python3 -c "$OOM_CUPY" 2>&1 | tail -3
echo "== --sm alone (matmul, 10 s each)"
for s in 25 50 75; do
	$B --mem 16g --sm $s --audit-log "$OUT/sm$s.jsonl" -- python3 tests/gpu/sm_load.py matmul 10 | tail -1
	grep '"event":"summary"' "$OUT/sm$s.jsonl" | grep -o '"achieved_share":[0-9.]*' | head -1
done
echo "== allocation pairs, interleaved native/sandbox"
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
for i in 1 2 3; do
	for mode in native sandbox; do
		pre=""; [ "$mode" = sandbox ] && pre="$B --mem 120g --"
		for mib in 2 256; do
			echo "memalloc $mode $mib $($pre /tmp/bench_memalloc $mib $([ $mib = 2 ] && echo 3000 || echo 500))"
		done
	done
done
echo "xid lines: $(dmesg 2>/dev/null | grep -ci xid)"
