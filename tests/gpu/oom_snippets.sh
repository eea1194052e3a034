# SPDX-License-Identifier: MIT
# Sourced by the GPU tier's checks: what JAX and CuPy programs see at a
# quota, as small programs for `python3 -c`: out of memory for more than
# the quota, then an allocation that fits.
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
