#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/p2p/run.sh - --p2p-register (policy key p2p-register) against the
# fake driver, judged by the fake's own count of the P2P registration
# controls it performed (its stats: p2p_registered, p2p_unregistered,
# p2p_register_failed; tests/fakedrv/fake_p2p.c models
# third_party_p2p_ctrl.c of 580.95.05).
#
# build/tests/p2p/p2p_pairs N makes N of CUDA's 2 MiB pairs (RM_ALLOC,
# REGISTER_VIDMEM, UNREGISTER_VIDMEM, RM_FREE), then six registrations the
# driver refuses, and prints what it saw. Cases, each PASS or FAIL:
#   native        no gpusandbox: the fake performs and counts every
#                 registration (the baseline the other cases compare with);
#   perform       --p2p-register perform: the same counts, the same
#                 statuses;
#   default       no setting, the default policy (no p2p group): as
#                 none below; with a policy that allows p2p: as perform;
#   answer        --p2p-register answer: the fake performs none of the
#                 pairs' registrations, the workload saw NV_OK for each and
#                 every refused call still refused with the native status
#                 (the two that the supervisor cannot prove valid reach the
#                 driver, which refuses them: p2p_register_failed 2);
#   policy-file   p2p-register = answer in a policy file: the same, and
#                 the audit start record (and its policy) names it;
#   trace         --trace says so under answer (the default adds no
#                 line), and marks each answered call;
#   none          --p2p-register none: the P2P object is answered
#                 NV_ERR_NOT_SUPPORTED without the driver (the fake made
#                 none: p2p_objects_made 0, against 1 natively), the pairs
#                 run without registration, as CUDA's do without the
#                 object; no refusal in the summary, and the audit log
#                 records the answer (outcome "answered");
#   bad-value     --p2p-register skip: status 125 and a clear message.
# Builds nothing: run `make -s -j2 all tests` first.
set -u
cd "$(dirname "$0")/../.." || exit 2

B=${GPUSANDBOX:-build/gpusandbox}
FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
PROG=build/tests/p2p/p2p_pairs
PAIRS=25
# The two refused registrations the driver itself refuses (a range beyond
# the allocation, a memory handle that names nothing); the other four
# never reach its registration code (size, object, client checks).
DRIVER_REFUSED=2
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-p2p.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
passed=0 failed=0

ok()  { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
stat_of() { sed -n "s/^$1 //p" "$2"; }

for f in "$B" "$PROG"; do
	[ -x "$f" ] || { echo "FAIL build: $f missing"; echo "0 passed, 1 failed"; exit 1; }
done
"$FAKE" -- true
if [ $? -eq 125 ]; then
	echo "SKIP p2p: the fake driver cannot run here"
	exit 125
fi

# run NAME CMD...: CMD on a fresh fake; its output in $T/NAME.out, the
# fake's final stats in $T/NAME.stats.
run() {
	local name=$1; shift
	GS_FAKE_STATS_OUT="$T/$name.stats" "$FAKE" -- "$@" >"$T/$name.out" 2>"$T/$name.err" ||
		bad "$name-exit" "exit $?: $(head -c 300 "$T/$name.err")"
}
# counts NAME REGISTERED UNREGISTERED: the fake's account of the run.
counts() {
	local s="$T/$1.stats" r u f
	r=$(stat_of p2p_registered "$s"); u=$(stat_of p2p_unregistered "$s")
	f=$(stat_of p2p_register_failed "$s")
	if [ "$r" = "$2" ] && [ "$u" = "$3" ] && [ "$f" = "$DRIVER_REFUSED" ]; then
		ok "$1-fake-counts"
	else
		bad "$1-fake-counts" "registered=$r unregistered=$u register_failed=$f, want $2 $3 $DRIVER_REFUSED"
	fi
}
# same_view NAME: the workload saw what it sees natively.
same_view() {
	if cmp -s "$T/native.out" "$T/$1.out"; then
		ok "$1-workload-view"
	else
		bad "$1-workload-view" "$(cat "$T/$1.out") differs from native $(cat "$T/native.out")"
	fi
}

run native "$PROG" "$PAIRS"
grep -qx "p2p_object=0x0 pairs_ok=$PAIRS reg_ok=$PAIRS unreg_ok=$PAIRS wrong_size=0x3a not_p2p=0x56 other_file=0x23 unknown_client=0x23 beyond=0x1f no_memory=0x57" \
	"$T/native.out" && ok native-view || bad native-view "$(cat "$T/native.out")"
counts native "$PAIRS" "$PAIRS"

run perform "$B" --user root --p2p-register perform -- "$PROG" "$PAIRS"
counts perform "$PAIRS" "$PAIRS"
same_view perform

run default "$B" --user root -- "$PROG" "$PAIRS"
grep -qx "p2p_object=0x56 pairs_ok=$PAIRS reg_ok=0 unreg_ok=0" "$T/default.out" &&
	[ "$(stat_of p2p_objects_made "$T/default.stats")" = 0 ] && ok default-none ||
	bad default-none "$(cat "$T/default.out"), the fake made $(stat_of p2p_objects_made "$T/default.stats") P2P objects"
printf 'allow = compute, memory, monitoring, p2p\n' >"$T/p2p.policy"
run default-p2p "$B" --user root --policy "$T/p2p.policy" -- "$PROG" "$PAIRS"
counts default-p2p "$PAIRS" "$PAIRS"
same_view default-p2p

run answer "$B" --user root --p2p-register answer -- "$PROG" "$PAIRS"
counts answer 0 0
same_view answer

printf 'p2p-register = answer\n' >"$T/answer.policy"
run policy-file "$B" --user root --policy "$T/answer.policy" --audit-log "$T/audit.jsonl" -- "$PROG" "$PAIRS"
counts policy-file 0 0
same_view policy-file
python3 - "$T/audit.jsonl" <<'PY' && ok policy-file-start-record || bad policy-file-start-record "$(head -c 400 "$T/audit.jsonl")"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["event"] == "start", r
assert r["p2p_register"] == "answer", r.get("p2p_register")
assert r["policy"]["p2p_register"] == "answer", r["policy"]
PY

run trace "$B" --user root --p2p-register answer --trace -- "$PROG" 1
grep -qF "[gpusandbox] p2p-register answer" "$T/trace.err" && ok trace || bad trace "$(head -c 300 "$T/trace.err")"
# Each answered control says so; under perform none does.
n=$(grep -c "REGISTER_VIDMEM.*answered without the driver" "$T/trace.err")
[ "$n" -eq 2 ] && ok trace-answered || bad trace-answered "$n answered lines, want 2 (one pair)"
run trace-default "$B" --user root --p2p-register perform --trace -- "$PROG" 1
grep -qF "[gpusandbox] p2p-register" "$T/trace-default.err" &&
	bad trace-default "the default's trace names a mode: $(head -c 300 "$T/trace-default.err")" ||
	ok trace-default
grep -q "answered without the driver" "$T/trace-default.err" &&
	bad trace-default-performed "a control answered under perform" || ok trace-default-performed

# none: the object never reaches the fake; the pairs still run.
[ "$(stat_of p2p_objects_made "$T/native.stats")" = 1 ] && ok native-p2p-object ||
	bad native-p2p-object "the fake made $(stat_of p2p_objects_made "$T/native.stats") P2P objects, want 1"
run none "$B" --user root --p2p-register none --audit-log "$T/none.jsonl" -- "$PROG" "$PAIRS"
grep -qx "p2p_object=0x56 pairs_ok=$PAIRS reg_ok=0 unreg_ok=0" "$T/none.out" && ok none-view ||
	bad none-view "$(cat "$T/none.out")"
r=$(stat_of p2p_objects_made "$T/none.stats"); g=$(stat_of p2p_registered "$T/none.stats")
[ "$r" = 0 ] && [ "$g" = 0 ] && ok none-fake-counts ||
	bad none-fake-counts "p2p_objects_made=$r p2p_registered=$g, want 0 0"
grep -q "refused" "$T/none.err" && bad none-no-refusal "$(grep refused "$T/none.err")" || ok none-no-refusal
python3 - "$T/none.jsonl" <<'PY' && ok none-audit || bad none-audit "$(grep -c . "$T/none.jsonl") records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs[0]["p2p_register"] == "none", recs[0].get("p2p_register")
ans = [r for r in recs if r.get("outcome") == "answered"]
assert len(ans) == 1 and ans[0].get("class") in ("NV50_THIRD_PARTY_P2P", "0x503c"), ans
PY

"$B" --p2p-register skip -- true >"$T/bad.out" 2>"$T/bad.err"; rc=$?
[ "$rc" -eq 125 ] && grep -qF "invalid --p2p-register mode 'skip' (auto, perform, answer or none)" "$T/bad.err" &&
	ok bad-value || bad bad-value "exit $rc: $(cat "$T/bad.err")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
