#!/bin/bash
# GPU tier: what a reviewer sees after a PyTorch out-of-memory retry loop:
# the refusal line at exit, outcomes, one suppressed record, labels, the
# owner of memory released at exit, and the chain verifying.
set -u
cp build/gpusandbox-static /tmp/gs
echo "== PyTorch retry loop under --mem 4g: the exit line, outcome, suppressed, FILE_CLOSE owner"
/tmp/gs --user root --mem 4g --label team=ml --audit-log $OUT/retry.jsonl -- python3 -c '
import torch
x = torch.empty(3 << 30, dtype=torch.uint8, device="cuda")
n = 0
for i in range(50):
    try:
        torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); 
    except torch.OutOfMemoryError:
        n += 1
print("ooms", n)' 2>&1 | grep -v "sealed:"
python3 - $OUT/retry.jsonl <<'PY'
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1])]
print("records", len(recs), collections.Counter(r["event"] for r in recs))
print("outcomes", collections.Counter(r.get("outcome") for r in recs if r["event"] == "decision"))
print("suppressed", [r.get("count") for r in recs if r["event"] == "suppressed"])
print("start labels", recs[0].get("labels"), "policy mem", recs[0].get("policy", {}).get("mem"))
print("file_close", [(r.get("pid"), r.get("comm")) for r in recs if r.get("call") == "FILE_CLOSE"])
PY
/tmp/gs audit verify $OUT/retry.jsonl | tail -1
