#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier: what 2026-12-01's last changes did not run on a GPU, for the
# next session with a device (a few minutes). Prints what it saw.
#  - the UVM map's pin in flight (exec_uvm.c) and our device's instance
#    (own_rm.c): PyTorch, JAX and CuPy out of memory and recovery, and the
#    freed-but-mapped attack's charge;
#  - PyTorch across agent restarts at 3.3 and 7 s (the kept own client);
#  - --gpus and UVM: a hidden GPU's UUID registered with UVM natively and
#    under --gpus naming another GPU (needs two GPUs; said when there is one).
# runc and jq from PATH (carry them: docs/gpu-results/2026-12-01-h200-kept-client).
cd "$(dirname "$0")/../.." || exit 2
set -u
B=${GPUSANDBOX:-build/gpusandbox-static}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) $(uname -r)"
echo "== PyTorch under --mem 4g"
HOLD_S=0 timeout 120 "$B" --user root --mem 4g -- python3 tests/gpu/torch_quota.py | head -1
echo "== the freed-but-mapped attack (uvm_hold.sh: --mem 64g, then 2g)"
GPUSANDBOX="$B" timeout 180 bash tests/gpu/uvm_hold.sh 2>&1 | grep -E '^== |^uvmfree'
. tests/gpu/common.sh
echo "== JAX and CuPy at a quota"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 "$B" --user root --mem 2g -- python3 -c "$OOM_JAX" 2>&1 | grep -v Warning | tail -2
timeout 120 "$B" --user root --mem 4g -- python3 -c "$OOM_CUPY" 2>&1 | grep cupy
for k in 3.3 7; do
	echo "== agent restart after $k s"
	GS=$PWD/$B timeout 120 tests/gpu/agent_container.sh --mem 4g --restart-after "$k" -- python3 tests/gpu/torch_restart.py 2>&1 |
		grep -E 'allocated|resumed|pin\(s\)|records, sealed|problem'
done
echo "== --gpus and UVM_REGISTER_GPU"
nvcc -O2 -Iinclude -o /tmp/uvm_register_probe tests/gpu/uvm_register_probe.c || exit 1
mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
if [ "${#uuids[@]}" -lt 2 ]; then
	echo "one GPU: the hidden-GPU case needs two (skipped)"
else
	echo "native, GPU 1: $(/tmp/uvm_register_probe "${uuids[1]}")"
	echo "--gpus 0, GPU 1: $("$B" --user root --gpus 0 -- /tmp/uvm_register_probe "${uuids[1]}")"
	echo "--gpus 0, GPU 0: $("$B" --user root --gpus 0 -- /tmp/uvm_register_probe "${uuids[0]}")"
fi
echo "== Xid lines since boot: $(dmesg 2>/dev/null | grep -c 'NVRM: Xid')"
