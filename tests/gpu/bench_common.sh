# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the GPU benchmarks (bench.sh, start_ab.sh), from the
# repository's root, after they set OUT and TXT: their logging, the
# fields they read, and the makespan of processes started at once.
MEMALLOC=/tmp/bench_memalloc
log() { echo "$*" | tee -a "$TXT"; }
# The value of key $1 in "k=v" or JSON ("k": v) output.
field() { grep -o "$1\"\?[=:] *[-0-9.e+]*" | head -1 | sed 's/.*[=:] *//'; }
now() { date +%s.%N; }

# Starts the log with the machine, and builds the pair benchmark.
bench_start() {
	: > "$TXT"
	log "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) kernel $(uname -r) gpusandbox $(git rev-parse --short HEAD 2>/dev/null)"
	nvcc -O2 -o "$MEMALLOC" tests/gpu/bench_memalloc.c -lcuda
}

# Runs "$@" N times at once and prints the makespan in seconds.
at_once() {
	local n=$1; shift
	local t0 pids=() rc=0
	t0=$(now)
	for _ in $(seq "$n"); do "$@" > /dev/null & pids+=($!); done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	[ "$rc" = 0 ] || { echo "fail"; return; }
	echo "$(now) $t0" | awk '{ printf "%.4f", $1 - $2 }'
}
