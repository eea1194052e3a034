#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/audit-review/bench.sh [SIZE...] - time and peak memory of
# `gpusandbox audit VIEW` and `verify` on generated logs (issue #32).
#
# A benchmark, not a test: it prints figures and asserts nothing, and CI
# does not run it (a loaded 2-core machine's clock proves nothing). SIZE
# is a log size in bytes (default: 100 MB and 1 GB); each log is made by
# craft.py (64 sandboxes of allocations, releases, refusals and usage
# records, chained and sealed as the supervisor writes them) under
# $BENCH_DIR (default: a temporary directory, removed at the end; a log
# already there is reused). Peak memory is the run's maximum resident set
# (getrusage's ru_maxrss, as /usr/bin/time -v reports it), time the wall
# clock. BASELINE=/path/to/an/older/gpusandbox
# measures that binary too, for a before-and-after; VIEWS="summary verify"
# measures only those.
#
#   tests/audit-review/bench.sh 100000000
#   BASELINE=/tmp/gpusandbox-main tests/audit-review/bench.sh
set -u

cd "$(dirname "$0")/../.." || exit 2

GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
BASELINE=${BASELINE:-}
CRAFT=tests/audit-review/craft.py
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(100000000 1000000000)
read -r -a VIEWS <<<"${VIEWS:-summary denials timeline usage plot verify}"

if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
	mkdir -p "$dir" || exit 2
else
	dir=$(mktemp -d /tmp/gs-review-bench.XXXXXX) || exit 2
	trap 'rm -rf "$dir"' EXIT
fi

# measure BINARY ARGS...: "SECONDS PEAK_MIB EXIT" of one run, by GNU
# time (Debian's "time" package); without it, by python3, whose figure
# then includes the few MiB of the python3 that forked the run.
measure() {
	local out secs kib rc
	if [ -x /usr/bin/time ]; then
		out=$(/usr/bin/time -f '%e %M %x' "$@" 2>&1 >/dev/null | tail -n 1)
		read -r secs kib rc <<<"$out"
		awk -v s="$secs" -v k="$kib" -v x="$rc" 'BEGIN { printf "%.2f %.1f %d\n", s, k / 1024, x }'
		return
	fi
	python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.monotonic() - t
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print('%.2f %.1f %d' % (wall, peak_kib / 1024, rc))
PY
}

printf '%-12s %-10s %-10s %10s %12s %6s\n' log view binary seconds "peak MiB" exit
for size in "${SIZES[@]}"; do
	log=$dir/bench-$size.jsonl
	if [ ! -s "$log" ]; then
		python3 "$CRAFT" size "$log" "$size" || exit 2
	fi
	label="$(( $(stat -c %s "$log") / 1000000 )) MB"
	for view in "${VIEWS[@]}"; do
		for bin in "$GPUSANDBOX" ${BASELINE:+"$BASELINE"}; do
			name=new
			[ "$bin" = "$BASELINE" ] && name=baseline
			read -r secs peak rc < <(measure "$bin" audit "$view" "$log")
			printf '%-12s %-10s %-10s %10s %12s %6s\n' "$label" "$view" "$name" "$secs" "$peak" "$rc"
		done
	done
done
