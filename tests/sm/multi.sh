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
#                                        working at 2 s; from 1.3 s later B
#                                        gets at least IDLE_GAIN of the GPU;
#   cap-idle                             the same under cap: B keeps 50 %
#                                        (the contrast: lending is the mode's);
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
# Bands are honest but tolerant of a loaded CI machine: TOL 0.06.
set -u
cd "$(dirname "$0")/../.." || exit 2

WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
FAKE_VIDMEM=16g
TOL=0.06
IDLE_GAIN=0.85
MAX_OVERLAP=0.05
TIMEOUT=${GS_SM_TIMEOUT:-60}
W=3000    # warm-up, ms
M=2500    # measurement, ms

. tests/lib/harness.sh
harness_tmpdir "${GS_SM_KEEP:-}" gs-sm-multi

# name | coordinator (yes/no) | tenant specs (tenants.sh), space-separated:
#   NAME:PCT:MODE:START_MS:WARM_MS:MEASURE_MS:IDLE_AT_MS:KILL_AT_MS
TESTS=(
	"cap-30-70|yes|a:30:cap:0:$W:$M:-:- b:70:cap:200:$W:$M:-:-"
	"cap-50-50|yes|a:50:cap:0:$W:$M:-:- b:50:cap:200:$W:$M:-:-"
	"cap-25-25-50|yes|a:25:cap:0:$W:$M:-:- b:25:cap:200:$W:$M:-:- c:50:cap:300:$W:$M:-:-"
	"guar-30-70|yes|a:30:guarantee:0:$W:$M:-:- b:70:guarantee:200:$W:$M:-:-"
	"guar-25-25-50|yes|a:25:guarantee:0:$W:$M:-:- b:25:guarantee:200:$W:$M:-:- c:50:guarantee:300:$W:$M:-:-"
	"guar-idle|yes|a:50:guarantee:0:6000:500:2000:- b:50:guarantee:0:3300:2000:-:-"
	"cap-idle|yes|a:50:cap:0:6000:500:2000:- b:50:cap:0:3300:2000:-:-"
	"oversub|yes|a:60:cap:0:$W:$M:-:- b:60:cap:200:$W:$M:-:-"
	"host-dies|yes|a:40:cap:0:9000:500:-:2500 b:30:cap:300:3500:2500:-:- c:25:cap:400:3500:2500:-:-"
	"no-coord-30-70|no|a:30:cap:0:$W:$M:-:- b:70:cap:200:$W:$M:-:-"
)

harness_probe_or_skip "$@"

within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
share_of() { grep -oE '(^| )share=[^ ]*' "$1" 2>/dev/null | tail -1 | sed 's/^.*=//'; }
overlap_of() { grep -oE '(^| )overlap=[^ ]*' "$1" 2>/dev/null | tail -1 | sed 's/^.*=//'; }

# Each tenant's window saw little overlap, and its audit log has a plan
# with all n tenants.
coordinated() {
	local d=$1 specs=$2 n=$3 spec name o
	for spec in $specs; do
		name=${spec%%:*}
		[ -e "$d/$name.killed" ] && continue
		o=$(overlap_of "$d/$name.out")
		at_least "$MAX_OVERLAP" "$o" || { why="$name: overlap $o of its window, want <= $MAX_OVERLAP"; return 1; }
		grep -q "\"event\":\"sm_plan\",\"gpu\":0,\"tenants\":$n," "$d/$name.audit.jsonl" ||
			{ why="$name: no sm_plan with $n tenants in its audit log"; return 1; }
	done
}

run_case() {
	local name=$1 coord=$2 specs=$3 d="$tmp/$1"
	rm -rf "$d"; mkdir -p "$d"
	local env=()
	if [ "$coord" = yes ]; then
		mkdir -m 0700 "$d/coord"
		env=(GPUSANDBOX_COORD_DIR="$d/coord")
	fi
	# shellcheck disable=SC2086 # specs is a word list
	env "${env[@]}" GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" \
		--busy-lag-ms 1 -- tests/sm/tenants.sh "$d" $specs >"$d/log" 2>&1
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
		grep -q 'own_disable=status:0x1b' "$d/$name.out" ||
			{ why="$name: its own FIFO_DISABLE_CHANNELS was not refused"; return 1; }
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

check_case() {
	local name=$1 d=$2 specs=$3
	local n; n=$(wc -w <<<"$specs")
	check_tenants "$d" "$specs" || return 1
	case $name in
	no-coord-*) ;;
	guar-idle | cap-idle) grep -q '"tenants":2,' "$d/b.audit.jsonl" || { why="B never had a 2-tenant plan"; return 1; } ;;
	host-dies) coordinated "$d" "$specs" 2 || return 1 ;;
	*) coordinated "$d" "$specs" "$n" || return 1 ;;
	esac
	case $name in
	cap-30-70 | guar-30-70) on_target a 0.30 && on_target b 0.70 ;;
	cap-50-50) on_target a 0.50 && on_target b 0.50 ;;
	cap-25-25-50 | guar-25-25-50) on_target a 0.25 && on_target b 0.25 && on_target c 0.50 ;;
	guar-idle)
		at_least "$share_b" "$IDLE_GAIN" ||
			{ why="B got $share_b after A went idle, want >= $IDLE_GAIN"; return 1; } ;;
	cap-idle) on_target b 0.50 ;;
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
	IFS='|' read -r name coord specs <<<"$t"
	selected "$name" "$@" || continue
	run_case "$name" "$coord" "$specs"
	if check_case "$name" "$dir" "$specs"; then
		pass "$name ($(for s in $specs; do n=${s%%:*}; printf '%s=%s/%s ' "$n" "$(share_of "$dir/$n.out")" "$(overlap_of "$dir/$n.out")"; done)share/overlap)"
	else
		fail "$name" "$why"
	fi
done
harness_summary
