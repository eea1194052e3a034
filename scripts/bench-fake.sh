#!/bin/bash
# SPDX-License-Identifier: MIT
#
# scripts/bench-fake.sh - the supervisor's per-call cost on the fake driver
# (issue #16). Prints figures; asserts nothing about time.
#
#   [GPUSANDBOX=path] [GS_ARGS='--p2p-register answer'] scripts/bench-fake.sh [--full | --pair]
#
# GS_ARGS without --p2p-register perform or answer: the product's default,
# whose pair makes no registration controls (two traps fewer).
#
# GS_ARGS: options for every sandboxed run (split on spaces).
# GS_MAP=1: each pair also maps its memory through UVM after the RM_ALLOC
# (rmbench -u), as every cuMemAlloc does: five trapped calls a pair.
#
# 1. the 2 MiB pair as CUDA makes it (RM_ALLOC 0x40, REGISTER_VIDMEM,
#    UNREGISTER_VIDMEM, RM_FREE), native (no gpusandbox) and sandboxed,
#    interleaved, with the median per-call microseconds seen by the workload;
# 2. the supervisor's system calls per trapped call in that loop, counted by
#    perf stat at the syscall tracepoints (strace -c where perf cannot),
#    attached to every thread of the supervisor once the workload's set-up
#    is done (RECV and SEND included);
# 3. the pair and a new client's cost end to end with 1k and 10k live
#    objects (--full: 100k too) and with 1, 100 and 1000 other clients;
# 4. the ledger's share in process (tests/bench/ledgerbench) with 1k, 10k,
#    100k and 1M live objects and 1, 100 and 1000 clients: the fake itself
#    slows down with every object it holds (a lookup is linear in it, 240 us
#    per call at 100k natively), so end to end it cannot show 1M.
# --pair: 1 and 2 only (what a change to the per-call path moves).
#
# On the FUSE fake each performed call is a FUSE round trip between three
# processes, so the absolute figures are far above a real driver's; the
# system call count and the shape of the scaling are what carry over.
# Needs root and /dev/fuse (tests/fakedrv/with-fake-nvidia), and perf or strace.
# Build first: make -s -j2 all tests. The fake gets 2100 GiB of video
# memory: it aligns each allocation to 2 MiB, and 1M live objects need it.
set -u
cd "$(dirname "$0")/.."

BENCH=build/tests/bench/rmbench
LEDGER_BENCH=build/tests/bench/ledgerbench
GS=${GPUSANDBOX:-build/gpusandbox}   # another build: GPUSANDBOX=path
read -r -a GS_OPTS <<<"${GS_ARGS:-}"
FAKE=tests/fakedrv/with-fake-nvidia
ROUNDS=3
PAIRS=2000
STRACE_PAIRS=2000
TRAPS_PER_PAIR=4
RMBENCH_EXTRA=
[ "${GS_MAP:-0}" = 1 ] && { RMBENCH_EXTRA=-u; TRAPS_PER_PAIR=5; }
# The registration controls exist only where the sandbox gives CUDA its
# NV50_THIRD_PARTY_P2P object: under --p2p-register perform or answer.
# The default (auto, with no policy) answers the object NOT_SUPPORTED and
# CUDA then makes no registration, so neither run makes them (rmbench -r).
case " ${GS_ARGS:-} " in
*" --p2p-register perform "* | *" --p2p-register answer "*) ;;
*) RMBENCH_EXTRA="$RMBENCH_EXTRA -r"; TRAPS_PER_PAIR=$((TRAPS_PER_PAIR - 2)) ;;
esac
export RMBENCH_EXTRA
# Time for strace to attach before the loop starts (ms).
ATTACH_WAIT_MS=700
LIVE_COUNTS="1000 10000"
LEDGER_LIVE_COUNTS="1000 10000 100000 1000000"
CLIENT_COUNTS="1 100 1000"
NEW_CLIENTS=50
[ "${1:-}" = --full ] && LIVE_COUNTS="1000 10000 100000"
PAIR_ONLY=0
[ "${1:-}" = --pair ] && PAIR_ONLY=1

for f in "$BENCH" "$LEDGER_BENCH" "$GS"; do
	[ -x "$f" ] || { echo "bench-fake: $f missing: run make -s -j2 all tests" >&2; exit 2; }
done

native() { "$FAKE" --vidmem 2100g -- "$BENCH" $RMBENCH_EXTRA "$@"; }
sandboxed() { "$FAKE" --vidmem 2100g -- "$GS" --user root "${GS_OPTS[@]}" -- "$BENCH" $RMBENCH_EXTRA "$@"; }
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }

echo "== machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)"
echo "== commit: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo +dirty)"

echo "== 1. 2 MiB pair, $PAIRS pairs, $ROUNDS interleaved rounds (median us per call)"
for r in $(seq "$ROUNDS"); do
	n=$(native -n "$PAIRS") || { echo "native run failed" >&2; exit 1; }
	s=$(sandboxed -n "$PAIRS") || { echo "sandboxed run failed" >&2; exit 1; }
	echo "native    $n"
	echo "sandboxed $s"
	awk -v a="$(echo "$n" | field pair_us)" -v b="$(echo "$s" | field pair_us)" \
		'BEGIN { printf "round %d: pair %.1f us native, %.1f us sandboxed, ratio to native %.2f\n", '"$r"', a, b, a / b }'
done

echo "== 2. supervisor system calls per trapped call ($STRACE_PAIRS pairs, $TRAPS_PER_PAIR traps each)"
# perf counts at the syscall tracepoints without slowing the supervisor
# down; strace -c stops it at every system call, which makes every driver
# call look slow (and so hands the listener between workers, exec_escape).
# perf is used when it works, strace otherwise.
TRACEPOINTS=raw_syscalls:sys_enter
for sc in ioctl process_vm_readv process_vm_writev pidfd_getfd newfstatat close kcmp getpid futex; do
	TRACEPOINTS="$TRACEPOINTS,syscalls:sys_enter_$sc"
done
count_syscalls() { # TOOL OUTDIR
	"$FAKE" -- bash -c '
		gs=$1 bench=$2 pairs=$3 wait_ms=$4 dir=$5 tool=$6 points=$7
		shift 7
		"$gs" --user root "$@" -- "$bench" $RMBENCH_EXTRA -n "$pairs" -w "$wait_ms" > "$dir/bench" &
		sup=$!
		sleep 0.3
		if [ "$tool" = perf ]; then
			perf stat -e "$points" -p "$sup" -o "$dir/count" 2>/dev/null &
		else
			strace -c -f -q -p "$sup" -o "$dir/count" 2>/dev/null &
		fi
		st=$!
		wait "$sup"
		kill -INT "$st" 2>/dev/null
		wait "$st"' _ "$GS" "$BENCH" "$STRACE_PAIRS" "$ATTACH_WAIT_MS" "$2" "$1" "$TRACEPOINTS" \
		"${GS_OPTS[@]}"
}
out=$(mktemp -d)
total=
if command -v perf >/dev/null && perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1; then
	count_syscalls perf "$out"
	sed -n '/raw_syscalls\|syscalls:/p' "$out/count"
	total=$(awk '/raw_syscalls:sys_enter/ { gsub(",", "", $1); print $1 }' "$out/count")
elif command -v strace >/dev/null; then
	count_syscalls strace "$out"
	sed -n '1,40p' "$out/count"
	total=$(awk '/ total$/ { print $4 }' "$out/count")
else
	echo "neither perf nor strace works here: skipped"
fi
[ -n "$total" ] && awk -v t="$total" -v n="$((STRACE_PAIRS * TRAPS_PER_PAIR))" \
	'BEGIN { printf "syscalls per trapped call: %.2f (%d over %d trapped calls)\n", t / n, t, n }'
rm -rf "$out"
[ "$PAIR_ONLY" = 1 ] && exit 0

echo "== 3a. live objects (median us per call; a new client made and freed $NEW_CLIENTS times)"
for p in $LIVE_COUNTS; do
	echo "live=$p native    $(native -n 500 -p "$p" -N "$NEW_CLIENTS")"
	echo "live=$p sandboxed $(sandboxed -n 500 -p "$p" -N "$NEW_CLIENTS")"
done

echo "== 3b. other live clients (median us per call)"
for k in $CLIENT_COUNTS; do
	echo "clients=$k native    $(native -n 500 -k "$k" -N "$NEW_CLIENTS")"
	echo "clients=$k sandboxed $(sandboxed -n 500 -k "$k" -N "$NEW_CLIENTS")"
done

echo "== 4. the ledger's share in process (ns per operation, median of rounds)"
for p in $LEDGER_LIVE_COUNTS; do
	"$LEDGER_BENCH" "$p" 1
done
for k in $CLIENT_COUNTS; do
	"$LEDGER_BENCH" 1000 "$k"
done
