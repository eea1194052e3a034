#!/bin/bash
# GPU tier for the memory report and channel quotas. Writes $OUT/issue4.txt.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
log() { echo "$*" | tee -a "$OUT/issue4.txt"; }
: > "$OUT/issue4.txt"
log "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
log "== report under --mem 4g"
log "$($B --mem 4g -- python3 tests/gpu/torch_report.py 2>&1 | tail -3)"
log "== nvidia-smi inside --mem 4g"
log "$($B --mem 4g -- nvidia-smi --query-gpu=memory.total,memory.used,memory.free --format=csv 2>&1 | tail -3)"
log "== native report"
log "$(python3 tests/gpu/torch_report.py 2>&1 | tail -2)"
for n in 20 8; do
	log "== --channels $n"
	$B --channels $n --audit-log "$OUT/ch$n.jsonl" -- python3 -c "
import torch
a = torch.randn(1024, 1024, device='cuda'); print('matmul ok', float((a @ a).sum()) == float((a @ a).sum()))" > "$OUT/ch$n.out" 2>&1
	log "rc=$? $(tail -3 "$OUT/ch$n.out" | tr '\n' ' ' | cut -c1-400)"
	log "allowed channels: $(grep -c '"resource":"channels","usage_before":[0-9]*,"usage_after":[0-9]*,"quota":'$n',"reason' "$OUT/ch$n.jsonl" ; grep -c '"verdict":"allow".*"resource":"channels"' "$OUT/ch$n.jsonl")"
	log "refusals: $(grep '"verdict":"deny"' "$OUT/ch$n.jsonl" | head -2 | cut -c1-400)"
done
log "== --channel-groups 4 --channels 24"
$B --channels 24 --channel-groups 4 -- python3 -c "import torch; print(torch.ones(4, device='cuda').sum().item())" 2>&1 | tail -2 | tee -a "$OUT/issue4.txt"
log "== GPFIFO_SCHEDULE records under --mem 4g --audit-log"
$B --mem 4g --audit-log "$OUT/sched.jsonl" -- python3 -c "import torch; torch.ones(1, device='cuda')" >/dev/null 2>&1
log "schedule records: $(grep -c 'scheduled_channel_groups' "$OUT/sched.jsonl"); client continues: $(grep -c '"verdict":"continue"' "$OUT/sched.jsonl"); refusals: $(grep -c '"verdict":"refuse"' "$OUT/sched.jsonl")"
grep '"verdict":"refuse"' "$OUT/sched.jsonl" | head -5 | cut -c1-300 | tee -a "$OUT/issue4.txt"
