#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/versions/run.sh [VERSION...] - the size-dependent cases of the
# adversarial and --sm tiers, and the replay tier, once per supported driver
# branch other than 580
# (which the whole suite runs), on the fake driver playing that branch.
#
# with-fake-nvidia takes GS_FAKE_DRIVER_VERSION as its --driver-version: the
# fake then copies and checks that branch's sizes (include/nvrm/v<branch>/,
# the same generated tables gpusandbox uses), gpusandbox picks its tables
# from the version the fake reports, and the test clients send that
# branch's sizes (rmc_ctrl_size). What this shows rests on the fake and
# the generated tables alone: no GPU with these drivers was used.
#
# Cases, and the size each depends on:
#   fb_report (+ baseline)      FB_GET_INFO_V2: 436/444/460 bytes on 535/550/570
#   gpus, gpus_uuid (+ baseline) GET_PROBED_IDS: 256 bytes (no gpuFlags) below 580
#   channels, lone_channels     GPFIFO_SCHEDULE: 2 bytes below 580 (--active-channel-groups)
#   race_size:class, static_raw, vidheap, xfer
#                               memory params: 120 bytes on 535; channels 360 on 535/550
#   vidheap_egm (+ baseline)    VID_HEAP's EGM bit: not honoured on 535 and 595
#   engines, policy_verdicts    classes and controls a branch lacks
#   video_sessions              GET_ENGINES_V2: 252/260 bytes on 535/550, 340
#                               from 570 (the supervisor's own question of
#                               the engines a session spans, exec_engines.c)
#   smi_views                   every monitoring control at the branch's size
#                               (ECC_GET_REPAIR_STATUS absent before 580), and
#                               nvidia-smi's setters and opaque commands
#   sm: sm50, two, fail         UTIL_SAMPLES_V2: 34000/50704 bytes on 535/550
#                               (closed loop: the summary's open_loop is false)
#   learn-gsp                   --learn on the branch admits the bit-15 (GSP)
#                               controls the trace sends and writes them
#                               with a warning; replayed with the learned
#                               policy, exactly those reach the fake driver
#                               (its own count), and without it none do
#   replay (all cases)          the 580 traces replayed with each call's
#                               params at the branch's size (replay.c): the
#                               quota and peak checks hold; controls the
#                               branch's tables lack (opaque GSP ones, newer
#                               ones) are refused, tolerated and listed.
set -u
cd "$(dirname "$0")/../.." || exit 2

VERSIONS=(535.288.01 550.163.01 570.211.01 590.48.01 595.45.04)
[ $# -gt 0 ] && VERSIONS=("$@")
ADV_CASES=(fb_report baseline-fb_report gpus gpus_uuid baseline-gpus channels lone_channels
	race_size:class static_raw vidheap xfer vidheap_egm baseline-vidheap_egm engines
	policy_verdicts video_sessions smi_views)
SM_CASES=(sm50 two fail)

passed=0 failed=0
TRACE=tests/replay/traces/h200-580-pytorch.trace
GPUSANDBOX=build/gpusandbox
WITH_FAKE=tests/fakedrv/with-fake-nvidia
tmp=$(mktemp -d /tmp/gs-versions.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tally() { # tier version output
	local line p f
	line=$(printf '%s\n' "$3" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	printf '%s\n' "$3" | grep -E '^(FAIL|SKIP) ' | sed "s/^/[$2] /"
	if [ -z "$line" ]; then
		echo "FAIL $1@$2: no summary line"
		failed=$((failed + 1))
		return
	fi
	p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
	passed=$((passed + p)); failed=$((failed + f))
	echo "$1@$2: $line"
}

# Controls that reach the fake driver when the trace is replayed under
# gpusandbox on branch $1 with extra options $2...
controls_reaching_driver() {
	local v=$1
	shift
	GS_FAKE_STATS_OUT="$tmp/stats" GS_FAKE_DRIVER_VERSION=$v "$WITH_FAKE" --vidmem 16g -- \
		"$GPUSANDBOX" --mem 8g "$@" -- build/tests/replay/replay "$TRACE" >/dev/null 2>&1
	tr ' ' '\n' <"$tmp/stats" | paste - - | awk '$1 == "controls" { print $2 }'
}

learn_gsp() {
	local v=$1 want without with entries
	# The trace's bit-15 controls (cmd bits 15:14 = 10: any caller).
	want=$(grep -oE 'RM_CONTROL .*cmd=0x[0-9a-f]+' "$TRACE" | grep -oE 'cmd=0x[0-9a-f]+' |
		grep -cE 'cmd=0x[0-9a-f]{0,4}[89ab][0-9a-f]{3}$')
	rm -f "$tmp/learned.policy"
	GS_FAKE_DRIVER_VERSION=$v "$WITH_FAKE" --vidmem 16g -- "$GPUSANDBOX" --learn "$tmp/learned.policy" \
		-- build/tests/replay/replay "$TRACE" >/dev/null 2>&1
	entries=$(grep -c 'bit-15 control: opaque bytes for the GSP' "$tmp/learned.policy" 2>/dev/null)
	without=$(controls_reaching_driver "$v")
	with=$(controls_reaching_driver "$v" --policy "$tmp/learned.policy")
	if [ "${entries:-0}" -eq 0 ]; then
		echo "FAIL learn-gsp@$v: the learned policy names no bit-15 control"
		failed=$((failed + 1))
	elif [ -z "$without" ] || [ -z "$with" ] || [ $((with - without)) -ne "$want" ]; then
		echo "FAIL learn-gsp@$v: controls reaching the driver: $without without, $with with the learned policy; the trace has $want bit-15 calls"
		failed=$((failed + 1))
	else
		echo "learn-gsp@$v: $entries learned, $want bit-15 calls reach the driver with them ($without -> $with)"
		passed=$((passed + 1))
	fi
}

for v in "${VERSIONS[@]}"; do
	learn_gsp "$v"
	out=$(GS_FAKE_DRIVER_VERSION=$v tests/adv/run.sh "${ADV_CASES[@]}" 2>&1)
	rc=$?
	[ "$rc" -eq 125 ] && { echo "SKIP versions: the fake driver cannot run here"; exit 125; }
	tally adversarial "$v" "$out"
	out=$(GS_FAKE_DRIVER_VERSION=$v tests/sm/run.sh "${SM_CASES[@]}" 2>&1)
	tally compute-share "$v" "$out"
	out=$(GS_FAKE_DRIVER_VERSION=$v tests/replay/run.sh 2>&1)
	printf '%s\n' "$out" | grep -E '^  \[' | sort -u | head -n 3
	tally replay "$v" "$out"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
