#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/gpu/agent_container.sh [--runtime R] [--mem SIZE] [--sm PCT] [--wait-killable]
#                              [--restart-after S] [--keeper] [--userns HOSTUID]
#                              [--policy-line LINE]... -- CMD [ARG...]
#
# GPU tier (and a fake-driver dry run): runs CMD in an OCI container under
# `gpusandbox agent` with a policy of mem = SIZE (default 4g), the way the
# issue's GPU check asks (PyTorch in a container, nvidia-smi inside):
#
#   tests/gpu/agent_container.sh --mem 4g -- python3 tests/gpu/torch_quota.py
#   tests/gpu/agent_container.sh --mem 4g -- nvidia-smi
#
# --sm PCT adds `sm = PCT` to that policy (the compute share, following the
# GPU's coordinator; GPUSANDBOX_COORD_DIR in this script's environment
# reaches the agent).
#
# --policy-line LINE appends LINE to that policy, e.g. the video group and
# a cap: --policy-line 'allow = compute, memory, monitoring, video'
# --policy-line 'video.decoders = 2' (tests/gpu/agent_video.sh).
#
# --restart-after S (issue #12's restart survival): a `gpusandbox keeper`
# holds the container, and the agent is killed with SIGKILL S seconds after
# the container starts, while CMD works the GPU; a new agent on the same
# keeper resumes the container. Both agents' logs, the keeper's, and
# `audit verify` of the log are printed after CMD:
#
#   tests/gpu/agent_container.sh --mem 4g --restart-after 7 -- python3 tests/gpu/torch_restart.py
#
# --keeper: a keeper holds the container (as deployed), and the agent is
# not killed. --userns HOSTUID: the container runs in a user namespace of
# its own, its uid 0 the host's HOSTUID (65536 uids), and the agent is
# started with --uvm-map as-user (its maps made as that uid); proc and
# sysfs are bound from the host's, cgroup and mqueue left out (a machine
# that is itself a container refuses new ones in a user namespace), and
# the container shares the host's PID namespace: the bound /proc names
# the host's pids, so in a PID namespace of its own /proc/self/task/TID
# names no thread of the caller, and cuInit fails (304,
# CUDA_ERROR_OPERATING_SYSTEM) right after its open of
# /proc/self/task/TID/comm does (ENOENT; strace, H200, 2026-12-03).
#
# The container's root is an empty folder with the host's /usr, /bin, /sbin,
# /lib*, /etc, /opt, /home, /root and this repository bind-mounted
# read-only (no image needed: the host's own PyTorch and nvidia-smi run
# inside), every /dev/nvidia* bound in and allowed by the device cgroup.
# The runtime is R (default: runc, else crun, from PATH; RUNTIME=/path/to/runc
# works too: runc needs only libseccomp.so.2). Prints the agent's log and
# the audit log's last record after CMD. Exit status: CMD's (the runtime's
# when it fails), 125 when something here cannot be set up.
set -u
cd "$(dirname "$0")/../.." || exit 125
ROOT=$(pwd)
GS=${GS:-$ROOT/build/gpusandbox}
runtime=${RUNTIME:-}
mem=4g
sm=
restart_after=
keep=
userns=
killable=()
extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--runtime) runtime=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--sm) sm=$2; shift 2 ;;
	--restart-after) restart_after=$2; shift 2 ;;
	--keeper) keep=1; shift ;;
	--userns) userns=$2; shift 2 ;;
	--wait-killable) killable=(--wait-killable); shift ;;
	--policy-line) extra+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 [--runtime R] [--mem SIZE] [--sm PCT] [--wait-killable] [--restart-after S] [--keeper] [--userns HOSTUID] [--policy-line LINE]... -- CMD [ARG...]" >&2
	   exit 125 ;;
	esac
done
[ $# -gt 0 ] || { echo "$0: no CMD" >&2; exit 125; }
[ -n "$runtime" ] || runtime=$(command -v runc || command -v crun) ||
	{ echo "$0: neither runc nor crun found (RUNTIME=/path/to/runc)" >&2; exit 125; }
command -v jq >/dev/null || { echo "$0: jq is needed" >&2; exit 125; }

tmp=$(mktemp -d /tmp/gs-agent-gpu.XXXXXX)
# The container's uid must reach its root folder (--userns).
chmod 0711 "$tmp"
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	[ -n "$keeper_pid" ] && kill "$keeper_pid" 2>/dev/null && wait "$keeper_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
sock=$tmp/agent.sock
printf 'mem = %s\n' "$mem" >"$tmp/policy"
[ -n "$sm" ] && printf 'sm = %s\n' "$sm" >>"$tmp/policy"
for l in "${extra[@]}"; do printf '%s\n' "$l" >>"$tmp/policy"; done
mkdir -p "$tmp/bundle/rootfs" "$tmp/audit"

"$GS" profile --listener "$sock" "${killable[@]}" >"$tmp/profile.json" || exit 125
keeper=() keeper_pid= as_user=()
[ -n "$userns" ] && as_user=(--uvm-map as-user)
if [ -n "$restart_after" ] || [ -n "$keep" ]; then
	"$GS" keeper --socket "$tmp/keeper.sock" 2>"$tmp/keeper.err" &
	keeper_pid=$!
	for _ in $(seq 250); do [ -S "$tmp/keeper.sock" ] && break; sleep 0.02; done
	keeper=(--keeper "$tmp/keeper.sock")
fi
"$GS" agent --socket "$sock" --policy "$tmp/policy" --audit-dir "$tmp/audit" "${keeper[@]}" "${as_user[@]}" \
	2>"$tmp/agent.err" &
agent=$!
for _ in $(seq 250); do [ -S "$sock" ] && break; sleep 0.02; done
[ -S "$sock" ] || { cat "$tmp/agent.err" >&2; exit 125; }

(cd "$tmp/bundle" && "$runtime" spec) || exit 125
binds=()
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc /opt /home /root "$ROOT"; do
	[ -e "$d" ] && binds+=("$d")
done
nodes=()
for n in /dev/nvidia*; do
	[ -e "$n" ] && [ ! -d "$n" ] && nodes+=("$n")
done
jq --argjson args "$(printf '%s\n' "$@" | jq -R . | jq -s .)" --arg cwd "$ROOT" --arg path "$PATH" \
	--argjson binds "$(printf '%s\n' "${binds[@]}" | jq -R . | jq -s .)" \
	--argjson nodes "$(printf '%s\n' "${nodes[@]}" | jq -R 'select(. != "")' | jq -s .)" \
	--slurpfile sc "$tmp/profile.json" '
	.process.terminal = false | .process.args = $args | .process.cwd = $cwd |
	.process.env += ["PATH=" + $path, "HOME=/root"] |
	.root = { path: "rootfs", readonly: false } |
	.mounts += [ $binds[] | { destination: ., type: "bind", source: ., options: ["rbind", "ro"] } ] +
	           [ $nodes[] | { destination: ., type: "bind", source: ., options: ["bind"] } ] +
	           [ { destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev"] } ] |
	.linux.resources.devices = [ { allow: true, access: "rwm" } ] |
	.linux.namespaces |= map(select(.type != "network")) |
	.linux.seccomp = $sc[0]' "$tmp/bundle/config.json" >"$tmp/config.new" &&
	mv "$tmp/config.new" "$tmp/bundle/config.json" || exit 125
if [ -n "$userns" ]; then
	# The container's root makes its mount points in its root folder.
	chown "$userns:$userns" "$tmp/bundle/rootfs"
	jq --argjson u "$userns" '
		.mounts |= map(
			if .type == "proc" then { destination: "/proc", type: "bind", source: "/proc", options: ["rbind"] }
			elif .type == "sysfs" then { destination: "/sys", type: "bind", source: "/sys", options: ["rbind", "ro"] }
			elif .type == "cgroup" or .type == "mqueue" then empty else . end) |
		.linux.namespaces |= map(select(.type != "pid")) |
		.linux.namespaces += [{ type: "user" }] |
		.linux.uidMappings = [{ containerID: 0, hostID: $u, size: 65536 }] |
		.linux.gidMappings = [{ containerID: 0, hostID: $u, size: 65536 }]' "$tmp/bundle/config.json" >"$tmp/config.new" &&
		mv "$tmp/config.new" "$tmp/bundle/config.json" || exit 125
fi

(cd "$tmp/bundle" && "$runtime" --root "$tmp/state" run "gs-gpu-$$") &
ctr=$!
if [ -n "$restart_after" ]; then
	sleep "$restart_after"
	kill -KILL "$agent"; wait "$agent" 2>/dev/null
	echo "agent killed (SIGKILL) ${restart_after} s after the start" >&2
	"$GS" agent --socket "$sock" --policy "$tmp/policy" --audit-dir "$tmp/audit" "${keeper[@]}" \
		2>"$tmp/agent2.err" &
	agent=$!
fi
wait "$ctr"
rc=$?
"$runtime" --root "$tmp/state" delete -f "gs-gpu-$$" >/dev/null 2>&1
# The serving agent seals the log when it tears the sandbox down, once
# every listener has hung up: wait for that (10 s at most), not a guess.
last_log=$tmp/agent.err
[ -n "$restart_after" ] && last_log=$tmp/agent2.err
for _ in $(seq 500); do grep -q 'torn down' "$last_log" 2>/dev/null && break; sleep 0.02; done
# It says so just before it writes the summary and the seal.
for _ in $(seq 50); do
	ok=1
	for f in "$tmp"/audit/*.jsonl; do "$GS" audit verify "$f" >/dev/null 2>&1 || ok=; done
	[ -n "$ok" ] && break
	sleep 0.02
done
echo "--- agent log" >&2
cat "$tmp/agent.err" >&2
if [ -n "$restart_after" ]; then
	echo "--- the second agent's log" >&2
	cat "$tmp/agent2.err" >&2
	echo "--- the keeper's log" >&2
	cat "$tmp/keeper.err" >&2
	echo "--- audit verify" >&2
	for f in "$tmp"/audit/*.jsonl; do "$GS" audit verify "$f" >&2; done
fi
echo "--- audit: last record" >&2
tail -n 1 "$tmp"/audit/*.jsonl >&2 2>/dev/null
if [ -n "$sm" ]; then
	echo "--- audit: compute share" >&2
	grep -h '"event":"sm_plan"' "$tmp"/audit/*.jsonl | tail -n 1 | cut -c1-400 >&2
	grep -h '"event":"summary"' "$tmp"/audit/*.jsonl | grep -o '"sm":{.*}' | cut -c1-300 >&2
fi
exit "$rc"
