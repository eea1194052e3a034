#!/bin/bash
# GPU tier: the managed-memory policy on a real GPU (docs/managed-memory.md).
#   1. host: what UVM grants (pageable access, HMM/ATS module parameters);
#   2. managed memory natively, under the default (allow-unaccounted) and
#      under --managed deny: allocation result, GPU memory taken, audit;
#   3. CUDA without managed memory (cudaMalloc, PyTorch training and
#      inference) under --managed deny: no refusal;
#   4. eviction: a managed hog, then cudaMalloc of more than is left;
#   5. cost: mmap_bench and PyTorch wall time, native / default / deny.
# Needs build/gpusandbox-static (make build/gpusandbox-static). Writes
# $OUT/managed.tar.gz and prints the summary.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/managed-gpu}
R=$OUT/managed
mkdir -p "$R"
GS=build/gpusandbox-static
log() { echo "== $*" | tee -a "$R/summary.txt"; }
{
	date -u; uname -r; head -1 /proc/driver/nvidia/version
	for p in uvm_disable_hmm uvm_enable_va_space_mm uvm_ats_mode; do
		printf '%s=' "$p"; cat /sys/module/nvidia_uvm/parameters/$p 2>&1
	done
	nvidia-smi -q | grep -E "Product Name|Addressing Mode"
} > "$R/host.txt" 2>&1
cat "$R/host.txt" >> "$R/summary.txt"
nvcc -O2 -o /tmp/uvm_probe tests/gpu/uvm_probe.cu >> "$R/build.txt" 2>&1 || { cat "$R/build.txt"; exit 1; }
gcc -O2 -o /tmp/mmap_bench tests/gpu/mmap_bench.c >> "$R/build.txt" 2>&1 || exit 1

run() { # name, then command; output in $R/name.out, status appended
	local name=$1; shift
	local t0 rc
	t0=$(date +%s%N)
	"$@" > "$R/$name.out" 2>&1
	rc=$?
	echo "rc $rc wall_ms $((($(date +%s%N) - t0) / 1000000))" >> "$R/$name.out"
	log "$name: $(grep -E 'alloc|kernel|gpu_free|sum|ok|rc ' "$R/$name.out" | tr '\n' ' ')"
}
refusals() { python3 - "$1" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
start = [r for r in recs if r["event"] == "start"]
ref = [r for r in recs if r["event"] == "decision" and r["verdict"] in ("refuse", "deny")]
print(f"managed={start[0].get('managed') if start else '?'} refusals={len(ref)}",
      " ".join(sorted({f"{r.get('call')}:{r.get('resource', r.get('class', r.get('control', '')))}" for r in ref})))
PY
}

log "managed memory, 4 GiB"
run managed-native /tmp/uvm_probe managed 4096
run managed-default $GS --audit-log "$R/managed-default.jsonl" -- /tmp/uvm_probe managed 4096
log "  audit: $(refusals "$R/managed-default.jsonl")"
run managed-deny $GS --managed deny --audit-log "$R/managed-deny.jsonl" -- /tmp/uvm_probe managed 4096
log "  audit: $(refusals "$R/managed-deny.jsonl")"
grep '"resource":"managed"' "$R/managed-deny.jsonl" | head -2 >> "$R/summary.txt"

log "without managed memory, under --managed deny"
run plain-deny $GS --managed deny --mem 8g --audit-log "$R/plain-deny.jsonl" -- /tmp/uvm_probe plain 4096
log "  audit: $(refusals "$R/plain-deny.jsonl")"
for w in train infer; do
	run torch-$w-deny $GS --managed deny --mem 16g --audit-log "$R/torch-$w-deny.jsonl" -- \
		python3 tests/gpu/torch_$w.py
	log "  audit: $(refusals "$R/torch-$w-deny.jsonl")"
done

log "eviction: 60 GiB managed held, then cudaMalloc of 100 GiB (139 GiB GPU)"
/tmp/uvm_probe managed 61440 25 > "$R/evict-hog.out" 2>&1 &
hog=$!
sleep 12
run evict-plain /tmp/uvm_probe plain 102400
wait $hog; echo "rc $?" >> "$R/evict-hog.out"
log "  hog: $(tr '\n' ' ' < "$R/evict-hog.out")"

log "cost (mmap_bench 200000 pairs; PyTorch training wall time)"
for mode in native default deny; do
	case $mode in
	native) pre=() ;;
	default) pre=($GS --) ;;
	deny) pre=($GS --managed deny --) ;;
	esac
	for i in 1 2 3; do
		"${pre[@]}" /tmp/mmap_bench 200000 > "$R/bench-$mode-$i.out" 2>&1
		log "  mmap_bench $mode #$i: $(tr '\n' ' ' < "$R/bench-$mode-$i.out")"
	done
	for i in 1 2; do
		run torch-time-$mode-$i "${pre[@]}" python3 tests/gpu/torch_train.py
	done
done
tar -C "$OUT" -czf "$OUT/managed.tar.gz" managed
cat "$R/summary.txt"
