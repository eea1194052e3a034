#!/bin/bash
# GPU tier, --sm research run 1: does the closed loop work on the real
# driver, and how do period and workload kind affect it. Writes to $OUT.
# SECONDS_EACH sets the length of each run.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
S=${SECONDS_EACH:-12}
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
run() { # name, then the command
	local name=$1; shift
	"$@" > "$OUT/$name.jsonl" 2> "$OUT/$name.err" &
	local p=$!
	python3 tests/gpu/sm_util_monitor.py $p "$OUT/$name.util.jsonl" 1.0 &
	wait $p; echo "$name rc=$?"; wait
	tail -1 "$OUT/$name.jsonl"
}
for spec in ${RUNS:-"native:matmul"}; do
	name=${spec//[:,]/_}; IFS=: read -r sm kind period <<<"$spec"
	if [ "$sm" = native ]; then
		run "$name" timeout 120 python3 tests/gpu/sm_load.py "$kind" "$S"
	else
		GPUSANDBOX_SM_DEBUG=1 run "$name" timeout 120 $B --sm "$sm" --sm-period "${period:-50}" \
			--audit-log "$OUT/$name.audit.jsonl" -- python3 tests/gpu/sm_load.py "$kind" "$S"
		grep -v "sample ts" "$OUT/$name.err" | tail -4
	fi
done
dmesg 2>/dev/null | grep -i -E "xid|nvrm" | tail -20 > "$OUT/dmesg.txt"; cat "$OUT/dmesg.txt"
