#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/gpu/gpunode_real.sh [RACE_MS]
#
# GPU tier (issue #17): one agent serves two runc containers; A is given
# only /dev/nvidia0, B only /dev/nvidia1 (with /dev/nvidiactl and
# /dev/nvidia-uvm each; on a one-GPU machine B gets no GPU node at all).
# The driver grants an NV01_DEVICE_0 only to a caller holding that GPU's
# node (nv_is_gpu_accessible walks the calling thread's fd table), and the
# agent performs both containers' device allocations, A's with A's
# nvidia0 borrowed. The race, twice:
#   1. the agent as built (device allocations in a private fd table):
#      A makes and frees devices on GPU 0 (tests/agent/gpunode hold), B
#      tries devices on GPU 0 for RACE_MS (gpunode race): B must get none;
#   2. the same with GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC=1 in the
#      agent's environment (the shared table, as before any defence): B
#      may win, which shows the race is real on this driver.
# Then, with the agent as built, `nvidia-smi -L` and a PyTorch allocation
# in each container that has a GPU (a device allocation through the
# private table on the real driver).
# Prints each container's output. Needs root, runc (RUNTIME=), jq, and
# `make all tests` (the race with the switch runs the test build).
set -u
cd "$(dirname "$0")/../.." || exit 125
ROOT=$(pwd)
GS=${GS:-$ROOT/build/gpusandbox}
# The test build (make tests), which alone honours GPUSANDBOX_TEST_*:
# the agent of the race with the switch set.
GS_SWITCHED=${GS_SWITCHED:-$ROOT/build/switches/gpusandbox}
GPUNODE=${GPUNODE:-$ROOT/build/tests/agent/gpunode}
RACE_MS=${1:-4000}
PY=${PY:-/opt/torch/.venv/bin/python}
runtime=${RUNTIME:-$(command -v runc || command -v crun)}
[ -n "$runtime" ] && command -v jq >/dev/null || { echo "needs runc and jq" >&2; exit 125; }
[ -x "$GS" ] && [ -x "$GS_SWITCHED" ] || { echo "needs $GS and $GS_SWITCHED (make all tests)" >&2; exit 2; }
# B's GPU: nvidia1 on a two-GPU machine; on one GPU, none (only the
# control node and UVM): B is then entitled to no GPU at all.
B_NODE=nvidia1
[ -e /dev/nvidia1 ] || B_NODE=


tmp=$(mktemp -d /tmp/gs-gpunode.XXXXXX)
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
printf 'mem = 8g\n' >"$tmp/policy"
"$GS" profile --listener "$tmp/agent.sock" >"$tmp/profile.json" || exit 125

start_agent() { # ENV...
	local gs=$GS
	[ $# -gt 0 ] && gs=$GS_SWITCHED
	mkdir -p "$tmp/audit"
	env "$@" "$gs" agent --socket "$tmp/agent.sock" --policy "$tmp/policy" \
		--audit-dir "$tmp/audit" 2>>"$tmp/agent.err" &
	agent=$!
	for _ in $(seq 250); do [ -S "$tmp/agent.sock" ] && return 0; sleep 0.02; done
	cat "$tmp/agent.err" >&2
	return 1
}
stop_agent() {
	kill "$agent" 2>/dev/null; wait "$agent" 2>/dev/null; agent=
	rm -f "$tmp/agent.sock"
}

# bundle NAME GPU_NODE CMD...: a container seeing only /dev/GPU_NODE.
bundle() {
	local name=$1 node=$2 b=$tmp/$1
	shift 2
	rm -rf "$b"
	mkdir -p "$b/rootfs" "$tmp/shared"
	(cd "$b" && "$runtime" spec) || return 1
	local binds=() d
	for d in /usr /bin /sbin /lib /lib32 /lib64 /etc /opt /root "$ROOT"; do
		[ -e "$d" ] && binds+=("$d")
	done
	jq --argjson args "$(printf '%s\n' "$@" | jq -R . | jq -s .)" --arg cwd "$ROOT" \
		--argjson binds "$(printf '%s\n' "${binds[@]}" | jq -R . | jq -s .)" \
		--argjson nodes "$(printf '%s\n' /dev/nvidiactl /dev/nvidia-uvm ${node:+"/dev/$node"} | jq -R . | jq -s .)" \
		--arg shared "$tmp/shared" --slurpfile sc "$tmp/profile.json" '
		.process.terminal = false | .process.args = $args | .process.cwd = $cwd |
		.process.env += ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root"] |
		.root = { path: "rootfs", readonly: false } |
		.mounts += [ $binds[] | { destination: ., type: "bind", source: ., options: ["rbind", "ro"] } ] +
		           [ $nodes[] | { destination: ., type: "bind", source: ., options: ["bind"] } ] +
		           [ { destination: "/shared", type: "bind", source: $shared, options: ["rbind"] },
		             { destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev"] } ] |
		.linux.resources.devices = [ { allow: true, access: "rwm" } ] |
		.linux.namespaces |= map(select(.type != "network")) |
		.linux.seccomp = $sc[0]' "$b/config.json" >"$b/config.new" && mv "$b/config.new" "$b/config.json"
}

run_ctr() { # NAME: runs it in the foreground, output to $tmp/NAME.out
	(cd "$tmp/$1" && timeout 120 "$runtime" --root "$tmp/state" run "gs-$1-$$") >"$tmp/$1.out" 2>&1
	"$runtime" --root "$tmp/state" delete -f "gs-$1-$$" >/dev/null 2>&1
}

race() { # LABEL AGENT_ENV...
	local label=$1
	shift
	rm -f "$tmp/shared/stop" "$tmp/shared/stop.ready"
	start_agent "$@" || return 1
	bundle a nvidia0 "$GPUNODE" hold 0 /shared/stop 64 && bundle b "$B_NODE" "$GPUNODE" race 0 "$RACE_MS" || return 1
	(cd "$tmp/a" && timeout 120 "$runtime" --root "$tmp/state" run "gs-a-$$") >"$tmp/a.out" 2>&1 &
	local a=$!
	for _ in $(seq 500); do [ -e "$tmp/shared/stop.ready" ] && break; sleep 0.02; done
	run_ctr b
	touch "$tmp/shared/stop"
	wait "$a"
	"$runtime" --root "$tmp/state" delete -f "gs-a-$$" >/dev/null 2>&1
	echo "== $label: A: $(tail -n 1 "$tmp/a.out")"
	echo "== $label: B: $(tail -n 1 "$tmp/b.out")"
	stop_agent
}

echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=index,name,driver_version,persistence_mode --format=csv,noheader | tr '\n' ';') kernel $(uname -r)"
race "private table (as built)"
race "shared table (GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC=1)" GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC=1

start_agent || exit 1
alloc='import torch; x = torch.ones(1 << 20, device="cuda"); print("cuda alloc ok on", torch.cuda.get_device_name(0), float(x.sum()))'
for c in a:nvidia0 ${B_NODE:+b:$B_NODE}; do
	bundle "${c%%:*}" "${c#*:}" sh -c "nvidia-smi -L; $PY -c '$alloc'"
	run_ctr "${c%%:*}"
	echo "== ${c%%:*} (${c#*:} only):"
	cat "$tmp/${c%%:*}.out"
done
stop_agent
echo "== agent log (tail)"
tail -n 15 "$tmp/agent.err"
