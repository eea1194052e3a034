#!/bin/bash
# GPU tier (issue #15 record level, call stacks, metrics; issue #16 the
# audit log's cost): on a real GPU, the 2 MiB cuMemAlloc+cuMemFree pair
# natively, under gpusandbox, and with --audit-log at each --audit-level
# (records written, interleaved rounds); a PyTorch run refused by --mem
# whose deny record must carry a symbolized stack (printed: expect libcuda
# and libtorch/libc10 frames), its log verified; and --metrics-file of that
# run checked by tests/metrics/check_prom.py, with the memory figures
# printed beside nvidia-smi's. Prints figures; the lead reads them.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
$B --version | tail -1
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
for i in 1 2 3; do
	echo "memalloc native $(/tmp/bench_memalloc 2 3000)"
	echo "memalloc sandbox $($B --user root --mem 120g -- /tmp/bench_memalloc 2 3000)"
	for lv in refusals standard all; do
		rm -f "$OUT/level-$lv.jsonl"
		r=$($B --user root --mem 120g --audit-level "$lv" --audit-log "$OUT/level-$lv.jsonl" -- \
			/tmp/bench_memalloc 2 3000)
		echo "memalloc audit-$lv $r records=$(wc -l <"$OUT/level-$lv.jsonl")"
	done
done
for lv in refusals standard all; do $B audit verify "$OUT/level-$lv.jsonl"; done

echo "== PyTorch refused by --mem 4g: the deny record's stack"
rm -f "$OUT/stack.jsonl" "$OUT/torch.prom"
$B --user root --mem 4g --audit-log "$OUT/stack.jsonl" --metrics-file "$OUT/torch.prom" -- \
	python3 tests/gpu/torch_quota.py >"$OUT/stack.out" 2>&1
echo "rc=$? $(tail -1 "$OUT/stack.out" | cut -c1-200)"
python3 - "$OUT/stack.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
deny = [r for r in recs if r["event"] == "decision" and r["verdict"] == "deny"]
print(f"{len(recs)} records, {len(deny)} deny written; start level={recs[0]['level']} stacks={recs[0]['stacks']}")
for r in deny[:2]:
    print("deny", r.get("call"), r.get("class"), r.get("size"), "stack_error:", r.get("stack_error"))
    for f in r.get("stack", []):
        print("   ", f)
PY
$B audit verify "$OUT/stack.jsonl"; echo "verify rc=$?"
python3 tests/metrics/check_prom.py "$OUT/torch.prom"; echo "check_prom rc=$?"
grep -E '^gpusandbox_(memory|refusals|audit)' "$OUT/torch.prom"
