#!/bin/bash
# GPU tier: A/B of the 2 MiB and 256 MiB cuMemAlloc/cuMemFree cost between two
# gpusandbox binaries and native, interleaved in one session. A and B are
# the binaries (A=build/ab/gpusandbox-premerge by default, B=the current
# static build). Prints one line per run and the profile of one run each.
set -u
A=${A:-build/ab/gpusandbox-premerge}
B=${B:-build/gpusandbox-static}
OUTF=${OUTF:-/dev/null}
REPS=${REPS:-4}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) kernel $(uname -r)"
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
for i in $(seq "$REPS"); do
	for mode in native A B; do
		case $mode in native) pre=();; A) pre=("$A" --mem 120g --);; B) pre=("$B" --mem 120g --);; esac
		for mib in 2 256; do
			echo "memalloc $mode $mib $("${pre[@]}" /tmp/bench_memalloc $mib $([ $mib = 2 ] && echo 3000 || echo 1000))"
		done
	done
done
for mode in A B; do
	bin=$A; [ $mode = B ] && bin=$B
	echo "profile $mode:"; GPUSANDBOX_PROFILE=1 "$bin" --mem 120g -- /tmp/bench_memalloc 2 1000 2>&1 | tail -12
done
