#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/audit/bench.sh [PAIRS] [ROUNDS] - the per-call cost of the audit log
# on the fake driver (issue #16): alloc_loop's 2 MiB allocate+free pairs
# (two trapped calls each) bare, under gpusandbox without an audit log, and
# with --audit-log at each --audit-level; prints the median ns per pair of
# ROUNDS runs, the records written, and the cost over gpusandbox without a
# log. A benchmark: it prints figures and asserts nothing about time (the
# fake's own FUSE round trips dominate; compare the rows, not the numbers
# with a GPU's). Not part of the suite.
set -u
cd "$(dirname "$0")/../.." || exit 2
PAIRS=${1:-3000}
ROUNDS=${2:-5}
B=build/gpusandbox
F=tests/fakedrv/with-fake-nvidia
LOOP=build/tests/audit/alloc_loop
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-bench.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

NAMES=(bare no-log audit-refusals audit-standard audit-all)
# The command before the loop, per configuration.
config() {
	case $1 in
	bare) echo env ;;
	no-log) echo "$B --user root --" ;;
	audit-*) echo "$B --user root --audit-level ${1#audit-} --audit-log $T/$1.jsonl --" ;;
	esac
}

# Rounds outer, configurations inner: a machine's load drifts over all of
# them alike rather than over one.
for ((r = 0; r < ROUNDS; r++)); do
	for name in "${NAMES[@]}"; do
		rm -f "$T/$name.jsonl"
		# shellcheck disable=SC2046 # config's words are the command
		"$F" --vidmem 16g -- $(config "$name") "$LOOP" "$PAIRS" 2>/dev/null |
			sed -n 's/.*ns_per_pair=\([0-9]*\).*/\1/p' >>"$T/$name.ns"
	done
done

echo "alloc_loop $PAIRS pairs of 2 MiB, median of $ROUNDS interleaved runs (fake driver)"
declare -A ns
for name in "${NAMES[@]}"; do
	ns[$name]=$(median <"$T/$name.ns")
	records=-
	[ -f "$T/$name.jsonl" ] && records=$(wc -l <"$T/$name.jsonl")
	printf '%-16s %10s ns/pair  %6s records\n' "$name" "${ns[$name]}" "$records"
done
for name in audit-refusals audit-standard audit-all; do
	awk -v a="${ns[$name]}" -v b="${ns[no-log]}" -v l="$name" \
		'BEGIN { printf "%-16s %+10.0f ns/pair over no-log (%+.1f%%)\n", l, a - b, 100 * (a - b) / b }'
done
