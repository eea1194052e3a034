#!/bin/bash
# GPU tier: where the supervisor's time goes (GPUSANDBOX_PROFILE=1).
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
for what in "python3 tests/gpu/bench_torch.py init" "/tmp/bench_memalloc 2 3000"; do
	echo "## $what" | tee -a "$OUT/profile.txt"
	GPUSANDBOX_PROFILE=1 $B --mem 120g -- $what >>"$OUT/profile.txt" 2>&1
done
cat "$OUT/profile.txt"
