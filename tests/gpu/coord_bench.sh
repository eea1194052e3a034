#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/gpu/coord_bench.sh - issue #13 on a GPU: several sandboxes sharing
# one GPU through the compute-share coordinator (supervisor/compute/coord.h).
# bf16 8192^3 matmul loops (tests/gpu/sm_load.py), run as:
#   alone        one native process: the throughput every ratio is against;
#   native2      two native processes time-sliced by the driver;
#   cap / guarantee 30+70, 50+50, 25+25+50 (--sm-mode cap and guarantee);
#   idle         guarantee 50+50, tenant 1 stops working (alive) after 10 s:
#                how soon tenant 2 gets the GPU (0.25 s windows);
#   fight        (only when RUNS names it) cap 30+70 where tenant 1 also
#                churns CUDA-context processes, and fightfree, the same
#                tenant 1 with no gpusandbox (the baseline).
# tests/gpu/coord_summary.py then prints, per run, each tenant's GPU-time
# share (NVML per-process utilization), its throughput as a fraction of
# alone, their sum, the idle hand-over time, the switch cost (one
# disable or enable of a sandbox's channels, as the supervisor timed it) and
# the longest off phase (the longest a tenant waited for its window).
# A failed step says why and the script goes on. Total about 6 minutes
# (SECONDS_EACH=20 per run plus start-up); everything lands in
# $OUT/coord_bench.tgz, saved after every step.
#   GPUSANDBOX  the binary (default build/gpusandbox-static, as the other
#               GPU scripts); PY  the Python with torch and pynvml
#               (default /opt/torch/.venv/bin/python).
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
W=$(mktemp -d)
B=${GPUSANDBOX:-build/gpusandbox-static}
[ -x "$B" ] || B=build/gpusandbox
PY=${PY:-/opt/torch/.venv/bin/python}
S=${SECONDS_EACH:-20}
# SM_ARGS: more options for every sandboxed tenant (e.g. "--sm-period 50ms");
# RUNS: the runs to make (default all: alone native2 cap guarantee idle;
# alone is always made, every ratio is against it).
read -r -a SM_ARGS <<<"${SM_ARGS:-}"
RUNS=${RUNS:-native2 cap guarantee idle}
wanted() { [[ " $RUNS " == *" $1 "* ]]; }
IDLE_AFTER=10
# A coordinator directory of this run's own: no host left over from an
# earlier run can take part.
export GPUSANDBOX_COORD_DIR="$W/coord"
mkdir -m 0700 "$GPUSANDBOX_COORD_DIR"

{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; "$B" --version; } \
	>"$W/env.txt" 2>&1
cat "$W/env.txt"
save() { tar czf "$OUT/coord_bench.tgz" -C "$W" . 2>/dev/null; }

# tenant TAG PCT MODE [ENV...]: starts one tenant (PCT native: no sandbox)
# and its NVML monitor in the background; appends the tenant's pid to pids.
tenant() {
	local tag=$1 pct=$2 mode=$3; shift 3
	if [ "$mode" = native ]; then
		env "$@" timeout $((S + 90)) "$PY" tests/gpu/sm_load.py matmul "$S" >"$W/$tag.jsonl" 2>"$W/$tag.err" &
	else
		env GPUSANDBOX_SM_DEBUG=1 "$@" timeout $((S + 90)) "$B" --sm "$pct" --sm-mode "$mode" ${SM_ARGS[@]+"${SM_ARGS[@]}"} \
			--audit-log "$W/$tag.audit.jsonl" -- "$PY" tests/gpu/sm_load.py matmul "$S" \
			>"$W/$tag.jsonl" 2> >(tee >(grep 'sample ts=' >"$W/$tag.samples") | grep -v 'sample ts=' >"$W/$tag.err") &
	fi
	local p=$!
	pids+=("$p")
	"$PY" tests/gpu/sm_util_monitor.py "$p" "$W/$tag.util.jsonl" 0.5 2>"$W/$tag.monitor.err" &
}

# group NAME MODE PCT... : the tenants at once; fails if one fails.
group() {
	local name=$1 mode=$2 i=0 rc=0 p; shift 2
	pids=()
	for pct in "$@"; do
		i=$((i + 1))
		tenant "${name}_t$i" "$pct" "$mode"
	done
	for p in "${pids[@]}"; do wait "$p" || rc=$?; done
	wait
	echo "$name: rc=$rc"
	return "$rc"
}

step() {
	local name=$1; shift
	"$@" || echo "STEP $name FAILED (rc=$?): see $W/${name}_t*.err in the archive"
	save
}

idle_run() {
	pids=()
	tenant idle_t1 50 guarantee SM_LOAD_IDLE_AFTER_S=$IDLE_AFTER
	tenant idle_t2 50 guarantee SM_LOAD_WINDOW_S=0.25
	local rc=0 p
	for p in "${pids[@]}"; do wait "$p" || rc=$?; done
	wait
	echo "idle: rc=$rc"
	return "$rc"
}

echo "runs: alone $RUNS; tenant options: ${SM_ARGS[*]:-none}" | tee -a "$W/env.txt"
step alone group alone native 100
wanted native2 && step native2 group native2 native 100 100
for mode in cap guarantee; do
	wanted "$mode" || continue
	step "${mode}_30_70" group "${mode}_30_70" "$mode" 30 70
	step "${mode}_50_50" group "${mode}_50_50" "$mode" 50 50
	step "${mode}_25_25_50" group "${mode}_25_25_50" "$mode" 25 25 50
done
wanted idle && step idle idle_run
# fight: tenant 1 (cap 30) churns CUDA-context processes all along (issue
# #13's fighting tenant); fightfree: the same tenant with no gpusandbox,
# the baseline that shows what the cap protects tenant 2 (cap 70) from.
if wanted fight; then
	nvcc -o "$W/ctx_alloc" tests/gpu/ctx_alloc.c -lcuda || echo "STEP fight: no ctx_alloc"
	fight_run() {
		local name=$1 mode1=$2 rc=0 p
		pids=()
		tenant "${name}_t1" 30 "$mode1" SM_LOAD_CHURN="$W/ctx_alloc"
		tenant "${name}_t2" 70 cap
		for p in "${pids[@]}"; do wait "$p" || rc=$?; done
		wait
		echo "$name: rc=$rc"
		return "$rc"
	}
	step fight fight_run fight cap
	step fightfree fight_run fightfree native
fi
dmesg 2>/dev/null | grep -i -E "xid|nvrm" | tail -40 >"$W/dmesg.txt"
echo "Xid lines in dmesg: $(grep -ci xid "$W/dmesg.txt")"
"$PY" tests/gpu/coord_summary.py "$W" | tee "$W/summary.txt" || echo "SUMMARY FAILED: the raw files are in the archive"
save
echo "archive: $OUT/coord_bench.tgz"
