#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier: share_compose_probe natively, under the binary named by BASE
# (build/gpusandbox-static-BASE; before the COMPOSE fix) and under the
# final one; a second client of the workload's process dups memory CUDA
# mapped. Prints what it saw.
set -u
cd "$(dirname "$0")/../.." || exit 2
BASE=${BASE:-base}
nvcc -O2 -Iinclude -Xlinker --export-dynamic -o /tmp/share_compose_probe tests/gpu/share_compose_probe.c -lcuda || exit 1
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "== native"; timeout 60 /tmp/share_compose_probe
echo "== $BASE"; timeout 60 "build/gpusandbox-static-$BASE" --user root --mem 8g -- /tmp/share_compose_probe
echo "== final"; timeout 60 build/gpusandbox-static --user root --mem 8g -- /tmp/share_compose_probe
