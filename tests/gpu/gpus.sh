#!/bin/bash
# GPU tier on a machine with 2+ GPUs: --gpus visibility and per-GPU quotas.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
log() { echo "$*" | tee -a "$OUT/gpus.txt"; }
: > "$OUT/gpus.txt"
log "# $(date -u +%FT%TZ) kernel $(uname -r)"
log "$(nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader)"
PY='import torch,json; n=torch.cuda.device_count(); p=[torch.cuda.get_device_properties(i) for i in range(n)]
a=torch.randn(2048,2048,device="cuda:0"); ok=float((a@a).float().sum())==float((a@a).float().sum())
print(json.dumps({"count":n,"pci":[f"{x.pci_domain_id:04x}:{x.pci_bus_id:02x}:{x.pci_device_id:02x}" for x in p],"matmul":ok}))'
for g in 0 1 0,1; do
	log "== --gpus $g: $($B --gpus $g --audit-log $OUT/gpus$g.jsonl -- python3 -c "$PY" 2>&1 | tail -1)"
	log "   refusals: $(grep -c '"verdict":"refuse"' $OUT/gpus$g.jsonl) ($(grep -o '"reason":"[^"]*"' $OUT/gpus$g.jsonl | sort | uniq -c | tr '\n' ' '))"
done
U1=$(nvidia-smi -i 1 --query-gpu=uuid --format=csv,noheader)
log "== --gpus $U1: $($B --gpus "$U1" -- python3 -c "$PY" 2>&1 | tail -1)"
log "== --gpus GPU-00000000-0000-0000-0000-00000000dead: $($B --gpus GPU-00000000-0000-0000-0000-00000000dead -- true 2>&1; echo "rc=$?")"
log "== native: $(python3 -c "$PY" 2>&1 | tail -1)"
log "== nvidia-smi inside --gpus 1"
log "$($B --gpus 1 -- nvidia-smi --query-gpu=index,pci.bus_id,memory.total --format=csv,noheader 2>&1)"
log "== raw ioctls under --gpus 1: $($B --gpus 1 --audit-log $OUT/raw.jsonl -- build/raw_gpus 2>&1 | tr '\n' ' ')"
log "== raw ioctls natively: $(build/raw_gpus 2>&1 | tr '\n' ' ')"
log "== --gpus 0,1 --mem 2g: 1 GiB tensors on each GPU until OOM"
log "$($B --gpus 0,1 --mem 2g -- python3 -c '
import torch, json
r = {}
for d in range(torch.cuda.device_count()):
    h = []
    try:
        while len(h) < 64: h.append(torch.empty(1 << 30, dtype=torch.uint8, device=f"cuda:{d}"))
    except torch.OutOfMemoryError: pass
    r[d] = [len(h), round(torch.cuda.mem_get_info(d)[1] / 2**30, 2)]
print(json.dumps(r))' 2>&1 | tail -1)"
