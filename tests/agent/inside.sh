# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# tests/agent/inside.sh - what tests/agent/run.sh runs inside one
# with-fake-nvidia for a case (sourced by run.sh, which runs itself again
# with --inside NAME RUNTIME): the agent, the keeper and the runtime
# started, the case's containers and attackers run, the fake's stats
# kept. The variables it reads are run.sh's.

# ---- inside one with-fake-nvidia: one case --------------------------------



# bundle ARGS_JSON PROFILE(or "") : $D/bundle/config.json for runtime $RT
make_bundle() {
	local args=$1 profile=$2 seccomp=null
	mkdir -p "$D/bundle" "$D/ctmp"
	(cd "$D/bundle" && "$RT" spec 2>/dev/null) || (cd "$D/bundle" && runc spec) || return 1
	[ -n "$profile" ] && seccomp=$(cat "$profile")
	jq --argjson args "$args" --argjson sc "$seccomp" --arg m "$GS_FAKE_MOUNT" \
		--arg root "$ROOTFS" --arg tmp "$D/ctmp" '
		.process.terminal = false | .process.args = $args |
		.root = { path: $root, readonly: true } |
		.mounts += [ { destination: "/tmp", type: "bind", source: $tmp, options: ["rbind", "rw"] } ] +
		           [ "nvidiactl", "nvidia0", "nvidia-uvm" |
		             { destination: ("/dev/" + .), type: "bind", source: ($m + "/" + .), options: ["bind"] } ] |
		if $sc == null then del(.linux.seccomp) else .linux.seccomp = $sc end |
		'"${BUNDLE_EXTRA:-.}" \
		"$D/bundle/config.json" >"$D/config.new" && mv "$D/config.new" "$D/bundle/config.json"
}

start_agent() {
	printf 'mem = 1g\n%s' "${AGENT_POLICY_EXTRA:-}" >"$D/policy"
	mkdir -p "$D/policies"
	printf 'mem = 512m\n' >"$D/policies/small.policy"
	# A restarted agent appends to the same log (stop_agent counts it),
	# and is waited for by its own socket, not a dead one's.
	rm -f "$SOCK"
	local gs=$GS
	[ -n "${AGENT_ENV:-}" ] && gs=$GS_SWITCHED
	# shellcheck disable=SC2086 # AGENT_ARGS: words of options
	${AGENT_WRAP:-} ${AGENT_ENV:+env $AGENT_ENV} "$gs" agent --socket "$SOCK" --policy "$D/policy" --policy-dir "$D/policies" --audit-dir "$D" \
		--metrics-file "$D/agent.prom" ${KEEPER:+--keeper "$KSOCK"} ${AGENT_ARGS:-} 2>>"$D/agent.err" &
	AGENT=$!
	wait_for -S "$SOCK"
}

start_keeper() {
	"$GS" keeper --socket "$KSOCK" 2>>"$D/keeper.err" &
	KEEPER=$!
	wait_for -S "$KSOCK"
}

# Waits until the fake is inside a call that sleeps (its stats cannot be
# read meanwhile: it serves one request at a time); the step it got there
# goes to FILE as KEY=step (default $D/stop, stopped_at_step).
wait_fake_asleep() {
	local i
	for ((i = 0; i < WAIT_STEPS; i++)); do
		timeout 0.2 cat "$GS_FAKE_STATS" >/dev/null 2>&1 || break
		sleep 0.02
	done
	echo "${2:-stopped_at_step}=$i" >"${1:-$D/stop}"
}

# The agent SIGKILLed while the fake sleeps in the container's first
# allocation.
kill_agent_midcall() {
	wait_fake_asleep "$D/kill" killed_at_step
	kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
}

# Teardown follows the runtime's exit (when the last listener hangs up,
# then the files' release): wait for one "torn down" per sandbox made.
all_torn_down() {
	[ "$(grep -c ': sandbox [0-9a-f]*, init pid' "$D/agent.err")" = "$(grep -c 'torn down' "$D/agent.err")" ]
}

stop_agent() {
	[ -n "${AGENT:-}" ] || return 0
	local i
	for ((i = 0; i < WAIT_STEPS && ${#D} > 0; i++)); do
		all_torn_down && break
		sleep 0.02
	done
	kill "$AGENT" 2>/dev/null
	wait "$AGENT" 2>/dev/null
	AGENT=
}

stop_all() {
	stop_agent
	if [ -n "${CONTAINERD:-}" ]; then
		kill "$CONTAINERD" 2>/dev/null
		wait "$CONTAINERD" 2>/dev/null
		CONTAINERD=
	fi
	[ -n "${KEEPER:-}" ] || return 0
	kill "$KEEPER" 2>/dev/null
	wait "$KEEPER" 2>/dev/null
	KEEPER=
}

rt() { "$RT" --root "$D/state" "$@"; }

stat_now() { awk -v k="$1" '$1 == k { print $2 }' "$GS_FAKE_STATS"; }

# run ARGS_JSON PROFILE: the container in the foreground; its exit in $D/rc
run_fg() {
	make_bundle "$1" "$2" || { echo "bundle failed" >"$D/rc"; return; }
	(cd "$D/bundle" && timeout 30 "$RT" --root "$D/state" run "gs-$CASE") >"$D/out" 2>"$D/err"
	echo $? >"$D/rc"
	rt delete -f "gs-$CASE" >/dev/null 2>&1
}

# run_podman ARGS... : podman (runc underneath) on the same rootfs, the
# fake's files bind-mounted, the profile ($P_PODMAN) or podman's default
# seccomp; its exit in $D/rc. No systemd, journald or network here, and
# root lacks CAP_SYS_RESOURCE (shared/reference/container-hook.md 2.4).
run_podman() {
	local sc=()
	[ -n "${P_PODMAN:-}" ] && sc=(--security-opt "seccomp=$P_PODMAN") || sc=(--security-opt seccomp=unconfined)
	timeout 30 podman --root "$D/storage" --runroot "$D/run" --runtime runc --cgroup-manager=cgroupfs \
		--events-backend=file run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
		-v "$GS_FAKE_MOUNT/nvidiactl:/dev/nvidiactl" -v "$GS_FAKE_MOUNT/nvidia0:/dev/nvidia0" \
		-v "$GS_FAKE_MOUNT/nvidia-uvm:/dev/nvidia-uvm" "${sc[@]}" --rootfs "$ROOTFS" "$@" \
		>"$D/out" 2>"$D/err" </dev/null
	echo $? >"$D/rc"
}

# containerd for one case: a daemon of its own (root, state and socket in
# $D, the CRI plugin off), in the case's mount namespace (the fake's).
start_containerd() {
	printf 'version = 2\nroot = "%s"\nstate = "%s"\n[grpc]\n  address = "%s"\n[plugins."io.containerd.grpc.v1.cri"]\n  disable = true\n' \
		"$D/croot" "$D/cstate" "$D/containerd.sock" >"$D/containerd.toml"
	containerd --config "$D/containerd.toml" >"$D/containerd.log" 2>&1 &
	CONTAINERD=$!
	wait_for -S "$D/containerd.sock"
}

# run_ctr ARGS... : `ctr run` (runc underneath) on the same rootfs, the fake's
# files bind-mounted, the profile ($P_CTR) or no seccomp; its exit in $D/rc.
run_ctr() {
	local sc=() n
	[ -n "${P_CTR:-}" ] && sc=(--seccomp --seccomp-profile "$P_CTR")
	start_containerd || { echo "containerd did not start: $(tail -1 "$D/containerd.log")" >"$D/rc"; return; }
	local mounts=()
	for n in nvidiactl nvidia0 nvidia-uvm; do
		mounts+=(--mount "type=bind,src=$GS_FAKE_MOUNT/$n,dst=/dev/$n,options=rbind:rw")
	done
	timeout 30 ctr --address "$D/containerd.sock" run --rm --rootfs "${sc[@]}" "${mounts[@]}" \
		"$ROOTFS" "gs-$CASE" "$@" >"$D/out" 2>"$D/err" </dev/null
	echo $? >"$D/rc"
}

# run_bg ARGS_JSON PROFILE: detached; returns when it is running
run_bg() {
	make_bundle "$1" "$2" || return 1
	(cd "$D/bundle" && "$RT" --root "$D/state" run -d "gs-$CASE") >"$D/out" 2>"$D/err" </dev/null
}

wait_stopped() {
	local i
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ "$(rt state "gs-$CASE" 2>/dev/null | jq -r .status)" = running ] || break
		sleep 0.02
	done
	rt delete -f "gs-$CASE" >/dev/null 2>&1
}

wait_stopped_id() {  # wait_stopped_id ID: as wait_stopped, another container
	local i
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ "$(rt state "$1" 2>/dev/null | jq -r .status)" = running ] || break
		sleep 0.02
	done
	rt delete -f "$1" >/dev/null 2>&1
}

profile() {  # profile OUT [profile options]
	local out=$1
	shift
	"$GS" profile --listener "$SOCK" "$@" >"$out" 2>>"$D/err.profile"
}

# The attacker on the host (stalehandle, stalestop, stalekill), outside
# any sandbox: takes client handles from the fake's base and tries to dup
# the container's memory (named in the file $1), holding what it got
# until stale_finish. ATK is its pid.
stale_scan() {
	local victim mem
	victim=$(grep -o 'client=0x[0-9a-f]*' "$1" | cut -d= -f2)
	mem=$(grep -o 'memory=0x[0-9a-f]*' "$1" | cut -d= -f2)
	"$STALE" "$victim" "$mem" "$STALE_SCAN" "$D/attack.hold" >"$D/attack.out" 2>&1 &
	ATK=$!
	wait_for -e "$D/attack.hold.ready" || wait_for -e "$D/attack.hold.ready" ||
		{ echo "the attacker never finished its scan" >"$D/rc"; kill "$ATK"; return 1; }
}

# After the restart: the attacker's scan, then stale_finish.
stale_attack() {
	stale_scan "$D/ctmp/go.ready" && stale_finish
}

# The attacker holds what it got while the container frees its handle,
# unmaps and exits; the fake's vidmem_used once the container is gone
# goes to $D/after.
stale_finish() {
	local i
	# Its memory is the driver's to free now, unless the attacker's
	# dup holds it.
	: >"$D/ctmp/go"
	wait_stopped
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ "$(stat_now gpu0.vidmem_used)" = 0 ] && break
		sleep 0.02
	done
	echo "vidmem_used=$(stat_now gpu0.vidmem_used)" >"$D/after"
	: >"$D/attack.hold"
	wait "$ATK"
	echo 0 >"$D/rc"
}

# Container NAME (gs-CASE-NAME) in $top/NAME, detached: make_bundle's args
# and BUNDLE_EXTRA.
run_neighbour() {  # run_neighbour NAME ARGS_JSON
	D=$top/$1
	mkdir -p "$D"
	make_bundle "$2" "$p" || { D=$top; return 1; }
	(cd "$D/bundle" && "$RT" --root "$top/state" run -d "gs-$CASE-$1") >"$D/out" 2>"$D/err" </dev/null
	D=$top
}

# The victim, in the foreground beside the attacker: its output in
# $top/victim.out, its exit in $top/victim.rc.
run_victim() {  # run_victim ARGS_JSON
	D=$top/victim
	mkdir -p "$D"
	make_bundle "$1" "$p" || { D=$top; echo bundle >"$top/victim.rc"; return 1; }
	(cd "$D/bundle" && timeout 30 "$RT" --root "$top/state" run "gs-$CASE-victim") >"$top/victim.out" 2>"$D/err" </dev/null
	echo $? >"$top/victim.rc"
	D=$top rt delete -f "gs-$CASE-victim" >/dev/null 2>&1
	D=$top
}

# The attacker lets go; every sandbox is torn down (the agent's summary
# lines are then in agent.err).
release_attacker() {
	: >"$top/attacker/ctmp/stop"
	wait_stopped_id "gs-$CASE-attacker"
	stop_agent
	cp "$top/attacker/out" "$top/attacker.out" 2>/dev/null
}

# flood-runc: the attacker makes FLOOD_CLIENTS clients, each on a file of
# its own, and holds them; then the victim makes its clients and pairs.
# The agent starts with a soft open-file limit of FLOOD_SOFT. Baseline: no
# bound on a container's clients and files (its policy says unlimited),
# and a soft limit already at the hard one, which the agent cannot raise.
neighbours_flood() {
	local top=$D i
	if [ -n "$BASELINE" ]; then
		AGENT_WRAP="prlimit --nofile=$FLOOD_HARD:$FLOOD_HARD"
		AGENT_POLICY_EXTRA=$'clients = unlimited\nfiles = unlimited\n'
	else
		AGENT_WRAP="prlimit --nofile=$FLOOD_SOFT:$FLOOD_HARD"
	fi
	profile "$p" && start_agent || return
	BUNDLE_EXTRA=$FLOOD_RLIMIT run_neighbour attacker \
		'["/bin/tenant", "flood", "'"$FLOOD_CLIENTS"'", "/tmp/stop"]' || { echo "attacker bundle" >"$top/rc"; return; }
	for ((i = 0; i < FLOOD_WAIT_STEPS; i++)); do
		[ -e "$top/attacker/ctmp/stop.ready" ] && break
		sleep 0.02
	done
	[ -e "$top/attacker/ctmp/stop.ready" ] || { echo "the attacker never finished its flood" >"$top/rc"; return; }
	echo "clients_live=$(stat_now clients_live)" >"$top/after-flood"
	run_victim '["/bin/tenant", "victim", "'"$VICTIM_CLIENTS"'", "'"$VICTIM_PAIRS"'"]'
	release_attacker
	echo 0 >"$top/rc"
}

# storm-runc: the attacker holds STORM_THREADS idle threads while the
# victim makes STORM_CLIENTS clients (each a search for its fd table's
# sharers). Baseline: GPUSANDBOX_TEST_QUIESCE_FULL_WALK, every search
# walks the host's tasks (as before issue #32).
neighbours_storm() {
	local top=$D
	AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_QUIESCE_FULL_WALK=1}
	profile "$p" && start_agent || return
	run_neighbour attacker '["/bin/tenant", "storm", "'"$STORM_THREADS"'", "/tmp/stop"]' ||
		{ echo "attacker bundle" >"$top/rc"; return; }
	wait_for -e "$top/attacker/ctmp/stop.ready" || wait_for -e "$top/attacker/ctmp/stop.ready" ||
		{ echo "the attacker never made its threads" >"$top/rc"; return; }
	run_victim '["/bin/tenant", "victim", "'"$STORM_CLIENTS"'", "'"$VICTIM_PAIRS"'"]'
	release_attacker
	echo 0 >"$top/rc"
}

# bench-runc (tests/bench/tenantbench.sh, never in the tier): the victim's
# clients and pairs beside TENANT_BENCH_NEIGHBOURS storm containers, with
# every search walking the host when TENANT_BENCH_FULL_WALK is set.
neighbours_bench() {
	local top=$D i
	AGENT_ENV=${TENANT_BENCH_FULL_WALK:+GPUSANDBOX_TEST_QUIESCE_FULL_WALK=1}
	profile "$p" && start_agent || return
	for ((i = 0; i < ${TENANT_BENCH_NEIGHBOURS:-0}; i++)); do
		run_neighbour "n$i" '["/bin/tenant", "storm", "'"$STORM_THREADS"'", "/tmp/stop"]' &&
			{ wait_for -e "$top/n$i/ctmp/stop.ready" || wait_for -e "$top/n$i/ctmp/stop.ready"; } ||
			{ echo "neighbour $i never made its threads" >"$top/rc"; return; }
	done
	run_victim '["/bin/tenant", "victim", "'"$BENCH_CLIENTS"'", "'"$BENCH_PAIRS"'"]'
	for ((i = 0; i < ${TENANT_BENCH_NEIGHBOURS:-0}; i++)); do
		: >"$top/n$i/ctmp/stop"
		wait_stopped_id "gs-$CASE-n$i"
	done
	echo 0 >"$top/rc"
}

# The container's second_client (a child of its init, exec'd: a child
# not yet exec'd still has its shell's command line): its host pid.
child_running() {  # child_running INIT
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		case "$(tr '\0' ' ' </proc/"$c"/cmdline 2>/dev/null)" in
		"/bin/second_client "*) echo "$c"; return 0 ;;
		esac
	done
	return 1
}

# Is task PID in a ptrace stop ('t' in its stat)?
traced_stop() {
	local st
	st=$(sed 's/.*) //' /proc/"$1"/stat 2>/dev/null | cut -d' ' -f1)
	[ "$st" = t ]
}

# Until the container's second_client is seen stopped for an injection;
# else says so in $D/rc.
injection_seen() {
	local init child="" i
	init=$(rt state "gs-$CASE" | jq -r .pid)
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ -n "$child" ] || child=$(child_running "$init")
		[ -n "$child" ] && traced_stop "$child" && return 0
		sleep 0.02
	done
	echo "the caller was never seen stopped for an injection" >"$D/rc"
	return 1
}

# injectkill-crun, injectkept-crun: the agent (with a keeper) killed
# INJECTKILL_AT into an injection held INJECTKILL_DELAY_US, then started
# again on the keeper. The container runs ARGS_JSON, whose last step
# writes /tmp/raw.rc; BASELINE_SWITCH is set for the baseline.
kill_mid_injection() {  # kill_mid_injection BASELINE_SWITCH ARGS_JSON
	AGENT_ENV="GPUSANDBOX_TEST_INJECT_DELAY_US=$INJECTKILL_DELAY_US${BASELINE:+ $1=1}"
	profile "$p" --wait-killable && start_keeper && start_agent || return
	run_bg "$2" "$p" || { echo "run -d failed" >"$D/rc"; return; }
	injection_seen || return
	sleep "$INJECTKILL_AT"
	kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
	start_agent || return
	# baseline-injectkept-crun's never comes: judged by its absence.
	wait_for -e "$D/ctmp/raw.rc" || wait_for -e "$D/ctmp/raw.rc"
	rt kill "gs-$CASE" KILL 2>/dev/null
	wait_stopped
	echo 0 >"$D/rc"
}

inside() {
	CASE=$1 RT=$2 D=$3 ROOTFS=$4
	SOCK=$D/agent.sock
	KSOCK=$D/keeper.sock
	AGENT= KEEPER= CONTAINERD=
	trap stop_all EXIT
	[ "$RT" = crun ] && { crun_hybrid_workaround || { echo "crun workaround failed" >"$D/rc"; return; }; }
	local base=${CASE#baseline-} p=""
	BASELINE=
	[ "$base" != "$CASE" ] && BASELINE=1
	base=${base%-"$RT"}
	[ "$CASE" = runc-flags ] && base=flags
	case "$CASE" in baseline-*) ;; *) p=$D/profile.json ;; esac
	# Its baseline is the agent making device allocations in its shared fd
	# table, not no agent.
	[ "$base" = gpunode ] && p=$D/profile.json
	# The neighbours' baselines are agents without the defence.
	case "$base" in flood|storm|objects|second|secondbusy|secondflip|secondnokill|injectkill|injectkept) p=$D/profile.json ;; esac
	case "$base" in
	quota)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		if [ "$RT" = podman ]; then
			P_PODMAN=$p run_podman /bin/static_raw
		elif [ "$RT" = containerd ]; then
			P_CTR=$p run_ctr /bin/static_raw
		else
			run_fg '["/bin/static_raw"]' "$p"
		fi ;;
	exec)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_bg '["/bin/holder", "3", "/tmp/go", "0"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		rt exec "gs-$CASE" /bin/static_raw >"$D/exec.out" 2>"$D/exec.err"
		echo $? >"$D/rc"
		: >"$D/ctmp/go"
		wait_stopped ;;
	noagent)
		profile "$p" || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	keyring|podmanbase)
		# A system call the runtimes' default profiles refuse (add_key),
		# then a GPU client, in one container. keyring: the profile of
		# `gpusandbox profile` without --base; its baseline: made on an
		# allow-all base (what that wrote before it kept the runtime's
		# default). podmanbase: --base podman's own default profile.
		p=$D/profile.json
		if [ "$base" = podmanbase ]; then
			profile "$p" --base "$PODMAN_DEFAULT_PROFILE" || { echo "profile failed" >"$D/rc"; return; }
		elif [ -n "$BASELINE" ]; then
			echo '{"defaultAction": "SCMP_ACT_ALLOW"}' >"$D/allow-all.json"
			profile "$p" --base "$D/allow-all.json" || { echo "profile failed" >"$D/rc"; return; }
		else
			profile "$p" || { echo "profile failed" >"$D/rc"; return; }
		fi
		start_agent || return
		if [ "$RT" = podman ]; then
			P_PODMAN=$p run_podman /bin/sh -c '/bin/keyprobe; /bin/static_raw'
		elif [ "$RT" = containerd ]; then
			P_CTR=$p run_ctr /bin/sh -c '/bin/keyprobe; /bin/static_raw'
		else
			run_fg '["/bin/sh", "-c", "/bin/keyprobe; /bin/static_raw"]' "$p"
		fi ;;
	agentkill)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_bg '["/bin/holder", "1", "/tmp/go", "3"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		echo "allocs_ok=$(stat_now allocs_ok) ioctls=$(stat_now ioctls)" >"$D/before"
		[ -n "$AGENT" ] && { kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=; }
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	stale)
		profile "$D/good.json" || return
		jq '.listenerMetadata = "gpusandbox;traps=0000000000000000"' "$D/good.json" >"$p"
		start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	i386)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_fg '["/bin/compat_i386"]' "$p" ;;
	two)
		# Two containers at once, each its own sandbox and quota.
		profile "$p" && start_agent || return
		local top=$D x
		for x in a b; do
			D=$top/$x
			mkdir -p "$D"
			make_bundle '["/bin/holder", "3", "/tmp/go", "2"]' "$p" || { echo "bundle $x" >"$top/rc"; return; }
			(cd "$D/bundle" && "$RT" --root "$top/state" run -d "gs-two-$x") >"$D/out" 2>"$D/err" </dev/null
		done
		for x in a b; do
			wait_for -e "$top/$x/ctmp/go.ready" || { echo "holder $x never ready" >"$top/rc"; D=$top; return; }
		done
		# Both hold 768 MiB: the agent's metrics file (rewritten every
		# second) shows each container's, beside the fake's account.
		wait_for_metrics() { [ "$(grep -c "^gpusandbox_memory_used_bytes{.*} $((3 * CHUNK))\$" "$top/agent.prom")" = 2 ]; }
		for ((x = 0; x < 3 * WAIT_STEPS; x++)); do wait_for_metrics 2>/dev/null && break; sleep 0.02; done
		cp "$top/agent.prom" "$top/agent-mid.prom"
		cp "$GS_FAKE_STATS" "$top/stats-mid"
		for x in a b; do : >"$top/$x/ctmp/go"; done
		for x in a b; do
			D=$top/$x CASE=two-$x
			D=$top wait_stopped_id "gs-two-$x"
		done
		D=$top CASE=two
		stop_agent
		cat "$top/a/out" "$top/b/out" >"$top/out"
		echo 0 >"$top/rc" ;;
	flood)
		neighbours_flood ;;
	storm)
		neighbours_storm ;;
	bench)
		neighbours_bench ;;
	objects)
		# A policy bounding the container's RM objects; the baseline's is
		# the agent's default (2^19). The fake's count while it holds.
		printf 'mem = 1g\nobjects = %s\n' "$OBJECTS_BOUND" >"$D/objects.policy"
		mkdir -p "$D/policies" && cp "$D/objects.policy" "$D/policies/objects.policy"
		if [ -n "$BASELINE" ]; then
			profile "$p" && start_agent || return
		else
			profile "$p" --policy-name objects && start_agent || return
		fi
		run_bg '["/bin/tenant", "objects", "'"$OBJECTS_TRIED"'", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "never ready" >"$D/rc"; return; }
		echo "objects_live=$(stat_now objects_live)" >"$D/held"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	gpunode)
		# A (nvidia0) keeps making devices on GPU 0, so the agent keeps
		# borrowing its nvidia0; B (nvidia1 only) tries devices on GPU 0
		# meanwhile. The baseline's agent makes them in its shared table.
		local top=$D
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC=1}
		profile "$p" && start_agent || return
		D=$top/a && mkdir -p "$D"
		make_bundle '["/bin/gpunode", "hold", "0", "/tmp/stop", "'"$GPUNODE_PAD"'"]' "$p" ||
			{ echo "bundle a" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && "$RT" --root "$top/state" run -d "gs-gpunode-a") >"$D/out" 2>"$D/err" </dev/null
		wait_for -e "$D/ctmp/stop.ready" || { echo "A never made a device" >"$top/rc"; D=$top; return; }
		D=$top/b && mkdir -p "$D"
		BUNDLE_EXTRA=$ONLY_NVIDIA1 \
			make_bundle '["/bin/gpunode", "race", "0", "'"$GPUNODE_RACE_MS"'", "'"$GPUNODE_MIN_ATTEMPTS"'"]' "$p" ||
			{ echo "bundle b" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && timeout 30 "$RT" --root "$top/state" run "gs-gpunode-b") >"$top/b.out" 2>"$D/err" </dev/null
		echo $? >"$top/rc"
		"$RT" --root "$top/state" delete -f gs-gpunode-b >/dev/null 2>&1
		: >"$top/a/ctmp/stop"
		D=$top wait_stopped_id gs-gpunode-a
		cp "$top/a/out" "$top/a.out" 2>/dev/null
		D=$top
		stop_agent
		cat "$top/a.out" "$top/b.out" >"$top/out" 2>/dev/null ;;
	gpunode-stall)
		# A's call on its nvidia0 stalls in the agent's read of its
		# memory (stallfs) while the worker holds A's GPU-node dup; B
		# (nvidia1) makes devices on its own GPU and a first call on a
		# fresh file meanwhile, and notes what the fake granted by then.
		local top=$D
		profile "$p" && start_agent || return
		D=$top/a && mkdir -p "$D"
		BUNDLE_EXTRA='.mounts += [ { destination: "'"$GPUNODE_STALL_IN"'", type: "bind",
			source: "'"$top/mnt/stall"'", options: ["bind"] } ]' \
			make_bundle '["/bin/gpunode", "stall", "'"$GPUNODE_STALL_IN"'", "/tmp/stall"]' "$p" ||
			{ echo "bundle a" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && "$RT" --root "$top/state" run -d "gs-stall-a") >"$D/out" 2>"$D/err" </dev/null
		wait_for -e "$D/ctmp/stall.start" || { echo "A never started its call" >"$top/rc"; D=$top; return; }
		# The agent's worker is in its read of A's memory.
		wait_for -e "$top/stallstate/stalling" || { echo "A's call never stalled" >"$top/rc"; D=$top; return; }
		D=$top/b && mkdir -p "$D"
		BUNDLE_EXTRA=$ONLY_NVIDIA1 \
			make_bundle '["/bin/gpunode", "own", "1", "'"$GPUNODE_OWN"'"]' "$p" ||
			{ echo "bundle b" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && timeout 30 "$RT" --root "$top/state" run "gs-stall-b") >"$top/b.out" 2>"$D/err" </dev/null
		echo $? >"$top/rc"
		# The fake's account and A's mark at B's end.
		awk '$1 == "device_node_grants" { print $2 }' "$GS_FAKE_STATS" >"$top/grants-at-b-end"
		[ -e "$top/a/ctmp/stall.done" ] && : >"$top/a-done-at-b-end"
		[ -e "$top/stallstate/answered" ] && : >"$top/answered-at-b-end"
		: >"$top/stallstate/release"
		"$RT" --root "$top/state" delete -f gs-stall-b >/dev/null 2>&1
		D=$top wait_stopped_id gs-stall-a
		cp "$top/a/out" "$top/a.out" 2>/dev/null
		D=$top
		stop_agent
		cat "$top/a.out" "$top/b.out" >"$top/out" 2>/dev/null ;;
	named)
		profile "$p" --policy-name small && start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	unnamed)
		profile "$p" --policy-name nosuch && start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	sysadmin)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		BUNDLE_EXTRA='.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])' \
			run_fg '["/bin/static_raw"]' "$p" ;;
	k8s)
		profile "$p" && start_agent || return
		BUNDLE_EXTRA='.annotations = {
			"io.kubernetes.cri.sandbox-name": "trainer-7f9c", "io.kubernetes.cri.sandbox-namespace": "ml",
			"io.kubernetes.cri.sandbox-uid": "0b7e8f0c-1d2e-4f3a-9b8c-7d6e5f4a3b2c",
			"io.kubernetes.cri.container-name": "cuda", "io.kubernetes.pod.name": "decoy" }' \
			run_fg '["/bin/static_raw"]' "$p" ;;
	k8scrio)
		profile "$p" && start_agent || return
		BUNDLE_EXTRA='.annotations = {
			"io.kubernetes.pod.name": "infer-0", "io.kubernetes.pod.namespace": "serving",
			"io.kubernetes.pod.uid": "5c0a2e34-8f1b-4b6d-a1e2-3f4a5b6c7d8e",
			"io.kubernetes.container.name": "../x" }' \
			run_fg '["/bin/static_raw"]' "$p" ;;
	managed)
		mkdir -p "$D/policies"
		printf 'mem = 1g\nmanaged = deny\n' >"$D/policies/deny.policy"
		[ -n "$p" ] && { profile "$p" --policy-name deny --policy "$D/policies/deny.policy" && start_agent || return; }
		run_fg '["/bin/managed"]' "$p" ;;
	p2panswer)
		mkdir -p "$D/policies"
		printf 'mem = 1g\np2p-register = answer\n' >"$D/policies/p2p.policy"
		profile "$p" --policy-name p2p && start_agent || return
		run_fg '["/bin/p2p_pairs", "'"$P2P_PAIRS"'"]' "$p" ;;
	p2pperform)
		mkdir -p "$D/policies"
		printf 'mem = 1g\np2p-register = perform\n' >"$D/policies/p2p.policy"
		profile "$p" --policy-name p2p && start_agent || return
		run_fg '["/bin/p2p_pairs", "'"$P2P_PAIRS"'"]' "$p" ;;
	p2pdefault)
		profile "$p" && start_agent || return
		run_fg '["/bin/p2p_pairs", "'"$P2P_PAIRS"'"]' "$p" ;;
	uvmhold)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_fg '["/bin/uvm_hold", "free"]' "$p" ;;
	asuser | asuser-hostns | asuserchannel)
		# asuser: a user namespace of the container's own, its uid 0
		# the host's USERNS_HOST_UID (the rootfs is read-only and
		# world-readable, the fake's nodes 0666). proc and sysfs are
		# bound from the host's, cgroup and mqueue left out: a machine
		# that is itself a container (masked /proc paths) refuses new
		# ones in a user namespace, and the case needs none of them.
		[ "$base" != asuser-hostns ] && BUNDLE_EXTRA='.mounts |= map(
				if .type == "proc" then { destination: "/proc", type: "bind", source: "/proc", options: ["rbind"] }
				elif .type == "sysfs" then { destination: "/sys", type: "bind", source: "/sys", options: ["rbind", "ro"] }
				elif .type == "cgroup" or .type == "mqueue" then empty else . end) |
			.linux.namespaces += [{ type: "user" }] |
			.linux.uidMappings = [{ containerID: 0, hostID: '"$USERNS_HOST_UID"', size: '"$USERNS_SIZE"' }] |
			.linux.gidMappings = [{ containerID: 0, hostID: '"$USERNS_HOST_UID"', size: '"$USERNS_SIZE"' }]'
		if [ "$base" = asuserchannel ]; then
			mkdir -p "$D/policies"
			printf 'mem = 1g\nchannel-groups = 4\nchannels = 8\n' >"$D/policies/chan.policy"
			profile "$p" --policy-name chan && AGENT_ARGS="--uvm-map as-user" start_agent || return
			run_fg '["/bin/uvm_channel", "free"]' "$p"
		else
			profile "$p" && AGENT_ARGS="--uvm-map as-user" start_agent || return
			run_fg '["/bin/uvm_hold", "free"]' "$p"
		fi ;;
	uvmchannel)
		mkdir -p "$D/policies"
		printf 'mem = 1g\nchannel-groups = 4\nchannels = 8\n' >"$D/policies/chan.policy"
		[ -n "$p" ] && { profile "$p" --policy-name chan && start_agent || return; }
		run_fg '["/bin/uvm_channel", "free"]' "$p" ;;
	uvmrestart)
		# The map made by the agent before its restart, the free and
		# the second allocation judged by the resumed one.
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_hold", "free", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "uvm_hold never mapped" >"$D/rc"; return; }
		echo "vidmem_used=$(stat_now gpu0.vidmem_used) uvm_mappings=$(stat_now uvm_mappings)" >"$D/before"
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		start_agent || return
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	uvmkill)
		# The agent dies in the driver's map of A and the mapper gives
		# its call up before another agent could answer it: the commit
		# that pins A never ran. The baseline's agents take no pin while
		# the driver maps.
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_NO_PIN_IN_FLIGHT=1}
		p=$D/profile.json
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_hold", "intr", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_fake_asleep
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		kill -USR1 "$(rt state "gs-$CASE" | jq -r .pid)" || { echo "no mapper to signal" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "the map never gave up" >"$D/rc"; return; }
		echo "vidmem_used=$(stat_now gpu0.vidmem_used) uvm_mappings=$(stat_now uvm_mappings)" >"$D/before"
		start_agent || return
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	stalehandle)
		# The container's memory mapped through the agent's own client,
		# the agent SIGKILLed and started again on the keeper, then an
		# attacker on the host (outside any sandbox) takes client handles
		# to dup that memory. The baseline differs only in its agent,
		# which never revokes the share (GPUSANDBOX_TEST_KEEP_SHARE) and
		# does not hand its own client to the keeper either
		# (GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT): either defence alone
		# holds here (the kept client stands in for the revoke).
		p=$D/profile.json
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_KEEP_SHARE=1 GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT=1}
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_victim", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "victim never ready" >"$D/rc"; return; }
		# The fake's CLIENT policies once the agent has answered the map.
		echo "$(cat "$D/ctmp/go.ready") policies=$(stat_now share_client_policies)" \
			"obj_policies=$(stat_now share_object_policies) uvm_maps=$(stat_now uvm_maps)" >"$D/before"
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		start_agent || return
		stale_attack ;;
	stalestop)
		# The agent stopped as a service manager stops it (SIGTERM)
		# while it performs the container's map (the fake sleeps in it:
		# its stats cannot be read meanwhile), then started again on the
		# keeper; then the attacker as in stalehandle. The share must be
		# revoked before the agent exits.
		p=$D/profile.json
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_victim", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_fake_asleep
		kill -TERM "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		# The fake's CLIENT policies once the agent is gone.
		echo "policies=$(stat_now share_client_policies) obj_policies=$(stat_now share_object_policies)" >"$D/before"
		start_agent || return
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "victim never ready" >"$D/rc"; return; }
		stale_attack ;;
	stalekill)
		# The agent SIGKILLed while the fake performs the container's
		# map: after the share, before its revoke. Its thread in the
		# fake leaves only with the fake's answer, so once it has exited
		# the share is in place and will not be revoked by it. The
		# attacker strikes before another agent starts (the map still
		# unanswered: it takes the handles from go.pre); then a new
		# agent resumes the container and answers the map. The baseline
		# differs only in its agents, which do not hand their own client
		# to the keeper (GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT).
		p=$D/profile.json
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT=1}
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_victim", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_fake_asleep
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		# The fake's CLIENT policies once the agent is gone.
		echo "policies=$(stat_now share_client_policies)" >"$D/before"
		wait_for -e "$D/ctmp/go.pre" || { echo "victim never allocated" >"$D/rc"; return; }
		stale_scan "$D/ctmp/go.pre" || return
		start_agent || return
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "victim never mapped" >"$D/rc"; return; }
		stale_finish ;;
	mmapless)
		mkdir -p "$D/policies"
		printf 'mem = 1g\nmanaged = deny\n' >"$D/policies/deny.policy"
		profile "$p" --policy-name deny && start_agent || return
		run_fg '["/bin/managed"]' "$p" ;;
	midcall)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_bg '["/bin/holder", "1", "/tmp/go", "2"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		if [ -n "$p" ]; then
			# In flight: the single-threaded fake sleeps in the call, and
			# a read of its stats waits for it.
			local i
			for ((i = 0; i < WAIT_STEPS; i++)); do
				timeout 0.2 cat "$GS_FAKE_STATS" >/dev/null 2>&1 || break
				sleep 0.02
			done
			kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
			echo "killed_at_step=$i" >"$D/kill"
		fi
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		echo "ioctls=$(stat_now ioctls) allocs_ok=$(stat_now allocs_ok)" >"$D/before"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	restart)
		# With a keeper (baseline: without), the agent killed in the
		# middle of the init's first allocation and started again; then
		# an exec'd process fills the quota, then the init asks for more.
		# The baseline has the profile too: what it lacks is the keeper.
		p=$D/profile.json
		profile "$p" || return
		[ -n "$BASELINE" ] || start_keeper || return
		start_agent || return
		run_bg '["/bin/holder", "3", "/tmp/go", "2"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		kill_agent_midcall
		start_agent || return
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		echo "vidmem_used=$(stat_now gpu0.vidmem_used) allocs_ok=$(stat_now allocs_ok)" >"$D/before"
		rt exec "gs-$CASE" /bin/static_raw >"$D/exec.out" 2>"$D/exec.err"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	restartrelease)
		# An exec'd process holding 512 MiB exits while no agent runs:
		# its file's release frees the memory in the driver, and the
		# restarted agent must learn it (the client's release watch,
		# kept by the keeper) or the container keeps paying for it.
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/holder", "1", "/tmp/go", "3"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		rt exec "gs-$CASE" /bin/holder 2 /tmp/go2 0 >"$D/exec.out" 2>"$D/exec.err" &
		local ex=$!
		wait_for -e "$D/ctmp/go2.ready" || { echo "exec'd holder never ready" >"$D/rc"; return; }
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		: >"$D/ctmp/go2"
		wait "$ex"
		echo "vidmem_used=$(stat_now gpu0.vidmem_used)" >"$D/before"
		start_agent || return
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	restartstale)
		# The held state says another trap set (as an agent of another
		# version would have written it): the next agent kills the
		# container instead of resuming it. The memfd is reached as
		# root reaches any process's fds (/proc/PID/fd of the keeper).
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/holder", "1", "/tmp/go", "3"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		local f memfd=""
		for f in /proc/"$KEEPER"/fd/*; do
			case "$(readlink "$f")" in *memfd:gpusandbox-state*) memfd=$f ;; esac
		done
		python3 -c '
import sys, struct, zlib
TRAPS, CRC = 248, 1660   # agent_state.h GS_STATE_IDENT_TRAPS_AT, _CRC_AT
with open(sys.argv[1], "r+b") as f:
    h = bytearray(f.read(CRC + 4))
    (t,) = struct.unpack_from("<Q", h, TRAPS)
    struct.pack_into("<Q", h, TRAPS, t ^ 1)
    struct.pack_into("<I", h, CRC, zlib.crc32(bytes(h[:CRC])))
    f.seek(0)
    f.write(h)
' "$memfd" || { echo "no state memfd in the keeper" >"$D/rc"; return; }
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		# allocs before the new agent; ioctls after it (it probes the
		# driver at start, and has resumed or killed before it listens).
		local allocs
		allocs=$(stat_now allocs_ok)
		start_agent || return
		echo "allocs_ok=$allocs ioctls=$(stat_now ioctls)" >"$D/before"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	keeperkill)
		# The keeper killed, then the agent: nothing holds the listener.
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/holder", "1", "/tmp/go", "3"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		kill -KILL "$KEEPER"; wait "$KEEPER" 2>/dev/null; KEEPER=
		echo "allocs_ok=$(stat_now allocs_ok) ioctls=$(stat_now ioctls)" >"$D/before"
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	keeperpeer)
		# Hostile peers on the keeper's socket while it holds a
		# container; then the agent is restarted and must resume it.
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/holder", "3", "/tmp/go", "2"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		# 0666 for the test only, so that another uid can reach the
		# keeper's own check (SO_PEERCRED) rather than the file mode.
		chmod 0666 "$KSOCK"
		chmod o+x "$D" "$(dirname "$D")"
		python3 "$ROOT/tests/agent/keeper_peer.py" "$KSOCK" "gs-$CASE" >"$D/peers.out" 2>&1
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		start_agent || return
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	abandon)
		profile "$p" && start_agent || return
		run_bg "[\"/bin/abandon\", \"/tmp/go\", \"$ABANDON_SIGNAL_MS\"]" "$p" ||
			{ echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "never ready" >"$D/rc"; return; }
		echo "vidmem_used=$(stat_now gpu0.vidmem_used) allocs_ok=$(stat_now allocs_ok)" >"$D/after"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	peers)
		profile "$p" && start_agent || return
		local mode pids=()
		for mode in silent trickle garbage huge silent silent; do
			"$PEER" "$SOCK" "$mode" >>"$D/peers.out" 2>&1 &
			pids+=($!)
		done
		run_fg '["/bin/static_raw"]' "$p"
		# Still held by the agent when the container is done?
		local alive=0 pid
		for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
		echo "alive_after_container=$alive" >"$D/peers.alive"
		wait "${pids[@]}" ;;
	killable)
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	second)
		# Injection needs a caller's wait that our interrupt cannot end.
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_AGENT_NO_INJECT=1}
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/second_client"]' "$p" ;;
	secondnokill)
		# runc 1.1 takes no WAIT_KILLABLE_RECV: the profile asks none.
		profile "$p" && start_agent || return
		run_fg '["/bin/second_client"]' "$p" ;;
	secondbusy)
		AGENT_ENV=GPUSANDBOX_TEST_INJECT_DELAY_US=$BUSY_DELAY_US
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/sh", "-c", "/bin/second_client clients >/tmp/sc.out & sleep 0.1; /bin/static_raw >/tmp/raw.out; echo raw_rc=$? >/tmp/raw.rc; wait"]' "$p"
		stop_agent ;;
	secondflip)
		AGENT_ENV="GPUSANDBOX_TEST_LOOK_DELAY_US=$SECONDFLIP_LOOK_US${BASELINE:+ GPUSANDBOX_TEST_SECOND_CLIENT_CONTINUE=1}"
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/second_client", "flip", "'"$SECONDFLIP_HOW"'", "'"$SECONDFLIP_TRIES"'"]' "$p" ;;
	injectkill)
		# The caller's shell says how it ended; a next process fills
		# the quota.
		kill_mid_injection GPUSANDBOX_TEST_INJECT_NO_EXITKILL \
			'["/bin/sh", "-c", "/bin/second_client midinject >/tmp/mid.out; echo midinject_rc=$? >/tmp/mid.rc; /bin/static_raw >/tmp/raw.out; echo raw_rc=$? >/tmp/raw.rc"]' ;;
	injectkept)
		# static_raw beside the injections: a call of its is kept.
		kill_mid_injection GPUSANDBOX_TEST_INJECT_KEPT_UNRECORDED \
			'["/bin/sh", "-c", "/bin/second_client clients >/tmp/sc.out & sleep 0.1; /bin/static_raw >/tmp/raw.out; echo raw_rc=$? >/tmp/raw.rc; wait"]' ;;
	flags)
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	esac
	cp "$D"/out "$D/container.out" 2>/dev/null
}
