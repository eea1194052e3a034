#!/bin/bash
# GPU tier, --sm acceptance: each workload natively and under --sm 25, 50
# and 75, two sandboxes sharing the GPU (30 % and 70 %), the latency probe,
# and the research mechanisms (GPUSANDBOX_SM_MECHANISM). Everything lands in
# $OUT/sm_bench.tgz (the device returns few files). SECONDS_EACH: run length.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
W=$(mktemp -d)
B=${GPUSANDBOX:-build/gpusandbox-static}
S=${SECONDS_EACH:-22}
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$W/env.txt" 2>&1
cat "$W/env.txt"
monitor() { python3 tests/gpu/sm_util_monitor.py "$1" "$2" 1.0 & }
one() { # name sm period seconds kind [env...]
	local name=$1 sm=$2 period=$3 secs=$4 kind=$5; shift 5
	if [ "$sm" = native ]; then
		timeout $((secs + 40)) python3 tests/gpu/sm_load.py "$kind" "$secs" > "$W/$name.jsonl" 2> "$W/$name.err" &
	else
		env GPUSANDBOX_SM_DEBUG=1 "$@" timeout $((secs + 40)) $B --sm "$sm" --sm-period "$period" \
			--audit-log "$W/$name.audit.jsonl" -- \
			python3 tests/gpu/sm_load.py "$kind" "$secs" > "$W/$name.jsonl" 2> "$W/$name.err" &
	fi
	local p=$!
	monitor $p "$W/$name.util.jsonl"
	wait $p; echo "$name rc=$? $(tail -1 "$W/$name.jsonl")"; wait
	save
}
# Saved after every run, so a run cut short still brings back the rest.
save() { tar czf "$OUT/sm_bench.tgz" -C "$W" .; }
for spec in ${RUNS:-matmul:native matmul:25 matmul:50 matmul:75 small:native small:25 small:50 small:75 graph:native graph:25 graph:50 graph:75}; do
	IFS=: read -r kind sm <<<"$spec"
	one "${kind}_$sm" "$sm" "${PERIOD:-20}" "$S" "$kind"
done
if [ -z "${SKIP_EXTRA:-}" ]; then
	if [ -z "${SKIP_LATENCY:-}" ]; then
	one latency_native native 0 12 latency
	one latency_50_p20 50 20 12 latency
	one latency_50_p50 50 50 12 latency
	fi
	# Two tenants on one GPU.
	GPUSANDBOX_SM_DEBUG=1 timeout 100 $B --sm 30 --audit-log "$W/pair30.audit.jsonl" -- python3 tests/gpu/sm_load.py matmul "$S" > "$W/pair30.jsonl" 2> "$W/pair30.err" &
	a=$!
	GPUSANDBOX_SM_DEBUG=1 timeout 100 $B --sm 70 --audit-log "$W/pair70.audit.jsonl" -- python3 tests/gpu/sm_load.py matmul "$S" > "$W/pair70.jsonl" 2> "$W/pair70.err" &
	b=$!
	monitor $a "$W/pair30.util.jsonl"; monitor $b "$W/pair70.util.jsonl"
	wait $a; wait $b; echo "pair done: $(tail -1 "$W/pair30.jsonl") $(tail -1 "$W/pair70.jsonl")"; wait
	save
	for m in ${MECHS:-group-schedule group-preempt channel-schedule}; do
		one "mech_$m" 50 20 10 matmul GPUSANDBOX_SM_MECHANISM=$m
		grep -v "sample ts" "$W/mech_$m.err" | tail -3
	done
fi
dmesg 2>/dev/null | grep -i -E "xid|nvrm" | tail -40 > "$W/dmesg.txt"; grep -ci xid "$W/dmesg.txt"
tar czf "$OUT/sm_bench.tgz" -C "$W" .
