#!/bin/bash
# SPDX-License-Identifier: MIT
# Driver detection and strictness (issue #11), and --gpus checked at start
# (issue #14 item 6). The version comes from the
# driver's own answer to the version query, the module files must agree
# with it, a version gpusandbox has no RM tables for is refused (125) unless
# --driver-abi says which tables to use, and the choice is in --version,
# --trace and the audit start record. Runs on the fake driver, which
# answers the query with --driver-version (tests/fakedrv/fake_rm.c); only
# 580 is a real driver these runs stand for: the runs for other versions show
# what gpusandbox does with an answer (which tables it picks); the fake
# follows the same tables (tests/fakedrv), so how those drivers really behave
# rests on the generated tables (docs/rm-tables.md), not on these runs.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${GPUSANDBOX:-build/gpusandbox}
FAKE=tests/fakedrv/with-fake-nvidia
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-driver.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
passed=0 failed=0

ok()   { echo "PASS $1"; passed=$((passed + 1)); }
bad()  { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# name want_status cmd...: runs cmd, keeps its output in $T/out, $T/err.
run() {
	local name=$1 want=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	[ "$rc" -eq "$want" ] && ok "$name" || bad "$name" "exit $rc, want $want: $(head -c 300 "$T/err")"
}
has() { # name file fixed-string
	grep -qF -- "$3" "$2" && ok "$1" || bad "$1" "no '$3' in: $(head -c 300 "$2")"
}
# start_driver file version abi override: the audit start record's driver.
start_driver() {
	python3 - "$@" <<'PY'
import json, sys
path, version, abi, override = sys.argv[1:]
r = json.loads(open(path).readline())
assert r["event"] == "start", r
d = r["driver"]
want = {"version": version, "abi": abi, "override": None if override == "-" else override}
assert d == want, f"{d} != {want}"
PY
}

[ -x "$B" ] || { echo "FAIL build: $B missing"; echo "0 passed, 1 failed"; exit 1; }
"$FAKE" -- true
if [ $? -eq 125 ]; then
	echo "SKIP driver: the fake driver cannot run here"
	exit 125
fi

# Without a driver: nothing to check, the newest tables, and --version says so.
run "no-driver-version" 0 "$B" --version
has "no-driver-version-text" "$T/out" "NVIDIA driver: none"
has "supported-abis" "$T/out" "supported NVIDIA driver ABIs: 535.x, 550.x, 570.x, 580.x, 590.x, 595.x"
run "no-driver-unknown-branch-125" 125 "$B" --driver-abi 575 -- true
has "unknown-branch-message" "$T/err" "--driver-abi 575: gpusandbox has RM tables for 535.x, 550.x, 570.x, 580.x, 590.x, 595.x only"

# A 580 driver: its own tables, in --version, --trace and the audit log.
run "580-version" 0 "$FAKE" -- "$B" --version
has "580-version-text" "$T/out" "NVIDIA driver: 580.95.05 (supported)"
run "580-runs" 0 "$FAKE" -- "$B" --trace --audit-log "$T/a580.jsonl" -- true
has "580-trace" "$T/err" "gpusandbox: NVIDIA driver 580.95.05 (RM tables 580 from open-gpu-kernel-modules 580.142"
start_driver "$T/a580.jsonl" 580.95.05 580 - 2>"$T/py" && ok "580-audit-driver" ||
	bad "580-audit-driver" "$(tail -1 "$T/py")"
run "580-other-release" 0 "$FAKE" --driver-version 580.159.04 -- "$B" -- true

# Each supported branch gets its own tables, without --driver-abi.
for v in 535.288.01 550.163.01 570.211.01 590.48.01 595.45.04; do
	run "branch-$v-runs" 0 "$FAKE" --driver-version "$v" -- "$B" --trace -- true
	has "branch-$v-tables" "$T/err" "gpusandbox: NVIDIA driver $v (RM tables ${v%%.*} from open-gpu-kernel-modules $v"
done

# Versions without tables: refused before anything runs, naming both sides.
for v in 575.64.05 999.1.2; do
	run "strict-$v-125" 125 "$FAKE" --driver-version "$v" -- "$B" -- sh -c "touch $T/ran-$v"
	has "strict-$v-names-version" "$T/err" "NVIDIA driver $v: gpusandbox has no RM tables for this version (it has 535.x, 550.x, 570.x, 580.x, 590.x, 595.x)"
	[ ! -e "$T/ran-$v" ] && ok "strict-$v-nothing-ran" || bad "strict-$v-nothing-ran" "the command ran"
	run "strict-$v-version" 0 "$FAKE" --driver-version "$v" -- "$B" --version
	has "strict-$v-version-text" "$T/out" "NVIDIA driver: $v (not supported)"
done

# The override: nearest tables, a warning, and the audit record says so.
run "override-nearest" 0 "$FAKE" --driver-version 999.1.2 -- \
	"$B" --driver-abi nearest --audit-log "$T/a999.jsonl" -- true
has "override-warning" "$T/err" "warning: NVIDIA driver 999.1.2 (RM tables 595"
start_driver "$T/a999.jsonl" 999.1.2 595 nearest 2>"$T/py" && ok "override-audit-driver" ||
	bad "override-audit-driver" "$(tail -1 "$T/py")"
run "override-branch" 0 "$FAKE" --driver-version 575.64.05 -- \
	"$B" --driver-abi 570 --audit-log "$T/a575.jsonl" -- true
start_driver "$T/a575.jsonl" 575.64.05 570 570 2>"$T/py" && ok "override-branch-audit" ||
	bad "override-branch-audit" "$(tail -1 "$T/py")"

# The module files must say what the driver says.
run "module-mismatch-125" 125 "$FAKE" --module-version 580.82.07 -- "$B" -- true
has "module-mismatch-message" "$T/err" "the NVIDIA driver says it is 580.95.05 but /sys/module/nvidia/version says 580.82.07"
run "proc-mismatch-125" 125 "$FAKE" --proc-version 580.82.07 -- "$B" -- true
has "proc-mismatch-message" "$T/err" "the NVIDIA driver says it is 580.95.05 but /proc/driver/nvidia/version says 580.82.07"
run "module-files-absent" 0 "$FAKE" --module-version none -- "$B" -- true

# The fake is the driver only because the supervisor was told so, and the
# workload does not inherit the telling (driver_nodes.c).
run "fake-env-not-inherited" 0 "$FAKE" -- "$B" -- sh -c 'test -z "${GPUSANDBOX_FAKE_DRIVER+set}"'
run "fake-without-env-125" 125 "$FAKE" -- env -u GPUSANDBOX_FAKE_DRIVER "$B" -- true
has "fake-without-env-message" "$T/err" "/dev/nvidiactl is not the NVIDIA driver's control device"

# --gpus names GPUs that exist (issue #14 item 6): checked at start against
# the supervisor's own CARD_INFO, with a message that lists the GPUs there are.
run "gpus-missing-125" 125 "$FAKE" -- "$B" --gpus 5 -- sh -c "touch $T/ran-gpus"
has "gpus-missing-message" "$T/err" "--gpus: there is no GPU 5 (the GPUs here are 0)"
[ ! -e "$T/ran-gpus" ] && ok "gpus-missing-nothing-ran" || bad "gpus-missing-nothing-ran" "the command ran"
run "gpus-one-of-two-missing-125" 125 "$FAKE" -- "$B" --gpus 0,1 -- true
has "gpus-one-of-two-message" "$T/err" "there is no GPU 1 (the GPUs here are 0)"
run "gpus-second-gpu" 0 "$FAKE" --gpus 2 -- "$B" --gpus 1 -- true
run "gpus-all" 0 "$FAKE" -- "$B" --gpus all -- true
run "gpus-all-uppercase" 0 "$FAKE" -- "$B" --gpus ALL -- true
run "gpus-no-driver-125" 125 "$B" --gpus 0 -- true
has "gpus-no-driver-message" "$T/err" "--gpus: there is no GPU 0 (no NVIDIA GPU was found)"
printf 'gpus = all\n' >"$T/all.policy"
run "gpus-all-policy" 0 "$FAKE" -- "$B" --policy "$T/all.policy" -- true
printf 'gpus = 3\n' >"$T/three.policy"
run "gpus-policy-missing-125" 125 "$FAKE" -- "$B" --policy "$T/three.policy" -- true
has "gpus-policy-missing-message" "$T/err" "there is no GPU 3"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
