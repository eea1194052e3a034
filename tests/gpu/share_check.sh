#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier: share_compose_probe natively, under the binary named by BASE
# (build/gpusandbox-static-BASE; before the COMPOSE fix) and under the
# final one; a second client of the workload's process dups memory CUDA
# mapped; then share_revoke_probe natively: the share, its use from
# another process's client, its revoke and the default policy kept, on the
# driver itself. Prints what it saw.
set -u
cd "$(dirname "$0")/../.." || exit 2
BASE=${BASE:-base}
for p in share_compose_probe share_revoke_probe; do
	nvcc -O2 -Iinclude -Xlinker --export-dynamic -o "/tmp/$p" "tests/gpu/$p.c" -lcuda || exit 1
done
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "== native"; timeout 60 /tmp/share_compose_probe
echo "== $BASE"; timeout 60 "build/gpusandbox-static-$BASE" --user root --mem 8g -- /tmp/share_compose_probe
echo "== final"; timeout 60 build/gpusandbox-static --user root --mem 8g -- /tmp/share_compose_probe
echo "== share_revoke_probe (native)"; timeout 60 /tmp/share_revoke_probe
