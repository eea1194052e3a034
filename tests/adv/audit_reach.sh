# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# tests/adv/audit_reach.sh - tests/adv audit_reach (sourced by
# tests/adv/run.sh): a root workload that knows its audit log's path tries
# to list, read, truncate, rewrite, unflag, append to and unlink it
# (tests/adv/audit_reach.c). Judged by the log's own bytes and `gpusandbox
# audit verify`; the program's output only shows that it tried.
#
#   audit_reach:dir    the log alone in a 0700 directory: the directory is
#                      masked; every attempt fails; the log verifies
#   audit_reach:file   the log beside other files: the file is masked (the
#                      workload writes /dev/null); the log verifies
#   audit_reach:fd     --audit-fd, its file alone in a 0700 directory: found
#                      by the descriptor's path, masked the same way
#   audit_reach:append the mask off (GPUSANDBOX_TEST_NO_AUDIT_MASK): the
#                      append-only flag alone keeps every record written
#                      before the attack; the appended forgery is the one
#                      thing it lets through, and verify names it
#   baseline-audit_reach  both off (GPUSANDBOX_TEST_NO_AUDIT_GUARD): the
#                      workload truncates and unlinks the log
# Uses val_of, audit_verify, $GPUSANDBOX, $WITH_FAKE, $ADV, $QUOTA_ARG,
# $FAKE_VIDMEM and $TIMEOUT from run.sh.

# A refusal the program has made before its attempts and one after.
AUDIT_REACH_REFUSALS=2

run_audit_reach() {
	local name=$1 d="$tmp/${1//:/_}" log env=() audit=() bin=$GPUSANDBOX
	harness_rm_tree "$d"
	mkdir -p "$d"
	log="$d/logs/audit.jsonl"
	install -d -m 0700 "$d/logs"
	[ "$name" = audit_reach:file ] && log="$d/audit.jsonl"
	[ "$name" = audit_reach:append ] && env=(GPUSANDBOX_TEST_NO_AUDIT_MASK=1)
	[ "$name" = baseline-audit_reach ] && env=(GPUSANDBOX_TEST_NO_AUDIT_GUARD=1)
	# A switch exists only in the test build (include/test_switch.h).
	[ ${#env[@]} -eq 0 ] || bin=$GPUSANDBOX_SWITCHED
	audit=(--audit-log "$log")
	if [ "$name" = audit_reach:fd ]; then
		# sh execs gpusandbox: no other process holds the descriptor.
		# shellcheck disable=SC2016 # expanded by the inner shell
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
			"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c 'exec "$1" --mem "$2" --audit-fd 3 -- "$3" "$4" 3>>"$4"' \
			sh "$GPUSANDBOX" "$QUOTA_ARG" "$ADV/audit_reach" "$log" >"$d/out" 2>"$d/err"
	else
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
			"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- env ${env[@]+"${env[@]}"} "$bin" --mem "$QUOTA_ARG" \
			"${audit[@]}" -- "$ADV/audit_reach" "$log" >"$d/out" 2>"$d/err"
	fi
	rc=$?
	dir=$d
	reach_log=$log
}

# The refusals in the log (video memory quota, NV_ERR_NO_MEMORY).
reach_refusals() { grep -c '"nv_status":"0x51"' "$1" 2>/dev/null; }

# The start record's protections, as "dir file append" (true/false).
reach_protections() {
	python3 - "$1" <<'PY' 2>/dev/null
import json, sys
p = json.loads(open(sys.argv[1]).readline())["protections"]
print(str(p["dir_masked"]).lower(), str(p["file_masked"]).lower(), str(p["append_only"]).lower())
PY
}

check_audit_reach() {
	local name=$1 d=$2 log=$reach_log prot
	[ "$(val_of "$d" trunc)" != "" ] || { why="the program did not run: $(tail -c 300 "$d/err" | tr '\n' ' ')"; return 1; }
	if [ "$name" = baseline-audit_reach ]; then
		# The attack wins: the log was truncated and unlinked.
		[ "$(val_of "$d" trunc)" = ok ] && [ "$(val_of "$d" read_log)" = 1 ] && [ ! -e "$log" ] ||
			{ why="guard off, yet: $(head -1 "$d/out")"; return 1; }
		return 0
	fi
	[ -f "$log" ] || { why="the log is gone: $(head -1 "$d/out")"; return 1; }
	[ "$(reach_refusals "$log")" = "$AUDIT_REACH_REFUSALS" ] ||
		{ why="$(reach_refusals "$log") refusals in the log, want $AUDIT_REACH_REFUSALS"; return 1; }
	head -1 "$log" | grep -q '"event":"start".*"command":\[".*audit_reach"' ||
		{ why="the first record is not the real start record"; return 1; }
	prot=$(reach_protections "$log")
	audit_verify "$log"
	case "$name" in
	audit_reach:append)
		# Written records cannot change; an appended line can be
		# added, and the verifier names it as the one problem.
		[ "$prot" = "false false true" ] || { why="protections: $prot"; return 1; }
		[ "$(val_of "$d" trunc)" = EPERM ] && [ "$(val_of "$d" rewrite)" = EPERM ] &&
			[ "$(val_of "$d" unflag)" = EPERM ] && [ "$(val_of "$d" unlink)" = EPERM ] ||
			{ why="append-only did not refuse: $(head -1 "$d/out")"; return 1; }
		grep -q '^{"forged":true}$' "$log" && [ "$verify_rc" = 1 ] && grep -q '1 problem' <<<"$verify_err" ||
			{ why="verify exit $verify_rc: $verify_err"; return 1; }
		return 0 ;;
	audit_reach:file)
		[ "$prot" = "false true true" ] || { why="protections: $prot"; return 1; } ;;
	*)
		[ "$prot" = "true false true" ] || { why="protections: $prot"; return 1; } ;;
	esac
	# Masked: the workload never read the log, and nothing it wrote is in it.
	[ "$(val_of "$d" read_log)" = 0 ] && ! grep -q forged "$log" ||
		{ why="the workload reached the log: $(head -1 "$d/out")"; return 1; }
	[ "$verify_rc" = 0 ] || { why="audit verify exit $verify_rc: $verify_err"; return 1; }
	return 0
}
