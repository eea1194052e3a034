#!/bin/bash
# SPDX-License-Identifier: MIT
#
# scripts/bench-onecpu.sh - the 2 MiB pair on the fake driver with the
# workload, the supervisor and the fake all on one CPU (issue #31; the
# method of shared/reference/perf-2026-12-02.md section 1: one CPU
# measures the total CPU work per pair, stable to about 5 %, where two
# CPUs measure cross-CPU wake-ups). Prints figures; asserts nothing.
#
#   scripts/bench-onecpu.sh [ROUNDS] [PAIRS]
#   GS_BUILDS='before=/path/gpusandbox after=build/gpusandbox' scripts/bench-onecpu.sh 5 3000
#
# GS_BUILDS: name=path pairs (default: now=build/gpusandbox). Each round
# runs native and every build, perform and --p2p-register answer, in an
# order rotated each round; then the supervisor's system calls per pair
# of each build (perf stat at the syscall tracepoints, every thread of the
# supervisor, attached once the workload's set-up is done). rmbench -u:
# RM_ALLOC, the UVM map, REGISTER_VIDMEM, UNREGISTER_VIDMEM, RM_FREE, as
# cuMemAlloc/cuMemFree make them. CPU: GS_CPU (default 1). Needs root and
# /dev/fuse (tests/fakedrv/with-fake-nvidia); perf for the counts.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/bench-lib.sh

ROUNDS=${1:-5}
PAIRS=${2:-3000}
COUNT_PAIRS=${COUNT_PAIRS:-2000}
CPU=${GS_CPU:-1}
BENCH=build/tests/bench/rmbench
FAKE=tests/fakedrv/with-fake-nvidia
read -r -a BUILDS <<<"${GS_BUILDS:-now=build/gpusandbox}"
# Time for perf to attach before the loop starts (ms).
ATTACH_WAIT_MS=${ATTACH_WAIT_MS:-2000}

[ -x "$BENCH" ] || { echo "bench-onecpu: $BENCH missing: make -s -j2 all tests" >&2; exit 2; }

configs=(native)
for b in "${BUILDS[@]}"; do configs+=("${b%%=*}:perform" "${b%%=*}:answer"); done

path_of() {
	for b in "${BUILDS[@]}"; do [ "${b%%=*}" = "$1" ] && { echo "${b#*=}"; return; }; done
}

run_config() {
	local name=${1%%:*} mode=${1#*:}
	if [ "$1" = native ]; then
		taskset -c "$CPU" "$FAKE" --vidmem 64g -- "$BENCH" -u -n "$PAIRS"
	else
		taskset -c "$CPU" "$FAKE" --vidmem 64g -- "$(path_of "$name")" --user root \
			--p2p-register "$mode" -- "$BENCH" -u -n "$PAIRS"
	fi 2>/dev/null | tail -1
}

bench_header
echo "== 1. $ROUNDS interleaved rounds of $PAIRS pairs (rmbench -u), all on CPU $CPU"
out=$(mktemp)
bench_rounds "$ROUNDS" "$out" "${configs[@]}"
echo "== summary: per config, pair us (min/median/max over rounds), native/config in the same round, per-call medians"
python3 - "$out" <<'EOF'
import sys, statistics as st, collections
d = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    kv = dict(x.split('=', 1) for x in l.split() if '=' in x)
    if 'pair_us' in kv:
        d[kv['cfg']][int(kv['round'])] = kv
keys = ['alloc_us', 'map_us', 'register_us', 'unregister_us', 'free_us']
print(f"{'config':18s} {'pair_us min/med/max':>23s} {'native/config min/med/max':>26s}  alloc  map   reg   unreg free")
for c in d:
    pv = [float(v['pair_us']) for v in d[c].values()]
    rat = [float(d['native'][k]['pair_us']) / float(v['pair_us']) for k, v in d[c].items() if k in d.get('native', {})]
    pc = [st.median([float(v.get(k, 'nan')) for v in d[c].values()]) for k in keys]
    print(f"{c:18s} {min(pv):7.1f} {st.median(pv):7.1f} {max(pv):7.1f} "
          f"{min(rat):7.3f} {st.median(rat):7.3f} {max(rat):7.3f}   " + " ".join(f"{x:5.1f}" for x in pc))
EOF
rm -f "$out"

command -v perf >/dev/null || { echo "== 2. skipped: no perf"; exit 0; }
echo "== 2. supervisor system calls per pair ($COUNT_PAIRS pairs, rmbench -u), by call"
# task-clock: the supervisor's CPU time in the same window, per pair: what
# the pair costs the supervisor, whatever else the machine runs.
TP=task-clock,raw_syscalls:sys_enter
for sc in ioctl process_vm_readv process_vm_writev pidfd_getfd newfstatat statx close kcmp openat pwrite64 fcntl poll futex; do
	TP="$TP,syscalls:sys_enter_$sc"
done
for r in $(seq "${COUNT_ROUNDS:-2}"); do
for b in "${BUILDS[@]}"; do
	for mode in perform answer; do
		stat=$(mktemp)
		taskset -c "$CPU" "$FAKE" --vidmem 64g -- bash -c '
			gs=$1 bench=$2 pairs=$3 out=$4 tp=$5 mode=$6 wait=$7
			"$gs" --user root --p2p-register "$mode" -- "$bench" -u -n "$pairs" -w "$wait" >/dev/null &
			sup=$!; sleep 0.5
			perf stat -e "$tp" -p "$sup" -o "$out" 2>/dev/null & st=$!
			wait $sup; kill -INT $st; wait $st' _ "${b#*=}" "$BENCH" "$COUNT_PAIRS" "$stat" "$TP" "$mode" "$ATTACH_WAIT_MS"
		printf '%-18s' "${b%%=*}:$mode"
		awk -v n="$COUNT_PAIRS" '/syscalls:sys_enter_|raw_syscalls/ {
			gsub(",", "", $1); name = $2; sub(/.*sys_enter_?/, "", name); if (name == "") name = "all";
			printf " %s=%.2f", name, $1 / n }
			/task-clock/ { gsub(",", "", $1); printf " cpu_us=%.1f", $1 * 1000 / n } END { print "" }' "$stat"
		rm -f "$stat"
	done
done
done
