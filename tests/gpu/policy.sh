#!/bin/bash
# GPU tier for the policy file (issue #5): runs real workloads under the
# default policy and the example policies, with --trace and --audit-log,
# and writes the evidence behind the default allowlist:
#   $OUT/policy/<name>.trace   every RM call the supervisor decoded
#   $OUT/policy/<name>.jsonl   the audit log
#   $OUT/policy/summary.txt    per workload: exit status, policy refusals,
#                              and the classes and controls it needed
# A workload passes when it exits 0 with no policy refusal in its audit log.
# JAX, CuPy and torchvision run only where they are installed.
set -u
OUT=${OUT:-/tmp/gpu-out}/policy; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
S="$OUT/summary.txt"
: > "$S"
log() { echo "$*" | tee -a "$S"; }
log "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

JAX='import jax, jax.numpy as jnp; x = jnp.ones((4096, 4096)); print("jax ok", float((x @ x).sum()))'
CUPY='import cupy as cp; x = cp.ones((4096, 4096), dtype=cp.float32); print("cupy ok", float((x @ x).sum()))'
JPEG='import torch, torchvision
from torchvision.io import encode_jpeg, decode_jpeg
img = encode_jpeg(torch.randint(0, 255, (3, 512, 512), dtype=torch.uint8))
out = decode_jpeg([img] * 8, device="cuda"); torch.cuda.synchronize(); print("jpeg ok", len(out))'

# name | policy ("" = default) | command. Each entry is one line (read
# splits on "|" line by line), so multi-line programs live in files.
# name | policy ("" = default) | command
RUNS=(
	"torch-train||python3 tests/gpu/torch_train.py"
	"torch-infer||python3 tests/gpu/torch_infer.py"
	"torch-train-example|policy/pytorch-training.policy|python3 tests/gpu/torch_train.py"
	"torch-infer-example|policy/inference-server.policy|python3 tests/gpu/torch_infer.py"
	"nvidia-smi||nvidia-smi"
	"jax||python3 -c $JAX"
	"cupy||python3 -c $CUPY"
	"jpeg-default||python3 -c $JPEG"
	"jpeg-video|policy/video-transcode.policy|python3 -c $JPEG"
)
for r in "${RUNS[@]}"; do
	IFS='|' read -r name policy cmd <<<"$r"
	pol=(); [ -n "$policy" ] && pol=(--policy "$policy")
	case "$name" in
	jax) python3 -c 'import jax' 2>/dev/null || { log "== $name: SKIP (not installed)"; continue; } ;;
	cupy) python3 -c 'import cupy' 2>/dev/null || { log "== $name: SKIP (not installed)"; continue; } ;;
	jpeg-*) python3 -c 'import torchvision' 2>/dev/null || { log "== $name: SKIP (no torchvision)"; continue; } ;;
	esac
	# shellcheck disable=SC2086 # cmd is "python3 -c PROGRAM": split once
	if [ "${cmd#python3 -c }" != "$cmd" ]; then
		$B "${pol[@]}" --trace --audit-log "$OUT/$name.jsonl" -- python3 -c "${cmd#python3 -c }" \
			>"$OUT/$name.out" 2>"$OUT/$name.trace"
	else
		$B "${pol[@]}" --trace --audit-log "$OUT/$name.jsonl" -- $cmd >"$OUT/$name.out" 2>"$OUT/$name.trace"
	fi
	rc=$?
	refused=$(grep -cE '"reason":"((class|control) (not allowed by the policy|unknown to gpusandbox)|escape unknown)' "$OUT/$name.jsonl")
	log "== $name (${policy:-default policy}): exit $rc, policy refusals $refused"
	grep -oE '"(class|control)":"[^"]*","[a-z_]*name":"[^"]*"' "$OUT/$name.jsonl" | sort | uniq -c |
		sed 's/^/   audited /' | tee -a "$S"
	log "   classes: $(grep -oE 'class=0x[0-9a-f]+( [A-Z0-9_]+)?' "$OUT/$name.trace" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
	log "   controls: $(grep -oE 'cmd=0x[0-9a-f]+( [A-Za-z0-9_]+)?' "$OUT/$name.trace" | sort -u | cut -d= -f2 | tr '\n' ' ')"
	log "   engine records: $(grep -c '"resource":"video\.' "$OUT/$name.jsonl")"
done
