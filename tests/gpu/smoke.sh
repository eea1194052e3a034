#!/bin/bash
# GPU tier, first contact: PyTorch init and a tensor under gpusandbox with
# --trace, then the quota test with an NVML monitor. Writes to $OUT.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; python3 -c 'import torch;print(torch.__version__)'; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
echo "== smoke"
timeout 120 $B --mem 4g --trace --audit-log "$OUT/smoke.audit.jsonl" -- \
  python3 -c "import torch; x=torch.ones(1<<20,device='cuda'); print('sum', x.sum().item())" \
  2> "$OUT/smoke.trace"; echo "smoke rc=$?"
grep -c . "$OUT/smoke.trace"; grep -v ' = 0 NV_OK' "$OUT/smoke.trace" | head -40
echo "== quota"
HOLD_S=3 timeout 300 $B --mem 4g --audit-log "$OUT/quota.audit.jsonl" -- python3 tests/gpu/torch_quota.py > "$OUT/quota.json" 2> "$OUT/quota.err" &
sb=$!; sleep 0.5
python3 tests/gpu/nvml_monitor.py $sb "$OUT/quota.nvml.json" 0.02 &
wait $sb; echo "quota rc=$?"; wait
cat "$OUT/quota.json"; tail -5 "$OUT/quota.err"; cat "$OUT/quota.nvml.json"; echo
grep -c '"verdict":"deny"' "$OUT/quota.audit.jsonl"; tail -1 "$OUT/quota.audit.jsonl"
