# SPDX-License-Identifier: MIT
# Sourced by the GPU tier's checks (from the repository's root). What JAX
# and CuPy programs see at a quota, as small programs for `python3 -c`: out
# of memory for more than the quota, then an allocation that fits.
OOM_JAX='import jax, jax.numpy as jnp
try:
    x = jnp.ones((3 << 30,), dtype=jnp.uint8).block_until_ready(); print("jax no oom")
except Exception as e: print("jax oom:", type(e).__name__, str(e).splitlines()[0][:160])
y = jnp.ones((256 << 20,), dtype=jnp.uint8).block_until_ready(); print("jax recovered", int(y.sum()))'
OOM_CUPY='import cupy as cp
try:
    x = cp.ones((5 << 30,), dtype=cp.uint8); print("cupy no oom")
except cp.cuda.memory.OutOfMemoryError as e: print("cupy oom:", str(e)[:160])
y = cp.ones((1 << 30,), dtype=cp.uint8); print("cupy recovered", int(y.sum()))'

# The 2 MiB cuMemAlloc/cuMemFree pair natively, under $BASE and under $B,
# interleaved for ROUNDS (default 3) rounds: one "pair MODE ..." line each.
pairs_interleaved() {
	local rounds=${1:-3} i mode pre
	nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || return 1
	for i in $(seq "$rounds"); do
		for mode in native base new; do
			pre=""
			[ "$mode" = base ] && pre="$BASE --user root --mem 120g --"
			[ "$mode" = new ] && pre="$B --user root --mem 120g --"
			# shellcheck disable=SC2086 # pre is a command prefix
			echo "pair $mode $(timeout 60 $pre /tmp/bench_memalloc 2 3000)"
		done
	done
}
