#!/bin/bash
# SPDX-License-Identifier: MIT
#
# scripts/bench-agent.sh - the 2 MiB pair through the agent against the
# command line's (issue #31: "a container's pair through the agent within
# 5 % of the command line's"), on the fake driver, everything on one CPU
# (the method of scripts/bench-onecpu.sh). Prints figures; asserts nothing.
#
#   scripts/bench-agent.sh [ROUNDS] [PAIRS]
#
# 1. ROUNDS interleaved rounds (the order rotated each round) of PAIRS
#    pairs of rmbench -u (RM_ALLOC, the UVM map, REGISTER_VIDMEM,
#    UNREGISTER_VIDMEM, RM_FREE) natively, under the command line (with
#    and without --audit-log), and in a runc container under `gpusandbox
#    agent` (the profile of `gpusandbox profile`, a policy of
#    p2p-register = perform, as the command line's --p2p-register
#    perform), alone ("agent") and with a keeper ("keeper": stateful, and
#    one share per client, as the command line); the pair's microseconds as rmbench times them and native's
#    over each config's from the same round;
# 2. each supervisor's system calls and CPU time per pair (perf stat at
#    the syscall tracepoints and task-clock, every thread of the command
#    line's supervisor or of the agent, attached once the set-up is done).
#
# GS_BUILDS: name=path pairs (default now=build/gpusandbox); GS_CPU (1).
# Needs root, runc, /dev/fuse, perf (for 2) and the static rmbench
# (make -s -j2 all tests builds build/tests/agent/rmbench).
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/bench-lib.sh

ROUNDS=${1:-3}
PAIRS=${2:-3000}
COUNT_PAIRS=${COUNT_PAIRS:-2000}
CPU=${GS_CPU:-1}
ROOT=$(pwd)
BENCH=$ROOT/build/tests/bench/rmbench
STATIC_BENCH=$ROOT/build/tests/agent/rmbench
FAKE=$ROOT/tests/fakedrv/with-fake-nvidia
read -r -a BUILDS <<<"${GS_BUILDS:-now=build/gpusandbox}"
# Time for perf to attach before the loop starts (ms), and after the
# container is running before it attaches (s).
ATTACH_WAIT_MS=${ATTACH_WAIT_MS:-2000}
ATTACH_AFTER_S=0.5
SOCKET_STEPS=250        # x 0.02 s for the agent's socket, the container

for f in "$BENCH" "$STATIC_BENCH"; do
	[ -x "$f" ] || { echo "bench-agent: $f missing: make -s -j2 all tests" >&2; exit 2; }
done
command -v runc >/dev/null || { echo "bench-agent: runc is not installed" >&2; exit 2; }

path_of() {
	local p
	for b in "${BUILDS[@]}"; do
		p=${b#*=}
		[ "${p#/}" = "$p" ] && p=$ROOT/$p
		[ "${b%%=*}" = "$1" ] && { echo "$p"; return; }
	done
}

BENCH_TMP=$(mktemp -d /tmp/gs-bench-agent.XXXXXX)
trap '[ -n "${GS_BENCH_KEEP:-}" ] || rm -rf "$BENCH_TMP"' EXIT
mkdir -p "$BENCH_TMP/rootfs/bin" "$BENCH_TMP/rootfs/dev" "$BENCH_TMP/rootfs/proc" "$BENCH_TMP/rootfs/sys" "$BENCH_TMP/rootfs/tmp"
cp "$STATIC_BENCH" "$BENCH_TMP/rootfs/bin/rmbench"
printf 'mem = 64g\np2p-register = perform\n' >"$BENCH_TMP/policy"

# Inside one with-fake-nvidia: the agent on a socket, one container of
# rmbench ARGS under runc; the container's output on stdout. With STAT
# set, perf stat counts the agent's system calls once the container runs.
agent_inside() {
	local gs=$1 d=$2 stat=$3 keeper=$4
	shift 4
	local sock=$d/agent.sock i kpid= kopt=()
	if [ "$keeper" = 1 ]; then
		"$gs" keeper --socket "$d/keeper.sock" 2>"$d/keeper.err" &
		kpid=$!
		for ((i = 0; i < SOCKET_STEPS; i++)); do [ -S "$d/keeper.sock" ] && break; sleep 0.02; done
		kopt=(--keeper "$d/keeper.sock")
	fi
	"$gs" agent --socket "$sock" --policy "$BENCH_TMP/policy" --audit-dir "$d" "${kopt[@]}" 2>"$d/agent.err" &
	local agent=$!
	for ((i = 0; i < SOCKET_STEPS; i++)); do [ -S "$sock" ] && break; sleep 0.02; done
	"$gs" profile --listener "$sock" >"$d/profile.json" 2>"$d/profile.err" || { kill "$agent"; return 1; }
	mkdir -p "$d/bundle"
	(cd "$d/bundle" && runc spec) || { kill "$agent"; return 1; }
	jq --argjson sc "$(cat "$d/profile.json")" --arg m "$GS_FAKE_MOUNT" --arg root "$BENCH_TMP/rootfs" \
		--argjson args "$(printf '%s\n' /bin/rmbench "$@" | jq -R . | jq -s .)" '
		.process.terminal = false | .process.args = $args | .root = { path: $root, readonly: true } |
		.mounts += [ "nvidiactl", "nvidia0", "nvidia-uvm" |
		             { destination: ("/dev/" + .), type: "bind", source: ($m + "/" + .), options: ["bind"] } ] |
		.linux.seccomp = $sc' "$d/bundle/config.json" >"$d/config.new" && mv "$d/config.new" "$d/bundle/config.json"
	(cd "$d/bundle" && runc --root "$d/state" run gs-bench) >"$d/out" 2>"$d/err" </dev/null &
	local ct=$! st=
	if [ -n "$stat" ]; then
		for ((i = 0; i < SOCKET_STEPS; i++)); do
			[ "$(runc --root "$d/state" state gs-bench 2>/dev/null | jq -r .status)" = running ] && break
			sleep 0.02
		done
		sleep "$ATTACH_AFTER_S"
		perf stat -e "$stat" -p "$agent" -o "$d/stat" 2>/dev/null &
		st=$!
	fi
	wait "$ct"
	[ -n "$st" ] && { kill -INT "$st"; wait "$st"; }
	runc --root "$d/state" delete -f gs-bench >/dev/null 2>&1
	kill "$agent"
	wait "$agent" 2>/dev/null
	[ -n "$kpid" ] && { kill "$kpid"; wait "$kpid" 2>/dev/null; }
	cat "$d/out"
}

# run_config CONFIG STAT_EVENTS: one run of PAIRS (or COUNT_PAIRS with
# STAT_EVENTS) pairs; rmbench's line on stdout, perf's counts in $BENCH_TMP/stat.
run_config() {
	local cfg=$1 stat=${2:-} name=${1%%:*} mode=${1#*:} n=$PAIRS d
	[ -n "$stat" ] && n=$COUNT_PAIRS
	d=$(mktemp -d "$BENCH_TMP/run.XXXXXX")
	local args=(-u -n "$n" -w "$ATTACH_WAIT_MS")
	case "$cfg" in
	native) taskset -c "$CPU" "$FAKE" --vidmem 64g -- "$BENCH" "${args[@]}" ;;
	*:agent | *:keeper)
		export -f agent_inside
		export BENCH_TMP SOCKET_STEPS ATTACH_AFTER_S
		taskset -c "$CPU" "$FAKE" --vidmem 64g -- bash -c 'agent_inside "$@"' _ \
			"$(path_of "$name")" "$d" "$stat" "$([ "$mode" = keeper ] && echo 1 || echo 0)" "${args[@]}" ;;
	*)
		local extra=()
		[ "$mode" = audit ] && extra=(--audit-log "$d/audit.jsonl")
		taskset -c "$CPU" "$FAKE" --vidmem 64g -- bash -c '
			gs=$1 d=$2 tp=$3; shift 3
			"$gs" "$@" >"$d/out" & sup=$! st=
			if [ -n "$tp" ]; then sleep 0.5; perf stat -e "$tp" -p "$sup" -o "$d/stat" 2>/dev/null & st=$!; fi
			wait $sup; [ -n "$st" ] && { kill -INT $st; wait $st; }; cat "$d/out"' _ \
			"$(path_of "$name")" "$d" "$stat" --user root --p2p-register perform "${extra[@]}" \
			-- "$BENCH" "${args[@]}" ;;
	esac 2>/dev/null | tail -1
	[ -f "$d/stat" ] && cp "$d/stat" "$BENCH_TMP/stat"
	[ -n "${GS_BENCH_KEEP:-}" ] || rm -rf "$d"
}

configs=(native)
for b in "${BUILDS[@]}"; do configs+=("${b%%=*}:cli" "${b%%=*}:audit" "${b%%=*}:agent" "${b%%=*}:keeper"); done

bench_header
echo "== 1. $ROUNDS interleaved rounds of $PAIRS pairs (rmbench -u, p2p-register perform), all on CPU $CPU"
out=$BENCH_TMP/rounds
bench_rounds "$ROUNDS" "$out" "${configs[@]}"
echo "== summary: per config, the pair as the sum of rmbench's five per-call medians (us) per round,"
echo "   its median, native/config and config/the same build's cli in the same round (median [range])"
python3 - "$out" <<'EOF'
import sys, statistics as st, collections
keys = ['alloc_us', 'map_us', 'register_us', 'unregister_us', 'free_us']
s = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    kv = dict(x.split('=', 1) for x in l.split() if '=' in x)
    if 'pair_us' in kv:
        s[kv['cfg']][int(kv['round'])] = sum(float(kv[k]) for k in keys)
def rng(v):
    return f"{st.median(v):.3f} [{min(v):.3f}-{max(v):.3f}]" if v else "-"
for c in sorted(s):
    pv = [s[c][r] for r in sorted(s[c])]
    nat = [s['native'][r] / v for r, v in s[c].items() if r in s.get('native', {})]
    cli = c.split(':')[0] + ':cli'
    rel = [v / s[cli][r] for r, v in s[c].items() if ':' in c and r in s.get(cli, {})]
    print(f"{c:14s} {' '.join(f'{x:6.1f}' for x in pv)}  median {st.median(pv):6.1f}  "
          f"native/config {rng(nat)}  /cli {rng(rel)}")
EOF

command -v perf >/dev/null || { echo "== 2. skipped: no perf"; exit 0; }
echo "== 2. supervisor system calls and CPU us per pair ($COUNT_PAIRS pairs), by call"
TP=task-clock,raw_syscalls:sys_enter
for sc in ioctl process_vm_readv pidfd_getfd pidfd_open statx close kcmp openat read write pwrite64 fcntl poll futex; do
	TP="$TP,syscalls:sys_enter_$sc"
done
for r in $(seq "${COUNT_ROUNDS:-2}"); do
	for c in "${configs[@]}"; do
		[ "$c" = native ] && continue
		rm -f "$BENCH_TMP/stat"
		run_config "$c" "$TP" >/dev/null
		printf '%-14s' "$c"
		awk -v n="$COUNT_PAIRS" '/syscalls:sys_enter_|raw_syscalls/ {
			gsub(",", "", $1); name = $2; sub(/.*sys_enter_?/, "", name); if (name == "") name = "all";
			if ($1 + 0 > 0) printf " %s=%.2f", name, $1 / n }
			/task-clock/ { gsub(",", "", $1); printf " cpu_us=%.1f", $1 * 1000 / n } END { print "" }' "$BENCH_TMP/stat" 2>/dev/null
	done
done
