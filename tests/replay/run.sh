#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/replay/run.sh [NAME...] - replay real H200 RM traces against the fake
# driver, with and without gpusandbox.
#
# Traces: tests/replay/traces (measured on an H200; see its README.md for
# provenance and the line format). GS_TRACES=DIR replays another copy.
# Checks, all from the FAKE DRIVER's final stats plus build/tests/replay/
# replay's counts:
#   replay-bare:*     without gpusandbox, every class-0x40 allocation of the
#                     trace succeeds, no other allocation fails, and the
#                     driver's vidmem peak equals what the trace implies.
#   replay-sandbox:*  the same under `gpusandbox --mem 4g`, where the quota
#                     does not bind (the trace's peak is below 4 GiB).
#   replay-quota:pytorch-4g  h200-580-pytorch-4g-quota.trace under
#                     `gpusandbox --mem 4g`: driver peak <= 4 GiB, every
#                     allocation the trace marks DENY comes back as
#                     NV_ERR_NO_MEMORY (0x51), no other one is refused, and
#                     the peak equals what the trace implies.
#   baseline-quota:pytorch-4g  the same trace without gpusandbox must take
#                     the driver over 4 GiB (the quota is what stops it).
#
# Builds nothing (run `make` first). Prints PASS/FAIL/SKIP per test and
# `N passed, M failed`; exit 1 on failure. Environment: GPUSANDBOX, WITH_FAKE,
# GS_TRACES, GS_REPLAY_TIMEOUT (default 120), GS_REPLAY_KEEP=DIR.
set -u

cd "$(dirname "$0")/../.." || exit 2

GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
REPLAY=build/tests/replay/replay
TRACES=${GS_TRACES:-tests/replay/traces}
SIZES_DIR=tests/replay
TIMEOUT=${GS_REPLAY_TIMEOUT:-120}
FAKE_VIDMEM=16g
QUOTA_ARG=4g
GIB=$((1 << 30))
QUOTA=$((4 * GIB))

. tests/lib/harness.sh
harness_tmpdir "${GS_REPLAY_KEEP:-}" gs-replay

# name | mode (bare|sandbox) | trace file (without .trace)
TESTS=(
	"replay-bare:pytorch|bare|h200-580-pytorch"
	"replay-bare:cuda-driver-api|bare|h200-580-cuda-driver-api"
	"replay-sandbox:pytorch|sandbox|h200-580-pytorch"
	"replay-sandbox:cuda-driver-api|sandbox|h200-580-cuda-driver-api"
	"replay-quota:pytorch-4g|sandbox|h200-580-pytorch-4g-quota"
	"baseline-quota:pytorch-4g|bare|h200-580-pytorch-4g-quota"
	"replay-policy:pytorch-training|sandbox|h200-580-pytorch|pytorch-training"
	"replay-policy:inference-server|sandbox|h200-580-pytorch|inference-server"
	"replay-policy:inference-server-driver-api|sandbox|h200-580-cuda-driver-api|inference-server"
	"replay-policy:video-transcode|sandbox|h200-580-cuda-driver-api|video-transcode"
)



harness_probe_or_skip "$@"

val_of() { grep -oE "(^| )$2=[^ ]*" "$1/out" 2>/dev/null | tail -1 | sed 's/^.*=//'; }
gib() { awk -v b="$1" 'BEGIN { printf "%.3f GiB", b / 1073741824 }'; }

run_replay() {
	local name=$1 mode=$2 trace=$3 policy=$4 d sizes=() limits=(--mem "$QUOTA_ARG")
	d="$tmp/${name//:/_}"
	rm -rf "$d"
	mkdir -p "$d"
	[ -f "$SIZES_DIR/$trace.sizes" ] && sizes=(--sizes "$SIZES_DIR/$trace.sizes")
	# An example policy brings its own limits.
	[ -n "$policy" ] && limits=(--policy "policy/$policy.policy")
	if [ "$mode" = sandbox ]; then
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
			"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- \
			"$GPUSANDBOX" "${limits[@]}" --audit-log "$d/audit.jsonl" -- \
			"$REPLAY" "${sizes[@]}" "$TRACES/$trace.trace" >"$d/out" 2>"$d/err"
	else
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
			"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- \
			"$REPLAY" "${sizes[@]}" "$TRACES/$trace.trace" >"$d/out" 2>"$d/err"
	fi
	rc=$?
	dir=$d
}

# Checks shared by every run; set $why and return 1 on failure.
check_ran() {
	local d=$1
	if [ "$rc" != 0 ]; then
		why="exit status $rc: $(tail -c 300 "$d/err" | tr '\n' ' ')"
		return 1
	fi
	peak=$(stat_of "$d" gpu0.vidmem_peak)
	expected=$(val_of "$d" expected_peak)
	if [ -z "$peak" ] || [ -z "$expected" ]; then
		why="missing driver stats or replay output"
		return 1
	fi
	return 0
}

# Under gpusandbox, the policy refused nothing the traced program did.
# On another branch (GS_FAKE_DRIVER_VERSION), a control that branch's tables
# have no row for is refused as "unknown to gpusandbox" (#11: never passed
# flat): the 580 traces send opaque GSP controls and controls newer than
# the branch. Those, and only those, are tolerated there, and listed.
check_no_policy_refusal() {
	local d=$1 refusals n unknown
	[ -f "$d/audit.jsonl" ] || return 0
	refusals=$(grep -E '"reason":"(class|control) (not allowed by the policy|unknown to gpusandbox)"|"reason":"escape unknown' "$d/audit.jsonl")
	if [ -n "${GS_FAKE_DRIVER_VERSION:-}" ] && [ "${GS_FAKE_DRIVER_VERSION%%.*}" != 580 ]; then
		unknown=$(printf '%s\n' "$refusals" | grep '"reason":"control unknown to gpusandbox"' |
			grep -oE '"control":"[^"]*"' | sort -u | cut -d'"' -f4 | tr '\n' ' ')
		[ -n "$unknown" ] && echo "  [${GS_FAKE_DRIVER_VERSION}] $(basename "$d"): refused as unknown on this branch: $unknown"
		refusals=$(printf '%s\n' "$refusals" | grep -v '"reason":"control unknown to gpusandbox"')
	fi
	n=$(printf '%s' "$refusals" | grep -c .)
	if [ "$n" != 0 ]; then
		why="$n policy refusals: $(printf '%s\n' "$refusals" | grep -m3 -oE '"(class|control)":"[^"]*"' | tr '\n' ' ')"
		return 1
	fi
	return 0
}

# Every allocation the trace made (apart from DENY'd ones) succeeded and the
# driver's peak is exactly the trace's.
check_faithful() {
	local d=$1 va vo de fa un
	check_no_policy_refusal "$d" || return 1
	va=$(val_of "$d" vidmem_allocs); vo=$(val_of "$d" vidmem_ok)
	de=$(val_of "$d" denied_expected); fa=$(val_of "$d" allocs_failed)
	un=$(val_of "$d" unexpected_nomem)
	if [ "$va" -eq 0 ]; then
		why="trace has no vidmem allocations"
		return 1
	fi
	if [ "$vo" -ne $((va - de)) ] || [ "$un" != 0 ]; then
		why="vidmem allocations ok $vo of $((va - de)), unexpected NO_MEMORY $un"
		return 1
	fi
	if [ "$fa" != 0 ]; then
		why="$fa allocations failed: $(grep -m3 'replay: alloc' "$d/err" | tr '\n' ';')"
		return 1
	fi
	if [ "$peak" != "$expected" ]; then
		why="driver peak $(gib "$peak") ($peak), trace implies $(gib "$expected") ($expected)"
		return 1
	fi
	return 0
}

have_sandbox=1
[ -x "$GPUSANDBOX" ] || have_sandbox=0

for t in "${TESTS[@]}"; do
	IFS='|' read -r name mode trace policy <<<"$t"
	selected "$name" "$@" || continue
	why=
	if [ ! -x "$REPLAY" ]; then
		fail "$name" "$REPLAY not built (run make)"
		continue
	fi
	if [ ! -r "$TRACES/$trace.trace" ]; then
		fail "$name" "trace $TRACES/$trace.trace not found (the repository ships it in tests/replay/traces)"
		continue
	fi
	if [ "$mode" = sandbox ] && [ "$have_sandbox" = 0 ]; then
		fail "$name" "$GPUSANDBOX not built (run make)"
		continue
	fi
	run_replay "$name" "$mode" "$trace" "$policy"
	if ! check_ran "$dir"; then
		fail "$name" "$why"
		continue
	fi
	case "$name" in
	replay-bare:* | replay-sandbox:* | replay-policy:*)
		if [ "$(val_of "$dir" denied_expected)" != 0 ]; then
			fail "$name" "trace has DENY lines; use it as a quota test"
		elif [ "$mode" = sandbox ] && [ -z "$policy" ] && [ "$expected" -gt "$QUOTA" ]; then
			fail "$name" "trace peak $(gib "$expected") exceeds the --mem $QUOTA_ARG of this test"
		elif check_faithful "$dir"; then
			pass "$name"
		else
			fail "$name" "$why"
		fi ;;
	replay-quota:*)
		de=$(val_of "$dir" denied_expected); dn=$(val_of "$dir" denied_nomem)
		if [ "$peak" -gt "$QUOTA" ]; then
			fail "$name" "driver peak $(gib "$peak") > quota $QUOTA_ARG"
		elif [ "$de" -eq 0 ]; then
			fail "$name" "trace has no DENY lines: nothing was refused"
		elif [ "$dn" != "$de" ]; then
			fail "$name" "$dn of $de over-quota allocations came back as NO_MEMORY (denied_ok=$(val_of "$dir" denied_ok))"
		elif check_faithful "$dir"; then
			pass "$name"
		else
			fail "$name" "$why"
		fi ;;
	baseline-quota:*)
		if [ "$peak" -le "$QUOTA" ]; then
			fail "$name" "without gpusandbox the driver peak is only $(gib "$peak"): the trace does not exceed $QUOTA_ARG"
		else
			pass "$name"
		fi ;;
	esac
done

harness_summary
