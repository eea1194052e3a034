#!/bin/bash
# GPU tier acceptance: PyTorch and a static raw-ioctl program under --mem,
# with the driver's own usage read through NVML from outside. Writes $OUT.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
{ date -u +%FT%TZ; uname -r; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; python3 -c 'import torch;print(torch.__version__)'; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
monitored() { # name cmd...: runs cmd in the background with an NVML monitor
	local name=$1; shift
	"$@" > "$OUT/$name.out" 2> "$OUT/$name.err" &
	local pid=$!
	python3 tests/gpu/nvml_monitor.py $pid "$OUT/$name.nvml.json" 0.02 &
	wait $pid; echo "$name rc=$?"; wait
	cat "$OUT/$name.out"; tail -3 "$OUT/$name.err"; cat "$OUT/$name.nvml.json"; echo
}
echo "== native context overhead (1 MiB tensor, held 2 s)"
monitored ctx-native python3 -c "import torch,time; x=torch.ones(1<<18,device='cuda'); torch.cuda.synchronize(); time.sleep(2)"
echo "== PyTorch 1 GiB tensors under --mem 4g"
HOLD_S=2 monitored torch-4g $B --mem 4g --audit-log "$OUT/torch-4g.audit.jsonl" -- python3 tests/gpu/torch_quota.py
echo "== static raw RM_ALLOC under --mem 1g, and natively"
monitored raw-1g $B --mem 1g --audit-log "$OUT/raw-1g.audit.jsonl" -- build/raw_rm_alloc
monitored raw-native build/raw_rm_alloc
grep -c '"verdict":"deny"' "$OUT/torch-4g.audit.jsonl" "$OUT/raw-1g.audit.jsonl"
grep -h '"verdict":"refuse"' "$OUT"/*.audit.jsonl | head -5
