#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier (issue #31): where the supervisor's own time goes during the
# 2 MiB pair, by system call and by function. Figures are printed, never
# asserted.
#
#   PERF="perf" OUT=/tmp/gpu-out tests/gpu/perf_supervisor.sh
#
# PERF is the command that runs perf: the GPU machine has none, so round 7
# carried Debian's (its binary and libraries, run through the carried
# ld-linux: PERF="build/perfkit/lib/ld-linux-x86-64.so.2 --library-path
# build/perfkit/lib build/perfkit/perf"). Two runs of 60000 pairs under
# build/gpusandbox-static: during the first, `perf trace -s` on the
# supervisor for 1.5 s (calls and mean time per system call); during the
# second, `perf record -e cpu-clock -g` for 2 s, reported by shared object
# and by symbol, self and with children.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
read -r -a P <<<"${PERF:-perf}"
perf_() { env -u LD_LIBRARY_PATH "${P[@]}" "$@"; }
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
perf_ --version > "$OUT/perf-run.txt" 2>&1 || { echo "perf_supervisor: no perf ($PERF)"; exit 2; }
start() {
	"$B" --user root --mem 120g -- /tmp/bench_memalloc 2 60000 >> "$OUT/perf-run.txt" 2>&1 &
	sleep 3
	SUP=$(pgrep -f "^$B --user root" | head -1)
	echo "pid=$SUP" >> "$OUT/perf-run.txt"
}
start
perf_ trace -s -p "$SUP" -o "$OUT/perf-trace.txt" -- sleep 1.5 >> "$OUT/perf-run.txt" 2>&1
wait
start
perf_ record -e cpu-clock -F 20000 -g -p "$SUP" -o /tmp/perf.data -- sleep 2 >> "$OUT/perf-run.txt" 2>&1
wait
perf_ report -i /tmp/perf.data --no-children --sort dso -g none -q > "$OUT/perf-dso.txt" 2>&1
perf_ report -i /tmp/perf.data --no-children --sort sym -g none -q 2>/dev/null | head -150 > "$OUT/perf-sym.txt"
perf_ report -i /tmp/perf.data --children --sort sym -g none -q 2>/dev/null | head -200 > "$OUT/perf-children.txt"
cat "$OUT/perf-dso.txt"; head -40 "$OUT/perf-sym.txt"
