# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# tests/agent/judge.sh - the verdict on each tests/agent case (sourced by
# tests/agent/run.sh), from the fake driver's own stats first and the
# case's outputs after: judge NAME RUNTIME passes or fails it. The
# variables it reads ($dir, $QUOTA, ...) are run.sh's.

peak_within() {  # the fake's own peak
	local peak
	peak=$(st "$dir" gpu0.vidmem_peak)
	[ -n "$peak" ] && [ "$peak" -le "$QUOTA" ] || { why="fake's peak $peak > quota $QUOTA"; return 1; }
}

# The stale-handle cases' attacker (stale_scan): its scan covered every
# client handle the fake handed out, every dup it tried was refused as RM
# refuses a client the memory is not shared with, the container's own
# calls went through, and its memory went with its handle.
stale_refused() {
	[ "$(val "$dir/attack.out" taken)" -ge 1 ] && [ "$(val "$dir/attack.out" covered)" = 1 ] &&
		[ "$(val "$dir/attack.out" dups_ok)" = 0 ] &&
		[ "$(val "$dir/attack.out" dup)" = "$NV_ERR_INSUFFICIENT_PERMISSIONS" ] &&
		grep -q '^first=0x0 map=0x0 free=0x0$' "$dir/container.out" &&
		[ "$(val "$dir/after" vidmem_used)" = 0 ]
}

# Their baselines: the attacker's dup went through and still holds the
# memory after the container freed its handle and exited.
stale_won() {
	[ "$(val "$dir/attack.out" dups_ok)" -ge 1 ] && [ "$(val "$dir/attack.out" dup)" = 0x0 ] &&
		grep -q '^first=0x0 map=0x0 free=0x0$' "$dir/container.out" &&
		[ "$(val "$dir/after" vidmem_used)" = "$CHUNK" ]
}

judge() {  # judge NAME RUNTIME
	local name=$1 peak rc nomem why=""
	peak=$(st "$dir" gpu0.vidmem_peak)
	rc=$(cat "$dir/rc" 2>/dev/null)
	case "$name" in
	quota-*|killable-crun)
		nomem=$(val "$dir/container.out" nomem)
		# podman names the container by its own 64-hex id: the one log.
		local log=$dir/gs-$name.jsonl
		[ "$name" = quota-podman ] && log=$(ls "$dir"/*.jsonl 2>/dev/null | head -1)
		peak_within && [ "$rc" = 0 ] && [ "${nomem:-0}" -ge 1 ] &&
			[ "$(val "$dir/container.out" realloc)" = 0x0 ] &&
			grep -q '"event":"start"' "$log" 2>/dev/null &&
			grep -q '"event":"summary".*"usage_at_exit":{"0":0}' "$log" &&
			grep '"verdict":"deny"' "$log" | grep -q '"stack":\[[^]]*"main+0x' ||
			why=${why:-"rc=$rc nomem=$nomem realloc=$(val "$dir/container.out" realloc), or no audit log, or no stack naming main in its deny record"} ;;
	baseline-quota-*)
		[ "$rc" = 0 ] && [ "${peak:-0}" -gt "$QUOTA" ] || why="attack did not exceed the quota: peak=$peak rc=$rc" ;;
	exec-*)
		local held got
		held=$(grep -o '^first ok=[0-9]*' "$dir/container.out" | sed 's/.*=//')
		got=$(val "$dir/exec.out" allocated)
		peak_within && [ "$held" = 3 ] && [ "${got:-9}" -le 1 ] &&
			[ "$(val "$dir/exec.out" nomem)" -ge 1 ] &&
			[ "$(grep -c 'sandbox [0-9a-f]*, init pid' "$dir/agent.err")" = 1 ] ||
			why=${why:-"init held $held chunks, exec got $got, sandboxes $(grep -c 'sandbox [0-9a-f]*, init' "$dir/agent.err")"} ;;
	baseline-exec-*)
		[ "${peak:-0}" -gt "$QUOTA" ] || why="exec did not exceed the quota without the agent: peak=$peak" ;;
	noagent-*)
		[ "$rc" != 0 ] && [ "$(st "$dir" allocs_ok)" = 0 ] && [ "$(st "$dir" clients_live)" = 0 ] ||
			why="rc=$rc allocs_ok=$(st "$dir" allocs_ok) ioctls=$(st "$dir" ioctls)" ;;
	agentkill-* | keeperkill-runc)
		# The agent (for keeperkill, the keeper first) killed mid-run: the
		# container's later calls fail as a filter with no listener fails
		# them, and nothing more reached the fake.
		local b_allocs b_ioctls
		b_allocs=$(val "$dir/before" allocs_ok)
		b_ioctls=$(val "$dir/before" ioctls)
		[ "$(val "$dir/container.out" first_refusal)" = "errno:ENOSYS" ] &&
			[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=0 ] &&
			[ "$(st "$dir" allocs_ok)" = "$b_allocs" ] && [ "$(st "$dir" ioctls)" = "$b_ioctls" ] &&
			[ "$peak" = "$CHUNK" ] ||
			why="then: $(grep '^then' "$dir/container.out"); allocs_ok $b_allocs -> $(st "$dir" allocs_ok), ioctls $b_ioctls -> $(st "$dir" ioctls)" ;;
	baseline-agentkill-*)
		[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=3 ] ||
			why="without the profile the later calls did not reach the driver: $(grep '^then' "$dir/container.out")" ;;
	stale-*)
		[ "$(st "$dir" allocs_ok)" = 0 ] && grep -q "not this agent's trap set" "$dir/agent.err" ||
			why="allocs_ok=$(st "$dir" allocs_ok), agent said: $(tail -1 "$dir/agent.err")" ;;
	i386-*)
		peak_within && [ "$rc" = 0 ] && [ "$(val "$dir/container.out" native)" = 0x0 ] &&
			[ "${peak:-0}" -ge $((512 << 20)) ] &&
			[ "$(val <(grep '^abi=i386 ' "$dir/container.out") end)" = exit:0 ] &&
			[ "$(val <(grep '^abi=i386 ' "$dir/container.out") nomem)" -ge 1 ] ||
			why=${why:-"rc=$rc native=$(val "$dir/container.out" native): $(grep '^abi=' "$dir/container.out" | tr '\n' ' ')"} ;;
	baseline-i386-*)
		[ "${peak:-0}" -gt "$QUOTA" ] || why="the 32-bit calls did not exceed the quota without the agent: peak=$peak" ;;
	two-runc)
		# Both held 768 MiB at once; the last chunks may not overlap.
		[ "$rc" = 0 ] && [ "${peak:-0}" -ge $((1536 << 20)) ] && [ "$peak" -le $((2048 << 20)) ] &&
			[ "$(grep -c '^first ok=3 ' "$dir/container.out")" = 2 ] &&
			[ "$(grep -c '^then ok=1 refused=1 first_refusal=NO_MEMORY' "$dir/container.out")" = 2 ] &&
			[ "$(grep -c 'torn down' "$dir/agent.err")" = 2 ] &&
			grep -q 'stopping with 0 container' "$dir/agent.err" &&
			python3 "$ROOT/tests/metrics/check_prom.py" "$dir/agent-mid.prom" >/dev/null &&
			[ "$(grep -cE '^gpusandbox_sandbox_info\{sandbox="[0-9a-f]+",container="gs-two-[ab]",pod="",namespace="",container_name=""\} 1$' "$dir/agent-mid.prom")" = 2 ] &&
			[ "$(awk '/^gpusandbox_memory_used_bytes\{/ { n += $2 } END { print n }' "$dir/agent-mid.prom")" = \
			  "$(awk '$1 == "gpu0.vidmem_used" { print $2 }' "$dir/stats-mid")" ] ||
			why="rc=$rc peak=$peak: $(tr '\n' ' ' <"$dir/container.out") agent: $(grep -c 'torn down' "$dir/agent.err") torn down; metrics: $(grep -c '^gpusandbox_memory_used_bytes' "$dir/agent-mid.prom" 2>&1) used series, $(python3 "$ROOT/tests/metrics/check_prom.py" "$dir/agent-mid.prom" 2>&1)" ;;
	peers-runc)
		# The container is judged as quota-*; the peers by their own clocks.
		local held_silent held_trickle held_garbage sent_huge alive
		held_silent=$(grep '^peer silent ' "$dir/peers.out" | grep -o 'held_ms=[0-9]*' | sed 's/.*=//' | sort -n | head -1)
		held_trickle=$(val <(grep '^peer trickle ' "$dir/peers.out") held_ms)
		held_garbage=$(val <(grep '^peer garbage ' "$dir/peers.out") held_ms)
		sent_huge=$(val <(grep '^peer huge ' "$dir/peers.out") sent)
		alive=$(val "$dir/peers.alive" alive_after_container)
		nomem=$(val "$dir/container.out" nomem)
		peak_within && [ "$rc" = 0 ] && [ "${nomem:-0}" -ge 1 ] &&
			[ "$(grep -c '^peer ' "$dir/peers.out")" = 6 ] &&
			[ "${held_silent:-0}" -ge $((PEER_HELD_MS)) ] && [ "${held_trickle:-0}" -ge $((PEER_HELD_MS)) ] &&
			[ "${held_garbage:-99999}" -lt $((PEER_HELD_MS)) ] &&
			[ "${sent_huge:-0}" -gt $((1 << 20)) ] && [ "$sent_huge" -lt $((PEER_HUGE_MAX)) ] &&
			[ "${alive:-0}" -ge 4 ] &&
			[ "$(grep -c 'refused a connection' "$dir/agent.err")" = 6 ] ||
			why=${why:-"rc=$rc nomem=$nomem alive=$alive peers: $(tr '\n' ' ' <"$dir/peers.out")"} ;;
	managed-*)
		local k want out=$dir/container.out log=$dir/gs-$name.jsonl
		for k in uvm_fixed=EPERM uvm_hint=EPERM uvm_validate=EPERM remap=EPERM file_shared=OK anon_shared=OK i386=unavailable; do
			want=${k#*=}; k=${k%%=*}
			[ "$(val "$out" "$k")" = "$want" ] || why=${why:-"$k=$(val "$out" "$k"), want $want"}
		done
		for k in uvm_offset0 uvm_readonly; do
			[ -n "$(val "$out" $k)" ] && [ "$(val "$out" $k)" != EPERM ] || why=${why:-"$k=$(val "$out" $k)"}
		done
		# Four refusals (three mmaps, folded into one record and a
		# "suppressed" count, and remap_file_pages), all audited.
		[ -n "$why" ] || { [ "$rc" = 0 ] && grep -q '"resource":"managed"' "$log" &&
			[ "$(jq -s '[.[] | select(.event == "summary")][0].decisions.refused' "$log")" -ge 4 ] &&
			grep -q '"managed":"deny"' "$log"; } || why=${why:-"rc=$rc, or the refusals are not audited"} ;;
	baseline-managed-*)
		# The fake's nvidia-uvm (a FUSE file) answers a shared mapping
		# with ENODEV: the calls reached the device, nothing stopped them.
		local k
		for k in uvm_fixed uvm_hint remap; do
			[ -n "$(val "$dir/container.out" $k)" ] && [ "$(val "$dir/container.out" $k)" != EPERM ] ||
				why=${why:-"$k was refused without the agent: $(tr '\n' ' ' <"$dir/container.out")"}
		done ;;
	p2panswer-runc | p2pperform-runc)
		# By the fake's own count: none performed under answer, every
		# one under the default; the container saw NV_OK either way.
		local mode=perform performed=$P2P_PAIRS log=$dir/gs-$name.jsonl
		[ "$name" = p2panswer-runc ] && mode=answer performed=0
		[ "$rc" = 0 ] && grep -q "^p2p_object=0x0 pairs_ok=$P2P_PAIRS reg_ok=$P2P_PAIRS unreg_ok=$P2P_PAIRS " "$dir/container.out" &&
			[ "$(st "$dir" p2p_registered)" = "$performed" ] && [ "$(st "$dir" p2p_unregistered)" = "$performed" ] &&
			grep -q "\"p2p_register\":\"$mode\"" "$log" ||
			why="rc=$rc registered=$(st "$dir" p2p_registered) (want $performed): $(head -c 200 "$dir/container.out")" ;;
	p2pdefault-runc)
		local log=$dir/gs-$name.jsonl
		[ "$rc" = 0 ] && grep -q "^p2p_object=0x56 pairs_ok=$P2P_PAIRS reg_ok=0 unreg_ok=0" "$dir/container.out" &&
			[ "$(st "$dir" p2p_objects_made)" = 0 ] && [ "$(st "$dir" p2p_registered)" = 0 ] &&
			grep -q '"p2p_register":"none"' "$log" ||
			why="rc=$rc objects=$(st "$dir" p2p_objects_made) registered=$(st "$dir" p2p_registered): $(head -c 200 "$dir/container.out")" ;;
	uvmhold-runc)
		peak_within && [ "$rc" = 0 ] &&
			grep -q '^mode=free first=0x0 map=0x0 free=0x0 second=0x0 ' "$dir/container.out" &&
			[ "$(st "$dir" uvm_mappings)" = 0 ] ||
			why=${why:-"rc=$rc mappings=$(st "$dir" uvm_mappings): $(head -c 200 "$dir/container.out")"} ;;
	asuser-runc | asuser-hostns-runc)
		# By the fake's counts (the final ones, after the container's
		# client is gone): under as-user one token share made and no client of the
		# agent's (clients_peak 1, the container's); in the host's
		# namespace neither, the agent's client made for the dup.
		local tokens=1 peak_clients=1 said="UVM maps made as uid $USERNS_HOST_UID" start='"uvm_map":"as-user"'
		[ "$name" = asuser-hostns-runc ] &&
			tokens=0 peak_clients=2 said="UVM maps by dup: it runs in the host's user namespace" start='"uvm_map":"dup"'
		peak_within && [ "$rc" = 0 ] &&
			grep -q '^mode=free first=0x0 map=0x0 free=0x0 second=0x0 ' "$dir/container.out" &&
			[ "$(st "$dir" uvm_mappings)" = 0 ] && [ "$(st "$dir" token_shares)" = "$tokens" ] &&
			[ "$(st "$dir" clients_peak)" = "$peak_clients" ] && grep -q "$said" "$dir/agent.err" &&
			grep -q "$start" "$dir"/gs-"$name".jsonl ||
			why=${why:-"rc=$rc mappings=$(st "$dir" uvm_mappings) token shares=$(st "$dir" token_shares) (want $tokens) clients_peak=$(st "$dir" clients_peak) (want $peak_clients): $(head -c 200 "$dir/container.out")"} ;;
	baseline-uvmhold-runc)
		[ "$rc" = 0 ] && [ "${peak:-0}" -gt "$QUOTA" ] &&
			grep -q '^mode=free first=0x0 map=0x0 free=0x0 second=0x0 ' "$dir/container.out" ||
			why="without the agent the mapping did not hold the memory: peak=$peak rc=$rc $(head -c 200 "$dir/container.out")" ;;
	uvmchannel-runc)
		# By the fake (its stats are outside the container): every
		# registration made, and the groups let go as they were freed.
		[ "$rc" = 0 ] && [ "$(st "$dir" gpu0.channel_groups_peak)" -le 4 ] &&
			grep -q '^rounds=8 alloc_ok=8 reg_ok=8 ' "$dir/container.out" ||
			why="rc=$rc groups peak $(st "$dir" gpu0.channel_groups_peak): $(grep -E '^(rounds|fake)' "$dir/container.out" | tr '\n' ' ')" ;;
	asuserchannel-runc)
		# By the fake: the groups let go as under uvmchannel-runc, and
		# every registration made by the agent as the container's uid
		# (a process other than the client's creator), none continued.
		[ "$rc" = 0 ] && [ "$(st "$dir" gpu0.channel_groups_peak)" -le 4 ] &&
			grep -q '^rounds=8 alloc_ok=8 reg_ok=8 ' "$dir/container.out" &&
			[ "$(st "$dir" uvm_channel_registrations_by_other)" = 8 ] ||
			why="rc=$rc groups peak $(st "$dir" gpu0.channel_groups_peak), registrations by the agent $(st "$dir" uvm_channel_registrations_by_other) of 8: $(grep -E '^(rounds|fake)' "$dir/container.out" | tr '\n' ' ')" ;;
	baseline-uvmchannel-runc)
		[ "$rc" = 0 ] && [ "$(st "$dir" gpu0.channel_groups_peak)" -gt 4 ] &&
			grep -q '^rounds=8 alloc_ok=8 reg_ok=8 ' "$dir/container.out" ||
			why="without the agent the registrations did not hold the groups: peak $(st "$dir" gpu0.channel_groups_peak) rc=$rc" ;;
	uvmrestart-runc|uvmkill-runc)
		# By the fake: A mapped before the restart (768 MiB held, one
		# mapping), its handle freed after it, B refused; peak 1 GiB at
		# most. uvmkill: the mapping made while no agent could commit
		# it, and the call given up (EINTR).
		local line='^mode=free first=0x0 map=0x0 free=0x0 second=0x51 '
		[ "$name" = uvmkill-runc ] && line='^mode=intr first=0x0 map=0xe0000004 free=0x0 second=0x51 '
		peak_within && [ "$(val "$dir/before" vidmem_used)" = $((3 * CHUNK)) ] &&
			[ "$(val "$dir/before" uvm_mappings)" = 1 ] &&
			grep -q "$line" "$dir/container.out" &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] &&
			grep -q ': 1 UVM mapping pin(s) from before the restart' "$dir/agent.err" ||
			why=${why:-"before: $(cat "$dir/before" 2>/dev/null); $(head -c 200 "$dir/container.out"); peak=$peak resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")"} ;;
	baseline-uvmkill-runc)
		# Without the pin: B granted while the mapping holds A, and
		# the fake's peak passes the quota.
		grep -q '^mode=intr first=0x0 map=0xe0000004 free=0x0 second=0x0 ' "$dir/container.out" &&
			[ -n "$peak" ] && [ "$peak" -gt "$QUOTA" ] ||
			why="the given-up map won nothing: before: $(cat "$dir/before" 2>/dev/null); $(head -c 200 "$dir/container.out"); peak=$peak" ;;
	stalehandle-runc)
		# By the fake: the map made, and once the agent had answered it
		# no CLIENT share policy on any memory and one on the
		# container's client object (one share per client, issue #31,
		# kept for the client's life); after the restart the attacker
		# took free handles, its scan covered every client handle the
		# fake had handed out, and every dup it tried was refused: the
		# policy's client (the dead agent's) is held by the keeper; the
		# memory went with the container's handle.
		[ "$(val "$dir/before" map)" = 0x0 ] && [ "$(val "$dir/before" policies)" = 1 ] &&
			[ "$(val "$dir/before" obj_policies)" = 0 ] &&
			[ "$(val "$dir/before" uvm_maps)" = 1 ] &&
			stale_refused &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] ||
			why="before: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null); resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")" ;;
	stalestop-runc)
		# By the fake: the agent was stopped while the fake performed
		# its map (its stats unreadable); once it had exited no CLIENT
		# share policy was left on any memory, the one on the
		# container's client object names the agent's client, which the
		# keeper holds, and after the restart every dup the attacker
		# tried was refused, its scan covering every client handle the
		# fake had handed out.
		[ "$(val "$dir/stop" stopped_at_step)" -lt "$WAIT_STEPS" ] && [ "$(val "$dir/before" policies)" = 1 ] &&
			[ "$(val "$dir/before" obj_policies)" = 0 ] &&
			stale_refused ||
			why="$(cat "$dir/stop" 2>/dev/null); once stopped: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null)" ;;
	baseline-stalehandle-runc)
		# Without the revoke: the policy outlived the agent's client,
		# the attacker's client at that handle dup'ed the memory, and
		# the fake still holds it after the container freed its handle
		# and exited.
		[ "$(val "$dir/before" map)" = 0x0 ] && [ "$(val "$dir/before" policies)" -ge 1 ] &&
			stale_won ||
			why="the stale handle won nothing: before: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null)" ;;
	stalekill-runc)
		# By the fake: the agent was killed while the fake performed
		# its map (its stats unreadable), a CLIENT share policy outlived
		# it, and still every dup the attacker tried was refused, its
		# scan covering every client handle the fake had handed out (the
		# policy's client was held); the resumed agent answered the map
		# and the memory went with the container's handle.
		[ "$(val "$dir/stop" stopped_at_step)" -lt "$WAIT_STEPS" ] && [ "$(val "$dir/before" policies)" -ge 1 ] &&
			stale_refused &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] ||
			why="$(cat "$dir/stop" 2>/dev/null); once killed: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null); resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")" ;;
	baseline-stalekill-runc)
		# Without the kept client: the dead agent's handle was free,
		# the attacker's client there dup'ed the memory, and the fake
		# still holds it after the container freed its handle and
		# exited.
		[ "$(val "$dir/before" policies)" -ge 1 ] &&
			stale_won ||
			why="the dead agent's handle won nothing: $(cat "$dir/stop" 2>/dev/null); once killed: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null)" ;;
	mmapless-runc)
		[ "$rc" != 0 ] && ! grep -q '=EPERM' "$dir/container.out" && grep -q "does not trap mmap" "$dir/agent.err" ||
			why="rc=$rc, agent said: $(grep -m1 refused "$dir/agent.err")" ;;
	midcall-runc)
		[ "$(grep '^first' "$dir/container.out")" = "first ok=0 refused=1 first_refusal=errno:ENOSYS" ] &&
			[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=0 ] &&
			[ "$(st "$dir" ioctls)" = "$(val "$dir/before" ioctls)" ] &&
			[ "$peak" = "$CHUNK" ] && [ "$(st "$dir" gpu0.vidmem_used)" = 0 ] ||
			why="$(tr '\n' ' ' <"$dir/container.out") $(cat "$dir/kill" 2>/dev/null); ioctls $(val "$dir/before" ioctls) -> $(st "$dir" ioctls), peak=$peak used=$(st "$dir" gpu0.vidmem_used)" ;;
	baseline-midcall-runc)
		[ "$(grep '^first' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=1 ] &&
			[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=2 ] ||
			why="without the profile the calls did not reach the driver: $(tr '\n' ' ' <"$dir/container.out")" ;;
	restart-runc)
		# By the fake: after the restart exactly the three chunks the
		# init asked for are held (the interrupted call made once, no
		# object leaked); the exec'd process gets the one chunk left
		# under 1 GiB; the init's last two: one, then NO_MEMORY. One
		# sandbox, resumed, never a second; its audit log one intact
		# chain across the restart, the undo in it.
		[ "$(grep '^first' "$dir/container.out")" = "first ok=3 refused=0 first_refusal=none" ] &&
			[ "$(val "$dir/before" vidmem_used)" = $((3 * CHUNK)) ] &&
			[ "$(val "$dir/exec.out" allocated)" = 1 ] && [ "$(val "$dir/exec.out" nomem)" -ge 1 ] &&
			[ "$(grep '^then' "$dir/container.out")" = "then ok=1 refused=1 first_refusal=NO_MEMORY" ] &&
			peak_within && [ "$(st "$dir" gpu0.vidmem_used)" = 0 ] &&
			[ "$(grep -c ': sandbox [0-9a-f]*, init pid' "$dir/agent.err")" = 1 ] &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] &&
			[ "$(grep -c '"event":"start"' "$dir/gs-$name.jsonl")" = 1 ] &&
			grep -q '"call":"RM_FREE".*"the agent restarted while it performed' "$dir/gs-$name.jsonl" &&
			"$GS" audit verify "$dir/gs-$name.jsonl" >/dev/null 2>&1 ||
			why=${why:-"audit: $("$GS" audit verify "$dir/gs-$name.jsonl" 2>&1 | tail -1); $(tr '\n' ' ' <"$dir/container.out") exec: $(tr '\n' ' ' <"$dir/exec.out" 2>/dev/null) before: $(cat "$dir/before" 2>/dev/null) $(cat "$dir/kill" 2>/dev/null) peak=$peak used=$(st "$dir" gpu0.vidmem_used) sandboxes=$(grep -c ': sandbox [0-9a-f]*, init pid' "$dir/agent.err") resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")"} ;;
	baseline-restart-runc)
		# Without a keeper the init loses its GPU (ENOSYS), and the
		# restarted agent gives an exec'd process a fresh quota: the
		# fake holds more than 1 GiB for the container.
		[ "$(grep '^first' "$dir/container.out" | grep -o 'first_refusal=.*')" = "first_refusal=errno:ENOSYS" ] &&
			[ "$(val "$dir/exec.out" allocated)" -ge 4 ] && [ "${peak:-0}" -gt "$QUOTA" ] ||
			why="$(tr '\n' ' ' <"$dir/container.out") exec: $(tr '\n' ' ' <"$dir/exec.out" 2>/dev/null) peak=$peak" ;;
	restartrelease-runc)
		# By the fake: the exec'd holder's 512 MiB were freed while no
		# agent ran (256 MiB held then); after the restart the init gets
		# 3 chunks more (1 GiB in all), not 1 as with the dead client
		# still charged; peak 1 GiB.
		[ "$(grep '^first' "$dir/exec.out")" = "first ok=2 refused=0 first_refusal=none" ] &&
			[ "$(val "$dir/before" vidmem_used)" = "$CHUNK" ] &&
			[ "$(grep '^then' "$dir/container.out")" = "then ok=3 refused=0 first_refusal=none" ] &&
			[ "$peak" = "$QUOTA" ] &&
			grep -q '2 of 2 client release watch(es) taken back' "$dir/agent.err" ||
			why="exec: $(tr '\n' ' ' <"$dir/exec.out" 2>/dev/null) init: $(tr '\n' ' ' <"$dir/container.out") before: $(cat "$dir/before" 2>/dev/null) peak=$peak; $(grep -m1 'taken back' "$dir/agent.err")" ;;
	restartstale-runc)
		# Killed at resume: its later calls never ran (no "then" line),
		# and nothing more reached the fake after the restart.
		[ "$(grep -c '^then' "$dir/container.out")" = 0 ] &&
			grep -q "cannot be resumed: it runs under trap set" "$dir/agent.err" &&
			[ "$(st "$dir" allocs_ok)" = "$(val "$dir/before" allocs_ok)" ] &&
			[ "$(st "$dir" ioctls)" = "$(val "$dir/before" ioctls)" ] ||
			why="$(tr '\n' ' ' <"$dir/container.out"); agent: $(grep -m1 'resume' "$dir/agent.err"); allocs_ok $(val "$dir/before" allocs_ok) -> $(st "$dir" allocs_ok)" ;;
	keeperpeer-runc)
		# The peers got nothing and changed nothing: the restarted agent
		# resumed the container with its charges (one chunk more, then
		# NO_MEMORY, by the fake's peak).
		[ "$(grep -c '^peer .* ok$' "$dir/peers.out")" = 4 ] &&
			[ "$(grep -c 'refused a peer' "$dir/keeper.err")" -ge 1 ] &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] &&
			[ "$(grep '^then' "$dir/container.out")" = "then ok=1 refused=1 first_refusal=NO_MEMORY" ] &&
			[ "$peak" = "$QUOTA" ] ||
			why="peers: $(tr '\n' ' ' <"$dir/peers.out") then: $(grep '^then' "$dir/container.out") peak=$peak resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")" ;;
	abandon-runc)
		local log=$dir/gs-$name.jsonl out=$dir/container.out
		# first: the retried call got the object; more: 3 more chunks
		# filled the 1 GiB quota; after freeing: nothing left.
		[ "$(val "$out" first)" = NV_OK ] && [ "$(val "$out" signals)" = 1 ] && [ "$(val "$out" more)" = 3 ] &&
			[ "$(val "$out" freed)" = 4 ] && [ "$(val "$dir/after" vidmem_used)" = 0 ] &&
			grep -q '"call":"RM_FREE".*abandoned the call' "$log" ||
			why="$(cat "$out" 2>/dev/null) after: $(cat "$dir/after" 2>/dev/null); audited undo: $(grep -c 'abandoned the call' "$log" 2>/dev/null)" ;;
	k8s-runc)
		local log=$dir/trainer-7f9c_ml_cuda-gs-$name.jsonl
		peak_within && [ "$rc" = 0 ] && [ -s "$log" ] &&
			[ "$(head -1 "$log" | jq -c .labels)" = '{"container.id":"gs-k8s-runc","kubernetes.pod.name":"trainer-7f9c","kubernetes.pod.namespace":"ml","kubernetes.pod.uid":"0b7e8f0c-1d2e-4f3a-9b8c-7d6e5f4a3b2c","kubernetes.container.name":"cuda"}' ] ||
			why=${why:-"rc=$rc, logs: $(cd "$dir" && ls ./*.jsonl | tr '\n' ' ') labels: $(head -1 "$log" 2>/dev/null | jq -c .labels)"} ;;
	k8scrio-runc)
		local log=$dir/gs-$name.jsonl
		peak_within && [ "$rc" = 0 ] && [ -s "$log" ] && [ "$(ls "$dir"/*.jsonl | wc -l)" = 1 ] &&
			[ "$(head -1 "$log" | jq -c .labels)" = '{"container.id":"gs-k8scrio-runc","kubernetes.pod.name":"infer-0","kubernetes.pod.namespace":"serving","kubernetes.pod.uid":"5c0a2e34-8f1b-4b6d-a1e2-3f4a5b6c7d8e"}' ] &&
			grep -q 'annotation io.kubernetes.container.name is not a plain name' "$dir/agent.err" &&
			[ ! -e "$dir/../x" ] && [ -z "$(find "$tmp" -name '*x-gs-*' 2>/dev/null)" ] ||
			why=${why:-"rc=$rc, logs: $(cd "$dir" && ls ./*.jsonl | tr '\n' ' ') labels: $(head -1 "$log" 2>/dev/null | jq -c .labels)"} ;;
	named-runc)
		[ "$rc" = 0 ] && [ "${peak:-0}" = $((512 << 20)) ] && [ "$(val "$dir/container.out" nomem)" -ge 1 ] ||
			why="rc=$rc peak=$peak (want the named policy's 512 MiB)" ;;
	unnamed-runc)
		[ "$rc" != 0 ] && [ "$(st "$dir" allocs_ok)" = 0 ] && grep -q "nosuch.policy" "$dir/agent.err" ||
			why="rc=$rc allocs_ok=$(st "$dir" allocs_ok), agent said: $(grep -m1 refused "$dir/agent.err")" ;;
	sysadmin-*)
		[ "$rc" != 0 ] && [ "$(st "$dir" allocs_ok)" = 0 ] && grep -q "may hold CAP_SYS_ADMIN" "$dir/agent.err" ||
			why="rc=$rc allocs_ok=$(st "$dir" allocs_ok), agent said: $(grep -m1 container "$dir/agent.err")" ;;
	baseline-sysadmin-*)
		[ "$rc" = 0 ] && [ "${peak:-0}" -gt "$QUOTA" ] || why="the privileged container did not run: rc=$rc peak=$peak" ;;
	gpunode-runc|baseline-gpunode-runc)
		# Judged by the fake: a grant to B is one whose client's process
		# holds no node of GPU 0 (device_unentitled_grants).
		local unent attempts held
		unent=$(st "$dir" device_unentitled_grants)
		attempts=$(val "$dir/b.out" attempts)
		held=$(val "$dir/a.out" devices)
		if [ "$name" = gpunode-runc ]; then
			[ "$rc" = 0 ] && [ "${unent:-1}" = 0 ] && [ "$(val "$dir/b.out" wins)" = 0 ] &&
				[ "${attempts:-0}" -ge "$GPUNODE_MIN_ATTEMPTS" ] && [ "${held:-0}" -ge 1 ] &&
				[ "$(val "$dir/b.out" refused)" = status:0x1b ] ||
				why="B got a device on GPU 0: rc=$rc unentitled=$unent attempts=$attempts wins=$(val "$dir/b.out" wins) A's devices=$held"
		else
			[ "$rc" = 0 ] && [ "${unent:-0}" -ge 1 ] && [ "${held:-0}" -ge 1 ] ||
				why="the race never won in the shared table: rc=$rc unentitled=$unent attempts=$attempts A's devices=$held"
		fi ;;
	gpunode-stall-runc)
		# B's own clock and the fake's account, both at B's end, while
		# A's call was still stalled.
		local a0 a1 b1 grants
		a0=$(val "$dir/a.out" start) a1=$(val "$dir/a.out" end) b1=$(val "$dir/b.out" end)
		grants=$(cat "$dir/grants-at-b-end" 2>/dev/null)
		if [ -z "$a0" ] || [ -z "$a1" ] || [ ! -e "$dir/stallstate/stalling" ]; then
			why="A's call did not stall (start=$a0 end=$a1, stallfs's mark: $(ls "$dir/stallstate" | tr '\n' ' ')): the case proves nothing"
		else
			[ "$rc" = 0 ] && [ "$(val "$dir/b.out" devices)" = "$GPUNODE_OWN" ] &&
				[ "$(val "$dir/b.out" client)" = NV_OK ] && [ -n "$b1" ] && [ "$b1" -lt "$a1" ] &&
				[ ! -e "$dir/a-done-at-b-end" ] && [ ! -e "$dir/answered-at-b-end" ] &&
				[ "${grants:-0}" -ge "$GPUNODE_OWN" ] ||
				why="B waited for A's stall: rc=$rc B: $(cat "$dir/b.out" 2>/dev/null); A: start=$a0 end=$a1; fake's grants at B's end: $grants"
		fi ;;
	keyring-*|baseline-keyring-*|podmanbase-podman)
		# add_key refused as the profile's base refuses it (the default's
		# EPERM; podman's default: ENOSYS), or run (the allow-all
		# baseline); the GPU client held to its quota either way.
		local want_key="add_key=errno 1"
		case "$name" in baseline-*) want_key="add_key=ok" ;; podmanbase-*) want_key="add_key=errno 38" ;; esac
		nomem=$(val "$dir/container.out" nomem)
		peak_within && [ "$rc" = 0 ] && [ "${nomem:-0}" -ge 1 ] && grep -qx "$want_key" "$dir/container.out" ||
			why=${why:-"rc=$rc nomem=$nomem, want $want_key: $(grep add_key "$dir/container.out"; tail -2 "$dir/err" 2>/dev/null)"} ;;
	flood-runc|baseline-flood-runc)
		# The attacker's clients by the fake's count; the victim's by its
		# own (each an NV_OK from the fake: a client is continued).
		local live ok vok
		live=$(val "$dir/after-flood" clients_live)
		ok=$(val "$dir/attacker.out" ok)
		vok=$(val "$dir/victim.out" clients_ok)
		if [ "$name" = flood-runc ]; then
			[ "$rc" = 0 ] && [ "$live" = "$FLOOD_DEFAULT_CLIENTS" ] && [ "$ok" = "$FLOOD_DEFAULT_CLIENTS" ] &&
				[ "$(val "$dir/attacker.out" first_refusal)" = INSUFFICIENT_RESOURCES ] &&
				[ "$(cat "$dir/victim.rc" 2>/dev/null)" = 0 ] && [ "$vok" = "$VICTIM_CLIENTS" ] &&
				[ "$(val "$dir/victim.out" pairs_ok)" = "$VICTIM_PAIRS" ] &&
				grep -q "gpusandbox agent: open files: $FLOOD_HARD " "$dir/agent.err" ||
				why="rc=$rc fake's clients after the flood: $live; attacker: $(cat "$dir/attacker.out" 2>/dev/null); victim (rc $(cat "$dir/victim.rc" 2>/dev/null)): $(cat "$dir/victim.out" 2>/dev/null)"
		else
			[ "$rc" = 0 ] && [ "${live:-0}" -gt "$FLOOD_DEFAULT_CLIENTS" ] &&
				{ [ "$(cat "$dir/victim.rc" 2>/dev/null)" != 0 ] || [ "${vok:-0}" -lt "$VICTIM_CLIENTS" ]; } ||
				why="the flood did not deny the victim: rc=$rc fake's clients after the flood: $live; victim (rc $(cat "$dir/victim.rc" 2>/dev/null)): $(cat "$dir/victim.out" 2>/dev/null)"
		fi ;;
	storm-runc|baseline-storm-runc)
		# What the victim's searches compared (the agent's summary of its
		# container), beside the attacker's threads; the victim served.
		local line searches unb most
		line=$(grep "container gs-$name-victim: sharer searches=" "$dir/agent.err" | tail -1)
		searches=$(val <(echo "$line") searches) unb=$(val <(echo "$line") unbounded)
		most=$(val <(echo "$line") most_in_one)
		if [ "$(val "$dir/attacker.out" threads)" != "$STORM_THREADS" ] || [ "${searches:-0}" -lt "$STORM_CLIENTS" ]; then
			why="no storm, or no searches: attacker $(cat "$dir/attacker.out" 2>/dev/null); victim's line: $line"
		elif [ "$name" = storm-runc ]; then
			[ "$rc" = 0 ] && [ "$unb" = 0 ] && [ "${most:-$STORM_THREADS}" -le "$STORM_OWN_MAX" ] &&
				[ "$(cat "$dir/victim.rc" 2>/dev/null)" = 0 ] &&
				[ "$(val "$dir/victim.out" clients_ok)" = "$STORM_CLIENTS" ] ||
				why="rc=$rc victim's searches: $line; victim (rc $(cat "$dir/victim.rc" 2>/dev/null)): $(cat "$dir/victim.out" 2>/dev/null)"
		else
			[ "$rc" = 0 ] && [ "${most:-0}" -ge "$STORM_THREADS" ] ||
				why="the victim's searches did not walk the attacker's threads: rc=$rc $line"
		fi ;;
	objects-runc|baseline-objects-runc)
		# By the fake's count while the container held what it got.
		local live ok
		live=$(val "$dir/held" objects_live) ok=$(val "$dir/out" ok)
		if [ "$name" = objects-runc ]; then
			[ "$rc" = 0 ] && [ -n "$live" ] && [ "$live" -le "$OBJECTS_BOUND" ] &&
				[ "$ok" = $((OBJECTS_BOUND - OBJECTS_SESSION)) ] &&
				[ "$(val "$dir/out" first_refusal)" = INSUFFICIENT_RESOURCES ] &&
				grep -q '"reason":"object limit reached (policy key objects)"' "$dir"/gs-objects-runc.jsonl ||
				why="rc=$rc fake's objects while held: $live; container: $(cat "$dir/out" 2>/dev/null)"
		else
			[ "$rc" = 0 ] && [ "$ok" = "$OBJECTS_TRIED" ] && [ "${live:-0}" -gt "$OBJECTS_BOUND" ] ||
				why="rc=$rc fake's objects while held: $live; container: $(cat "$dir/out" 2>/dev/null)"
		fi ;;
	bench-runc)
		local walk=bounded
		[ -n "${TENANT_BENCH_FULL_WALK:-}" ] && walk=host
		echo "bench neighbours=${TENANT_BENCH_NEIGHBOURS:-0} threads_each=$STORM_THREADS walk=$walk" \
			"$(cat "$dir/victim.out" 2>/dev/null)"
		[ "$rc" = 0 ] && [ "$(cat "$dir/victim.rc" 2>/dev/null)" = 0 ] ||
			why="rc=$rc victim (rc $(cat "$dir/victim.rc" 2>/dev/null)): $(cat "$dir/victim.out" 2>/dev/null)" ;;
	second-crun)
		local want="mem_a=NV_OK second=NV_OK device_b=NV_OK mem_b=NV_OK over=NO_MEMORY dup=NV_OK free_b=NV_OK third=NV_OK"
		local got="" k
		for k in mem_a second device_b mem_b over dup free_b third; do got="$got $k=$(val "$dir/container.out" "$k")"; done
		[ "$rc" = 0 ] && [ "${got# }" = "$want" ] && [ "$peak" = "$QUOTA" ] && [ "$(st "$dir" clients_peak)" -ge 2 ] &&
			grep -q '"reason":"a second client on the control file, made by the caller' "$dir/gs-$name.jsonl" ||
			why="rc=$rc got${got}, peak $peak, clients_peak $(st "$dir" clients_peak); want $want, peak $QUOTA, 2 clients, the injection audited" ;;
	secondnokill-runc)
		# No livelock (the container ended), and one of the two ways:
		# our answer reached the caller before our interrupt (B made by
		# injection, audited), or the interrupt won: the agent said so
		# and the restarted call was refused as before injection.
		local second
		second=$(val "$dir/container.out" second)
		if [ "$second" = NV_OK ]; then
			[ "$rc" = 0 ] && [ "$(st "$dir" clients_peak)" = 2 ] && peak_within &&
				grep -q '"reason":"a second client on the control file, made by the caller' "$dir/gs-$name.jsonl" ||
				why=${why:-"rc=$rc B made but clients_peak $(st "$dir" clients_peak), or not audited as injected"}
		else
			[ "$rc" = 0 ] && [ "$second" = NOT_SUPPORTED ] && [ "$(st "$dir" clients_peak)" = 1 ] &&
				grep -q "second clients on this listener are refused" "$dir/agent.err" &&
				grep -q '"reason":"one client per open control file' "$dir/gs-$name.jsonl" ||
				why="rc=$rc second=$second clients_peak $(st "$dir" clients_peak), or the agent did not say the listener's waits are interruptible"
		fi ;;
	baseline-second-crun)
		[ "$rc" = 0 ] && [ "$(val "$dir/container.out" second)" = NOT_SUPPORTED ] && [ "$(st "$dir" clients_peak)" = 1 ] ||
			why="rc=$rc second=$(val "$dir/container.out" second) clients_peak $(st "$dir" clients_peak): want NOT_SUPPORTED, 1" ;;
	secondbusy-crun)
		local c=$dir/ctmp kept
		kept=$(grep -o 'calls kept during injections=[0-9]*' "$dir/agent.err" | tail -1 | sed 's/.*=//')
		[ "$rc" = 0 ] && [ "${kept:-0}" -ge 1 ] && [ "$(val "$c/sc.out" second)" = NV_OK ] &&
			[ "$(val "$c/sc.out" third)" = NV_OK ] && [ "$(val "$c/sc.out" fourth)" = NV_OK ] &&
			peak_within && [ "$(val "$c/raw.out" nomem)" -ge 1 ] && [ "$(val "$c/raw.rc" raw_rc)" = 0 ] ||
			why=${why:-"rc=$rc kept=$kept clients: $(cat "$c/sc.out" 2>/dev/null | tr '\n' ' ') static_raw: $(cat "$c/raw.out" "$c/raw.rc" 2>/dev/null | tr '\n' ' ')"} ;;
	secondflip-crun)
		# Both paths raced, 768 MiB held: the peak is the assertion.
		local injected
		injected=$(grep -c '"reason":"a second client on the control file, made by the caller' "$dir/gs-$name.jsonl")
		peak_within && [ "$rc" = 0 ] && [ "$injected" -ge 10 ] && [ "$(val "$dir/container.out" flip_refused)" -ge 100 ] &&
			[ "${peak:-0}" -ge $((3 * CHUNK)) ] ||
			why=${why:-"not exercised: rc=$rc $(grep -o 'flip_ok=.*' "$dir/container.out") injected=$injected peak=$peak"} ;;
	baseline-secondflip-crun)
		[ "${peak:-0}" -gt "$QUOTA" ] ||
			why="second client continued: the fake's peak $peak, $(grep -o 'flip_ok=.*' "$dir/container.out"): not sensitive" ;;
	injectkept-crun|baseline-injectkept-crun)
		local c=$dir/ctmp answered
		answered=$(grep -c "answered the call the previous agent had in flight" "$dir/agent.err")
		if [ "$name" = injectkept-crun ]; then
			[ "$rc" = 0 ] && [ "$answered" -ge 1 ] && [ "$(val "$c/raw.rc" raw_rc)" = 0 ] &&
				[ "$(val "$c/raw.out" nomem)" -ge 1 ] && peak_within ||
				why=${why:-"rc=$rc answered=$answered static_raw: $(cat "$c/raw.out" "$c/raw.rc" 2>/dev/null | tr '\n' ' ')"}
		else
			[ "$rc" = 0 ] && [ "$answered" = 0 ] && [ ! -e "$c/raw.rc" ] ||
				why="rc=$rc answered=$answered static_raw: $(cat "$c/raw.out" "$c/raw.rc" 2>/dev/null | tr '\n' ' '): want it never answered"
		fi ;;
	injectkill-crun)
		# Killed with its tracer: 128 + SIGKILL, nothing printed after
		# the call; the restarted agent held the quota for the next one.
		local c=$dir/ctmp
		[ "$rc" = 0 ] && [ "$(val "$c/mid.out" mem_a)" = NV_OK ] && [ "$(val "$c/mid.rc" midinject_rc)" = 137 ] &&
			! grep -q lived_on "$c/mid.out" && [ "$(st "$dir" clients_peak)" = 1 ] && peak_within &&
			[ "$(val "$c/raw.out" nomem)" -ge 1 ] && [ "$(val "$c/raw.rc" raw_rc)" = 0 ] ||
			why=${why:-"rc=$rc caller: $(cat "$c/mid.out" "$c/mid.rc" 2>/dev/null | tr '\n' ' ') clients_peak $(st "$dir" clients_peak); next: $(cat "$c/raw.out" "$c/raw.rc" 2>/dev/null | tr '\n' ' ')"} ;;
	baseline-injectkill-crun)
		# It ran on: its ioctl returned what our mmap had left in rax.
		local c=$dir/ctmp ret
		ret=$(val "$c/mid.out" ret)
		[ "$rc" = 0 ] && [ "$(val "$c/mid.out" lived_on)" = 1 ] && [ "$ret" != 0 ] &&
			[ $((ret)) -gt 0 ] ||
			why="rc=$rc caller: $(cat "$c/mid.out" "$c/mid.rc" 2>/dev/null | tr '\n' ' '): want it to live on with a return neither 0 nor -errno" ;;
	runc-flags)
		[ "$rc" != 0 ] && [ "$(st "$dir" allocs_ok)" = 0 ] ||
			why="runc accepted the flag (rc=$rc): update the profile's advice" ;;
	esac
	[ -z "$why" ] && pass "$name" || fail "$name" "$why"
}
