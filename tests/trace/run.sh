#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/trace/run.sh [NAME...] - golden-output tests for --trace, in the
# style of strace's tests: a fixed scenario runs under --trace against the
# fake driver, and what gpusandbox printed is compared, line for line, to
# the committed expected output once the run's own numbers are normalised
# (the trapped task's id becomes PID).
#
# A scenario is a trace in the shared format, replayed by
# build/tests/replay/replay, so the calls and their order are fixed. The
# expected file is tests/trace/NAME.out. GS_TRACE_UPDATE=1 rewrites the
# expected files from this run instead of comparing (review the diff).
#
# Builds nothing: run `make` first. Prints PASS/FAIL/SKIP per test and
# `N passed, M failed`; exit 1 on failure. Environment: GPUSANDBOX,
# WITH_FAKE, GS_TRACE_TIMEOUT (default 60), GS_TRACE_KEEP=DIR.
set -u

cd "$(dirname "$0")/../.." || exit 2

GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
REPLAY=build/tests/replay/replay
TIMEOUT=${GS_TRACE_TIMEOUT:-60}
FAKE_VIDMEM=16g
DIR=tests/trace

. tests/lib/harness.sh
harness_tmpdir "${GS_TRACE_KEEP:-}" gs-trace

# name | gpusandbox options | replay options | trace (under tests/trace)
TESTS=(
	"alloc-quota|--mem 64m|--default-vidmem 32m|alloc-quota.trace"
	"channel-groups|--channel-groups 1||channels.trace"
)

harness_probe_or_skip "$@"

# The lines gpusandbox printed, with the task id normalised.
normalise() {
	grep -E '^\[gpusandbox' "$1" | sed -E 's/^\[gpusandbox [0-9]+\]/[gpusandbox PID]/'
}

for t in "${TESTS[@]}"; do
	IFS='|' read -r name opts ropts trace <<<"$t"
	selected "$name" "$@" || continue
	d=$tmp/$name
	mkdir -p "$d"
	# shellcheck disable=SC2086 # options are words
	timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" $opts --trace -- \
		"$REPLAY" $ropts "$DIR/$trace" >"$d/out" 2>"$d/err"
	rc=$?
	normalise "$d/err" >"$d/got"
	want=$DIR/$name.out
	if [ "${GS_TRACE_UPDATE:-}" = 1 ]; then
		cp "$d/got" "$want"
	fi
	if [ ! -s "$d/got" ]; then
		fail "$name" "no trace lines (exit $rc): $(tail -c 300 "$d/err" | tr '\n' ' ')"
	elif [ ! -s "$want" ]; then
		fail "$name" "no expected output $want"
	elif ! diff -u "$want" "$d/got" >"$d/diff"; then
		fail "$name" "trace differs from $want: $(head -c 1500 "$d/diff")"
	else
		pass "$name"
	fi
done
harness_summary
