#!/bin/bash
# SPDX-License-Identifier: MIT
# The first hour (issue #14): option errors that say which, --mem units,
# subcommand words, output-file checks, --check, --version, the
# environment warnings and --trace-output / --trace-time. Every case checks
# the exit status and the message; the trace and no-warning cases run on
# the fake driver and are skipped (not failed) where it cannot run.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${GPUSANDBOX:-build/gpusandbox}
FAKE=tests/fakedrv/with-fake-nvidia
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-opts.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
ok()  { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# name want-status want-stderr-regex cmd...: the status, and one stderr
# line matching the regex (grep -E).
expect() {
	local name=$1 want=$2 re=$3; shift 3
	"$@" >"$T/out" 2>"$T/err"; local rc=$?
	if [ "$rc" -ne "$want" ]; then bad "$name" "exit $rc, want $want: $(head -c 300 "$T/err")"
	elif [ -n "$re" ] && ! grep -qE -- "$re" "$T/err"; then bad "$name" "stderr lacks /$re/: $(head -c 300 "$T/err")"
	else ok "$name"; fi
}

[ -x "$B" ] || { echo "FAIL build: $B missing (run make)"; echo "0 passed, 1 failed"; exit 1; }

# --- each option error has its own message, naming the option ---
expect opt-missing-value 125 "^gpusandbox: option '--mem' needs a value$" "$B" --mem
expect opt-ambiguous 125 "^gpusandbox: option '--chan' is ambiguous; possibilities: '--channels' '--channel-groups'$" \
	"$B" --chan 2 -- true
expect opt-unknown-near 125 "^gpusandbox: unknown option '--tarce' \(did you mean '--trace'\?\)$" "$B" --tarce -- true
expect opt-unknown-far 125 "^gpusandbox: unknown option '--xyzzy'$" "$B" --xyzzy -- true
expect opt-no-value 125 "^gpusandbox: option '--trace=yes' takes no value$" "$B" --trace=yes -- true
expect opt-unknown-short 125 "^gpusandbox: unknown option '-x'$" "$B" -x -- true

# --- the audit log's level and stacks ---
expect audit-level-bad 125 "^gpusandbox: invalid --audit-level 'most' \(refusals, standard or all\)$" \
	"$B" --audit-level most -- true
expect audit-stacks-bad 125 "^gpusandbox: invalid --audit-stacks 'yes' \(on or off\)$" "$B" --audit-stacks yes -- true
expect audit-level-ok 0 "" "$B" --audit-level refusals --audit-stacks off -- true
expect metrics-same-as-audit 125 "^gpusandbox: --audit-log and --metrics-file name the same file \($T/same\): one would overwrite the other$" \
	"$B" --audit-log "$T/same" --metrics-file "$T/same" -- true
printf 'audit-stacks = yes\n' >"$T/stacks.policy"
expect policy-audit-stacks-bad 125 "^$T/stacks.policy:1:16: error: invalid audit-stacks 'yes' \(on or off\)$" \
	"$B" --policy "$T/stacks.policy" -- true

# --- --uvm-map: as-user only with a uid of its own (own_rm.h) ---
expect uvm-map-bad 125 "^gpusandbox: invalid --uvm-map mode 'user' \(dup or as-user\)$" "$B" --uvm-map user -- true
expect uvm-map-as-user-no-user 125 "^gpusandbox: --uvm-map as-user needs --user: " "$B" --uvm-map as-user -- true
expect uvm-map-as-user-root 125 "^gpusandbox: --uvm-map as-user with uid 0: every root process of the host could dup" \
	"$B" --user 0 --uvm-map as-user -- true
expect uvm-map-dup 0 "" "$B" --uvm-map dup -- true
# A process of the uid outside the sandbox is counted in a warning (as
# root, which the mode needs; setpriv runs the outsider as that uid).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid 47013 --regid 47013 --clear-groups sleep 30 &
	outsider=$!
	expect uvm-map-as-user-outsider 0 "^gpusandbox: warning: --uvm-map as-user: [1-9][0-9]* process\(es\) of uid 47013 run outside the sandbox now; each could dup the sandbox's GPU memory$" \
		"$B" --user 47013 --group 47013 --uvm-map as-user -- true
	kill "$outsider"; wait "$outsider" 2>/dev/null
	"$B" --user 47014 --group 47014 --uvm-map as-user -- true >"$T/out" 2>"$T/err"
	if [ $? = 0 ] && ! grep -q "uvm-map as-user:" "$T/err"; then ok uvm-map-as-user-alone
	else bad uvm-map-as-user-alone "$(head -c 300 "$T/err")"; fi
fi

# --- units ---
expect mem-bytes-suggests-mib 125 "^gpusandbox: --mem: '4096' is 4.00 KiB, too small to hold a CUDA context .*did you mean 4096m\?$" \
	"$B" --mem 4096 -- true
expect mem-k-suggests-mib 125 "did you mean 3000m\?$" "$B" --mem 3000k -- true
expect mem-zero 125 "^gpusandbox: --mem: a quota of 0 leaves no room even for a CUDA context; to run without a memory limit, leave it out$" \
	"$B" --mem 0 -- true
expect mem-least-accepted 0 "" "$B" --mem 64m -- true
expect mem-just-under 125 "too small" "$B" --mem 65535k -- true
printf 'mem = 4g\ngpu.1.mem = 4096\n' >"$T/units.policy"
expect policy-mem-units 125 "^$T/units.policy:2:13: error: '4096' is 4.00 KiB, too small to hold a CUDA context .*did you mean 4096m\?$" \
	"$B" --policy "$T/units.policy" -- true
printf 'mem = 0\n' >"$T/zero.policy"
expect policy-mem-zero 125 "^$T/zero.policy:1:7: error: a quota of 0 leaves no room" "$B" --policy "$T/zero.policy" -- true
printf 'channles = 4\n' >"$T/typo.policy"
expect policy-did-you-mean 125 "^$T/typo.policy:1:1: error: unknown key 'channles' \(did you mean 'channels'\?\)$" \
	"$B" --policy "$T/typo.policy" -- true

# --- subcommands ---
expect sub-run 7 "" "$B" run --mem 1g -- sh -c 'exit 7'
expect sub-run-no-dashdash 4 "" "$B" run sh -c 'exit 4'
"$B" list-groups >"$T/sub" 2>&1 && "$B" --list-groups >"$T/opt" 2>&1 && cmp -s "$T/sub" "$T/opt" &&
	grep -q '^compute (default)$' "$T/sub" && ok "sub-list-groups" || bad "sub-list-groups" "$(head -c 200 "$T/sub")"
# audit is a subcommand: without its view it says which there are.
expect sub-audit-no-action 2 "^gpusandbox audit: unknown or missing view" "$B" audit
# agent and profile exist: without their required options, a usage error.
expect sub-agent-needs-socket 125 "^gpusandbox: agent needs --socket PATH$" "$B" agent
expect sub-profile-needs-listener 125 "^gpusandbox: profile needs --listener with an absolute path$" "$B" profile
expect sub-profile-unknown-option 125 "^gpusandbox: unknown option '--bogus'$" "$B" profile --bogus /x
# With -- a program of that name runs (here: one we make, on PATH).
mkdir -p "$T/bin"; printf '#!/bin/sh\nexit 9\n' >"$T/bin/audit"; chmod +x "$T/bin/audit"
expect sub-dashdash-runs-program 9 "" env PATH="$T/bin:$PATH" "$B" -- audit
expect sub-word-after-options 125 "^gpusandbox: 'audit' is a gpusandbox subcommand; it goes first" \
	env PATH="$T/bin:$PATH" "$B" --mem 1g audit
expect sub-word-after-options-real 125 "^gpusandbox: 'profile' is a gpusandbox subcommand; it goes first" \
	env PATH="$T/bin:$PATH" "$B" --mem 1g profile

# --- output files ---
expect audit-dash 125 "^gpusandbox: --audit-log -: the audit log cannot be standard output or error: .*--audit-fd" \
	"$B" --audit-log - -- true
[ ! -e ./- ] && ok "audit-dash-no-file" || { bad "audit-dash-no-file" "a file named - was made"; rm -f ./-; }
"$B" --audit-log "$T/same.out" -- true >"$T/same.out" 2>"$T/err"; rc=$?
[ "$rc" -eq 125 ] && grep -q "cannot be standard output" "$T/err" && ok "audit-is-stdout" ||
	bad "audit-is-stdout" "exit $rc: $(cat "$T/err")"
expect learn-is-audit 125 "^gpusandbox: --audit-log and --learn name the same file" \
	"$B" --learn "$T/x.policy" --audit-log "$T/../$(basename "$T")/x.policy" -- true
ln -sf "$T/x.jsonl" "$T/link.jsonl"; : >"$T/x.jsonl"
expect learn-is-audit-symlink 125 "name the same file" "$B" --learn "$T/link.jsonl" --audit-log "$T/x.jsonl" -- true
expect trace-output-is-audit 125 "^gpusandbox: --audit-log and --trace-output name the same file" \
	"$B" --trace-output "$T/x.jsonl" --audit-log "$T/x.jsonl" -- true

# --- --check ---
printf 'mem = 4g\ngpus = 0\ngpu.1.mem = 1g\nvideo.decoders = 2\nsm-period = 50\nallow.class = 0xc9b0\n' >"$T/check.policy"
# Under the fake (one GPU, 0): a policy naming GPU 0 is what a run accepts,
# and no "no NVIDIA device" warning joins the two the policy earns.
fake_ok=1
"$FAKE" -- true >/dev/null 2>&1 || fake_ok=
if [ -n "$fake_ok" ]; then
	expect check-valid-warns 0 "^gpusandbox: --check: valid \(2 warnings\); nothing was run$" \
		"$FAKE" -- "$B" --check --policy "$T/check.policy" -- sh -c "touch $T/ran"
else
	echo "SKIP check-valid-warns: fake driver cannot run here"
	"$B" --check --policy "$T/check.policy" -- sh -c "touch $T/ran" >"$T/out" 2>"$T/err"
fi
[ ! -e "$T/ran" ] && ok "check-runs-nothing" || bad "check-runs-nothing" "the command ran"
grep -q "^gpusandbox: warning: gpu.1.mem has no effect: GPU 1 is not in gpus$" "$T/err" &&
	grep -q "^gpusandbox: warning: sm-period has no effect without sm" "$T/err" &&
	! grep -q "video.decoders has no effect" "$T/err" && ok "check-warnings" || bad "check-warnings" "$(cat "$T/err")"
grep -qE '^  mem +4.00 GiB on each GPU$' "$T/out" && grep -qE '^  gpu.1.mem +1.00 GiB$' "$T/out" &&
	grep -qE '^  gpus +0$' "$T/out" && grep -qE '^  allow.class +0xc9b0 NVC9B0_VIDEO_DECODER$' "$T/out" &&
	grep -qE '^  allow +compute, memory, monitoring$' "$T/out" && ok "check-effective-policy" ||
	bad "check-effective-policy" "$(cat "$T/out")"
printf 'video.jpeg = 1\n' >"$T/jpeg.policy"
expect check-video-without-group 0 "^gpusandbox: warning: video.jpeg has no effect: the policy allows none of its classes" \
	"$B" --check --policy "$T/jpeg.policy"
printf 'video.jpeg = 1\nallow = compute, memory, monitoring, video\n' >"$T/jpeg-ok.policy"
# Under the fake: no "no NVIDIA device" warning (which --check counts).
expect check-video-with-group 0 "valid \(0 warnings\)" ${fake_ok:+"$FAKE" --} "$B" --check --policy "$T/jpeg-ok.policy"
grep -q "video.jpeg has no effect" "$T/err" && bad "check-video-with-group-quiet" "$(cat "$T/err")" ||
	ok "check-video-with-group-quiet"
expect check-invalid 125 "invalid policy; nothing was started" "$B" --check --policy "$T/typo.policy"
expect check-cli-overrides 0 "valid" "$B" --check --policy "$T/check.policy" --mem 2g
grep -qE '^  mem +2.00 GiB on each GPU$' "$T/out" && ok "check-cli-overrides-shown" ||
	bad "check-cli-overrides-shown" "$(head -3 "$T/out")"

# --check refuses what the run refuses, with the run's messages (issue #28):
# a user that does not exist, a GPU the driver does not list, output files
# in folders that do not exist; and its count is the warnings it printed.
expect check-user-unknown 125 "^gpusandbox: --user: no user named 'nosuch'$" "$B" --check --user nosuch
"$B" --user nosuch -- true >/dev/null 2>"$T/err.run"
grep -qx "gpusandbox: --user: no user named 'nosuch'" "$T/err.run" && ok "check-user-as-run" ||
	bad "check-user-as-run" "the run says: $(cat "$T/err.run")"
expect check-audit-folder 125 "^gpusandbox: --audit-log $T/no/dir/x.jsonl: its folder $T/no/dir: No such file or directory$" \
	"$B" --check --audit-log "$T/no/dir/x.jsonl"
expect check-metrics-folder 125 "^gpusandbox: --metrics-file $T/no/m.prom: its folder $T/no: No such file or directory$" \
	"$B" --check --metrics-file "$T/no/m.prom"
expect check-trace-folder 125 "^gpusandbox: --trace-output $T/no/t: its folder" "$B" --check --trace-output "$T/no/t"
[ ! -e "$T/no" ] && ok "check-creates-nothing" || bad "check-creates-nothing" "$(ls -R "$T/no")"
expect check-audit-ok 0 "valid" "$B" --check --audit-log "$T/check-audit.jsonl" --metrics-file "$T/check.prom"
[ ! -e "$T/check-audit.jsonl" ] && [ ! -e "$T/check.prom" ] && ok "check-audit-ok-nothing-written" ||
	bad "check-audit-ok-nothing-written" "$(ls "$T")"
if [ -n "$fake_ok" ]; then
	expect check-gpus-absent 125 "^gpusandbox: --gpus: there is no GPU 3 \(the GPUs here are 0\)$" \
		"$FAKE" -- "$B" --check --gpus 3
	expect check-gpus-present 0 "valid \(0 warnings\)" "$FAKE" --gpus 2 -- "$B" --check --gpus 1 --user root
	expect check-gpus-uuid-unknown 125 "GPU-00000000-0000-0000-0000-00000000dead" \
		"$FAKE" --gpus 2 -- "$B" --check --gpus GPU-00000000-0000-0000-0000-00000000dead
else
	echo "SKIP check-gpus-*: fake driver cannot run here"
fi
# The count is the warnings printed, whatever this machine warns about
# (no NVIDIA device here, or an old kernel).
"$B" --check --mem 1g --gpus 0 >"$T/out" 2>"$T/err"
n=$(grep -c '^gpusandbox: warning:' "$T/err")
grep -qE "^gpusandbox: --check: valid \($n warnings?\); nothing was run$" "$T/err" && ok "check-counts-warnings" ||
	bad "check-counts-warnings" "$n warning lines: $(cat "$T/err")"
expect check-says-command 0 "^gpusandbox: --check: COMMAND \(true\) is not run nor looked up$" "$B" --check -- true

# --- --version ---
"$B" --version >"$T/v" 2>&1
grep -q '^gpusandbox [0-9]' "$T/v" && grep -qE '^  seccomp user notification .*: (yes|no)$' "$T/v" &&
	grep -qE '^  SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV .*: (yes|no)$' "$T/v" &&
	grep -qE '^  pidfd_getfd .*: (yes|no)$' "$T/v" && grep -qE '^NVIDIA driver: ' "$T/v" &&
	ok "version-features" || bad "version-features" "$(cat "$T/v")"
if [ -r /proc/driver/nvidia/version ]; then
	grep -qF "$(head -1 /proc/driver/nvidia/version)" "$T/v" && ok "version-driver-line" ||
		bad "version-driver-line" "$(cat "$T/v")"
fi

# --- environment: limits with no device ---
if [ ! -e /dev/nvidiactl ]; then
	expect env-no-device-warns 0 "^gpusandbox: warning: no NVIDIA device \(/dev/nvidiactl is missing\): --mem, --sm have nothing to enforce" \
		"$B" --mem 1g --sm 50 --audit-log "$T/nodev.jsonl" -- true
	python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(r.get("nvidia_device") is not False)' \
		"$T/nodev.jsonl" && ok "env-no-device-audit" || bad "env-no-device-audit" "$(head -c 300 "$T/nodev.jsonl")"
	"$B" -- true 2>"$T/err"
	grep -q "no NVIDIA device" "$T/err" && bad "env-no-limits-quiet" "$(cat "$T/err")" || ok "env-no-limits-quiet"
fi

# --- on the fake driver: no device warning, and the trace file with time stamps ---
"$FAKE" --vidmem 16g -- "$B" --mem 1g --trace-output "$T/trace" --trace-time relative \
	--audit-log "$T/fake.jsonl" -- build/tests/adv/static_raw >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 125 ] && grep -q SKIP "$T/err"; then
	echo "SKIP fake-*: fake driver cannot run here"
else
	grep -q "no NVIDIA device" "$T/err" && bad "fake-device-no-warning" "$(cat "$T/err")" || ok "fake-device-no-warning"
	python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(r.get("nvidia_device") is not True)' \
		"$T/fake.jsonl" && ok "fake-device-audit" || bad "fake-device-audit" "$(head -c 300 "$T/fake.jsonl")"
	# Every line of the file is stamped; the RM calls are there, not on stderr.
	n=$(grep -c 'RM_ALLOC' "$T/trace" 2>/dev/null)
	if [ "${n:-0}" -gt 0 ] && ! grep -qvE '^ *[0-9]+\.[0-9]{6} \[gpusandbox' "$T/trace" &&
		! grep -q 'RM_ALLOC' "$T/err"; then ok "fake-trace-output-relative"; else
		bad "fake-trace-output-relative" "$n RM_ALLOC lines: $(head -c 300 "$T/trace")"; fi
	"$FAKE" --vidmem 16g -- "$B" --mem 1g --trace-time clock -- build/tests/adv/static_raw >"$T/out" 2>"$T/err"
	grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} \[gpusandbox [0-9]+\] RM_ALLOC' "$T/err" &&
		ok "fake-trace-time-clock" || bad "fake-trace-time-clock" "$(head -c 300 "$T/err")"
	"$FAKE" --vidmem 16g -- "$B" --mem 1g --trace-time epoch -- build/tests/adv/static_raw >"$T/out" 2>"$T/err"
	now=$(date +%s)
	first=$(grep -m1 -oE '^[0-9]+\.[0-9]{6} \[gpusandbox [0-9]+\] RM_ALLOC' "$T/err" | cut -d. -f1)
	[ -n "$first" ] && [ $((now - first)) -ge 0 ] && [ $((now - first)) -lt 600 ] &&
		ok "fake-trace-time-epoch" || bad "fake-trace-time-epoch" "$(head -c 300 "$T/err")"
fi
expect trace-time-bad 125 "^gpusandbox: invalid --trace-time 'soon' \(clock, epoch or relative\)$" \
	"$B" --trace-time soon -- true
expect trace-output-bad-dir 125 "^gpusandbox: --trace-output /nonexistent/t" "$B" --trace-output /nonexistent/t -- true

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
