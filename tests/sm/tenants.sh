#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/sm/tenants.sh DIR SPEC... - run several sandboxes at once on the
# fake driver's one GPU (called by tests/sm/multi.sh under one
# with-fake-nvidia, so that they share the fake's busy model). Each SPEC is
#   NAME:PCT:MODE:START_MS:WARM_MS:MEASURE_MS:IDLE_AT_MS:KILL_AT_MS[:WORKLOAD]
# (IDLE_AT_MS and KILL_AT_MS: - for none). The sandbox starts START_MS after
# the first, runs build/tests/sm/sm_workload WORKLOAD (default tenant; a
# fighting one: tenant-reschedule, tenant-churn) WARM_MS MEASURE_MS
# [IDLE_AT_MS], and its supervisor is killed with SIGKILL at KILL_AT_MS
# after its start (the coordinator's host dying). PCT - runs the workload
# with no gpusandbox at all (a baseline). Writes DIR/NAME.out, .err,
# .audit.jsonl and .rc.
set -u
cd "$(dirname "$0")/../.." || exit 2
GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
PROG=build/tests/sm/sm_workload
dir=$1; shift

run_one() {
	local name=$1 pct=$2 mode=$3 start=$4 warm=$5 measure=$6 idle=$7 kill_at=$8 workload=${9:-tenant}
	local args=("$workload" "$warm" "$measure") sandbox=()
	[ "$idle" != - ] && args+=("$idle")
	[ "$pct" != - ] && sandbox=("$GPUSANDBOX" --sm "$pct" --sm-mode "$mode" --user root
	                            --audit-log "$dir/$name.audit.jsonl" --)
	sleep "$(awk -v m="$start" 'BEGIN { printf "%.3f", m / 1000 }')"
	${sandbox[@]+"${sandbox[@]}"} "$PROG" "${args[@]}" >"$dir/$name.out" 2>"$dir/$name.err" &
	local pid=$!
	if [ "$kill_at" != - ]; then
		sleep "$(awk -v m="$kill_at" 'BEGIN { printf "%.3f", m / 1000 }')"
		kill -KILL "$pid" 2>/dev/null
		echo "killed" >"$dir/$name.killed"
	fi
	wait "$pid"
	echo $? >"$dir/$name.rc"
}

for spec in "$@"; do
	IFS=: read -r name pct mode start warm measure idle kill_at workload <<<"$spec"
	run_one "$name" "$pct" "$mode" "$start" "$warm" "$measure" "$idle" "$kill_at" "$workload" &
done
wait
