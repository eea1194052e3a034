#!/bin/sh
# SPDX-License-Identifier: MIT
# Demo of the main job on the fake NVIDIA driver (no GPU needed; root and
# /dev/fuse are): a static binary issues raw RM_ALLOC ioctls for 256 MiB of
# video memory at a time. Under `gpusandbox --mem 1g` the fifth is refused
# the way a full GPU refuses (NV_ERR_NO_MEMORY), the program frees one and
# allocates again, and the driver's own account never passes 1 GiB.
set -u
cd "$(dirname "$0")/.." || exit 2
./scripts/install-deps.sh || exit 2
make -s -j"$(nproc)" all tests || exit 2
log=${TMPDIR:-/tmp}/gpusandbox-demo.audit.jsonl
stats=${TMPDIR:-/tmp}/gpusandbox-demo.stats
rm -f "$log" "$stats"
echo "+ tests/fakedrv/with-fake-nvidia --vidmem 16g -- build/gpusandbox --mem 1g --trace --audit-log $log -- build/tests/adv/static_raw"
GS_FAKE_STATS_OUT=$stats tests/fakedrv/with-fake-nvidia --vidmem 16g -- \
	build/gpusandbox --mem 1g --trace --audit-log "$log" -- build/tests/adv/static_raw
rc=$?
[ "$rc" -eq 125 ] && { echo "demo: needs root and /dev/fuse for the fake driver" >&2; exit 125; }
echo
echo "The fake driver's own account (not the supervisor's word):"
grep -E '^gpu0\.vidmem_(total|peak|used)' "$stats"
echo
echo "Audit log ($log), decisions that refused or released memory and the summary:"
grep -E '"verdict":"(deny|release)"|"event":"summary"' "$log" | tail -4
exit "$rc"
