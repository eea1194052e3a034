#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/gpu/agent_scale.sh [--runtime R] [N] - issue #12's scale check on a
# real GPU: N containers (default 64) started at once, each running
# tests/gpu/ctx_alloc (cuInit, a context, 64 MiB allocated and set, exit),
# once under one `gpusandbox agent` (policy mem = 2g) and once with no
# seccomp profile. A benchmark: it prints figures and asserts nothing about
# time. For each mode:
#   mode=M n=N started_s=... (every `R run -d` returned)
#   all_done_s=... (every container wrote its exit status) ok=K failed=F
#   mode=M start_latency_ms min= median= p90= max=
# and, for the agent, the sandboxes it made (one audit log each) and tore
# down. The containers'
# root is built like tests/gpu/agent_container.sh's (the host's /usr, /lib*,
# /etc, ... bound read-only; every /dev/nvidia* bound in).
# Needs root, the runtime, jq and nvcc (ctx_alloc is built here).
set -u
cd "$(dirname "$0")/../.." || exit 125
ROOT=$(pwd)
GS=${GS:-$ROOT/build/gpusandbox}
runtime=${RUNTIME:-}
[ "${1:-}" = --runtime ] && { runtime=$2; shift 2; }
N=${1:-64}
WAIT_STEPS=6000          # x 0.02 s: 120 s for every container to finish
[ -n "$runtime" ] || runtime=$(command -v runc || command -v crun) ||
	{ echo "$0: no runtime" >&2; exit 125; }
command -v jq >/dev/null || { echo "$0: jq is needed" >&2; exit 125; }

tmp=$(mktemp -d /tmp/gs-agent-scale.XXXXXX)
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
nvcc -o "$tmp/ctx_alloc" tests/gpu/ctx_alloc.c -lcuda || exit 125

now_ms() { date +%s%3N; }

make_config() { # $1 dir, $2 profile file or "" ; writes $1/config.json
	local binds=() nodes=() d n sc=null
	for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc "$tmp"; do
		[ -e "$d" ] && binds+=("$d")
	done
	for n in /dev/nvidia*; do
		[ -e "$n" ] && [ ! -d "$n" ] && nodes+=("$n")
	done
	[ -n "$2" ] && sc=$(cat "$2")
	(cd "$1" && "$runtime" spec) || return 1
	jq --arg bin "$tmp/ctx_alloc" --arg out "$tmp/out" \
		--argjson binds "$(printf '%s\n' "${binds[@]}" | jq -R . | jq -s .)" \
		--argjson nodes "$(printf '%s\n' "${nodes[@]}" | jq -R 'select(. != "")' | jq -s .)" \
		--argjson sc "$sc" '
		.process.terminal = false |
		.process.args = ["/bin/sh", "-c", ($bin + "; echo $? >" + $out + "/$CID")] |
		.root = { path: "rootfs", readonly: false } |
		.mounts += [ { destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev"] } ] +
		           [ $binds[] | { destination: ., type: "bind", source: ., options: ["rbind", "ro"] } ] +
		           [ { destination: $out, type: "bind", source: $out, options: ["bind"] } ] +
		           [ $nodes[] | { destination: ., type: "bind", source: ., options: ["bind"] } ] |
		.linux.resources.devices = [ { allow: true, access: "rwm" } ] |
		.linux.namespaces |= map(select(.type != "network")) |
		if $sc == null then del(.linux.seccomp) else .linux.seccomp = $sc end' \
		"$1/config.json" >"$1/config.new" && mv "$1/config.new" "$1/config.json"
}

one_mode() {
	local mode=$1 D=$tmp/$1 sock=$tmp/$1/agent.sock profile="" i
	rm -rf "$D"; mkdir -p "$D/base/rootfs" "$D/audit"
	rm -rf "$tmp/out"; mkdir -p "$tmp/out"
	if [ "$mode" = agent ]; then
		printf 'mem = 2g\n' >"$D/policy"
		"$GS" profile --listener "$sock" >"$D/profile.json" || return 1
		profile=$D/profile.json
		"$GS" agent --socket "$sock" --policy "$D/policy" --audit-dir "$D/audit" 2>"$D/agent.err" &
		agent=$!
		for ((i = 0; i < 250; i++)); do [ -S "$sock" ] && break; sleep 0.02; done
	fi
	make_config "$D/base" "$profile" || return 1
	for ((i = 0; i < N; i++)); do
		mkdir -p "$D/c$i/rootfs"
		jq --arg c "CID=c$i" '.process.env += [$c]' "$D/base/config.json" >"$D/c$i/config.json"
	done
	local t0 t1 t2 starters=()
	t0=$(now_ms)
	for ((i = 0; i < N; i++)); do
		( s=$(now_ms)
		  (cd "$D/c$i" && "$runtime" --root "$D/state" run -d "gs-scale-$mode-$i" >/dev/null 2>"$D/c$i.err" </dev/null)
		  echo "$? $(($(now_ms) - s))" >"$D/c$i.start" ) &
		starters+=($!)
	done
	wait "${starters[@]}"
	t1=$(now_ms)
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ $(($(ls "$tmp/out" | wc -l) + $(cat "$D"/c*.start | awk '$1 != 0' | wc -l))) -ge "$N" ] && break
		sleep 0.02
	done
	t2=$(now_ms)
	for ((i = 0; i < N; i++)); do "$runtime" --root "$D/state" delete -f "gs-scale-$mode-$i" >/dev/null 2>&1; done
	local ok failed lat
	ok=$(cat "$tmp"/out/* 2>/dev/null | grep -cx 0)
	failed=$((N - ok))
	lat=$(cat "$D"/c*.start | awk '{ print $2 }' | sort -n | tr '\n' ' ')
	echo "mode=$mode n=$N started_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')" \
		"all_done_s=$(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.2f", (b - a) / 1000 }') ok=$ok failed=$failed" \
		"start_errors=$(cat "$D"/c*.start | awk '$1 != 0' | wc -l)"
	echo "$lat" | awk -v mode="$mode" '{ n = NF; printf "mode=%s start_latency_ms min=%s median=%s p90=%s max=%s\n",
		mode, $1, $(int((n + 1) / 2)), $(int(n * 0.9) > 0 ? int(n * 0.9) : 1), $n }'
	if [ "$mode" = agent ]; then
		sleep 0.5
		kill "$agent"; wait "$agent" 2>/dev/null; agent=
		echo "mode=agent sandboxes(audit logs)=$(ls "$D/audit" | wc -l)" \
			"torn_down=$(grep -c 'torn down' "$D/agent.err")"
		head -c 600 "$D"/c0.err
	fi
	[ "$failed" -gt 0 ] && head -n 3 "$D"/c*.err 2>/dev/null | head -20
	return 0
}

one_mode none
one_mode agent
one_mode none
one_mode agent
