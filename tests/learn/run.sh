#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/learn/run.sh [NAME...] - learning mode (--learn FILE) against the
# fake driver.
#
# build/tests/adv/learn_needs needs a class and a control outside the
# default policy (group debug) and also tries what learning must never let
# through (an unknown class, FINN params, FIFO_DISABLE_CHANNELS, memory over
# --mem). Cases, each PASS or FAIL:
#   default-refuses  without --learn the default policy refuses what it
#                    needs (the other cases are not vacuous);
#   learn            --learn F: the run succeeds, each need is audited once
#                    as allowed by --learn, F names both with the first
#                    call, and the non-allowlist refusals still happen;
#   learned-policy   --policy F: the same run succeeds with no policy
#                    refusal in the audit log;
#   learn-killed     a workload killed by SIGKILL still gets F written;
#   learn-from-policy --policy P --learn F: F keeps P's limits and entries
#                    and adds only what P lacked;
#   learn-unwritable F in a missing directory: status 125, nothing runs.
# Builds nothing: run `make` first. Environment as tests/adv/run.sh
# (GPUSANDBOX, WITH_FAKE, GS_ADV_TIMEOUT, GS_LEARN_KEEP=DIR).
set -u

cd "$(dirname "$0")/../.." || exit 2

GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
PROG=build/tests/adv/learn_needs
TIMEOUT=${GS_ADV_TIMEOUT:-120}
FAKE_VIDMEM=16g
QUOTA_ARG=1g
QUOTA_BYTES=1073741824
EXIT_SIGKILL=137
EXIT_GPUSANDBOX=125
PROFILER=0x90cc
DEBUG_READ=0x83de0315
POLICY_REFUSAL='not allowed by the policy'
LEARNED='"reason":"allowed by --learn: not in the policy"'

. tests/lib/harness.sh
harness_tmpdir "${GS_LEARN_KEEP:-}" gs-learn

TESTS=(default-refuses learn learned-policy learn-killed learn-from-policy learn-unwritable)
harness_probe_or_skip "$@"

for f in "$GPUSANDBOX" "$PROG"; do
	[ -x "$f" ] || { fail setup "$f not built (run make)"; harness_summary; exit; }
done

# run NAME ARGS...: the workload under gpusandbox ARGS on a fresh fake;
# output in $tmp/NAME.{out,err}, audit log $tmp/NAME.jsonl, status in $rc.
run() {
	local name=$1
	shift
	timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- \
		"$GPUSANDBOX" --audit-log "$tmp/$name.jsonl" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}
val_of() { sed -n "s/^$2=//p" "$tmp/$1.out" | tail -1; }
count_in() { grep -c -- "$2" "$tmp/$1" 2>/dev/null; }
# The refusals learning must leave alone, with the driver-shaped statuses.
still_refused() {
	local name=$1 k want
	for k in unknown=INVALID_CLASS finn=NOT_SUPPORTED disable=status:0x1b over_quota=NO_MEMORY; do
		want=${k#*=}; k=${k%%=*}
		[ "$(val_of "$name" "$k")" = "$want" ] ||
			{ why="$k=$(val_of "$name" "$k"), want $want"; return 1; }
	done
}
# A case's result: PASS, or FAIL with $why.
judge() { if [ -z "$why" ]; then pass "$1"; else fail "$1" "$why"; fi; }

if selected default-refuses "$@"; then
	why=
	run default-refuses --mem "$QUOTA_ARG" -- "$PROG"
	if [ "$rc" = 0 ]; then
		why="the default policy let it run: $(tr '\n' ' ' <"$tmp/default-refuses.out")"
	elif [ "$(val_of default-refuses profiler)" != INVALID_CLASS ] ||
		[ "$(val_of default-refuses debug_read)" != NOT_SUPPORTED ]; then
		why="profiler=$(val_of default-refuses profiler) debug_read=$(val_of default-refuses debug_read)"
	elif [ "$(count_in default-refuses.jsonl "$POLICY_REFUSAL")" -lt 2 ]; then
		why="no policy refusals in the audit log"
	fi
	judge default-refuses
fi

learned=$tmp/learned.policy
if selected learn "$@" || selected learned-policy "$@"; then
	why=
	run learn --mem "$QUOTA_ARG" --learn "$learned" -- "$PROG"
	if [ "$rc" != 0 ]; then
		why="exit $rc: $(tr '\n' ' ' <"$tmp/learn.out") $(tail -c 300 "$tmp/learn.err")"
	elif ! still_refused learn; then
		:
	elif [ ! -s "$learned" ] || [ -e "$learned.tmp" ]; then
		why="no $learned, or $learned.tmp left behind"
	elif [ "$(count_in learn.jsonl "$LEARNED")" != 2 ]; then
		why="$(count_in learn.jsonl "$LEARNED") records allowed by --learn, want 2 (one per entry)"
	elif [ "$(count_in learn.jsonl "$POLICY_REFUSAL")" != 0 ]; then
		why="a policy refusal while learning"
	elif ! grep -qE "^allow\.class = $PROFILER +# GF100_PROFILER \(group debug\): first needed by RM_ALLOC from pid [0-9]+ \(learn_needs\)$" "$learned" ||
		! grep -qE "^allow\.control = $DEBUG_READ +# .*first needed by RM_CONTROL from pid [0-9]+ \(learn_needs\)$" "$learned" ||
		! grep -qx "mem = $QUOTA_BYTES" "$learned" ||
		! grep -qx "allow = compute, memory, monitoring" "$learned" ||
		[ "$(grep -c '^allow\.' "$learned")" != 2 ]; then
		why="unexpected learned policy: $(tr '\n' '|' <"$learned")"
	fi
	judge learn
fi

if selected learned-policy "$@"; then
	why=
	# --mem comes from the file this time.
	run learned-policy --policy "$learned" -- "$PROG"
	if [ "$rc" != 0 ]; then
		why="exit $rc: $(tr '\n' ' ' <"$tmp/learned-policy.out") $(tail -c 300 "$tmp/learned-policy.err")"
	elif [ "$(count_in learned-policy.jsonl "$POLICY_REFUSAL")" != 0 ]; then
		why="policy refusals: $(grep -- "$POLICY_REFUSAL" "$tmp/learned-policy.jsonl" | head -2)"
	elif [ "$(count_in learned-policy.jsonl "$LEARNED")" != 0 ]; then
		why="records say --learn in a run without it"
	else
		still_refused learned-policy
	fi
	judge learned-policy
fi

if selected learn-killed "$@"; then
	why=
	run learn-killed --mem "$QUOTA_ARG" --learn "$tmp/killed.policy" -- "$PROG" kill
	if [ "$rc" != "$EXIT_SIGKILL" ]; then
		why="exit $rc, want $EXIT_SIGKILL (killed by SIGKILL)"
	elif ! grep -q "^allow\.class = $PROFILER " "$tmp/killed.policy" 2>/dev/null ||
		! grep -q "^allow\.control = $DEBUG_READ " "$tmp/killed.policy"; then
		why="no learned entries after the kill: $(tr '\n' '|' <"$tmp/killed.policy" 2>&1)"
	fi
	judge learn-killed
fi

if selected learn-from-policy "$@"; then
	why=
	printf 'channels = 8\nallow.class = GF100_PROFILER\n' >"$tmp/start.policy"
	run learn-from-policy --policy "$tmp/start.policy" --mem "$QUOTA_ARG" \
		--learn "$tmp/from.policy" -- "$PROG"
	f=$tmp/from.policy
	if [ "$rc" != 0 ]; then
		why="exit $rc: $(tail -c 300 "$tmp/learn-from-policy.err")"
	elif ! grep -qx "channels = 8" "$f" || ! grep -qx "mem = $QUOTA_BYTES" "$f" ||
		! grep -qE "^allow\.class = $PROFILER +# .*: in the starting policy$" "$f" ||
		! grep -qE "^allow\.control = $DEBUG_READ +# .*first needed by RM_CONTROL" "$f" ||
		[ "$(count_in learn-from-policy.jsonl "$LEARNED")" != 1 ]; then
		why="unexpected learned policy: $(tr '\n' '|' <"$f" 2>&1)"
	fi
	judge learn-from-policy
fi

if selected learn-unwritable "$@"; then
	why=
	marker=$tmp/ran
	"$GPUSANDBOX" --learn "$tmp/no/such/dir/f.policy" -- touch "$marker" \
		>"$tmp/unwritable.out" 2>&1
	rc=$?
	if [ "$rc" != "$EXIT_GPUSANDBOX" ]; then
		why="exit $rc, want $EXIT_GPUSANDBOX"
	elif [ -e "$marker" ]; then
		why="the workload ran"
	elif ! grep -q -- "--learn" "$tmp/unwritable.out"; then
		why="the error does not name --learn: $(cat "$tmp/unwritable.out")"
	fi
	judge learn-unwritable
fi

harness_summary
