#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/bench/tenantbench.sh - what hostile neighbours cost a container
# under the agent (issue #32): its client allocations (each a search for
# its fd table's sharers) and its 2 MiB pairs (allocate, free), beside 0, 1
# and 8 containers of 2000 idle threads each, with the searches bounded to
# the container's own tasks and, for comparison, walking every task of the
# host (GPUSANDBOX_TEST_QUIESCE_FULL_WALK, as before). Runs
# tests/agent/run.sh's bench-runc case (root, runc, the fake driver).
# Prints one line per run; asserts nothing about time. Not in any tier.
#
#   tests/bench/tenantbench.sh [NEIGHBOURS...]   (default: 0 1 8)
set -u
cd "$(dirname "$0")/../.." || exit 2
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(0 1 8)
for walk in bounded host; do
	for n in "${counts[@]}"; do
		full=
		[ "$walk" = host ] && full=1
		TENANT_BENCH_NEIGHBOURS=$n TENANT_BENCH_FULL_WALK=$full tests/agent/run.sh bench-runc |
			grep -E '^(bench|FAIL)'
	done
done
