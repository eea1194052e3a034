#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier (issue #29, item 2): NVDEC sessions through the real NVDECODE
# API under the video engine quota. nvdec_sessions N (caps query, N
# decoders held at once, destroyed, N again, then a lossless decode of an
# I_PCM H.264 picture checked sample by sample) runs:
#   native, with rmlog.so preloaded (what libnvcuvid allocates and frees,
#   with the driver's status);
#   in a sandbox whose policy allows video with no cap;
#   in a sandbox with video.decoders = CAP (default 2).
# Then PROCS (default CAP+1) processes of nvdec_sessions 1 HOLD, started
# together in one sandbox, each holding one decoder for HOLD seconds:
# natively all open; under video.decoders = CAP, CAP open and the rest are
# refused at the quota; a second round after they exit opens CAP again
# (the sessions were given back). libnvcuvid makes every decoder after a
# process's first on the control file its first lives on, which
# gpusandbox refuses (one client per control file): one decoder per
# process opens in a sandbox.
# Prints each run's lines, the video-engine allocations seen, and the
# audit log's refusals. Figures are printed, never asserted.
# Usage: tests/gpu/nvdec_check.sh [OUTDIR]   (build first: make build/gpusandbox-static)
cd "$(dirname "$0")/../.." || exit 2
set -u
B=${GPUSANDBOX:-build/gpusandbox-static}
OUT=${1:-/tmp/nvdec}
N=${N:-4}
CAP=${CAP:-2}
PROCS=${PROCS:-$((CAP + 1))}
HOLD=${HOLD:-6}
mkdir -p "$OUT"
gcc -O2 -shared -fPIC -Iinclude -o /tmp/rmlog.so tests/gpu/rmlog.c -ldl || exit 1
nvcc -O2 -o /tmp/nvdec_sessions tests/gpu/nvdec_sessions.c -lcuda -ldl || exit 1
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) $(uname -r)"

# The video engines' classes end in b0 (NVDEC), b7 (NVENC), d1 (NVJPG), fa (OFA).
video_allocs() { grep -E '^[0-9]+ alloc .*class=0x[0-9a-f]*(b0|b7|d1|fa) ' "$1"; }
echo "== native"
rm -f "$OUT/native.rmlog"
RMLOG="$OUT/native.rmlog" LD_PRELOAD=/tmp/rmlog.so /tmp/nvdec_sessions "$N" > "$OUT/native.out" 2>&1
cat "$OUT/native.out"
echo "video-engine allocations natively: $(video_allocs "$OUT/native.rmlog" | wc -l)"
video_allocs "$OUT/native.rmlog" | head -20
echo "dups natively: $(grep -c ' dup ' "$OUT/native.rmlog"), across clients: $(grep ' dup ' "$OUT/native.rmlog" | awk '{split($3,a,"="); split($7,b,"="); if (a[2] != b[2]) n++} END {print n+0}')"
echo "frees: $(grep -c ' free ' "$OUT/native.rmlog"); allocs by class: $(grep -o 'alloc .*class=0x[0-9a-f]*' "$OUT/native.rmlog" | grep -o 'class=0x[0-9a-f]*' | sort | uniq -c | tr '\n' ' ')"

sandboxed() { # name policy-lines
	local name=$1; shift
	printf '%s\n' "$@" > "$OUT/$name.policy"
	timeout 120 "$B" --user root --trace --policy "$OUT/$name.policy" --audit-log "$OUT/$name.jsonl" -- \
		/tmp/nvdec_sessions "$N" > "$OUT/$name.out" 2> "$OUT/$name.trace"
	echo "== $name (rc=$?): $(tr '\n' ' ' < "$OUT/$name.policy")"
	cat "$OUT/$name.out"
	echo "video lines in the trace: $(grep -ciE 'video|nvdec|b8b0' "$OUT/$name.trace")"
	grep -iE 'VIDEO|NVDEC' "$OUT/$name.trace" | sed 's/^\[gpusandbox [0-9]*\] /   /' | head -30
	grep -E '^gpusandbox:' "$OUT/$name.trace" | head -5
	echo "denials: $("$B" audit denials "$OUT/$name.jsonl" 2>&1 | head -8 | tr '\n' '|')"
}
sandboxed nocap 'allow = compute, memory, monitoring, video'
sandboxed cap 'allow = compute, memory, monitoring, video' "video.decoders = $CAP"

# PROCS processes, one decoder each, held together.
procs() { # name [gpusandbox args...]
	local name=$1; shift
	local cmd="for i in \$(seq $PROCS); do /tmp/nvdec_sessions 1 $HOLD > $OUT/$name.p\$i.out 2>&1 & done; wait"
	if [ $# -gt 0 ]; then
		timeout 180 "$B" --user root "$@" --audit-log "$OUT/$name.jsonl" -- bash -c "$cmd" > "$OUT/$name.sb" 2>&1
	else
		timeout 180 bash -c "$cmd"
	fi
	echo "== $name ($PROCS processes, one decoder each): opened $(cat "$OUT"/$name.p*.out | grep -c '^created=1 of 1'), decode exact in $(cat "$OUT"/$name.p*.out | grep -c '^decode=exact')"
	grep -h '^open:' "$OUT"/$name.p*.out | sort | uniq -c | tr '\n' ' '; echo
	[ -f "$OUT/$name.sb" ] && grep -E '^gpusandbox: [0-9]+ calls? refused' "$OUT/$name.sb"
	[ -f "$OUT/$name.jsonl" ] && echo "denials: $("$B" audit denials "$OUT/$name.jsonl" 2>&1 | head -6 | cut -c1-200 | tr '\n' '|')"
}
printf 'allow = compute, memory, monitoring, video\nvideo.decoders = %s\n' "$CAP" > "$OUT/procs-cap.policy"
procs procs-native
procs procs-cap --policy "$OUT/procs-cap.policy"
procs procs-cap-again --policy "$OUT/procs-cap.policy"
