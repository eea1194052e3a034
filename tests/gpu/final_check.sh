#!/bin/bash
# GPU tier: a last check of a build on the device. PyTorch training under
# the default policy with --learn, the learned file used as the policy,
# and a short --sm 50 run. Prints what it saw.
set -u
B=${GPUSANDBOX:-build/gpusandbox-static}
W=$(mktemp -d)
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
TRAIN='import torch
m = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.AdamW(m.parameters())
for _ in range(20):
    x = torch.randn(256, 4096, device="cuda"); y = torch.randint(0, 10, (256,), device="cuda")
    loss = torch.nn.functional.cross_entropy(m(x), y); opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.synchronize(); print("train ok", float(loss) > 0)'
refusals() { grep -cE '"reason":"((class|control) (not allowed by the policy|unknown to gpusandbox)|escape unknown)' "$1"; }
$B --mem 8g --learn "$W/learned.policy" --audit-log "$W/learn.jsonl" -- python3 -c "$TRAIN"
echo "learn run rc=$? policy refusals $(refusals "$W/learn.jsonl") learned entries: $(grep -c '^allow\.' "$W/learned.policy")"
grep -v '^#' "$W/learned.policy" | grep . | head -20
$B --policy "$W/learned.policy" --audit-log "$W/replay.jsonl" -- python3 -c "$TRAIN"
echo "learned-policy run rc=$? policy refusals $(refusals "$W/replay.jsonl")"
$B --mem 8g --sm 50 --audit-log "$W/sm.jsonl" -- python3 tests/gpu/sm_load.py matmul 10 | tail -1
grep '"event":"summary"' "$W/sm.jsonl" | grep -o '"sm".*'
echo "xid lines: $(dmesg 2>/dev/null | grep -ci xid)"
