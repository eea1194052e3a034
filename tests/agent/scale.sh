#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/agent/scale.sh [N] - N containers (default 64) started at once with
# runc against the fake driver, once under one `gpusandbox agent` and once
# without a profile, printing the times. A benchmark, not a test: nothing
# about time is asserted. Each container runs tests/adv's static_raw
# (256 MiB chunks until refused, under a 512 MiB policy with the agent;
# until the fake's memory is full without it). Prints, for each mode:
#   mode=agent n=64 started_s=... (every `runc run -d` returned)
#   all_done_s=... (every container stopped) failed_starts=K
# and the per-container start latency (ms): min, median, p90, max.
# Needs root, runc, busybox-static, jq and the built tree (as run.sh).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
GS=$ROOT/build/gpusandbox
STATIC_RAW=$ROOT/build/tests/adv/static_raw
WITH_FAKE=$ROOT/tests/fakedrv/with-fake-nvidia
N=${1:-64}
FAKE_VIDMEM=64g
WAIT_STEPS=3000         # x 0.02 s: 60 s for every container to stop

now_ms() { date +%s%3N; }

inside() {
	local mode=$1 D=$2 ROOTFS=$3 sock=$2/agent.sock profile=null agent="" i
	if [ "$mode" = agent ]; then
		printf 'mem = 512m\n' >"$D/policy"
		"$GS" profile --listener "$sock" >"$D/profile.json" || { echo "mode=agent profile failed"; return 1; }
		profile=$(cat "$D/profile.json")
		"$GS" agent --socket "$sock" --policy "$D/policy" >/dev/null 2>"$D/agent.err" &
		agent=$!
		trap 'kill "$agent" 2>/dev/null' EXIT
		for ((i = 0; i < 250; i++)); do [ -S "$sock" ] && break; sleep 0.02; done
	fi
	mkdir -p "$D/base"
	(cd "$D/base" && runc spec) || return 1
	jq --argjson sc "$profile" --arg m "$GS_FAKE_MOUNT" --arg root "$ROOTFS" '
		.process.terminal = false | .process.args = ["/bin/static_raw"] |
		.root = { path: $root, readonly: true } |
		.mounts += [ "nvidiactl", "nvidia0", "nvidia-uvm" |
		             { destination: ("/dev/" + .), type: "bind", source: ($m + "/" + .), options: ["bind"] } ] |
		if $sc == null then del(.linux.seccomp) else .linux.seccomp = $sc end' \
		"$D/base/config.json" >"$D/config.json" || return 1
	for ((i = 0; i < N; i++)); do
		mkdir -p "$D/c$i" && cp "$D/config.json" "$D/c$i/config.json"
	done
	local t0 t1 t2 starters=()
	t0=$(now_ms)
	for ((i = 0; i < N; i++)); do
		( s=$(now_ms)
		  (cd "$D/c$i" && runc --root "$D/state" run -d "scale-$i" >/dev/null 2>"$D/c$i.err" </dev/null)
		  echo "$? $(($(now_ms) - s))" >"$D/c$i.start" ) &
		starters+=($!)
	done
	wait "${starters[@]}"  # not the agent
	t1=$(now_ms)
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ -z "$(runc --root "$D/state" list -q 2>/dev/null | while read -r id; do
			[ "$(runc --root "$D/state" state "$id" 2>/dev/null | jq -r .status)" = running ] && echo "$id"
		done)" ] && break
		sleep 0.02
	done
	t2=$(now_ms)
	for ((i = 0; i < N; i++)); do runc --root "$D/state" delete -f "scale-$i" >/dev/null 2>&1; done
	[ -n "$agent" ] && { kill "$agent"; wait "$agent" 2>/dev/null; }
	local lat failed
	lat=$(cat "$D"/c*.start | awk '{ print $2 }' | sort -n | tr '\n' ' ')
	failed=$(cat "$D"/c*.start | awk '$1 != 0' | wc -l)
	echo "mode=$mode n=$N started_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')" \
		"all_done_s=$(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.2f", (b - a) / 1000 }') failed_starts=$failed"
	echo "$lat" | awk -v mode="$mode" '{ n = NF; printf "mode=%s start_latency_ms min=%s median=%s p90=%s max=%s\n",
		mode, $1, $(int((n + 1) / 2)), $(int(n * 0.9) > 0 ? int(n * 0.9) : 1), $n }'
	[ "$mode" = agent ] && echo "mode=agent sandboxes=$(grep -c ': sandbox ' "$D/agent.err")" \
		"torn_down=$(grep -c 'torn down' "$D/agent.err") refused=$(grep -c 'refused' "$D/agent.err")"
	return 0
}

if [ "${1:-}" = --inside ]; then
	shift
	N=$4
	inside "$1" "$2" "$3"
	exit $?
fi

[ "$(id -u)" = 0 ] || { echo "scale: needs root"; exit 2; }
for t in runc jq busybox; do command -v "$t" >/dev/null || { echo "scale: $t is not installed"; exit 2; }; done
[ -x "$GS" ] && [ -x "$STATIC_RAW" ] || { echo "scale: build first (make all tests)"; exit 2; }
tmp=$(mktemp -d /tmp/gs-scale.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ROOTFS=$tmp/rootfs
mkdir -p "$ROOTFS"/bin "$ROOTFS"/dev "$ROOTFS"/proc "$ROOTFS"/sys "$ROOTFS"/tmp
cp "$(command -v busybox)" "$ROOTFS/bin/busybox"
cp "$STATIC_RAW" "$ROOTFS/bin/"
echo "scale: $N containers at once, runc $(runc --version | head -1 | awk '{ print $3 }'), $(nproc) CPUs"
for mode in none agent; do
	mkdir -p "$tmp/$mode"
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$0" --inside "$mode" "$tmp/$mode" "$ROOTFS" "$N" \
		>"$tmp/$mode.out" 2>&1
	grep '^mode=' "$tmp/$mode.out" || { echo "scale: $mode failed:"; tail -5 "$tmp/$mode.out"; }
done
