#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier: issue #31's per-call cost, two builds interleaved with native
# in one session. Figures are printed, never asserted.
#
#   A=/path/gpusandbox-before B=build/gpusandbox-static REPS=5 OUT=/tmp/gpu-out \
#   tests/gpu/percall_ab.sh
#
# Per round, in an order rotated each round: native; A and B, each with
# --p2p-register perform (the default) and answer. Each run is
# bench_memalloc 2 3000 (the 2 MiB cuMemAlloc/cuMemFree pair) with
# ioctl_time.so preloaded, so that every ioctl is timed by kind from
# inside the workload (a trapped call's time includes its trap and the
# supervisor's work). Then bench_trap (the cheapest trapped calls: a
# control performed, an ioctl on /dev/null continued after a look, a
# size-0 word continued without one), natively and under
# each build. Prints, per configuration, the pair (pairs/s and us, median
# of rounds) and its ratio to native in the same round, and per call kind
# the time per call (us, mean over the run, median over rounds) and
# sandboxed minus native: the figures docs/perf-rounds.md "Down to the trap"
# asks for (issue #31: a continued call <= 1.5 us over the bare trap, a
# performed one <= 3 us of the supervisor's own work).
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
A=${A:?set A to the build before (e.g. the merge base, built static)}
B=${B:-build/gpusandbox-static}
REPS=${REPS:-5}
PAIRS=${PAIRS:-3000}
TXT="$OUT/percall_ab.txt"
. tests/gpu/bench_common.sh
bench_start || exit 1
log "# A=$A B=$B reps=$REPS pairs=$PAIRS"
cc -O2 -shared -fPIC -Iinclude -o "$OUT/ioctl_time.so" tests/gpu/ioctl_time.c -ldl || exit 1
cc -static -O2 -Iinclude -o "$OUT/bench_trap" tests/gpu/bench_trap.c || exit 1

# CONFIGS="native A:perform B:none B:none:audit ..." picks the runs
# (native first); each build's --p2p-register mode follows the colon, and a
# third field adds, "+"-separated: "audit", --audit-log (issue #31: the
# pair's target holds with and without it); "user", --uvm-map as-user with
# the workload run as AS_USER_UID (a uid no process of the machine has);
# "pin", the whole run (supervisor and workload) on the CPUs of PIN_CPUS
# (taskset), which "native::pin" does for native: does the driver take
# longer for a call the supervisor makes on another CPU than the caller's?
AS_USER_UID=${AS_USER_UID:-47011}
PIN_CPUS=${PIN_CPUS:-2}
read -r -a CONFIGS <<<"${CONFIGS:-native A:perform A:answer B:perform B:answer}"
run_one() {
	local cfg=$1 r=$2 dir pre=()
	local build mode extra
	dir="$OUT/times/${cfg//:/_}/r$r"
	mkdir -p "$dir"
	IFS=: read -r build mode extra <<<"$cfg"
	case "+$extra+" in *+pin+*) pre=(taskset -c "$PIN_CPUS") ;; esac
	case $build in
	native) ;;
	A | B)
		[ "$build" = A ] && pre+=("$A") || pre+=("$B")
		pre+=(--mem 120g --p2p-register "$mode")
		# Outside the times directory, which the summary reads whole.
		mkdir -p "$OUT/audit"
		case "+$extra+" in *+audit+*) pre+=(--audit-log "$OUT/audit/${cfg//:/_}_r$r.jsonl") ;; esac
		case "+$extra+" in *+user+*)
			chmod 0777 "$dir"
			pre+=(--user "$AS_USER_UID" --group "$AS_USER_UID" --uvm-map as-user) ;;
		esac
		pre+=(--) ;;
	esac
	# The preload goes to the workload alone: the supervisor (dynamically
	# linked against libc) would time its own ioctls too, add the
	# wrapper's cost to every one of them, and write its own counts into
	# the run's directory beside the workload's.
	"${pre[@]}" env IOCTL_TIME_DIR="$dir" LD_PRELOAD="$OUT/ioctl_time.so" "$MEMALLOC" 2 "$PAIRS"
}

k=${#CONFIGS[@]}
for r in $(seq "$REPS"); do
	for i in $(seq 0 $((k - 1))); do
		cfg=${CONFIGS[$(((i + r) % k))]}
		log "round=$r cfg=$cfg $(run_one "$cfg" "$r" | tail -1)"
	done
done

log "# bench_trap (ns per call): native, A, B"
for r in $(seq "$REPS"); do
	log "trap round=$r native $("$OUT/bench_trap" 2>&1 | tr '\n' ' ')"
	log "trap round=$r A $("$A" --mem 120g -- "$OUT/bench_trap" 2>&1 | tr '\n' ' ')"
	log "trap round=$r B $("$B" --mem 120g -- "$OUT/bench_trap" 2>&1 | tr '\n' ' ')"
done

log "# per call kind: mean us per call in each run, median over rounds; B - native"
for cfg in "${CONFIGS[@]:1}"; do
	log "## native vs $cfg"
	python3 tests/gpu/ioctl_time_summary.py "$OUT/times/native" "$OUT/times/${cfg//:/_}" native "$cfg" \
		>"$OUT/kinds-${cfg//:/_}.txt"
	head -20 "$OUT/kinds-${cfg//:/_}.txt" | tee -a "$TXT"
done
log "# the pair: pairs/s per round (native/config is the ratio asked for)"
python3 - "$TXT" <<'EOF' | tee -a "$TXT"
import sys, re, statistics as st, collections
d = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    m = re.match(r"round=(\d+) cfg=(\S+) (.*)", l)
    if not m:
        continue
    v = re.search(r"pairs_per_s[=:] *([0-9.]+)", m.group(3)) or re.search(r"([0-9.]+) pairs/s", m.group(3))
    if v:
        d[m.group(2)][int(m.group(1))] = float(v.group(1))
for c, runs in d.items():
    rat = [runs[r] / d["native"][r] for r in runs if r in d.get("native", {})]
    print(f"{c:12s} pairs/s median {st.median(runs.values()):9.0f}  us/pair {1e6 / st.median(runs.values()):7.1f}"
          f"  ratio to native (same round) median {st.median(rat):.3f} [{min(rat):.3f}-{max(rat):.3f}]")
EOF
