#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/agent/start.sh - `gpusandbox agent` and `gpusandbox keeper` refuse
# to start, before they listen, when a path or setting they need cannot
# work: exit 125, the cause on stderr, no socket made. An agent that
# listened anyway would refuse and kill every container it is handed (its
# audit log cannot be created, ...), and the runtime's error would name
# something else. Each case waits until the process exits or its socket
# appears (at most WAIT_STEPS x 20 ms), so an agent that listens is seen as
# such at once and stopped.
#   agent-<what>   a missing or unusable --audit-dir (missing, a file),
#                  --socket folder, --policy-dir, --policy, --metrics-file
#                  folder, --keeper socket, a hard descriptor limit under
#                  1024
#   keeper-<what>  a missing --socket folder, a hard descriptor limit
#   agent-good     everything there: it listens, its metrics file says
#                  gpusandbox_up 1 before any container, SIGTERM ends it 0
#                  and the file then says gpusandbox_up 0
#                  (the same command line as the refused cases but for the
#                  one setting each breaks)
# Runs under the fake driver (the agent needs one to start).
set -u
cd "$(dirname "$0")/../.." || exit 2
GS=${GPUSANDBOX:-$PWD/build/gpusandbox}
SKIP=125
WAIT_STEPS=500

if [ "${1:-}" != --inside ]; then
	[ "$(id -u)" = 0 ] || { echo "agent-start: SKIP: needs root (the fake driver)"; exit "$SKIP"; }
	[ -x "$GS" ] || { echo "agent-start: $GS is not built"; exit 2; }
	exec tests/fakedrv/with-fake-nvidia -- "$0" --inside
fi

T=$(mktemp -d /tmp/gs-agent-start.XXXXXX) || exit 2
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

mkdir -p "$T/audit" "$T/policies" "$T/metrics" "$T/run"
printf 'mem = 1g\n' >"$T/default.policy"
printf 'mem = 512m\n' >"$T/policies/small.policy"
: >"$T/a-file"

# started SOCKET CMD...: runs CMD until it exits or SOCKET appears; sets
# rc (the exit status, or "listening"), and its stderr is in $T/err.
started() {
	local sock=$1 pid i
	shift
	rm -f "$sock"
	"$@" 2>"$T/err" &
	pid=$!
	for ((i = 0; i < WAIT_STEPS; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		[ -S "$sock" ] && break
		sleep 0.02
	done
	if kill -0 "$pid" 2>/dev/null; then
		rc=$([ -S "$sock" ] && echo listening || echo "neither exited nor listened")
		cp "$T/metrics/agent.prom" "$T/metrics-listening.prom" 2>/dev/null
		kill -TERM "$pid"
		wait "$pid"
		stopped=$?
	else
		wait "$pid"
		rc=$?
	fi
}

# refused NAME REGEX SOCKET CMD...: exit 125, no socket, REGEX on stderr.
refused() {
	local name=$1 re=$2 sock=$3
	shift 3
	started "$sock" "$@"
	if [ "$rc" = 125 ] && [ ! -S "$sock" ] && grep -qE -- "$re" "$T/err"; then
		pass "$name"
	else
		fail "$name" "rc=$rc socket=$([ -S "$sock" ] && echo made || echo none): $(tail -2 "$T/err" | tr '\n' ' ')"
	fi
}

# The agent's command line; each case replaces one of its settings.
agent() {
	local sock=$T/run/agent.sock audit=$T/audit pdir=$T/policies pol=$T/default.policy
	local metrics=$T/metrics/agent.prom keeper=
	local -A set=()
	while [ $# -gt 0 ]; do set[$1]=$2; shift 2; done
	sock=${set[socket]:-$sock} audit=${set[audit]:-$audit} pdir=${set[pdir]:-$pdir}
	pol=${set[policy]:-$pol} metrics=${set[metrics]:-$metrics} keeper=${set[keeper]:-}
	AGENT_CMD=("$GS" agent --socket "$sock" --policy "$pol" --policy-dir "$pdir" --audit-dir "$audit"
		--metrics-file "$metrics" ${keeper:+--keeper "$keeper"})
	AGENT_SOCK=$sock
}

agent audit "$T/nolog"
refused agent-audit-missing "^gpusandbox agent: --audit-dir $T/nolog: No such file or directory$" \
	"$AGENT_SOCK" "${AGENT_CMD[@]}"
agent audit "$T/a-file"
refused agent-audit-file "^gpusandbox agent: --audit-dir $T/a-file: Not a directory$" "$AGENT_SOCK" "${AGENT_CMD[@]}"
agent socket "$T/nodir/agent.sock"
refused agent-socket-folder "^gpusandbox agent: --socket $T/nodir/agent.sock: its folder $T/nodir: No such file" \
	"$AGENT_SOCK" "${AGENT_CMD[@]}"
agent pdir "$T/nopolicies"
refused agent-policy-dir "^gpusandbox agent: --policy-dir $T/nopolicies: No such file or directory$" \
	"$AGENT_SOCK" "${AGENT_CMD[@]}"
agent policy "$T/nope.policy"
refused agent-policy "nope.policy" "$AGENT_SOCK" "${AGENT_CMD[@]}"
agent metrics "$T/nometrics/agent.prom"
refused agent-metrics-folder "^gpusandbox agent: --metrics-file $T/nometrics/agent.prom" "$AGENT_SOCK" "${AGENT_CMD[@]}"
agent keeper "$T/run/nokeeper.sock"
refused agent-keeper "nokeeper.sock" "$AGENT_SOCK" "${AGENT_CMD[@]}"
agent
refused agent-nofile "^gpusandbox agent: the descriptor limit \(ulimit -n, hard\) is 256: at least 1024" \
	"$AGENT_SOCK" sh -c 'ulimit -Sn 256 && ulimit -Hn 256 && exec "$@"' sh "${AGENT_CMD[@]}"

refused keeper-socket-folder "^gpusandbox keeper: --socket $T/nodir/keeper.sock: its folder $T/nodir: No such file" \
	"$T/nodir/keeper.sock" "$GS" keeper --socket "$T/nodir/keeper.sock"
refused keeper-nofile "^gpusandbox keeper: the descriptor limit \(ulimit -n, hard\) is 256" "$T/run/keeper.sock" \
	sh -c 'ulimit -Sn 256 && ulimit -Hn 256 && exec "$@"' sh "$GS" keeper --socket "$T/run/keeper.sock"

# The same command line with every setting in place: it serves; its
# metrics file said up while it listened, and says up 0 once it stopped.
agent
rm -f "$T/metrics/agent.prom"
started "$AGENT_SOCK" "${AGENT_CMD[@]}"
if [ "$rc" = listening ] && [ "${stopped:-}" = 0 ] && grep -q '^gpusandbox_up 1$' "$T/metrics-listening.prom" 2>/dev/null &&
	grep -q '^gpusandbox_up 0$' "$T/metrics/agent.prom" 2>/dev/null; then
	pass agent-good
else
	fail agent-good "rc=$rc stopped=${stopped:-} metrics: $(head -c 200 "$T/metrics/agent.prom" 2>&1) $(tail -2 "$T/err")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
