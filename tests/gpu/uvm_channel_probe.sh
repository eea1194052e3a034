#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier, issue #17 item 4, on the real driver: CUDA's channel groups
# freed behind CUDA's back while UVM has their channels registered
# (tsg_free_probe.c), natively, under GPUSANDBOX_BASE (the binary before)
# and under GPUSANDBOX (this one), with the device's memory.used read
# outside the sandbox at each stage; then this binary's profile (its
# unregisters UVM answered NV_OK: registrations still there after the
# frees). Prints what it saw.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${GPUSANDBOX:-build/gpusandbox-static}
BASE=${GPUSANDBOX_BASE:-build/gpusandbox-static-base}
nvcc -Iinclude -o /tmp/tsg_free_probe tests/gpu/tsg_free_probe.c -lcuda -Xlinker -export-dynamic || exit 1
# Runs the probe under the given prefix, answering its stages with the
# device's memory.used.
probe() {
	local d
	d=$(mktemp -d)
	(
		for s in before with_ctx after_free; do
			for _ in $(seq 200); do [ -e "$d/$s" ] && break; sleep 0.05; done
			nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 >"$d/$s.tmp" &&
				mv "$d/$s.tmp" "$d/$s.mib"
		done
	) &
	timeout 60 "$@" /tmp/tsg_free_probe "$d" 2>&1 | grep -E 'probe|uvm channels|gpusandbox: [0-9]+ calls refused'
	wait
	rm -rf "$d"
}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for i in 1 2; do
	echo "== round $i: native"; probe env
	echo "== round $i: base"; probe "$BASE" --user root --mem 8g --
	echo "== round $i: new"; probe env GPUSANDBOX_PROFILE=1 "$B" --user root --mem 8g --
done
