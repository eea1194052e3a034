#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier (issue #31): the supervisor's own time by system call, on the
# machine itself, with no perf: the kernel's raw_syscalls tracepoints
# through tracefs, for the supervisor and everything it starts. Prints
# figures (tests/gpu/systrace_summary.py); asserts nothing.
#
#   OUT=/tmp/gpu-out tests/gpu/systrace.sh NAME GPUSANDBOX [OPTIONS...] -- COMMAND...
#
# Writes $OUT/systrace-NAME.txt: per trapped call kind (the workload's
# ioctl word), the supervisor's system calls from the receive to the
# answer and after it, each with its count and mean time a call, and the
# time between them (its own user space). A tracepoint pair costs some
# hundreds of nanoseconds, so every figure is a little above the
# untraced run's: compare the kinds and the system calls with each
# other, not with an untraced run. SYSTRACE_MIN: the fewest calls a kind
# is printed with (100). Needs root and tracefs. The summary's own check,
# on a trace made up for it, runs with every test: systrace_selftest.py.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
NAME=$1; shift
T=/sys/kernel/tracing
# A machine that has not mounted it yet (the GPU machine had not).
[ -e "$T/trace" ] || mount -t tracefs nodev "$T" 2>/dev/null
[ -w "$T/trace" ] || T=/sys/kernel/debug/tracing
if [ ! -w "$T/trace" ]; then
	echo "systrace: no writable tracefs" | tee "$OUT/systrace-$NAME.txt"
	exit 2
fi
# Megabytes of trace buffer per CPU: about 100 bytes an event, two events
# a system call.
BUF_KB=${SYSTRACE_BUF_KB:-32768}
RAW=$(mktemp /tmp/systrace.XXXXXX)
# The buffer's size before, restored after ("7 (expanded: 1408)": the
# expanded figure is the one in use).
OLD_KB=$(sed -n 's/.*expanded: \([0-9]*\).*/\1/p; t; s/^\([0-9]*\).*/\1/p' "$T/buffer_size_kb")

reset_trace() {
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/raw_syscalls/enable"
	echo > "$T/set_event_pid"
	echo 0 > "$T/options/event-fork"
	echo local > "$T/trace_clock"
}

reset_trace
echo > "$T/trace"
echo mono > "$T/trace_clock"
echo "$BUF_KB" > "$T/buffer_size_kb"
echo 1 > "$T/options/event-fork"
echo 1 > "$T/events/raw_syscalls/enable"
# The shell below puts itself in set_event_pid, then execs the command:
# every task it makes is followed (event-fork), the supervisor's threads
# and the workload.
bash -c 'echo $$ > "$1/set_event_pid"; echo 1 > "$1/tracing_on"; shift; exec "$@"' _ "$T" "$@" \
	> "$OUT/systrace-$NAME.run" 2>&1
rc=$?
echo 0 > "$T/tracing_on"
cat "$T/trace" > "$RAW"
reset_trace
echo "${OLD_KB:-1408}" > "$T/buffer_size_kb"
{
	echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1) $(uname -r)"
	echo "# $* (rc $rc)"
	tail -2 "$OUT/systrace-$NAME.run"
	python3 "$(dirname "$0")/systrace_summary.py" "$RAW" "${SYSTRACE_MIN:-100}"
} > "$OUT/systrace-$NAME.txt" 2>&1
rm -f "$RAW"
cat "$OUT/systrace-$NAME.txt"
