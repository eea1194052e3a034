#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/sm/multi.sh [NAME...] - several sandboxes with --sm on one GPU of
# the fake driver, sharing it through the per-GPU coordinator
# (supervisor/compute/coord.h). Every tenant's share is judged from the
# FAKE DRIVER's own account: while several clients can run, the fake
# time-slices the GPU between them and credits each an equal part
# (fake_busy.c), which the tenant reads from the stats file
# (gpuN.client.0xH.busy_ms) over its measurement window.
#   cap-30-70 cap-50-50 cap-25-25-50     --sm-mode cap: each within TOL of
#                                        its share, never above it by more;
#   guar-30-70 guar-25-25-50             --sm-mode guarantee, all busy: the
#                                        same shares (nothing idle to lend);
#   guar-idle                            two at 50 % guarantee; A stops
#                                        working at 2 s; B's trace (the
#                                        fake's clock and busy time every
#                                        25 ms) gives the hand-over: from A's
#                                        stop to the end of the first 100 ms
#                                        in which B had at least HANDOVER_SHARE
#                                        of the GPU: it must come (its ms is a
#                                        figure, not judged: a duration on a
#                                        loaded machine); over B's last 2 s at
#                                        least IDLE_GAIN;
#   guar-idle-untimed                    the same with samples the supervisor
#                                        cannot put on its clock (the fake's
#                                        --untimed-samples): the counted
#                                        rule, after its 7 quiet samples;
#                                        guar-idle must have used the timed
#                                        rule (its own-window evidence, in
#                                        the figures GPUSANDBOX_SM_DEBUG=1
#                                        prints at stop), this one never;
#   cap-idle                             the same under cap: no hand-over,
#                                        B keeps 50 % (the contrast: lending
#                                        is the mode's, and the hand-over
#                                        measure can fail);
#   oversub                              60 % + 60 % (cap): scaled to 50/50,
#                                        a warning, sm_plan oversubscribed;
#   host-dies                            the coordinator's host (40 %) is
#                                        killed at 2.5 s; the other two (30,
#                                        25) keep their caps and shares;
#   no-coord-30-70                       baseline without a coordinator
#                                        (independent duty cycles): the
#                                        tenants' on-phases overlap.
# Disjointness, from the fake's account too: gpu0.overlap_ms is the time in
# which two or more clients had runnable channels at once. With the
# coordinator only the two supervisors' wake-up skew at each switch is
# left, at most MAX_OVERLAP of the time; the baseline without it must
# exceed that (independent 30/70 phases overlap about 0.2), or the fake
# could not tell the two apart and the other cases would prove nothing.
# Every coordinated case also needs an sm_plan record naming all its
# tenants in each tenant's audit log.
# The clock: the cases marked "test" run on the test's clock
# (include/test_clock.h; tests/sm/run.sh says why), shared by the fake,
# every tenant's supervisor (each one participant: the clock moves only
# while all of their duty threads sleep, to the earliest wake) and the
# workloads, so that a late wake-up on a loaded machine neither lengthens
# a tenant's window nor makes two overlap: the shares are the plan's and
# the overlap is 0 but for lending (guarantee). Seen beside two CPU hogs
# (load ~10): cap-30-70 0.295/0.705 and 0.300/0.700, overlaps 0.000;
# guar-25-25-50 overlap 0.000-0.009 (0.241 on the real clock in CI).
# fight-churn and fight-churn-chan: A's churn runs inside its warm-up
# (W_CHURN) and A measures from a fixed time after its start, as B does
# (sm_workload warm_until). Before, the churn shifted A's measurement by
# its own length (1.4 s of the test's clock for 1100 processes; 2.3-2.7 s
# for 40 with channels, whose children wait for A's windows), so that it
# outlasted B: alone and capped, A leaves the plan for its own duty cycle
# (coord.c), which starts at the target duty, and the fake's 1 ms drain
# per 20 ms period gives (6+1)/20 = 0.35 until the closed loop re-tunes
# it; so A got 0.338-0.359 (0.305 while B ran, 0.348 after, in one run).
# And with channels, the churn ran into B's measurement, where the fake's
# overlap, which counts clients and not tenants, counted A's children
# beside A's own client (0.15-0.20; B's share unhurt). A workload call
# that may let channels run holds the shared clock until its switch is
# done (include/test_clock.h gs_test_clock_hold), so no other tenant's
# duty thread moves it in between. Three runs beside a CPU hog,
# 2026-12-02: fight-churn a=0.287-0.305 b=0.700-0.708, fight-churn-chan
# a=0.303-0.309 b=0.688-0.707, overlaps 0.000.
# guar-idle and guar-idle-untimed too: B's tail share and the idle rule
# used are judged there, the hand-over's ms printed (316-550 ms timed,
# 1230-1300 ms counted, beside two CPU hogs). (The fake's samples start
# half a poll off the supervisor's wake-ups on the test's clock,
# FAKE_SAMPLE_PHASE_MS: else each was read at the instant it closed, where
# the timed rule's guard never holds.)
# Bands are honest but tolerant of a loaded CI machine: TOL 0.06.
set -u
cd "$(dirname "$0")/../.." || exit 2

WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
GPUSANDBOX_SWITCHED=${GPUSANDBOX_SWITCHED:-build/switches/gpusandbox}
FAKE_VIDMEM=16g
TOL=0.06
# B's share over its last 2 s after A goes idle: 1.0 on a quiet machine,
# 0.81 seen under a load average of 5; cap-idle (nothing lent) gives 0.52.
IDLE_GAIN=0.75
# The hand-over's expected time (printed, not judged: no test asserts a
# duration; the tail share below needs it well before B's last 2 s) on the
# fake, whose samples come every 100 ms
# (FAKE_SAMPLE_MS). The timed rule (supervisor/compute/idle_rule.h) calls
# A idle at the first sample inside A's own window (guarded: ~0.46 of a
# 100 ms +-25 % period, rotated, for 50 %) naming none of its tasks:
# tests/unit/test_idle_rule simulates it at a mean of 148 ms after the
# stop, p95 436, max 951. Then the poll (50 ms), the plan's lead (100 ms)
# and the 200 ms B's share is measured over (+ one 25 ms trace step). The
# counted fallback (guar-idle-untimed): the 7th quiet sample (up to
# 700-800 ms), the next 1 s window edge, and the same rest: about 2100 ms.
# Measured on 2026-11-24 with the rotated 100 ms plan: guar-idle
# 289-946 ms (10 runs), guar-idle-untimed 1197-1303 ms (10).
# COUNTED_N: the counted rule calls a 50 % tenant idle after 7 quiet
# samples in a row (gs_idle_after_samples(0.5)); some of them may come
# before A's stop (its window missed, with probability 1/2 each), so the
# hand-over alone cannot show the rule: A's report says which rule and
# after how many samples (GPUSANDBOX_SM_DEBUG=1).
COUNTED_N=7
HANDOVER_SHARE=0.9
# Two shared periods (100 ms each): the plan rotates every period
# (plan.h), so B's 50 % windows of two periods in a row can meet, and in
# one period's length a capped B may have the whole GPU; over two, at
# most 0.75 of it.
HANDOVER_SPAN=200
TAIL_MS=2000
# Cap: 0.001-0.021 on a quiet machine, 0.052 seen under load. The baseline
# without a coordinator overlaps about 0.21.
MAX_OVERLAP=0.08
# Guarantee lends an owner's window to the others while the owner is
# reported idle, and the owner still runs in it: a busy owner wrongly
# called idle (samples 2-4 jittered periods apart are not independent,
# docs/compute-share.md) shares its window until its next sample, which is
# overlap by design. Seen: 0.055 and 0.085 for guar-30-70's 30 % tenant.
MAX_OVERLAP_LENT=0.15
TIMEOUT=${GS_SM_TIMEOUT:-60}
W=3000    # warm-up, ms
M=2500    # measurement, ms
# The churning cases' warm-up: A's churn runs inside it, and A's
# measurement starts where B's does, so that it never outlasts B
# (sm_workload warm_until: A exits 2 if the churn overran). 1100
# client-making processes took 1.4-1.5 s of the test's clock; 40 with
# channels, from 1.5 s, 2.5-2.9 s beside a CPU hog (3.1 s from 3 s; each
# child waits for one of A's windows; its set-up's real time runs the
# clock too): 7.5 s left for them.
W_CHURN=9000

. tests/lib/harness.sh
harness_tmpdir "${GS_SM_KEEP:-}" gs-sm-multi

# name | coordinator (yes/no) | clock (test or real, above) | tenant specs
# (tenants.sh), space-separated:
#   NAME:PCT:MODE:START_MS:WARM_MS:MEASURE_MS:IDLE_AT_MS:KILL_AT_MS[:WORKLOAD]
# The fight-* cases are issue #13's "holds against a tenant that fights
# it": A, capped at 30, fights its cap the way tests/sm/run.sh's reschedule
# (re-scheduling its group every 5 ms, in B's windows too) and churn (1100
# client-making processes, past the supervisor's ring of creators) do; B
# (70) must still get its share, judged by the fake's busy account, and A
# no more than its cap. fight-resched-free is the baseline: the same
# fighting A with no gpusandbox takes B's time (B well under 0.70).
TESTS=(
	"cap-30-70|yes|test|a:30:cap:0:$W:$M:-:- b:70:cap:200:$W:$M:-:-"
	"cap-50-50|yes|test|a:50:cap:0:$W:$M:-:- b:50:cap:200:$W:$M:-:-"
	"cap-25-25-50|yes|test|a:25:cap:0:$W:$M:-:- b:25:cap:200:$W:$M:-:- c:50:cap:300:$W:$M:-:-"
	"guar-30-70|yes|test|a:30:guarantee:0:$W:$M:-:- b:70:guarantee:200:$W:$M:-:-"
	"guar-25-25-50|yes|test|a:25:guarantee:0:$W:$M:-:- b:25:guarantee:200:$W:$M:-:- c:50:guarantee:300:$W:$M:-:-"
	"guar-idle|yes|test|a:50:guarantee:0:6000:500:2000:- b:50:guarantee:0:1500:4000:-:-"
	"guar-idle-untimed|yes|test|a:50:guarantee:0:6000:500:2000:- b:50:guarantee:0:1500:4000:-:-"
	"cap-idle|yes|test|a:50:cap:0:6000:500:2000:- b:50:cap:0:1500:4000:-:-"
	"oversub|yes|test|a:60:cap:0:$W:$M:-:- b:60:cap:200:$W:$M:-:-"
	"host-dies|yes|test|a:40:cap:0:9000:500:-:2500 b:30:cap:300:3500:2500:-:- c:25:cap:400:3500:2500:-:-"
	"no-coord-30-70|no|test|a:30:cap:0:$W:$M:-:- b:70:cap:200:$W:$M:-:-"
	"fight-resched|yes|test|a:30:cap:0:$W:$M:-:-:tenant-reschedule b:70:cap:200:$W:$M:-:-"
	"fight-churn|yes|test|a:30:cap:0:$W_CHURN:$M:-:-:tenant-churn b:70:cap:200:$W_CHURN:$M:-:-"
	"fight-churn-chan|yes|test|a:30:cap:0:$W_CHURN:$M:-:-:tenant-churn-chan b:70:cap:200:$W_CHURN:$M:-:-"
	"fight-resched-free|yes|test|a:-:cap:0:$W:$M:-:-:tenant-reschedule b:70:cap:200:$W:$M:-:-"
)

harness_probe_or_skip "$@"

within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
share_of() { grep -oE '(^| )share=[^ ]*' "$1" 2>/dev/null | tail -1 | sed 's/^.*=//'; }
overlap_of() { grep -oE '(^| )overlap=[^ ]*' "$1" 2>/dev/null | tail -1 | sed 's/^.*=//'; }

# From B's trace (tests/sm/sm_workload.c trace_own_busy): the ms from A's
# stop (its idle_at_fake_ms) to the end of the first HANDOVER_SPAN ms,
# wholly after the stop, in which B had at least HANDOVER_SHARE of the
# GPU; "none" if that never came.
handover_ms() {
	local d=$1 idle
	idle=$(grep -oE 'idle_at_fake_ms=[0-9]+' "$d/a.out" | sed 's/.*=//')
	[ -n "$idle" ] || { echo none; return; }
	awk -v idle="$idle" -v span="$HANDOVER_SPAN" -v want="$HANDOVER_SHARE" '
		/^trace / { split($2, a, "="); split($3, b, "="); t[n] = a[2]; v[n] = b[2]; n++ }
		END {
			for (i = 0; i < n; i++)
				for (j = i - 1; j >= 0 && t[j] >= idle; j--)
					if (t[i] - t[j] >= span) {
						if ((v[i] - v[j]) / (t[i] - t[j]) >= want) { print t[i] - idle; exit }
						break
					}
			print "none"
		}' "$d/b.out"
}

# B's share over the last TAIL_MS of its trace.
tail_share() {
	awk -v span="$TAIL_MS" '/^trace / { split($2, a, "="); split($3, b, "="); t[n] = a[2]; v[n] = b[2]; n++ }
		END { for (j = n - 1; j > 0 && t[n-1] - t[j] < span; j--) ;
		      if (n < 2 || t[n-1] <= t[j]) print -1; else printf "%.3f\n", (v[n-1] - v[j]) / (t[n-1] - t[j]) }' "$1/b.out"
}

# Each tenant's window saw little overlap, and its audit log has a plan
# with all n tenants.
coordinated() {
	local d=$1 specs=$2 n=$3 spec name o bound
	for spec in $specs; do
		name=${spec%%:*}
		[ -e "$d/$name.killed" ] && continue
		o=$(overlap_of "$d/$name.out")
		bound=$MAX_OVERLAP
		case "$spec" in *:guarantee:*) bound=$MAX_OVERLAP_LENT ;; esac
		at_least "$bound" "$o" || { why="$name: overlap $o of its window, want <= $bound"; return 1; }
		grep -q "\"event\":\"sm_plan\",\"gpu\":0,\"tenants\":$n," "$d/$name.audit.jsonl" ||
			{ why="$name: no sm_plan with $n tenants in its audit log"; return 1; }
	done
}

run_case() {
	local name=$1 coord=$2 clock=$3 specs=$4 d="$tmp/$1"
	rm -rf "$d"; mkdir -p "$d"
	local env=() fake=()
	if [ "$coord" = yes ]; then
		mkdir -m 0700 "$d/coord"
		env=(GPUSANDBOX_COORD_DIR="$d/coord")
	fi
	# The idle cases read which idle rule ran from the figures at stop.
	case $name in guar-idle*) env+=(GPUSANDBOX_SM_DEBUG=1) ;; esac
	case $name in *-untimed) fake=(--untimed-samples) ;; esac
	if [ "$clock" = test ]; then
		: >"$d/clock"
		fake+=(--clock "$d/clock")
		env+=(GPUSANDBOX_TEST_SM_CLOCK="$d/clock" GPUSANDBOX="$GPUSANDBOX_SWITCHED")
	fi
	# shellcheck disable=SC2086 # specs is a word list
	env "${env[@]}" GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" \
		--busy-lag-ms 1 "${fake[@]}" -- tests/sm/tenants.sh "$d" $specs >"$d/log" 2>&1
	dir=$d
}

# Every tenant that was not killed: exit 0, its own FIFO_DISABLE_CHANNELS
# refused, a share printed. Sets share_NAME.
check_tenants() {
	local d=$1 specs=$2 spec name
	for spec in $specs; do
		name=${spec%%:*}
		[ -e "$d/$name.killed" ] && continue
		[ "$(cat "$d/$name.rc" 2>/dev/null)" = 0 ] ||
			{ why="$name: exit $(cat "$d/$name.rc" 2>/dev/null): $(tail -c 300 "$d/$name.err" | tr '\n' ' ')"; return 1; }
		case "$spec" in
		*:-:*:*:*:*:*:*) ;;  # no gpusandbox: nothing refuses it
		*) grep -q 'own_disable=status:0x1b' "$d/$name.out" ||
			{ why="$name: its own FIFO_DISABLE_CHANNELS was not refused"; return 1; } ;;
		esac
		local s; s=$(share_of "$d/$name.out")
		[ -n "$s" ] || { why="$name: no share printed"; return 1; }
		printf -v "share_$name" '%s' "$s"
	done
}

# The tenant's share is its target within TOL (cap: and not above it by
# more than TOL).
on_target() {
	local name=$1 target=$2 v="share_$1"
	within "${!v}" "$target" "$TOL" || { why="$name got ${!v}, want $target +- $TOL"; return 1; }
}

# Which idle rule called A idle, from A's figures at stop (sm_figures.c):
# guar-idle the timed one (samples timed, evidence in its own window, no
# contradiction of the clock); guar-idle-untimed the counted one (samples
# untimed, no evidence), reporting A idle after its COUNTED_N quiet samples.
idle_rule_used() {
	local name=$1 d=$2 fig
	fig=$(grep -oE 'samples_timed [a-z]+ idle_own_evidence [0-9]+ clock_contradictions [0-9]+' "$d/a.err" | tail -1)
	[ -n "$fig" ] || { why="no idle figures in A's stderr"; return 1; }
	set -- $fig
	case $name in
	guar-idle)
		[ "$2" = yes ] && [ "$4" -ge 1 ] && [ "$6" = 0 ] ||
			{ why="the timed rule did not run: $fig"; return 1; }
		grep -q 'reported idle: rule timed quiet [0-9]* quiet_own [1-9]' "$d/a.err" ||
			{ why="A was never reported idle by the timed rule"; return 1; } ;;
	guar-idle-untimed)
		[ "$2" = no ] && [ "$4" = 0 ] || { why="untimed samples were timed: $fig"; return 1; }
		! grep -q 'reported idle: rule timed' "$d/a.err" || { why="the timed rule ran on untimed samples"; return 1; }
		local q
		q=$(grep -oE 'reported idle: rule counted quiet [0-9]+' "$d/a.err" | tail -1 | awk '{ print $NF }')
		[ -n "$q" ] && [ "$q" -ge "$COUNTED_N" ] ||
			{ why="the counted rule reported A idle after ${q:-no} quiet samples, want >= $COUNTED_N"; return 1; } ;;
	esac
}

check_case() {
	local name=$1 d=$2 specs=$3
	local n; n=$(wc -w <<<"$specs")
	check_tenants "$d" "$specs" || return 1
	case $name in
	no-coord-* | fight-resched-free) ;;
	guar-idle | guar-idle-untimed | cap-idle) grep -q '"tenants":2,' "$d/b.audit.jsonl" || { why="B never had a 2-tenant plan"; return 1; } ;;
	host-dies) coordinated "$d" "$specs" 2 || return 1 ;;
	*) coordinated "$d" "$specs" "$n" || return 1 ;;
	esac
	case $name in
	cap-30-70 | guar-30-70) on_target a 0.30 && on_target b 0.70 ;;
	fight-churn-chan)
		grep -q 'stuck=0 ' "$d/a.out" ||
			{ why="A's new processes' channels never ran: $(grep -o 'stuck=[0-9]*' "$d/a.out")"; return 1; } ;;&
	fight-resched | fight-churn | fight-churn-chan)
		on_target b 0.70 || return 1
		at_least "$(awk -v t=0.30 -v e="$TOL" 'BEGIN { print t + e }')" "$share_a" ||
			{ why="the fighting A got $share_a, over its cap 0.30 + $TOL"; return 1; } ;;
	fight-resched-free)
		at_least "$(awk -v t=0.70 -v e="$TOL" 'BEGIN { print t - 2 * e }')" "$share_b" ||
			{ why="with no gpusandbox for A, B still got $share_b: the fake cannot show what the cap protects"; return 1; } ;;
	cap-50-50) on_target a 0.50 && on_target b 0.50 ;;
	cap-25-25-50 | guar-25-25-50) on_target a 0.25 && on_target b 0.25 && on_target c 0.50 ;;
	guar-idle | guar-idle-untimed)
		handover=$(handover_ms "$d")
		[ "$handover" != none ] ||
			{ why="no hand-over after A's stop: B never had $HANDOVER_SHARE of the GPU over $HANDOVER_SPAN ms"; return 1; }
		share_b=$(tail_share "$d")
		at_least "$share_b" "$IDLE_GAIN" ||
			{ why="B got $share_b over its last $TAIL_MS ms, want >= $IDLE_GAIN"; return 1; }
		idle_rule_used "$name" "$d" ;;
	cap-idle)
		handover=$(handover_ms "$d")
		[ "$handover" = none ] || { why="B had $HANDOVER_SHARE of a capped GPU ${handover} ms after A's stop"; return 1; }
		share_b=$(tail_share "$d")
		on_target b 0.50 ;;
	oversub)
		on_target a 0.50 && on_target b 0.50 || return 1
		grep -q '"event":"sm_plan".*"oversubscribed":true' "$d/a.audit.jsonl" ||
			{ why="no sm_plan record saying oversubscribed"; return 1; }
		grep -q 'oversubscribed' "$d/a.err" "$d/b.err" ||
			{ why="no oversubscription warning on stderr"; return 1; } ;;
	host-dies)
		[ -e "$d/a.killed" ] || { why="the host was not killed"; return 1; }
		on_target b 0.30 && on_target c 0.25 ;;
	no-coord-30-70)
		local o; o=$(overlap_of "$d/a.out")
		at_least "$o" "$MAX_OVERLAP" ||
			{ why="without a coordinator the overlap was only $o: the fake cannot show the difference"; return 1; }
		! grep -q '"event":"sm_plan"' "$d/a.audit.jsonl" || { why="a plan without a coordinator"; return 1; } ;;
	esac
}

for t in "${TESTS[@]}"; do
	IFS='|' read -r name coord clock specs <<<"$t"
	selected "$name" "$@" || continue
	handover=
	run_case "$name" "$coord" "$clock" "$specs"
	if check_case "$name" "$dir" "$specs"; then
		extra=; [ -n "${handover:-}" ] && extra=" hand-over ${handover} ms, B's last ${TAIL_MS} ms $share_b;"
		pass "$name ($(for s in $specs; do n=${s%%:*}; printf '%s=%s/%s ' "$n" "$(share_of "$dir/$n.out")" "$(overlap_of "$dir/$n.out")"; done)share/overlap;$extra $clock clock)"
	else
		fail "$name" "$why"
	fi
done
harness_summary
