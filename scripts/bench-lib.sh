# SPDX-License-Identifier: MIT
# scripts/bench-lib.sh - what the one-CPU benches share (bench-onecpu.sh,
# bench-agent.sh), sourced from the repository root.

# bench_header: the machine and the commit, as the first lines of a run.
bench_header() {
	echo "== machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "== commit: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo +dirty); builds: ${BUILDS[*]}"
}

# bench_rounds ROUNDS OUT CONFIG...: ROUNDS rounds of every CONFIG, the
# order rotated each round, each run's line (run_config CONFIG, the
# caller's) tagged round= and cfg= on stdout and appended to OUT.
bench_rounds() {
	local rounds=$1 out=$2 r i c
	shift 2
	local configs=("$@") k=$#
	for r in $(seq "$rounds"); do
		for i in $(seq 0 $((k - 1))); do
			c=${configs[$(((i + r) % k))]}
			echo "round=$r cfg=$c $(run_config "$c")" | tee -a "$out"
		done
	done
}
