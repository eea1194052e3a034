#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds gs-fakedrv and fake_selftest, runs the self-test under
# with-fake-nvidia, then checks the final stats the runner saved after the
# test process exited. Ends with a line "N passed, M failed"; exits 0 only if
# nothing failed, 125 (skip) when the machine cannot run the fake.
# Usage: run-selftest.sh [--no-build]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2

if [ "${1:-}" != "--no-build" ]; then
	# The fragment also works on its own, before the top Makefile has it.
	make -s -f tests/fakedrv/fakedrv.mk fakedrv || exit 2
fi

out=$(mktemp "${TMPDIR:-/tmp}/gs-fake-selftest.XXXXXX") || exit 2
stats=$(mktemp "${TMPDIR:-/tmp}/gs-fake-stats.XXXXXX") || exit 2
trap 'rm -f "$out" "$stats"' EXIT

GS_FAKE_STATS_OUT=$stats tests/fakedrv/with-fake-nvidia --vidmem 4g --gpus 1 --channels 64 -- \
	tests/fakedrv/fake_selftest >"$out" 2>&1
rc=$?
if [ "$rc" = 125 ]; then
	cat "$out"
	echo "SKIP: the fake driver cannot run here (see above)"
	echo "0 passed, 0 failed"
	exit 125
fi
grep -v 'passed, .* failed$' "$out"
p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$out" | tail -n 1)
f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$out" | tail -n 1)
if [ -z "$p" ]; then
	echo "FAIL - fake_selftest did not finish (exit $rc)"
	p=0 f=1
fi
[ "$rc" = 0 ] || [ "$f" != 0 ] || { echo "FAIL - fake_selftest exited $rc"; f=$((f + 1)); }

# After the test process is gone the fake must hold nothing.
chk() {
	v=$(awk -v k="$1" '$1 == k { print $2 }' "$stats")
	if [ "$v" = "$2" ]; then
		echo "ok - final stats: $1 $2"; p=$((p + 1))
	else
		echo "FAIL - final stats: $1 is '${v}', want $2"; f=$((f + 1))
	fi
}
chk clients_live 0
chk objects_live 0
chk gpu0.vidmem_used 0
chk gpu0.vidmem_peak 4294967296
chk gpu0.channels_live 0
chk files_open 0

echo "$p passed, $f failed"
[ "$f" = 0 ]
