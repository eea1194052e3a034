#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier, 2026-11-29 session: (1) the item-9 design probe
# (uvm_perform_probe.cu: can the supervisor perform a workload's UVM
# external mapping itself?), as root and as an unprivileged user; (2) the
# 2 MiB cuMemAlloc/cuMemFree pair natively, under the binary before the
# mm-bound write-back (GPUSANDBOX_BASE) and under the new one (GPUSANDBOX),
# interleaved in one run, so that the write-back's cost is a ratio measured
# side by side. Prints what it saw; logs under $OUT.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
BASE=${GPUSANDBOX_BASE:-build/gpusandbox-static-base}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
echo "== uvm_perform_probe"
nvcc -O2 -Iinclude -Xlinker --export-dynamic -o /tmp/uvm_perform_probe tests/gpu/uvm_perform_probe.c -lcuda || exit 1
timeout 60 /tmp/uvm_perform_probe 2>&1
[ -n "${PROBE_ONLY:-}" ] && exit 0
echo "== 2 MiB pairs: native, base ($($BASE --version | head -1)), new ($($B --version | head -1))"
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
for i in 1 2 3 4 5; do
	for mode in native base new; do
		pre=""
		[ "$mode" = base ] && pre="$BASE --user root --mem 120g --"
		[ "$mode" = new ] && pre="$B --user root --mem 120g --"
		echo "pair $mode $($pre /tmp/bench_memalloc 2 3000)"
	done
done
