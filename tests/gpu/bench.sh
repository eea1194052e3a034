#!/bin/bash
# GPU tier: overhead of gpusandbox against native, measured in one session,
# runs interleaved (native, sandboxed, native, ...). Writes $OUT/bench.txt.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
SB="$B --mem 120g --"
REPS=${REPS:-5}
log() { echo "$*" | tee -a "$OUT/bench.txt"; }
: > "$OUT/bench.txt"
log "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
for i in $(seq "$REPS"); do
	for mode in native sandbox; do
		pre=""; [ "$mode" = sandbox ] && pre=$SB
		log "trap $mode $($pre build/bench_trap 20000 | tr '\n' ' ')"
		log "init $mode $($pre python3 tests/gpu/bench_torch.py init)"
		for mib in 2 256; do
			log "memalloc $mode $($pre /tmp/bench_memalloc $mib $([ $mib = 2 ] && echo 3000 || echo 1000))"
		done
		log "fill $mode $(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $pre python3 tests/gpu/bench_torch.py fill)"
	done
done
for i in 1 2; do
	for mode in native sandbox; do
		pre=""; [ "$mode" = sandbox ] && pre=$SB
		log "matmul $mode $($pre python3 tests/gpu/bench_torch.py matmul)"
	done
done
