#!/bin/bash
# GPU tier: the audit log on a real GPU. PyTorch, JAX and CuPy under
# --audit-log: every log verifies (gpusandbox audit verify), every line is
# strict UTF-8 JSON with no "\/"; one run through --audit-fd; and the 2 MiB
# allocation pair with and without the log, interleaved with native.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
strict() { python3 - "$1" <<'PY'
import json, sys
n = 0
for raw in open(sys.argv[1], "rb"):
    json.loads(raw.decode("utf-8", "strict")); n += 1
    assert b"\\/" not in raw
print(f"{n} records, strict UTF-8 JSON")
PY
}
run_logged() { # name cmd...
	local name=$1; shift
	$B --user root --mem 4g --audit-log "$OUT/$name.jsonl" -- "$@" > "$OUT/$name.out" 2>&1
	echo "== $name rc=$? $(tail -1 "$OUT/$name.out" | cut -c1-150)"
	strict "$OUT/$name.jsonl"; $B audit verify "$OUT/$name.jsonl"; echo "verify rc=$?"
}
run_logged torch python3 tests/gpu/torch_quota.py
run_logged jax env XLA_PYTHON_CLIENT_PREALLOCATE=false python3 -c 'import jax.numpy as jnp; print("jax", float(jnp.ones((1024,1024)).sum()))'
run_logged cupy python3 -c 'import cupy as cp; print("cupy", float(cp.ones((1024,1024)).sum()))'
echo "== --audit-fd 3"
$B --user root --mem 4g --audit-fd 3 -- python3 -c 'import torch; print(torch.ones(4, device="cuda").sum().item())' 3>>"$OUT/fd.jsonl"
echo "rc=$?"; $B audit verify "$OUT/fd.jsonl"; echo "verify rc=$?"
echo "== tampering: drop line 3 of the torch log"
sed 3d "$OUT/torch.jsonl" > "$OUT/torch-cut.jsonl"; $B audit verify "$OUT/torch-cut.jsonl"; echo "verify rc=$? (want 1)"
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
for i in 1 2 3; do
	echo "memalloc native $(/tmp/bench_memalloc 2 3000)"
	echo "memalloc sandbox $($B --user root --mem 120g -- /tmp/bench_memalloc 2 3000)"
	echo "memalloc audited $($B --user root --mem 120g --audit-log "$OUT/bench$i.jsonl" -- /tmp/bench_memalloc 2 3000) records=$(wc -l < "$OUT/bench$i.jsonl")"
done
