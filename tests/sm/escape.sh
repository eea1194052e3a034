#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/sm/escape.sh [NAME...] - workloads that try to keep channels out of
# --sm's reach (issue #32, section 2), on the fake driver, each run with its
# defences and as a baseline with them switched off by their test switches
# (GPUSANDBOX_TEST_*, each read once by the supervisor), which must show the
# attack winning. Judged by the FAKE DRIVER's own account of GPU time
# (tests/sm/sm_escape: gpu0.busy_ms against now_ms over MEASURE_MS, one
# client), never by gpusandbox's word:
#   internal-group    a lone channel gets a channel group RM makes itself,
#                     under a handle RM never tells (tests/fakedrv/
#                     fake_chgrp.c); the workload guesses it and makes a
#                     second channel under it. Defended: that channel is
#                     refused (INVALID_OBJECT_PARENT, audited), the share
#                     holds. Baseline (GPUSANDBOX_TEST_CHANNEL_ANY_PARENT):
#                     the channel is made and never switched: the share ~1;
#   internal-resched  the same group found by scheduling guessed handles,
#                     then scheduled every 10 ms, which turns the lone
#                     channel back on. Defended twice: scheduling an object
#                     of no known GPU is refused (INVALID_OBJECT_HANDLE,
#                     audited); with that switched off
#                     (GPUSANDBOX_TEST_RESUME_ANY_OBJECT, -reassert) every
#                     such call is followed by an off pass on every GPU in
#                     an off phase, and the share still holds. Baseline: both
#                     off (and GPUSANDBOX_TEST_SM_REASSERT_KNOWN_GPU);
#   group-churn       a new channel group every 0.4 s, less than the 0.5 s a
#                     new group settles before --sm switches it. Defended:
#                     the settling grace is a budget of off-phase time
#                     (supervisor/compute/sm_controller.h), spent by the
#                     first groups. Baseline (GPUSANDBOX_TEST_SM_SETTLE_UNBOUNDED):
#                     every group settles unswitched: the share ~1.
#   lone-churn        the same with a lone channel every 0.4 s (RM makes its
#                     group; the channel settles from its birth).
# Defended cases must stay within TOL over the cap; baselines must be at
# least BASELINE_MARGIN over it.
# The clock: every case runs on the test's clock (include/test_clock.h;
# tests/sm/run.sh says why), shared by the fake, the supervisor's --sm
# thread (GPUSANDBOX_TEST_SM_CLOCK: the test build) and sm_escape, whose
# churn period, warm-up and measurement are of that clock. The settling
# time and its grace are read on it too: the ledger dates channels and
# groups on the compute share's clock (struct ledger clock_ns, set by
# gs_sm_start to gs_sm_now), so a group made every 400 ms of the clock is
# 100 ms short of its 500 ms settling time whatever the machine's load.
# The bounds, by mechanism: on this clock the share the fake counts is the
# controller's schedule, whose own error is TOL_EXACT of tests/sm/run.sh
# (0.02); the churn cases may add the grace's refill over the cap once
# its budget is spent in the warm-up (1/SM_GRACE_REFILL_DIV, 0.02,
# supervisor/compute/sm_controller.h): TOL = 0.04. A baseline's channels
# are never switched (internal-group; the churns' groups, each replaced
# before it settles) or are back on from the off edge's instant (the
# clock stands at the edge while the duty thread sleeps through the off
# phase in real time, and the workload re-schedules every 10 ms of it,
# so only a re-schedule the machine delayed past a whole off phase loses
# one): 1.000, internal-resched-baseline 0.995-1.000. BASELINE_MARGIN only
# says the attack won by far more than any defended case may stray.
# Six runs beside a CPU hog on two cores (2026-12-02, three before and
# three after the test clock's participant became per session):
# internal-group 0.246-0.250, internal-resched 0.246-0.248, -reassert
# 0.246-0.248, group-churn 0.200-0.206, lone-churn 0.201-0.212 (the
# churns' first groups spent the grace: the loop, which saw 1.0 in its
# first window, is still coming back up to the cap from below); every
# baseline 0.995-1.000.
set -u
cd "$(dirname "$0")/../.." || exit 2

# Every case runs the test build (include/test_switch.h): the test's
# clock is a switch (GPUSANDBOX_TEST_SM_CLOCK), and so are the baselines'.
GPUSANDBOX_SWITCHED=${GPUSANDBOX_SWITCHED:-build/switches/gpusandbox}
WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
PROG=build/tests/sm/sm_escape
FAKE_VIDMEM=16g
LAG_MS=1
SM=25
# The churn's first groups spend the grace (1 s of off-phase time, 1.33 s
# at 25 % of the test's clock): the measurement starts after it. The loop
# recovers from the window that saw them run (1.0, the duty down to its
# floor) from below the cap, so that recovery cannot hide an excess.
WARM_MS=3000
MEASURE_MS=4000
TOL=0.04
BASELINE_MARGIN=0.25
MIN_CHURNS=$(((WARM_MS + MEASURE_MS) / 400 / 2))
REFUSED_PARENT=status:0x36   # NV_ERR_INVALID_OBJECT_PARENT as rmc_status_str prints it
TIMEOUT=${GS_SM_TIMEOUT:-60}

. tests/lib/harness.sh
harness_tmpdir "${GS_SM_KEEP:-}" gs-sm-escape

# name | sm_escape mode | holds (share within TOL of the cap) or wins (at
# least BASELINE_MARGIN over it) | test switches set (defences turned off)
TESTS=(
	"internal-group|internal-group|holds|"
	"internal-group-baseline|internal-group|wins|GPUSANDBOX_TEST_CHANNEL_ANY_PARENT"
	"internal-resched|internal-resched|holds|"
	"internal-resched-reassert|internal-resched|holds|GPUSANDBOX_TEST_RESUME_ANY_OBJECT"
	"internal-resched-baseline|internal-resched|wins|GPUSANDBOX_TEST_RESUME_ANY_OBJECT GPUSANDBOX_TEST_SM_REASSERT_KNOWN_GPU"
	"group-churn|group-churn|holds|"
	"group-churn-baseline|group-churn|wins|GPUSANDBOX_TEST_SM_SETTLE_UNBOUNDED"
	"lone-churn|lone-churn|holds|"
	"lone-churn-baseline|lone-churn|wins|GPUSANDBOX_TEST_SM_SETTLE_UNBOUNDED"
)
# The audited reasons of the two refusals (exec_alloc.c channel_placed,
# exec_control.c resumes_placed_object).
REASON_CHANNEL='"reason":"a channel under a parent the sandbox did not make'
REASON_SCHEDULE='"reason":"scheduling an object the sandbox did not make'

harness_probe_or_skip "$@"

val_of() { grep -oE "(^| )$2=[^ ]*" "$1/out" 2>/dev/null | tail -1 | sed 's/^.*=//'; }
at_most() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# run_case DIR MODE [SWITCH...]: the attack under --sm $SM on the test's
# clock in DIR/clock (the fake's, the supervisor's, the workload's), each
# switch set in the supervisor's environment.
run_case() {
	local d=$1 mode=$2 sw envs=()
	shift 2
	for sw in "$@"; do envs+=("$sw=1"); done
	rm -rf "$d"; mkdir -p "$d"
	: >"$d/clock"
	envs+=("GPUSANDBOX_TEST_SM_CLOCK=$d/clock")
	GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" env "${envs[@]}" "$WITH_FAKE" \
		--vidmem "$FAKE_VIDMEM" --busy-lag-ms "$LAG_MS" --clock "$d/clock" -- \
		"$GPUSANDBOX_SWITCHED" --sm "$SM" --audit-log "$d/audit.jsonl" -- \
		"$PROG" "$mode" "$WARM_MS" "$MEASURE_MS" >"$d/out" 2>"$d/err"
	rc=$?
}

# What makes a run of MODE a real try of its attack: RM's group found and
# used, or every try at it refused (and audited); enough groups re-made.
attack_tried() {
	local d=$1 mode=$2 found churns
	found=$(val_of "$d" found); churns=$(val_of "$d" churns)
	case $mode in
	internal-group)
		[ "$found" != 0 ] || { [ "$(val_of "$d" hidden)" = "$REFUSED_PARENT" ] &&
			grep -q "$REASON_CHANNEL" "$d/audit.jsonl"; } ||
			{ why="no channel under RM's group, and no audited refusal"; return 1; } ;;
	internal-resched)
		[ "$found" != 0 ] || grep -q "$REASON_SCHEDULE" "$d/audit.jsonl" ||
			{ why="RM's group was not scheduled, and no audited refusal"; return 1; } ;;
	group-churn|lone-churn)
		[ "${churns:-0}" -ge "$MIN_CHURNS" ] ||
			{ why="only ${churns:-0} groups re-made, want >= $MIN_CHURNS"; return 1; } ;;
	esac
	return 0
}

# check_case DIR MODE holds|wins SWITCHES
check_case() {
	local d=$1 mode=$2 expect=$3 switches=$4 share bound
	[ "$rc" = 0 ] || { why="exit $rc: $(tail -c 300 "$d/err" | tr '\n' ' ')"; return 1; }
	attack_tried "$d" "$mode" || return 1
	share=$(val_of "$d" share)
	[ -n "$share" ] || { why="no share printed"; return 1; }
	if [ "$expect" = wins ]; then
		bound=$(awk -v s="$SM" -v m="$BASELINE_MARGIN" 'BEGIN { printf "%.3f", s / 100 + m }')
		at_most "$bound" "$share" ||
			{ why="share $share without the defence: the attack did not win (want >= $bound)"; return 1; }
		return 0
	fi
	bound=$(awk -v s="$SM" -v t="$TOL" 'BEGIN { printf "%.3f", s / 100 + t }')
	at_most "$share" "$bound" || { why="share $share over the cap ($bound with the tolerance)"; return 1; }
	# With every defence on, RM's group is never reached at all.
	if [ -z "$switches" ] && [ "${mode#internal-}" != "$mode" ] &&
	   [ "$(val_of "$d" found)" != 0 ]; then
		why="RM's group was reached (found=$(val_of "$d" found))"
		return 1
	fi
	return 0
}

for t in "${TESTS[@]}"; do
	IFS='|' read -r name mode expect switches <<<"$t"
	selected "$name" "$@" || continue
	# shellcheck disable=SC2086 # switches is a word list
	run_case "$tmp/$name" "$mode" $switches
	if check_case "$tmp/$name" "$mode" "$expect" "$switches"; then
		pass "$name (share $(val_of "$tmp/$name" share) under --sm $SM${switches:+ with $switches})"
	else
		fail "$name" "$why"
	fi
done
harness_summary
