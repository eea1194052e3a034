#!/bin/bash
# Issue #17 items 3, 9, 13 on a real GPU: does memory stay on the GPU after
# the handle a quota counted is freed, natively and under gpusandbox --mem 2g?
# Judged by the driver's own figure, nvidia-smi memory.used sampled from
# outside every 100 ms (the device-wide peak minus the idle baseline).
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
P=build/held_after_free
nvcc -O2 -o $P tests/gpu/held_after_free.cu -lcuda || exit 1
{ date -u +%FT%TZ; uname -r; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } | tee "$OUT/env.txt"
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
measure() { # label cmd...: prints the program's steps and the device-wide peak above idle
	local label=$1; shift
	local base peak=0 u
	base=$(used)
	"$@" > "$OUT/$label.out" 2>&1 &
	local pid=$!
	while kill -0 $pid 2>/dev/null; do u=$(used); [ "$u" -gt "$peak" ] && peak=$u; sleep 0.1; done
	wait $pid; local rc=$?
	echo "== $label rc=$rc peak_above_idle_MiB=$((peak - base)) ok_steps=$(grep -c ' ok ' "$OUT/$label.out") fail_steps=$(grep -c ' fail ' "$OUT/$label.out")"
	grep -v '^step .* ok' "$OUT/$label.out" | head -5
}
for mode in vmm export dmabuf; do
	measure "$mode-native" $P $mode 4
	measure "$mode-gs2g" $B --mem 2g --audit-log "$OUT/$mode-gs2g.jsonl" -- $P $mode 4
	tail -1 "$OUT/$mode-gs2g.jsonl" | cut -c1-400
done
measure ctx-native $P ctx 8
measure ctx-gs64g $B --mem 64g --audit-log "$OUT/ctx-gs64g.jsonl" -- $P ctx 8
tail -1 "$OUT/ctx-gs64g.jsonl" | cut -c1-400
