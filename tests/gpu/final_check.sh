#!/bin/bash
# GPU tier: a last check of a build on the device. PyTorch training under
# the default policy with --learn, the learned file used as the policy,
# and a short --sm 50 run. Prints what it saw.
set -u
B=${GPUSANDBOX:-build/gpusandbox-static}
W=$(mktemp -d)
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
refusals() { grep -cE '"reason":"((class|control) (not allowed by the policy|unknown to gpusandbox)|escape unknown)' "$1"; }
$B --mem 8g --learn "$W/learned.policy" --audit-log "$W/learn.jsonl" -- python3 tests/gpu/torch_train.py
echo "learn run rc=$? policy refusals $(refusals "$W/learn.jsonl") learned entries: $(grep -c '^allow\.' "$W/learned.policy")"
grep -v '^#' "$W/learned.policy" | grep . | head -20
$B --policy "$W/learned.policy" --audit-log "$W/replay.jsonl" -- python3 tests/gpu/torch_train.py
echo "learned-policy run rc=$? policy refusals $(refusals "$W/replay.jsonl")"
$B --mem 8g --sm 50 --audit-log "$W/sm.jsonl" -- python3 tests/gpu/sm_load.py matmul 10 | tail -1
grep '"event":"summary"' "$W/sm.jsonl" | grep -o '"sm".*'
echo "xid lines: $(dmesg 2>/dev/null | grep -ci xid)"
