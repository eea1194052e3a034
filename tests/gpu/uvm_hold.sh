#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue #17 item 9 on a real GPU: after a raw RM_FREE of a cuMemAlloc'd
# handle that UVM still maps (UVM_MAP_EXTERNAL_ALLOCATION), does the GPU
# keep the memory, and what do gpusandbox's ledger and the driver's
# per-process account say? tests/gpu/held_after_free.cu's `uvmfree` mode,
# 4 x 1 GiB, under gpusandbox --mem 64g (the quota does not bind) and
# --mem 2g (the attack: more than 2 GiB held?). Judged by the driver's own
# device-wide memory.used (nvidia-smi, sampled every 100 ms from outside);
# the per-process figure is nvidia-smi's used_memory for the workload's pid
# (RM's GET_PID_INFO, which counts memory by the owning client).
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
# Who the workload runs as, and how the maps are made: GS_IDENTITY, e.g.
# "--user 47011 --group 47011 --uvm-map as-user" (default: --user root).
read -r -a IDENT <<<"${GS_IDENTITY:---user root}"
P=build/held_after_free
nvcc -O2 -o $P tests/gpu/held_after_free.cu -lcuda || exit 1
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
apps() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | tr '\n' ';'; }
for mem in 64g 2g; do
	tag=uvmfree-gs$mem
	base=$(used)
	GS_TRACE_FILE=$OUT/$tag.trace HOLD_S=4 $B "${IDENT[@]}" --mem $mem --trace --trace-output "$OUT/$tag.trace" \
		--audit-log "$OUT/$tag.jsonl" -- $P uvmfree 4 >"$OUT/$tag.out" 2>&1 &
	pid=$!
	peak=0; last_apps=""
	while kill -0 $pid 2>/dev/null; do
		u=$(used); [ "$u" -gt "$peak" ] && peak=$u
		a=$(apps); [ -n "$a" ] && last_apps=$a
		sleep 0.1
	done
	wait $pid; rc=$?
	echo "== $tag rc=$rc peak_above_idle_MiB=$((peak - base)) per_process_last=[$last_apps]"
	grep -E '^(uvmfree|step)' "$OUT/$tag.out" | tr '\n' ' '; echo
	grep -c 'RM_FREE' "$OUT/$tag.trace" | sed 's/^/trace RM_FREE lines: /'
	grep 'size=1073741824' "$OUT/$tag.trace" | tail -3 | cut -c1-260
	tail -n 2 "$OUT/$tag.jsonl" | head -1 | cut -c1-300
done
