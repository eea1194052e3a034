#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier: the last binary of the UVM channel round, in a few minutes:
# PyTorch, nvidia-smi, JAX and CuPy at a quota (refusals audited with their
# stacks), --sm 50, and CUDA's channel groups freed behind its back (the probe of
# uvm_channel_probe.sh). Prints what it saw.
cd "$(dirname "$0")/../.." || exit 2
set -u
B=build/gpusandbox-static
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $(git log --oneline -1 2>/dev/null | cut -c1-7)"
echo "== PyTorch under --mem 4g"
HOLD_S=0 timeout 120 $B --user root --mem 4g --audit-log /tmp/t.jsonl -- python3 tests/gpu/torch_quota.py | python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); print("oom", r["oom"], "at", r["allocated_gib_at_oom"], "GiB; realloc", r["realloc_after_free"], "matmul", r["matmul_ok"])'
grep -c '"stack":\[' /tmp/t.jsonl | sed 's/^/refusals audited with a stack: /'
echo "== nvidia-smi inside --mem 4g"; timeout 60 $B --user root --mem 4g -- nvidia-smi --query-gpu=memory.total,memory.used --format=csv,noheader
. tests/gpu/common.sh
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 $B --user root --mem 2g -- python3 -c "$OOM_JAX" 2>&1 | grep -v Warning | tail -2
timeout 120 $B --user root --mem 4g -- python3 -c "$OOM_CUPY" 2>&1 | grep cupy
echo "== --sm 50 (matmul 10 s)"; timeout 60 $B --user root --mem 16g --sm 50 --audit-log /tmp/sm.jsonl -- python3 tests/gpu/sm_load.py matmul 10 | tail -1; grep -o '"achieved_share":[0-9.]*' /tmp/sm.jsonl | head -1
echo "== groups freed behind CUDA's back (tsg_free_probe), native then sandboxed"
GPUSANDBOX_BASE=build/gpusandbox-static ROUNDS=1 bash tests/gpu/uvm_channel_probe.sh 2>&1 | grep -E "round 1|probe|uvm channels" | head -8
echo "== Xid lines since boot: $(dmesg 2>/dev/null | grep -c 'NVRM: Xid')"
