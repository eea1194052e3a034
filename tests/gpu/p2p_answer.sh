#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier: --p2p-register answer (issue #16) on the GPU. Prints, never
# asserts; writes $OUT/p2p_answer.txt (one line per run: FIGURE MODE VALUE)
# and a summary at the end.
#
#   OUT=/tmp/gpu-out REPS=5 tests/gpu/p2p_answer.sh
#
#  1. cuMemAlloc + cuMemFree of 2 MiB (bench_memalloc 2 3000), pairs/s,
#     in interleaved rounds: native, sandbox (perform, the default),
#     sandbox --p2p-register answer; the ratios to native [target >= 0.85].
#  2. Under answer: PyTorch training (torch_train.py), CuPy and JAX where
#     installed: each must end with status 0 and print its result.
#  3. The trace of one bench_memalloc pair under each mode: how many
#     REGISTER_VIDMEM/UNREGISTER_VIDMEM were answered without the driver
#     (answer: all; perform: none).
#  4. p2p_tokens: CU_POINTER_ATTRIBUTE_P2P_TOKENS of a cuMemAlloc pointer,
#     native, perform and answer: what a program sees change (the memory
#     itself must work in all three).
# About 2-3 minutes of GPU time with REPS=5 on an H100.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
PY=${PY:-/opt/torch/.venv/bin/python}
[ -x "$PY" ] || PY=python3
REPS=${REPS:-5}
MEMALLOC=/tmp/bench_memalloc
TOKENS=/tmp/p2p_tokens
TXT="$OUT/p2p_answer.txt"
SB=("$B" --mem 120g --)
SB_ANSWER=("$B" --mem 120g --p2p-register answer --)
log() { echo "$*" | tee -a "$TXT"; }
field() { grep -o "$1=[-0-9.e+]*" | head -1 | sed 's/.*=//'; }

: > "$TXT"
log "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) kernel $(uname -r) gpusandbox $(git rev-parse --short HEAD 2>/dev/null)"
nvcc -O2 -o "$MEMALLOC" tests/gpu/bench_memalloc.c -lcuda || exit 1
nvcc -O2 -o "$TOKENS" tests/gpu/p2p_tokens.c -lcuda || exit 1

echo "== 1. 2 MiB pair, $REPS interleaved rounds"
for i in $(seq "$REPS"); do
	log "pair2m native $("$MEMALLOC" 2 3000 | field pairs_per_s)"
	log "pair2m perform $("${SB[@]}" "$MEMALLOC" 2 3000 | field pairs_per_s)"
	log "pair2m answer $("${SB_ANSWER[@]}" "$MEMALLOC" 2 3000 | field pairs_per_s)"
done

echo "== 2. workloads under --p2p-register answer"
workload() { # name cmd...: status and last line
	local name=$1; shift
	"${SB_ANSWER[@]}" "$@" > "$OUT/p2p-$name.out" 2> "$OUT/p2p-$name.err"
	log "workload $name rc=$? $(tail -1 "$OUT/p2p-$name.out" | tr ' ' '_')"
}
workload torch_train "$PY" tests/gpu/torch_train.py
if "$PY" -c 'import cupy' 2>/dev/null; then
	workload cupy "$PY" -c 'import cupy as cp; x = cp.ones((4096, 4096), dtype=cp.float32); print("cupy ok", float((x @ x).sum()))'
else
	log "workload cupy skip (not installed)"
fi
if "$PY" -c 'import jax' 2>/dev/null; then
	XLA_PYTHON_CLIENT_PREALLOCATE=false workload jax "$PY" -c 'import jax.numpy as jnp; x = jnp.ones((4096, 4096)); print("jax ok", float((x @ x).sum()))'
else
	log "workload jax skip (not installed)"
fi

echo "== 3. the registration controls in a trace of one pair"
for mode in perform answer; do
	"$B" --mem 120g --p2p-register "$mode" --trace-output "$OUT/p2p-trace-$mode.txt" -- "$MEMALLOC" 2 1 > /dev/null
	total=$(grep -cE "REGISTER_VIDMEM" "$OUT/p2p-trace-$mode.txt")
	answered=$(grep -cE "REGISTER_VIDMEM.*answered without the driver" "$OUT/p2p-trace-$mode.txt")
	log "trace $mode registration_controls=$total answered=$answered"
done

echo "== 4. CU_POINTER_ATTRIBUTE_P2P_TOKENS"
log "tokens native $("$TOKENS" 2>&1 | tr ' ' ',')"
log "tokens perform $("${SB[@]}" "$TOKENS" 2>&1 | tr ' ' ',')"
log "tokens answer $("${SB_ANSWER[@]}" "$TOKENS" 2>&1 | tr ' ' ',')"

echo "== summary"
"$PY" - "$TXT" <<'PYEOF'
import statistics, sys
pairs, other = {}, []
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    fig, mode, v = (line.split(None, 2) + ["", "", ""])[:3]
    if fig == "pair2m":
        try:
            pairs.setdefault(mode, []).append(float(v))
        except ValueError:
            pass  # a failed run: left out, shown by n
    else:
        other.append(line.rstrip())
med = {m: statistics.median(v) for m, v in pairs.items()}
for mode in ("perform", "answer"):
    if mode in med and med.get("native"):
        print(f"2 MiB pair {mode:8s} {med[mode] / med['native']:.3f} of native (target >= 0.85) "
              f"medians {mode}={med[mode]:.0f} native={med['native']:.0f} pairs/s (n={len(pairs[mode])})")
    else:
        print(f"2 MiB pair {mode:8s} n/a")
for line in other:
    print(line)
PYEOF
