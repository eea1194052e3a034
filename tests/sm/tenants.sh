#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/sm/tenants.sh DIR SPEC... - run several sandboxes at once on the
# fake driver's one GPU (called by tests/sm/multi.sh under one
# with-fake-nvidia, so that they share the fake's busy model). Each SPEC is
#   NAME:PCT:MODE:START_MS:WARM_MS:MEASURE_MS:IDLE_AT_MS:KILL_AT_MS
# (IDLE_AT_MS and KILL_AT_MS: - for none). The sandbox starts START_MS after
# the first, runs build/tests/sm/sm_workload tenant WARM_MS MEASURE_MS
# [IDLE_AT_MS], and its supervisor is killed with SIGKILL at KILL_AT_MS
# after its start (the coordinator's host dying). Writes DIR/NAME.out,
# .err, .audit.jsonl and .rc.
set -u
cd "$(dirname "$0")/../.." || exit 2
GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
PROG=build/tests/sm/sm_workload
dir=$1; shift

run_one() {
	local name=$1 pct=$2 mode=$3 start=$4 warm=$5 measure=$6 idle=$7 kill_at=$8
	local args=("$warm" "$measure")
	[ "$idle" != - ] && args+=("$idle")
	sleep "$(awk -v m="$start" 'BEGIN { printf "%.3f", m / 1000 }')"
	"$GPUSANDBOX" --sm "$pct" --sm-mode "$mode" --user root --audit-log "$dir/$name.audit.jsonl" -- \
		"$PROG" tenant "${args[@]}" >"$dir/$name.out" 2>"$dir/$name.err" &
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
	IFS=: read -r name pct mode start warm measure idle kill_at <<<"$spec"
	run_one "$name" "$pct" "$mode" "$start" "$warm" "$measure" "$idle" "$kill_at" &
done
wait
