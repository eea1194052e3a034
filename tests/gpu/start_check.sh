#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier, issue #16: PyTorch's start (its first tensor) natively, under
# GPUSANDBOX_BASE, GPUSANDBOX_PREV and GPUSANDBOX, interleaved rounds,
# with each sandboxed binary's profile of the quiesces; then PyTorch, JAX
# and CuPy under the new binary (its filter answers clone3 with ENOSYS:
# their threads must still start). Prints what it saw.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${GPUSANDBOX:-build/gpusandbox-static}
PREV=${GPUSANDBOX_PREV:-build/gpusandbox-static-prev}
BASE=${GPUSANDBOX_BASE:-build/gpusandbox-static-base}
ROUNDS=${ROUNDS:-5}
INIT='import time, torch
t = time.time(); torch.zeros(1, device="cuda"); torch.cuda.synchronize(); print("%.3f" % (time.time() - t))'
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "== PyTorch start (first tensor), s: native, base, prev, new; $ROUNDS rounds"
for i in $(seq "$ROUNDS"); do
	n=$(python3 -c "$INIT" 2>/dev/null)
	b=$(timeout 60 "$BASE" --user root --mem 16g -- python3 -c "$INIT" 2>/dev/null)
	p=$(timeout 60 "$PREV" --user root --mem 16g -- python3 -c "$INIT" 2>/dev/null)
	w=$(timeout 60 "$B" --user root --mem 16g -- python3 -c "$INIT" 2>/dev/null)
	echo "init native $n base $b prev $p new $w"
done
for bin in "$PREV" "$B"; do
	echo "== profile of $bin at PyTorch's start"
	GPUSANDBOX_PROFILE=1 timeout 60 "$bin" --user root --mem 16g -- python3 -c "$INIT" 2>&1 | grep -E 'quiesce|uvm channels'
done
echo "== PyTorch, JAX, CuPy under the new binary"
timeout 120 "$B" --user root --mem 8g -- python3 -c 'import torch, threading
x = torch.randn(2048, 2048, device="cuda"); y = (x @ x).sum().item()
ts = [threading.Thread(target=lambda: torch.ones(1, device="cuda").sum().item()) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]; print("torch ok", torch.get_num_threads())'
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 "$B" --user root --mem 8g -- python3 -c 'import jax.numpy as jnp; print("jax ok", float(jnp.ones(1024).sum()))' 2>&1 | grep -v Warning | tail -1
timeout 120 "$B" --user root --mem 8g -- python3 -c 'import cupy as cp; print("cupy ok", int(cp.ones(1024).sum()))' 2>&1 | tail -1
