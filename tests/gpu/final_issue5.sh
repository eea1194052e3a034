#!/bin/bash
# GPU tier, issue 5 close-out with one binary: the NVJPG engine quota
# (nvjpg_quota.sh), and PyTorch training and inference under the default
# policy with --active-channel-groups and --managed deny (0 refusals
# expected). Needs build/gpusandbox-static. Writes $OUT/final.tar.gz.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/final-issue5}
mkdir -p "$OUT/nvjpg" "$OUT/torch"
OUT=$OUT/nvjpg bash tests/gpu/nvjpg_quota.sh > "$OUT/nvjpg/summary.txt" 2>&1
{
	date -u; head -1 /proc/driver/nvidia/version; nvidia-smi --query-gpu=name --format=csv,noheader
	for w in train infer; do
		build/gpusandbox-static --active-channel-groups 8 --managed deny --mem 16g \
			--audit-log "$OUT/torch/$w.jsonl" -- python3 tests/gpu/torch_$w.py > "$OUT/torch/$w.out" 2>&1
		echo "$w rc $? $(tail -1 "$OUT/torch/$w.out") refusals=$(grep -c '"verdict":"\(refuse\|deny\)"' "$OUT/torch/$w.jsonl")"
	done
} > "$OUT/torch/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/final.tar.gz" nvjpg torch
cat "$OUT/nvjpg/summary.txt" "$OUT/torch/summary.txt" | cut -c1-400
