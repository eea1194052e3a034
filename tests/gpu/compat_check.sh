#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier (issue #29 item 4): the rows of docs/compatibility.md that a
# small program can check. Each workload natively and under gpusandbox
# (the default policy, --mem 16g), judged by the program's own check of
# its result (compat_workloads.py); the sandbox's stderr summary says
# whether anything was refused. Then PyTorch's three allocators under
# --mem 4g (torch_quota.py: out of memory at the quota, reallocation and a
# matmul after it). Prints one line per run; never asserts.
# Usage: tests/gpu/compat_check.sh [OUTDIR]   (build first: make build/gpusandbox-static)
cd "$(dirname "$0")/../.." || exit 2
set -u
B=${GPUSANDBOX:-build/gpusandbox-static}
OUT=${1:-/tmp/compat}
mkdir -p "$OUT"
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) torch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)"
refusals() { grep -hE '^gpusandbox: [0-9]+ calls? refused' "$1" | head -1; }
for m in graphs compile triton blas_dnn mp_share nccl1; do
	timeout 300 python3 tests/gpu/compat_workloads.py "$m" > "$OUT/$m.native" 2> "$OUT/$m.native.err"
	timeout 300 "$B" --user root --mem 16g --audit-log "$OUT/$m.jsonl" -- python3 tests/gpu/compat_workloads.py "$m" \
		> "$OUT/$m.sandbox" 2> "$OUT/$m.sandbox.err"
	echo "$m: native $(tail -1 "$OUT/$m.native" | cut -c1-200) | sandbox $(tail -1 "$OUT/$m.sandbox" | cut -c1-200) $(refusals "$OUT/$m.sandbox.err")"
done
for conf in "" "expandable_segments:True" "backend:cudaMallocAsync"; do
	PYTORCH_CUDA_ALLOC_CONF=$conf HOLD_S=0 timeout 300 "$B" --user root --mem 4g -- python3 tests/gpu/torch_quota.py \
		> "$OUT/alloc.out" 2> "$OUT/alloc.err"
	echo "torch allocator '${conf:-default}' --mem 4g: $(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print("oom", r["oom"], "at", r["allocated_gib_at_oom"], "GiB; realloc", r["realloc_after_free"], "matmul", r["matmul_ok"])' "$OUT/alloc.out" 2>&1 | tail -1) $(refusals "$OUT/alloc.err")"
done
