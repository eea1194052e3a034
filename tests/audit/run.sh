#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/audit/run.sh [NAME...] - the audit log's hash chain (issue #17
# item 6) against `gpusandbox audit verify`.
#
# Makes real logs with the fake driver: two sandboxes one after the other
# and two at once, all appending to one file (their records interleave).
# The untouched log must verify (exit 0) and --head must accept the hash
# gpusandbox printed; then each mutation of tamper.py (an edit, an edit
# with its hash recomputed, a deletion, a duplicate, a swap, a forged
# record chained to its predecessor, a truncation, a line cut short,
# bytes that are not UTF-8, a record after the seal) must make verify exit
# 1 with a message naming the problem. A complete forged sandbox of the
# forger's own is what the chain cannot see: it verifies, and only --head
# (the printed hash of the real sandbox's seal) pins the real one; that
# limit is asserted too, so the documentation cannot drift from it.
#
# Builds nothing: run `make` first. Output: PASS/FAIL per case, then
# "N passed, M failed". Environment: GPUSANDBOX, WITH_FAKE, GS_AUDIT_KEEP.
set -u

cd "$(dirname "$0")/../.." || exit 2

GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
ADV=build/tests/adv
FAKE_VIDMEM=16g
TAMPER=tests/audit/tamper.py

. tests/lib/harness.sh
harness_tmpdir "${GS_AUDIT_KEEP:-}" gs-audit

# name | verify's exit status | a phrase its message must hold
TESTS=(
	"intact|0|verified: 4 sandboxes"
	"edit|1|its hash does not match its text"
	"edit-rehash|1|does not follow"
	"delete|1|records deleted"
	"delete-first|1|the records before it are missing"
	"duplicate|1|inserted, repeated or reordered"
	"swap|1|record 1 where record 3 should be"
	"insert-forged|1|inserted, repeated or reordered"
	"truncate-seal|1|no seal after record"
	"cut-line|1|cut short"
	"bad-utf8|1|not valid UTF-8"
	"after-seal|1|after the seal"
	"forged-sandbox|0|verified: 5 sandboxes"
)
# Cases run below the table: head, head-rewrite, retry, levels, stacks, stacks-fp, stack-hostile, who, usage.

harness_probe_or_skip "$@"

# ---- the logs ------------------------------------------------------------------
log=$tmp/audit.jsonl
sandboxed() { # stderr file, then the workload
	local err=$1
	shift
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" --mem 1g --audit-log "$log" -- "$@" \
		>/dev/null 2>"$err"
}
sandboxed "$tmp/err1" "$ADV/dup_free" && sandboxed "$tmp/err2" "$ADV/race_size" size &&
	{ sandboxed "$tmp/err3" "$ADV/dup_free" & sandboxed "$tmp/err4" "$ADV/channels"; wait $!; }
made=$?
head_hash=$(sed -n 's/.*audit log sealed: .* last hash \([0-9a-f]\{64\}\)$/\1/p' "$tmp/err1")
if [ "$made" != 0 ] || [ -z "$head_hash" ] || [ "$(grep -c '"event":"seal"' "$log")" != 4 ]; then
	fail "make-logs" "runs failed (exit $made) or not 4 seals: $(tail -c 300 "$tmp"/err* | tr '\n' ' ')"
	harness_summary
	exit 1
fi
pass "make-logs"

verify() { # file [--head HASH]: sets $vrc and $vout
	vout=$("$GPUSANDBOX" audit verify "${@:2}" "$1" 2>&1)
	vrc=$?
}

# ---- each mutation -------------------------------------------------------------
for t in "${TESTS[@]}"; do
	IFS='|' read -r name want phrase <<<"$t"
	selected "$name" "$@" || continue
	f=$tmp/$name.jsonl
	if [ "$name" = intact ]; then
		cp "$log" "$f"
	elif ! python3 "$TAMPER" "$name" "$log" "$f" 2>"$tmp/tamper.err"; then
		fail "$name" "tamper.py: $(tail -1 "$tmp/tamper.err")"
		continue
	fi
	# The mutation must have changed the log (a no-op proves nothing).
	if [ "$name" != intact ] && cmp -s "$log" "$f"; then
		fail "$name" "the mutation left the log unchanged"
		continue
	fi
	verify "$f"
	if [ "$vrc" = "$want" ] && grep -qF -- "$phrase" <<<"$vout"; then
		pass "$name"
	else
		fail "$name" "verify exit $vrc (want $want), output: $(tr '\n' ' ' <<<"$vout" | tail -c 400)"
	fi
done

# ---- --head: the printed hash pins the real sandbox ----------------------------
if selected head "$@"; then
	verify "$log" --head "$head_hash"
	good=$vrc
	verify "$log" --head "$(printf '%064d' 0)"
	[ "$good" = 0 ] && [ "$vrc" = 1 ] && grep -q 'no sandbox is sealed with hash' <<<"$vout" &&
		pass head || fail head "--head printed hash: exit $good; --head zeros: exit $vrc"
	# A rewrite without the real sandbox (the forger's own in its place).
	python3 "$TAMPER" forged-sandbox /dev/stdin "$tmp/only-forged.jsonl" \
		< <(grep -v "$(sed -n '1s/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' "$log")" "$log")
	verify "$tmp/only-forged.jsonl" --head "$head_hash"
	[ "$vrc" = 1 ] && pass head-rewrite || fail head-rewrite "a log without the real sandbox passed --head"
fi

# ---- a retry loop: one record, one count, and the release credited ----------------
# retry_loop asks 200 times for 2 GiB under --mem 1g, holding 256 MiB it
# releases by closing its file. Before issue #15 this wrote 200 identical
# deny records and credited the release to gpusandbox's own pid.
if selected retry "$@"; then
	rlog=$tmp/retry.jsonl
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" --mem 1g --audit-log "$rlog" -- \
		"$ADV/retry_loop" >"$tmp/retry.out" 2>"$tmp/retry.err"
	rrc=$?
	refused=$(sed -n 's/^refused=\([0-9]*\) .*/\1/p' "$tmp/retry.out")
	if [ "$rrc" = 0 ] && python3 - "$rlog" "$refused" 2>"$tmp/retry.py" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
refused = int(sys.argv[2])
assert refused == 200, f"the program saw {refused} refusals, not 200"
start = recs[0]
deny = [r for r in recs if r["event"] == "decision" and r["verdict"] == "deny"]
sup = [r for r in recs if r["event"] == "suppressed"]
assert len(deny) == 1 and deny[0]["outcome"] == "quota", deny
assert len(sup) == 1 and sup[0]["count"] == refused - 1, sup
assert sup[0]["first_seq"] == deny[0]["seq"] and sup[0]["pid"] == deny[0]["pid"], sup
summary = [r for r in recs if r["event"] == "summary"][0]
# Every refusal is accounted for: written or counted.
assert summary["decisions"]["denied"] == len(deny) + sup[0]["count"], summary
# The default level writes no allowed allocation; the 256 MiB held shows
# in a usage record instead, and the seal counts what was left out.
assert start["level"] == "standard", start
ok = [r for r in recs if r["event"] == "decision" and r.get("class") == "0x40" and r["verdict"] == "allow"]
assert not ok, ok
use = [r for r in recs if r["event"] == "usage"]
assert any(r["used"] == 256 << 20 and r["device"] == 0 for r in use), use
assert use[-1]["used"] == 0 and use[-1]["peak"] == 256 << 20, use
assert recs[-1]["event"] == "seal" and recs[-1]["below_level"] >= 1, recs[-1]
close = [r for r in recs if r.get("call") == "FILE_CLOSE"]
assert len(close) == 1 and close[0]["pid"] == start["pid"] and close[0]["tid"] is None, close
assert close[0]["comm"] == "retry_loop", close
assert close[0]["size"] == 256 << 20 and close[0]["outcome"] == "released", close
# Times follow seq, the suppressed count included (it is written late).
times = [r["time"] for r in recs]
assert times == sorted(times), times
PY
	then
		verify "$rlog"
		good=$vrc
		grep -v '"event":"suppressed"' "$rlog" >"$tmp/retry-cut.jsonl"
		verify "$tmp/retry-cut.jsonl"
		[ "$good" = 0 ] && [ "$vrc" = 1 ] && pass retry ||
			fail retry "verify: intact exit $good, without the suppressed record exit $vrc"
	else
		fail retry "exit $rrc: $(tail -1 "$tmp/retry.py") $(tail -c 300 "$tmp/retry.err")"
	fi
fi

# ---- the record levels -----------------------------------------------------------
# alloc_loop allocates and frees 2 MiB 3000 times. "all" writes every pair
# (both decisions); "standard" none of them, but usage records at most 4 a
# second per GPU; "refusals" only the start, the summary and the seal. The
# seal counts what the level left out, and every log verifies.
if selected levels "$@"; then
	lv_ok=1
	for lv in all standard refusals; do
		"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" --mem 1g --audit-level "$lv" \
			--audit-log "$tmp/level-$lv.jsonl" -- build/tests/audit/alloc_loop 3000 \
			>"$tmp/level-$lv.out" 2>"$tmp/level-$lv.err" || lv_ok=0
		verify "$tmp/level-$lv.jsonl"
		[ "$vrc" = 0 ] || lv_ok=0
		echo "levels: $lv: $(wc -l <"$tmp/level-$lv.jsonl") records for 3000 pairs"
	done
	# Two pairs of 300 MiB: frees that matter (256 MiB or more) are written.
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" --mem 1g --audit-log "$tmp/level-big.jsonl" \
		-- build/tests/audit/alloc_loop 2 300 >/dev/null 2>"$tmp/level-big.err" || lv_ok=0
	if [ "$lv_ok" = 1 ] && python3 - "$tmp" 2>"$tmp/levels.py" <<'PY'
import json, sys
def log(lv):
    return [json.loads(l) for l in open(f"{sys.argv[1]}/level-{lv}.jsonl")]
def vidmem(recs, verdict):
    return [r for r in recs if r["event"] == "decision" and r.get("class") == "0x40" and r["verdict"] == verdict]
def frees(recs):
    return [r for r in recs if r["event"] == "decision" and r.get("call") == "RM_FREE" and r["verdict"] == "allow"]
a, s, r = log("all"), log("standard"), log("refusals")
assert [x["level"] for x in (a[0], s[0], r[0])] == ["all", "standard", "refusals"]
assert len(vidmem(a, "allow")) == 3000 and len(frees(a)) == 3000, len(a)
assert not [x for x in a if x["event"] == "usage"] and a[-1]["below_level"] == 0
assert not vidmem(s, "allow") and not frees(s), "standard wrote allowed calls"
use = [x for x in s if x["event"] == "usage"]
assert use and use[-1]["used"] == 0 and all(x["peak"] == 2 << 20 for x in use), use
# At most 4 a second: each usage record says how long after the one before
# it was decided (interval_us, from the reading that decided it; the first
# has none), at least 250 ms but for the last, written when the run ends
# whatever the interval. No wall clock is compared: a loaded machine may
# stamp two records closer than the interval that separated the decisions.
assert "interval_us" not in use[0], use[0]
gaps = [x["interval_us"] for x in use[1:]]
assert all(isinstance(g, int) for g in gaps), gaps
assert all(g >= 250000 for g in gaps[:-1]), gaps
assert s[-1]["below_level"] == 6000, s[-1]
assert [x["event"] for x in r] == ["start", "summary", "seal"], [x["event"] for x in r]
assert r[-1]["below_level"] == 6001, r[-1]
b = log("big")
assert len(frees(b)) == 2 and all(x["size"] == 300 << 20 for x in frees(b)) and not vidmem(b, "allow"), b
for recs in (a, s, r):
    assert recs[-2]["decisions"]["allowed"] >= 6000, recs[-2]
PY
	then
		pass levels
	else
		fail levels "runs ok=$lv_ok: $(tail -1 "$tmp/levels.py") $(tail -c 300 "$tmp"/level-*.err)"
	fi
fi

# ---- call stacks of refusals -------------------------------------------------------
# stack_chain is refused from main -> level1 -> level2 -> level3 (built -g,
# no inlining). Its deny record must carry the stack with those four names
# in that order, innermost first; with --audit-stacks off, none. Without
# libdw (--version says so) the record says why there is no stack.
if selected stacks "$@"; then
	for mode in on off; do
		"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" --mem 1g --audit-stacks "$mode" \
			--audit-log "$tmp/stack-$mode.jsonl" -- build/tests/audit/stack_chain \
			>"$tmp/stack-$mode.out" 2>"$tmp/stack-$mode.err"
	done
	have=no
	"$GPUSANDBOX" --version | grep -q 'call stacks of refusals.*: yes' && have=yes
	if grep -qx 'refused=1' "$tmp/stack-on.out" && grep -qx 'refused=1' "$tmp/stack-off.out" &&
		python3 - "$tmp" "$have" 2>"$tmp/stacks.py" <<'PY'
import json, sys
def deny(mode):
    recs = [json.loads(l) for l in open(f"{sys.argv[1]}/stack-{mode}.jsonl")]
    d = [r for r in recs if r["event"] == "decision" and r["verdict"] == "deny"]
    assert len(d) == 1, d
    return recs[0], d[0]
start, on = deny("on")
if sys.argv[2] == "no":
    assert start["stacks"] is False and "stack" not in on, on
    sys.exit(0)
assert start["stacks"] is True, start
stack = on["stack"]
assert 4 <= len(stack) <= 24 and all(isinstance(f, str) for f in stack), stack
names = [f.split("+")[0] for f in stack]
want = ["level3", "level2", "level1", "main"]
at = [names.index(w) for w in want]
assert at == sorted(at) and at == list(range(at[0], at[0] + 4)), (at, stack)
assert "stack_chain.c:" in stack[at[0]], stack
off_start, off = deny("off")
assert off_start["stacks"] is False and "stack" not in off and "stack_error" not in off, off
PY
	then
		verify "$tmp/stack-on.jsonl"
		[ "$vrc" = 0 ] && pass stacks || fail stacks "verify exit $vrc: $vout"
	else
		fail stacks "$(tail -1 "$tmp/stacks.py") $(tail -c 300 "$tmp/stack-on.err")"
	fi
fi

# ---- a wrapper whose CFI needs rbp -------------------------------------------------
# stack_fp refuses a call through an ioctl wrapper shaped like Ubuntu
# 24.04's glibc (its CFI finds the caller through rbp, which
# /proc/TID/syscall does not give) from callers without frame pointers.
# On an H100 PyTorch's refusal came out as "ioctl+0x3d" and one wrong frame;
# without the rbp guess (stack.c, guess_frame) this case gives the same.
if selected stacks-fp "$@" && "$GPUSANDBOX" --version | grep -q 'call stacks of refusals.*: yes'; then
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" --mem 1g --audit-log "$tmp/stack-fp.jsonl" -- \
		build/tests/audit/stack_fp >"$tmp/stack-fp.out" 2>"$tmp/stack-fp.err"
	if grep -qx 'refused=1' "$tmp/stack-fp.out" && python3 - "$tmp/stack-fp.jsonl" 2>"$tmp/stack-fp.py" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
d = [r for r in recs if r["event"] == "decision" and r["verdict"] == "deny"]
assert len(d) == 1, d
stack = d[0].get("stack") or []
names = [f.split("+")[0] for f in stack]
want = ["fp_ioctl", "level3", "level2", "level1", "main"]
assert names[:5] == want, stack
PY
	then
		pass stacks-fp
	else
		fail stacks-fp "$(tail -1 "$tmp/stack-fp.py") $(tail -c 300 "$tmp/stack-fp.err")"
	fi
fi

# ---- a forged stack -----------------------------------------------------------------
# stack_hostile makes a refused call with its stack and frame pointers in a
# buffer of cycles, stray code addresses and junk, then a refused
# allocation from its ordinary stack. Both refusals are recorded (the first
# with at most 24 frames or a stack_error), the second's stack names main:
# the unwinder survived the first.
if selected stack-hostile "$@" && "$GPUSANDBOX" --version | grep -q 'call stacks of refusals.*: yes'; then
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" --mem 1g --audit-log "$tmp/hostile.jsonl" -- \
		build/tests/audit/stack_hostile >"$tmp/hostile.out" 2>"$tmp/hostile.err"
	if grep -qx 'skip=1' "$tmp/hostile.out"; then
		echo "SKIP stack-hostile: not x86-64"
	elif grep -qx 'hostile=EINVAL ordinary=NO_MEMORY' "$tmp/hostile.out" &&
		python3 - "$tmp/hostile.jsonl" 2>"$tmp/hostile.py" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ref = [r for r in recs if r["event"] == "decision" and r["verdict"] == "refuse"]
deny = [r for r in recs if r["event"] == "decision" and r["verdict"] == "deny"]
assert len(ref) == 1 and len(deny) == 1, (ref, deny)
h = ref[0]
assert ("stack" in h) != ("stack_error" in h), h
assert "stack_error" in h or (len(h["stack"]) <= 24 and all(isinstance(f, str) for f in h["stack"])), h
assert any(f.startswith("main+") for f in deny[0]["stack"]), deny[0]
PY
	then
		verify "$tmp/hostile.jsonl"
		[ "$vrc" = 0 ] && pass stack-hostile || fail stack-hostile "verify exit $vrc: $vout"
	else
		fail stack-hostile "$(cat "$tmp/hostile.out") $(tail -1 "$tmp/hostile.py" 2>/dev/null) $(tail -c 300 "$tmp/hostile.err")"
	fi
fi

# ---- who: the start record's uid, user, cwd and policy file's SHA-256 -------------
# Run from a folder of its own, with a policy file, as root and as --user
# nobody: the record names each, and the policy's hash is sha256sum's.
if selected who "$@"; then
	wdir=$tmp/who-cwd
	mkdir -p "$wdir"
	printf 'mem = 1g\n' >"$tmp/who.policy"
	want_sha=$(sha256sum "$tmp/who.policy" | cut -d' ' -f1)
	gs_abs=$(realpath "$GPUSANDBOX") wf_abs=$(realpath "$WITH_FAKE")
	for u in root nobody; do
		ulog=$tmp/who-$u.jsonl
		opt=()
		[ "$u" = nobody ] && opt=(--user nobody)
		(cd "$wdir" && "$wf_abs" --vidmem "$FAKE_VIDMEM" -- "$gs_abs" --policy "$tmp/who.policy" \
			"${opt[@]}" --audit-log "$ulog" -- /bin/true) >/dev/null 2>"$tmp/who-$u.err"
	done
	if python3 - "$tmp" "$wdir" "$want_sha" "$(id -u nobody)" 2>"$tmp/who.py" <<'PY'
import json, sys
tmp, wdir, sha, nobody = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for user, uid in (("root", 0), ("nobody", nobody)):
    start = json.loads(open(f"{tmp}/who-{user}.jsonl").readline())
    assert start["event"] == "start", start
    got = (start.get("uid"), start.get("user"), start.get("cwd"), start.get("policy_file"))
    want = (uid, user, wdir, {"path": f"{tmp}/who.policy", "sha256": sha})
    assert got == want, f"{user}: {got} != {want}"
PY
	then pass who; else fail who "$(tail -1 "$tmp/who.py") $(tail -c 300 "$tmp"/who-*.err)"; fi
fi

# ---- usage ---------------------------------------------------------------------
if selected usage "$@"; then
	"$GPUSANDBOX" audit verify >/dev/null 2>&1; a=$?
	"$GPUSANDBOX" audit verify "$tmp/does-not-exist" >/dev/null 2>&1; b=$?
	"$GPUSANDBOX" audit verify --head xyz "$log" >/dev/null 2>&1; c=$?
	: >"$tmp/empty.jsonl"
	"$GPUSANDBOX" audit verify "$tmp/empty.jsonl" >/dev/null 2>&1; d=$?
	"$GPUSANDBOX" audit frobnicate >/dev/null 2>&1; e=$?
	[ "$a$b$c$d$e" = 22212 ] && pass usage || fail usage "exits $a $b $c $d $e, want 2 2 2 1 2"
fi

harness_summary
