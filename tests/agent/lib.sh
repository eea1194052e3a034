# SPDX-License-Identifier: MIT
# tests/agent/lib.sh - helpers the agent tiers share (run.sh, sm.sh,
# operator.sh, walk.sh), sourced from the repository root after the
# script has set WAIT_STEPS and D.

# wait_for TEST... : up to WAIT_STEPS x 0.02 s for test(1) to hold.
wait_for() {
	local i
	for ((i = 0; i < WAIT_STEPS; i++)); do
		test "$@" && return 0
		sleep 0.02
	done
	return 1
}

# crun 1.8.1 refuses a hybrid cgroup host whose v2 hierarchy has
# controllers; in this private mount namespace the list is made empty for
# it (shared/reference/container-hook.md 2.4).
crun_hybrid_workaround() {
	local f=/sys/fs/cgroup/unified/cgroup.controllers
	[ -n "$(cat "$f" 2>/dev/null)" ] || return 0
	: >"$D/empty" && mount --bind "$D/empty" "$f"
}
