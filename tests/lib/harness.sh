# SPDX-License-Identifier: MIT
# Shared by the runners that drive the fake driver (tests/adv/run.sh,
# tests/replay/run.sh): a work directory, PASS/FAIL counting, name filters,
# the skip probe and the closing line. Source it; it defines functions only,
# plus the counters.

HARNESS_SKIP_RC=125
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# harness_rm_tree DIR: rm -rf, after taking off the append-only flags an
# audit log keeps when its supervisor was killed before it could take its
# own flag off (fail closed: supervisor/audit/audit_guard.h). chattr is
# e2fsprogs' (scripts/install-deps.sh).
harness_rm_tree() {
	[ -e "$1" ] || return 0
	command -v chattr >/dev/null && find "$1" -name '*.jsonl' -type f -exec chattr -f -a {} + 2>/dev/null
	rm -rf "$1"
}

# harness_tmpdir KEEP PREFIX: sets $tmp to KEEP (kept) or a fresh directory
# removed at exit.
harness_tmpdir() {
	if [ -n "$1" ]; then
		tmp=$1
		mkdir -p "$tmp" || exit 2
	else
		tmp=$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX") || exit 2
		trap 'harness_rm_tree "$tmp"' EXIT
	fi
}

# selected NAME [FILTER...]: no filter selects all; "race_size" selects
# every race_size:* case.
selected() {
	local want=$1 n
	shift
	[ $# -eq 0 ] && return 0
	for n in "$@"; do
		[ "$n" = "$want" ] || [ "$n" = "${want%%:*}" ] && return 0
	done
	return 1
}

# harness_probe_or_skip [FILTER...]: when the fake driver cannot run here
# ($WITH_FAKE exits 125), prints a SKIP line per selected entry of $TESTS,
# an empty summary, and exits 0.
harness_probe_or_skip() {
	local reason t name
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- true >"$tmp/probe.out" 2>&1
	[ $? = "$HARNESS_SKIP_RC" ] || return 0
	reason=$(sed -n 's/.*SKIP: //p' "$tmp/probe.out" | head -1)
	for t in "${TESTS[@]}"; do
		name=${t%%|*}
		selected "$name" "$@" && echo "SKIP $name: ${reason:-fake driver unavailable}"
	done
	echo "0 passed, 0 failed"
	exit 0
}

# Final driver stat of a run directory; empty if missing.
stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$1/stats" 2>/dev/null | tail -1; }

# The closing line, and the runner's exit status.
harness_summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
