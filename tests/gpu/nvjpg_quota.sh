#!/bin/bash
# GPU tier: the video engine quota against real NVJPG engines (issue 5).
# nvjpg_engines decodes JPEGs on 3 hardware-backend nvJPEG handles:
# natively, under a policy that allows the video group with no cap, and
# under policy/video-transcode.policy (video.jpeg = 1). The supervisor's
# trace lists each NVJPG allocation and its answer. Needs
# build/gpusandbox-static. Prints the summary.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/nvjpg}
mkdir -p "$OUT"
nvcc -O2 -o /tmp/nvjpg_engines tests/gpu/nvjpg_engines.cu -lnvjpeg || exit 1
printf 'allow = compute, memory, monitoring, video\n' > "$OUT/video-nocap.policy"
summarize() { # name
	echo "== $1: $(grep -E '^(jpeg_bytes|handle|ok|after_destroy)=' "$OUT/$1.out" | tr '\n' ' ')"
	if [ -s "$OUT/$1.trace" ]; then
		echo "   NVJPG calls in the trace: $(grep -c 'VIDEO_NVJPG' "$OUT/$1.trace")"
		grep 'VIDEO_NVJPG' "$OUT/$1.trace" | sed 's/^\[gpusandbox [0-9]*\] /   /' | head -10
		echo "   other engine classes: $(grep -oE 'NV[0-9A-F]+_VIDEO_(NVDEC|NVENC|OFA)[A-Z_]*' "$OUT/$1.trace" | sort | uniq -c | tr '\n' ';')"
	fi
	[ -s "$OUT/$1.jsonl" ] && echo "   audit refusals: $(grep -c '"verdict":"refuse"' "$OUT/$1.jsonl"); $(grep -o '"resource":"video[^"]*"' "$OUT/$1.jsonl" | sort | uniq -c | tr '\n' ' ')"
}
/tmp/nvjpg_engines 3 > "$OUT/native.out" 2>&1
summarize native
build/gpusandbox-static --trace --policy "$OUT/video-nocap.policy" --audit-log "$OUT/nocap.jsonl" -- \
	/tmp/nvjpg_engines 3 > "$OUT/nocap.out" 2> "$OUT/nocap.trace"
summarize nocap
build/gpusandbox-static --trace --policy policy/video-transcode.policy --audit-log "$OUT/cap1.jsonl" -- \
	/tmp/nvjpg_engines 3 > "$OUT/cap1.out" 2> "$OUT/cap1.trace"
summarize cap1
grep '"resource":"video' "$OUT/cap1.jsonl" | head -2
build/gpusandbox-static --audit-log "$OUT/default.jsonl" -- /tmp/nvjpg_engines 3 > "$OUT/default.out" 2>&1
summarize default
grep '"verdict":"refuse"' "$OUT/default.jsonl" | head -2
