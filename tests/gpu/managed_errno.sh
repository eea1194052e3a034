#!/bin/bash
# GPU tier (research for docs/managed-memory.md): which CUDA error each
# errno from the managed-range mmap turns into, whether the context stays
# usable, what --managed deny gives, and eviction with a checked pattern.
# Needs build/gpusandbox-static. Prints its results.
set -u
cd "$(dirname "$0")/../.." || exit 2
nvcc -O2 -o /tmp/uvm_probe tests/gpu/uvm_probe.cu || exit 1
gcc -O2 -shared -fPIC -o /tmp/uvm_mmap_fail.so tests/gpu/uvm_mmap_fail.c -ldl || exit 1
for e in 12 1 13 22 11 19; do
	echo "== errno $e: $(UVM_FAIL_ERRNO=$e LD_PRELOAD=/tmp/uvm_mmap_fail.so /tmp/uvm_probe managed 1024 2>&1 |
		grep -E 'alloc|after_refusal' | tr '\n' ' ')"
done
echo "== --managed deny: $(build/gpusandbox-static --managed deny -- /tmp/uvm_probe managed 1024 2>&1 |
	grep -E 'alloc|after_refusal' | tr '\n' ' ')"
echo "== eviction: 60 GiB managed written by a kernel and held 25 s; cudaMalloc 100 GiB at 12 s"
/tmp/uvm_probe managed 61440 25 > /tmp/hog.out 2>&1 &
hog=$!
sleep 12
echo "plain: $(/tmp/uvm_probe plain 102400 2>&1 | tr '\n' ' ')"
wait $hog
echo "hog (rc $?): $(tr '\n' ' ' < /tmp/hog.out)"
