#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/agent/operator.sh [CASE...] - what an operator deploys the agent
# for (issue #28): a pod's request as its quota, the node's live view, and
# the audit logs' rotation. runc (and podman on runc) against the fake
# driver, on tests/agent/run.sh's busybox rootfs; every quota judged by the
# FAKE DRIVER's account (GS_FAKE_STATS), never by the agent's word. The
# node's policy is mem = 1g.
#
#   request-runc      config.json annotation gpusandbox.io/mem=512m: static_raw
#                     is refused at the fake's 512 MiB (its peak), the agent
#                     names the request
#   baseline-request-runc  the same container without the annotation: the
#                     node's default, the fake's peak 1 GiB
#   request-podman    podman --annotation gpusandbox.io/mem=512m: the same
#                     512 MiB peak (podman passes it into the OCI state)
#   overbound-runc    gpusandbox.io/mem=2g, above the node's 1g: refused and
#                     killed, nothing reaches the fake, the log says why
#   malformed-runc    gpusandbox.io/mem=lots: the same
#   requestrestart-runc  the agent on a keeper is SIGKILLed while a container
#                     asking 512m holds 256 MiB, and started again: the
#                     resumed container gets one chunk more, not three (the
#                     fake's peak 512 MiB, not the node's 1 GiB)
#   status-runc       two containers of two pods (io.kubernetes.pod.*), one
#                     at the node's 1 GiB, one asking 768m, each holding
#                     768 MiB: `gpusandbox status --format json` on the
#                     agent's --status-socket lists both with their pod,
#                     quota and memory held, which add up to the fake's
#                     vidmem_used; the text view names both pods; a user
#                     other than root cannot connect, and with the socket
#                     made 0666 still gets no answer (SO_PEERCRED)
#   rotate-runc       an agent with --audit-max-size 1k --audit-max-files 50
#                     and audit-level = all: the container's log rotates
#                     into N > 2 files, each verifies on its own, all of
#                     them in order verify as one chain (directory too),
#                     and a deleted or swapped middle file is detected
#
# Prints PASS/FAIL per case and "N passed, M failed" last.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
GS=${GPUSANDBOX:-$ROOT/build/gpusandbox}
HOLDER=$ROOT/build/tests/agent/holder
STATIC_RAW=$ROOT/build/tests/adv/static_raw
WITH_FAKE=$ROOT/tests/fakedrv/with-fake-nvidia
SKIP=125
CHUNK=$((256 << 20))
CASE_TIMEOUT=60
WAIT_STEPS=250          # x 0.02 s: 5 s
. tests/agent/lib.sh
FAKE_VIDMEM=16g
ROTATE_SIZE=1k
ROTATE_FILES=50

# ---- inside one with-fake-nvidia: one case --------------------------------


# make_bundle ARGS_JSON ANNOTATIONS_JSON : $D/bundle/config.json
make_bundle() {
	mkdir -p "$D/bundle" "$D/ctmp"
	(cd "$D/bundle" && runc spec) || return 1
	jq --argjson args "$1" --argjson ann "$2" --argjson sc "$(cat "$P")" --arg m "$GS_FAKE_MOUNT" \
		--arg root "$ROOTFS" --arg tmp "$D/ctmp" '
		.process.terminal = false | .process.args = $args | .annotations = $ann |
		.root = { path: $root, readonly: true } |
		.mounts += [ { destination: "/tmp", type: "bind", source: $tmp, options: ["rbind", "rw"] } ] +
		           [ "nvidiactl", "nvidia0", "nvidia-uvm" |
		             { destination: ("/dev/" + .), type: "bind", source: ($m + "/" + .), options: ["bind"] } ] |
		.linux.seccomp = $sc' "$D/bundle/config.json" >"$D/config.new" && mv "$D/config.new" "$D/bundle/config.json"
}

start_agent() {  # start_agent [agent options]
	"$GS" profile --listener "$SOCK" >"$P" 2>>"$D/err.profile" || return 1
	printf 'mem = 1g\n%s' "${POLICY_EXTRA:-}" >"$D/policy"
	rm -f "$SOCK"
	"$GS" agent --socket "$SOCK" --policy "$D/policy" --audit-dir "$D/logs" "$@" 2>>"$D/agent.err" &
	AGENT=$!
	wait_for -S "$SOCK"
}

stop_agent() {
	[ -n "${AGENT:-}" ] || return 0
	local i
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ "$(grep -c ': sandbox [0-9a-f]*, init pid' "$D/agent.err")" = "$(grep -c 'torn down' "$D/agent.err")" ] && break
		sleep 0.02
	done
	kill "$AGENT" 2>/dev/null
	wait "$AGENT" 2>/dev/null
	AGENT=
}

run_fg() {  # run_fg ARGS_JSON ANNOTATIONS_JSON
	make_bundle "$1" "$2" || { echo "bundle failed" >"$D/rc"; return; }
	(cd "$D/bundle" && timeout 30 runc --root "$D/state" run "gs-$CASE") >"$D/out" 2>"$D/err"
	echo $? >"$D/rc"
	runc --root "$D/state" delete -f "gs-$CASE" >/dev/null 2>&1
}

run_podman() {  # run_podman ANNOTATION ARGS...: podman on runc, the profile $P
	timeout 30 podman --root "$D/storage" --runroot "$D/run" --runtime runc --cgroup-manager=cgroupfs \
		--events-backend=file run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
		-v "$GS_FAKE_MOUNT/nvidiactl:/dev/nvidiactl" -v "$GS_FAKE_MOUNT/nvidia0:/dev/nvidia0" \
		-v "$GS_FAKE_MOUNT/nvidia-uvm:/dev/nvidia-uvm" --security-opt "seccomp=$P" --annotation "$1" --rootfs "$ROOTFS" "${@:2}" \
		>"$D/out" 2>"$D/err" </dev/null
	echo $? >"$D/rc"
}

# Two pods' containers holding 768 MiB each; the status while both hold.
status_case() {
	local top=$D x ann i
	start_agent --status-socket "$SSOCK" --metrics-file "$D/agent.prom" && wait_for -S "$SSOCK" || return
	for x in a b; do
		ann='{"io.kubernetes.pod.name": "pod-'$x'", "io.kubernetes.pod.namespace": "ml",
		      "io.kubernetes.container.name": "cuda"}'
		[ "$x" = b ] && ann=$(jq -c '. + {"gpusandbox.io/mem": "768m"}' <<<"$ann")
		D=$top/$x
		mkdir -p "$D"
		make_bundle '["/bin/holder", "3", "/tmp/go", "1"]' "$ann" || { echo "bundle $x" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && runc --root "$top/state" run -d "gs-st-$x") >"$D/out" 2>"$D/err" </dev/null
	done
	D=$top
	for x in a b; do
		wait_for -e "$top/$x/ctmp/go.ready" || { echo "holder $x never ready" >"$top/rc"; return; }
	done
	# The metrics file with both sandboxes in it (rewritten every second).
	for ((i = 0; i < 3 * WAIT_STEPS; i++)); do
		[ "$(grep -c '^gpusandbox_sandbox_info{' "$D/agent.prom" 2>/dev/null)" = 2 ] && break
		sleep 0.02
	done
	cp "$D/agent.prom" "$D/agent-mid.prom" 2>/dev/null
	"$GS" status --socket "$SSOCK" --format json >"$D/status.json" 2>"$D/status.err"
	echo $? >"$D/status.rc"
	"$GS" status --socket "$SSOCK" >"$D/status.txt" 2>>"$D/status.err"
	cp "$GS_FAKE_STATS" "$D/stats-mid"
	# Another user: the socket is root's alone.
	setpriv --reuid 65534 --regid 65534 --clear-groups "$GS" status --socket "$SSOCK" \
		>"$D/status-nobody.out" 2>&1
	echo $? >"$D/status-nobody.rc"
	# Past the file mode too (as if the socket were reachable): the agent
	# answers only root (SO_PEERCRED).
	chmod 666 "$SSOCK"
	chmod 711 "$D" "$(dirname "$D")"
	setpriv --reuid 65534 --regid 65534 --clear-groups "$GS" status --socket "$SSOCK" \
		>"$D/status-nobody-open.out" 2>&1
	echo $? >"$D/status-nobody-open.rc"
	chmod 600 "$SSOCK"
	chmod 700 "$D" "$(dirname "$D")"
	for x in a b; do : >"$top/$x/ctmp/go"; done
	for x in a b; do
		for ((i = 0; i < WAIT_STEPS; i++)); do
			[ "$(runc --root "$top/state" state "gs-st-$x" 2>/dev/null | jq -r .status)" = running ] || break
			sleep 0.02
		done
		runc --root "$top/state" delete -f "gs-st-$x" >/dev/null 2>&1
	done
	echo 0 >"$D/rc"
}

inside() {
	CASE=$1 D=$2 ROOTFS=$3
	SOCK=$D/agent.sock SSOCK=$D/status.sock KSOCK=$D/keeper.sock P=$D/profile.json AGENT= KEEPER=
	mkdir -p "$D/logs"
	trap stop_agent EXIT
	case "$CASE" in
	request-runc)
		start_agent && run_fg '["/bin/static_raw"]' '{"gpusandbox.io/mem": "512m"}' ;;
	baseline-request-runc)
		start_agent && run_fg '["/bin/static_raw"]' '{}' ;;
	request-podman)
		start_agent && run_podman gpusandbox.io/mem=512m /bin/static_raw ;;
	overbound-runc)
		start_agent && run_fg '["/bin/static_raw"]' '{"gpusandbox.io/mem": "2g"}' ;;
	malformed-runc)
		start_agent && run_fg '["/bin/static_raw"]' '{"gpusandbox.io/mem": "lots"}' ;;
	status-runc)
		status_case ;;
	requestrestart-runc)
		# The agent on a keeper, SIGKILLed while the container (asking
		# 512m) holds 256 MiB, started again: the resumed sandbox keeps the
		# request (the keeper's state), not the node's 1 GiB.
		"$GS" keeper --socket "$KSOCK" 2>>"$D/keeper.err" &
		KEEPER=$!
		wait_for -S "$KSOCK" && start_agent --keeper "$KSOCK" || return
		make_bundle '["/bin/holder", "1", "/tmp/go", "3"]' '{"gpusandbox.io/mem": "512m"}' ||
			{ echo "bundle failed" >"$D/rc"; return; }
		(cd "$D/bundle" && runc --root "$D/state" run -d "gs-$CASE") >"$D/out" 2>"$D/err" </dev/null
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		start_agent --keeper "$KSOCK" || return
		: >"$D/ctmp/go"
		for ((i = 0; i < WAIT_STEPS; i++)); do
			[ "$(runc --root "$D/state" state "gs-$CASE" 2>/dev/null | jq -r .status)" = running ] || break
			sleep 0.02
		done
		runc --root "$D/state" delete -f "gs-$CASE" >/dev/null 2>&1
		echo 0 >"$D/rc" ;;
	rotate-runc)
		POLICY_EXTRA='audit-level = all
' start_agent --audit-max-size "$ROTATE_SIZE" --audit-max-files "$ROTATE_FILES" &&
			run_fg '["/bin/static_raw"]' '{}' ;;
	esac
	stop_agent
	[ -n "$KEEPER" ] && { kill "$KEEPER" 2>/dev/null; wait "$KEEPER" 2>/dev/null; }
	cp "$D/out" "$D/container.out" 2>/dev/null
}

if [ "${1:-}" = --inside ]; then
	shift
	inside "$@"
	exit 0
fi

# ---- outside: set up, run the cases, judge by the fake's stats ------------

skip() { echo "agent-operator: SKIP: $*"; exit "$SKIP"; }
[ "$(id -u)" = 0 ] || skip "needs root (runtimes, FUSE fake driver)"
command -v jq >/dev/null || skip "jq is not installed (scripts/install-deps.sh)"
command -v runc >/dev/null || skip "runc is not installed (scripts/install-deps.sh)"
BUSYBOX=$(command -v busybox)
if [ -z "$BUSYBOX" ] || readelf -l "$BUSYBOX" 2>/dev/null | grep -q INTERP; then
	skip "busybox-static is not installed (scripts/install-deps.sh)"
fi
for f in "$GS" "$HOLDER" "$STATIC_RAW"; do
	[ -x "$f" ] || { echo "agent-operator: $f is not built (make all tests)"; exit 2; }
done
tmp=$(mktemp -d /tmp/gs-operator.XXXXXX)
trap '[ -n "${GS_AGENT_KEEP:-}" ] || rm -rf "$tmp"' EXIT
ROOTFS=$tmp/rootfs
mkdir -p "$ROOTFS"/bin "$ROOTFS"/dev "$ROOTFS"/proc "$ROOTFS"/sys "$ROOTFS"/tmp
cp "$BUSYBOX" "$ROOTFS/bin/busybox"
for a in sh sleep cat echo; do ln -s busybox "$ROOTFS/bin/$a"; done
cp "$STATIC_RAW" "$HOLDER" "$ROOTFS/bin/"

passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; for f in err agent.err; do [ -s "$dir/$f" ] && sed 's/^/    /' "$dir/$f" | tail -5; done; failed=$((failed + 1)); }
st() { awk -v k="$2" '$1 == k { print $2 }' "$1" 2>/dev/null; }
val() { grep -oE "(^|[ (])$2=[^ )]*" "$1" 2>/dev/null | tail -1 | sed 's/^.*=//'; }

run_case() {  # run_case NAME
	dir=$tmp/$1
	mkdir -p "$dir"
	GS_FAKE_STATS_OUT=$dir/stats timeout "$CASE_TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- \
		"$0" --inside "$1" "$dir" "$ROOTFS" >"$dir/harness.out" 2>&1
	local rc=$?
	[ "$rc" = "$SKIP" ] && { echo "agent-operator: SKIP: $(tail -1 "$dir/harness.out")"; exit "$SKIP"; }
	[ -s "$dir/stats" ] || { fail "$1" "no stats from the fake (harness exit $rc)"; return 1; }
	return 0
}

# The container ran, was refused at the fake's peak of WANT bytes.
refused_at() {
	local peak rc nomem
	peak=$(st "$dir/stats" gpu0.vidmem_peak) rc=$(cat "$dir/rc" 2>/dev/null)
	nomem=$(val "$dir/container.out" nomem)
	[ "$rc" = 0 ] && [ "${peak:-0}" = "$1" ] && [ "${nomem:-0}" -ge 1 ] ||
		{ why="rc=$rc peak=$peak (want $1) nomem=$nomem"; return 1; }
}

# Refused before any allocation, the agent saying why ($1).
refused_whole() {
	local rc
	rc=$(cat "$dir/rc" 2>/dev/null)
	[ "$rc" != 0 ] && [ "$(st "$dir/stats" allocs_ok)" = 0 ] && grep -q "$1" "$dir/agent.err" ||
		why="rc=$rc allocs_ok=$(st "$dir/stats" allocs_ok), agent said: $(grep -m1 refused "$dir/agent.err")"
}

judge_status() {
	local j=$dir/status.json used_sum fake_used
	fake_used=$(st "$dir/stats-mid" gpu0.vidmem_used)
	used_sum=$(jq '[.sandboxes[].gpus[].used] | add' "$j" 2>/dev/null)
	[ "$(cat "$dir/status.rc")" = 0 ] && [ "$(jq '.sandboxes | length' "$j")" = 2 ] &&
		[ "$(jq -r '.sandboxes[] | select(.pod == "pod-a") | "\(.namespace) \(.container) \(.gpus[0].quota) \(.gpus[0].used)"' "$j")" = \
		  "ml gs-st-a $((4 * CHUNK)) $((3 * CHUNK))" ] &&
		[ "$(jq -r '.sandboxes[] | select(.pod == "pod-b") | "\(.namespace) \(.gpus[0].quota) \(.gpus[0].used) \(.gpus[0].peak)"' "$j")" = \
		  "ml $((3 * CHUNK)) $((3 * CHUNK)) $((3 * CHUNK))" ] &&
		[ "$used_sum" = "$fake_used" ] &&
		grep -q 'ml/pod-a' "$dir/status.txt" && grep -q 'ml/pod-b' "$dir/status.txt" &&
		[ "$(cat "$dir/status-nobody.rc")" != 0 ] && grep -q 'Permission denied' "$dir/status-nobody.out" &&
		[ "$(cat "$dir/status-nobody-open.rc")" = 1 ] && grep -q "not the agent's status" "$dir/status-nobody-open.out" &&
		[ "$(grep -c '^then ok=0 refused=1 first_refusal=NO_MEMORY' "$dir/b/out")" = 1 ] &&
		python3 "$ROOT/tests/metrics/check_prom.py" "$dir/agent-mid.prom" >/dev/null &&
		grep -q '^gpusandbox_sandbox_info{sandbox="[0-9a-f]*",container="gs-st-a",pod="pod-a",namespace="ml",container_name="cuda"} 1$' "$dir/agent-mid.prom" &&
		grep -q '^gpusandbox_sandbox_info{sandbox="[0-9a-f]*",container="gs-st-b",pod="pod-b",namespace="ml",container_name="cuda"} 1$' "$dir/agent-mid.prom" ||
		why="status rc=$(cat "$dir/status.rc"): $(jq -c . "$j" 2>&1 | head -c 600); fake used $fake_used; as nobody: rc $(cat "$dir/status-nobody.rc"); b: $(cat "$dir/b/out"); metrics: $(grep '^gpusandbox_sandbox_info' "$dir/agent-mid.prom" 2>&1 | tr '\n' ' ')"
}

judge_rotate() {
	local logs=$dir/logs files n f
	# Oldest first: ID.jsonl.N ... ID.jsonl.1, then ID.jsonl.
	mapfile -t files < <(for f in "$logs"/gs-rotate-runc.jsonl.*; do echo "${f##*.} $f"; done | sort -rn | cut -d' ' -f2;
		echo "$logs/gs-rotate-runc.jsonl")
	n=${#files[@]}
	[ "$n" -ge 3 ] || { why="only $n log files: $(ls "$logs")"; return; }
	# The start record (in the oldest file): who and where, and the node
	# policy's file with sha256sum's hash.
	local start want
	start=$(head -1 "${files[0]}" | jq -c '[.event, .uid, .cwd, .policy_file.path, .policy_file.sha256]')
	want=$(jq -nc --arg p "$dir/policy" --arg h "$(sha256sum "$dir/policy" | cut -d' ' -f1)" '["start", 0, "/", $p, $h]')
	[ "$start" = "$want" ] || { why="start record $start, want $want"; return; }
	for f in "${files[@]}"; do
		"$GS" audit verify "$f" >/dev/null 2>"$dir/verify-one.err" ||
			{ why="$f does not verify alone: $(cat "$dir/verify-one.err")"; return; }
	done
	"$GS" audit verify "${files[@]}" >"$dir/verify-all.out" 2>"$dir/verify-all.err" ||
		{ why="the files in order do not verify: $(cat "$dir/verify-all.err")"; return; }
	grep -q "sealed" "$dir/verify-all.out" ||
		{ why="the chain across the files is not said sealed: $(cat "$dir/verify-all.out")"; return; }
	"$GS" audit verify "$logs" >/dev/null 2>"$dir/verify-dir.err" ||
		{ why="the directory does not verify: $(cat "$dir/verify-dir.err")"; return; }
	# The review's own chain verdict agrees: the files in order are one
	# intact chain, a middle file alone intact but not sealed.
	"$GS" audit summary "${files[@]}" 2>/dev/null | grep -qE '^  chain +intact' &&
		"$GS" audit summary "${files[1]}" 2>/dev/null | grep -qE '^  chain +intact but not sealed' ||
		{ why="audit summary's chain: $("$GS" audit summary "${files[@]}" 2>&1 | grep chain) / $("$GS" audit summary "${files[1]}" 2>&1 | grep chain)"; return; }
	local without=("${files[@]:0:1}" "${files[@]:2}")
	"$GS" audit verify "${without[@]}" >/dev/null 2>"$dir/verify-gap.err" &&
		{ why="a missing middle file was not detected"; return; }
	local swapped=("${files[0]}" "${files[2]}" "${files[1]}" "${files[@]:3}")
	"$GS" audit verify "${swapped[@]}" >/dev/null 2>"$dir/verify-swap.err" &&
		{ why="two swapped files were not detected"; return; }
	rm "${files[1]}"
	"$GS" audit verify "$logs" >/dev/null 2>"$dir/verify-dirgap.err" &&
		why="a deleted middle file in the directory was not detected"
}

judge() {  # judge NAME
	local name=$1 why=""
	case "$name" in
	request-runc|request-podman)
		refused_at $((2 * CHUNK)) && grep -q 'gpusandbox.io/mem=512m' "$dir/agent.err" ||
			why=${why:-"the agent did not name the request"} ;;
	baseline-request-runc)
		refused_at $((4 * CHUNK)) ;;
	overbound-runc)
		refused_whole "gpusandbox.io/mem asks for 2.00 GiB on GPU 0, above the node policy's 1.00 GiB" ;;
	malformed-runc)
		refused_whole "annotation gpusandbox.io/mem: invalid size 'lots'" ;;
	status-runc)
		judge_status ;;
	rotate-runc)
		refused_at $((4 * CHUNK)) && judge_rotate ;;
	requestrestart-runc)
		[ "$(st "$dir/stats" gpu0.vidmem_peak)" = $((2 * CHUNK)) ] && grep -q 'resumed' "$dir/agent.err" &&
			grep -q '^then ok=1 refused=2 first_refusal=NO_MEMORY' "$dir/container.out" ||
			why="peak $(st "$dir/stats" gpu0.vidmem_peak) (want 512 MiB): $(tr '\n' ' ' <"$dir/container.out"); resumed: $(grep -c resumed "$dir/agent.err")" ;;
	esac
	[ -z "$why" ] && pass "$name" || fail "$name" "$why"
}

want() {
	[ ${#SELECTED[@]} -eq 0 ] && return 0
	local s
	for s in "${SELECTED[@]}"; do [ "$s" = "$1" ] && return 0; done
	return 1
}
SELECTED=("$@")
for name in request-runc baseline-request-runc overbound-runc malformed-runc status-runc rotate-runc requestrestart-runc; do
	want "$name" && run_case "$name" && judge "$name"
done
if command -v podman >/dev/null; then
	want request-podman && run_case request-podman && judge request-podman
else
	echo "agent-operator: podman is not installed: request-podman is skipped"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
