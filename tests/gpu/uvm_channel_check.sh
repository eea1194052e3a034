#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier, issue #17 item 4: UVM channel registrations continued with the
# caller held, and channel handles unregistered before their counts go
# (uvm_maps.h). (1) what CUDA programs see: PyTorch, JAX and CuPy out of
# memory and recovery under the new trap (every context registers its
# channels); (2) contexts made and destroyed 30 times under a channel-group
# cap a few contexts wide, and 8 PyTorch processes in turn under one
# sandbox (each exits without destroying its context): every round must
# run, which it does only if each context's channels are let go; (3)
# PyTorch's start natively, under GPUSANDBOX_BASE (the binary before) and
# GPUSANDBOX (this one), interleaved, with this one's profile (the
# quiesce's share); (4) the 2 MiB pair, the same three. Prints what it
# saw; logs under $OUT.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
BASE=${GPUSANDBOX_BASE:-build/gpusandbox-static-base}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
echo "== PyTorch under --mem 4g: OOM, then recovery"
HOLD_S=0 timeout 120 $B --user root --mem 4g --audit-log "$OUT/torch.jsonl" -- python3 tests/gpu/torch_quota.py; echo "rc=$?"
grep -o '"call":"UVM_REGISTER_CHANNEL"[^}]*"verdict":"[a-z]*"' "$OUT/torch.jsonl" | sort | uniq -c | head -3
. tests/gpu/common.sh
echo "== JAX under --mem 2g (preallocation off)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 $B --user root --mem 2g -- python3 -c "$OOM_JAX" 2>&1 | grep -v Warning | tail -3
echo "== CuPy under --mem 4g"
timeout 120 $B --user root --mem 4g -- python3 -c "$OOM_CUPY" 2>&1 | tail -3
echo "== channel groups one context takes (--trace of one ctx_churn round)"
nvcc -O2 -o /tmp/ctx_churn tests/gpu/ctx_churn.c -lcuda || exit 1
timeout 60 $B --user root --mem 8g --metrics-file "$OUT/churn1.prom" -- /tmp/ctx_churn 1
grep -E 'channel' "$OUT/churn1.prom" | grep -v '^#' | head -8
for G in 24 48; do
	echo "== 30 contexts made and destroyed under --channel-groups $G: base, then new"
	timeout 120 $BASE --user root --mem 8g --channel-groups $G -- /tmp/ctx_churn 30
	timeout 120 $B --user root --mem 8g --channel-groups $G --audit-log "$OUT/churn$G.jsonl" -- /tmp/ctx_churn 30
done
echo "== 8 PyTorch processes in turn under one sandbox, --channel-groups 8 (two processes' worth): base, then new"
SEQ='for i in 1 2 3 4 5 6 7 8; do python3 -c "import torch; x = torch.ones(1 << 20, device=\"cuda\"); print(int(x.sum()), end=\" \")" || { echo "round $i failed"; exit 1; }; done; echo seq ok'
timeout 300 $BASE --user root --mem 8g --channel-groups 8 -- bash -c "$SEQ" 2>&1 | tail -2
GPUSANDBOX_PROFILE=1 timeout 300 $B --user root --mem 8g --channel-groups 8 --audit-log "$OUT/seq.jsonl" -- bash -c "$SEQ" 2>&1 | grep -E "seq ok|failed|uvm channels|refused"
grep -c '"verdict":"refuse"' "$OUT/seq.jsonl" | sed 's/^/refusals: /'
INIT='import time, torch
t = time.time(); torch.zeros(1, device="cuda"); torch.cuda.synchronize(); print("%.3f" % (time.time() - t))'
echo "== PyTorch start (first tensor), seconds: native, base, new; 4 rounds"
for i in 1 2 3 4; do
	n=$(python3 -c "$INIT" 2>/dev/null)
	b=$(timeout 60 $BASE --user root --mem 16g -- python3 -c "$INIT" 2>/dev/null)
	w=$(timeout 60 $B --user root --mem 16g -- python3 -c "$INIT" 2>/dev/null)
	echo "init native $n base $b new $w"
done
echo "== where the new binary's time goes at PyTorch's start (GPUSANDBOX_PROFILE)"
GPUSANDBOX_PROFILE=1 timeout 60 $B --user root --mem 16g -- python3 -c "$INIT" 2>&1 | grep -E 'quiesce|REGISTER|UVM|RM_ALLOC|^ *[0-9.]+$' | head -12
echo "== 2 MiB pairs: native, base, new"
pairs_interleaved 3 || exit 1
echo "== Xid lines in the kernel log since boot: $(dmesg 2>/dev/null | grep -c 'NVRM: Xid')"
