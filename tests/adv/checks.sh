# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# tests/adv/checks.sh - the per-case positive checks of tests/adv (sourced
# by tests/adv/run.sh), beside the fake driver's own account that run.sh
# judges first: what each case must have exercised or seen, so that no
# pass is vacuous. Each returns 1 with $why; the variables they read
# ($rc, $peak, ...) are run.sh's.

# ---- per-test positive checks (return 1 with $why) ---------------------------
ge() { [ -n "$1" ] && [ "$1" -ge "$2" ]; }

# uvm_channel (the driver's channel_groups_peak is checked before): the
# registrations were made, and (free, lone, flow) none is left while the
# UVM file is still open: gpusandbox unregistered what the workload freed.
check_uvm_channel() {
	local name=$1 d=$2 rounds alloc reg made all
	rounds=$(val_of "$d" rounds); alloc=$(val_of "$d" alloc_ok); reg=$(val_of "$d" reg_ok)
	# --uvm-map as-user: every registration the fake holds was made by
	# the supervisor (a process other than the client's creator, let in
	# by its euid), none continued (exec_uvm.c, register_as_user).
	if [ "${name%_as_user}" != "$name" ]; then
		made=$(stat_of "$d" uvm_channel_registrations_by_other); all=$(stat_of "$d" uvm_channel_registrations)
		ge "$made" 1 && [ "$made" = "$all" ] ||
			{ why="registrations by the supervisor: $made of $all"; return 1; }
	fi
	case "$name" in
	uvm_channel:flow | uvm_channel:flow_as_user)
		# CUDA's order works as without gpusandbox, every round.
		ge "$rounds" 1 && [ "$(val_of "$d" flow_ok)" = "$rounds" ] ||
			{ why="flow_ok=$(val_of "$d" flow_ok) of $rounds rounds: $(grep '^round=' "$d/out" | grep -v 'register=NV_OK unregister=NV_OK free=NV_OK' | head -3 | tr '\n' ';')"; return 1; } ;;
	uvm_channel:race | uvm_channel:race_as_user)
		ge "$reg" 1 && ge "$(val_of "$d" flips)" 1000 ||
			{ why="not exercised: reg_ok=$reg flips=$(val_of "$d" flips)"; return 1; }
		return 0 ;;
	uvm_channel:swap | uvm_channel:swap_wide | uvm_channel:swap_as_user)
		# Registrations made through the swapped number (those that
		# found another file than the one looked at were refused).
		# Under as-user each is made on our dup of the file the trap's
		# number named when the supervisor looked (the registrant space
		# it then watches), so no swap after the look can move it
		# (exec_uvm.c, register_as_user).
		ge "$reg" 1 && ge "$(val_of "$d" flips)" 1000 ||
			{ why="not exercised: reg_ok=$reg swaps=$(val_of "$d" flips)"; return 1; } ;;
	uvm_channel:overlap | uvm_channel:overlap_as_user)
		# The other process's pairs all returned while the registration
		# was in the driver, by its account and by the fake's.
		grep -q '^overlap: quick=NV_OK pairs=20 overlapped=1$' "$d/out" &&
			grep -q '^late: register=NV_OK other_ok=1 ' "$d/out" && ge "$(val_of "$d" served_while_late)" 40 ||
			{ why="$(grep -E '^(overlap|late):' "$d/out" | tr '\n' ';')"; return 1; } ;;
	uvm_channel:clone_held)
		# Still held after the wait: the clone fails as fork fails, and
		# the refusal is in the audit log.
		grep -q '^clone: clone=Resource temporarily unavailable clone_while_late=1$' "$d/out" &&
			grep -q '"reason":"an fd table of the sandbox is held for a continued call"' "$d/audit.jsonl" ||
			{ why="$(grep -E '^(clone|late):' "$d/out" | tr '\n' ';') $(grep -c '"call":"clone"' "$d/audit.jsonl") clone records"; return 1; } ;;
	uvm_channel:clone)
		# The clone was made, once the registration had returned.
		grep -q '^clone: clone=ok clone_while_late=0$' "$d/out" &&
			grep -q '^late: register=NV_OK other_ok=1 ' "$d/out" ||
			{ why="$(grep -E '^(clone|late):' "$d/out" | tr '\n' ';')"; return 1; } ;;
	uvm_channel:stall | uvm_channel:stall_as_user)
		# The late registration was made, the child's free was
		# performed while it was in flight, and once it had returned
		# the driver let the group go.
		grep -q '^stall: register=NV_OK child_free=NV_OK groups_end=0$' "$d/out" ||
			{ why="$(grep '^stall' "$d/out")"; return 1; } ;;
	*)
		# Every channel made was registered.
		ge "$alloc" 1 && [ "$reg" = "$alloc" ] ||
			{ why="alloc_ok=$alloc reg_ok=$reg: $(grep '^round=' "$d/out" | head -3 | tr '\n' ';')"; return 1; } ;;
	esac
	[ "$(val_of "$d" registered_end)" = 0 ] ||
		{ why="the driver still had $(val_of "$d" registered_end) channel registrations before the UVM file closed (fake_groups_max=$(val_of "$d" fake_groups_max))"; return 1; }
}
. tests/adv/dupcache_checks.sh
. tests/adv/audit_reach.sh
. tests/adv/smi_checks.sh

# uvm_ctlfd: the maps naming another file are refused (INSUFFICIENT_PERMISSIONS
# in the struct, audited), the supervisor asks the served file nothing
# (the race: no ioctl), the right map then works, and after the free the
# fake maps and holds nothing while the UVM file is still open.
# uvm_share under --uvm-map as-user (uvm_share.c): the maps and B's dups
# as without gpusandbox; by the fake, the client shared by token once
# (one OS_SECURITY_TOKEN policy, no CLIENT one) and no client of the
# supervisor's made (clients_peak 2: A's and B's), except under "memory",
# whose map falls back to our client (its CLIENT share, a third client).
check_uvm_share_as_user() {
	local name=$1 d=$2 want_client=0 want_peak=2
	[ "$name" = uvm_share:memory_as_user ] && want_client=1 want_peak=3
	# The start record says the mode: the memory is dup'able by its uid.
	grep -q '"uvm_map":"as-user"' "$d/audit.jsonl" || { why="the start record does not say uvm_map as-user"; return 1; }
	[ "$(val_of "$d" first)" = 0x0 ] && [ "$(val_of "$d" map)" = 0x0 ] && [ "$(val_of "$d" dup)" = 0x0 ] &&
		[ "$(val_of "$d" replaced)" = 0x0 ] && [ "$(val_of "$d" mid)" = 0x0 ] &&
		[ "$(val_of "$d" map2)" = 0x0 ] && [ "$(val_of "$d" dup2)" = 0x0 ] && [ "$(val_of "$d" maps)" = 3 ] &&
		[ "$(val_of "$d" obj_policies)" = 0 ] && [ "$(val_of "$d" client_policies)" = "$want_client" ] &&
		[ "$(val_of "$d" token_policies)" = 1 ] && [ "$(stat_of "$d" clients_peak)" = "$want_peak" ] && return 0
	why="$(head -1 "$d/out") clients_peak=$(stat_of "$d" clients_peak), want every status 0x0, maps=3"
	why="$why obj_policies=0 client_policies=$want_client token_policies=1 clients_peak=$want_peak"
	return 1
}

# token_neighbour (run_token): the owner mapped; its client shared by
# token (the fake's count) except under dup_mode; the taker's dup as the
# fake counts dups made: none from a second sandbox (the refusal audited
# there), one outside every sandbox as the owner's uid, none as another
# uid; under dup_mode the one dup is the owner's supervisor's own.
check_token() {
	local name=$1 d=$2 tokens=1 dup=0x1b made=0
	case $name in
	baseline-token_neighbour) dup=0x0 made=1 ;;
	baseline-token_neighbour:dup_mode) tokens=0 made=1 ;;
	esac
	why="owner: $(head -1 "$d/owner.out") taker: $(head -1 "$d/out") token_shares=$(stat_of "$d" token_shares) (want $tokens) dups_made=$(stat_of "$d" dups_made) (want $made)"
	grep -q '^alloc=0x0 map=0x0$' "$d/owner.out" && [ "$(val_of "$d" dup)" = "$dup" ] &&
		[ "$(stat_of "$d" token_shares)" = "$tokens" ] && [ "$(stat_of "$d" dups_made)" = "$made" ] || return 1
	[ "$name" != token_neighbour ] ||
		grep -q '"reason":"import of an object from a client outside the sandbox"' "$d/audit.jsonl" ||
		{ why="the taker's sandbox did not audit the refusal"; return 1; }
}

check_uvm_ctlfd() {
	local name=$1 d=$2 refused=0x1b
	[ "$name" = uvm_ctlfd:pipe ] && refused=0x1b,0x1b
	case "$name" in uvm_ctlfd:race | uvm_ctlfd:race_dup) refused=race ;; esac
	vals_are "$d" first=0x0 bad=$refused map_ok=0x0 free=0x0 left_mappings=0 left_used=0 || return 1
	[ "$(stat_of "$d" uvm_mappings)" = 0 ] || { why="$(stat_of "$d" uvm_mappings) mappings left after the run"; return 1; }
	case "$name" in
	uvm_ctlfd:race | uvm_ctlfd:race_dup)
		ge "$(val_of "$d" ok)" 1 && ge "$(val_of "$d" refused)" 1 && ge "$(val_of "$d" flips)" 1000 ||
			{ why="the race did not run both ways: $(grep '^ok=' "$d/out")"; return 1; }
		[ "$(own_stat "$d" outside_ioctls)" = 0 ] ||
			{ why="the supervisor made $(own_stat "$d" outside_ioctls) ioctls on the workload's file"; return 1; }
		# A dup a lost race took of the served file is parked, not
		# closed: no map waits for the server's answer to a FLUSH.
		[ "$(val_of "$d" held)" = 0 ] ||
			{ why="$(val_of "$d" held) maps held by the server's answer ($(val_of "$d" bad_ms) ms, outside_other=$(own_stat "$d" outside_other))"; return 1; }
		return 0 ;;
	uvm_ctlfd:fuse)
		[ "$(own_stat "$d" outside_ioctls)" = 0 ] && [ "$(own_stat "$d" outside_other)" = 0 ] ||
			{ why="the supervisor asked the workload's file: $(tr '\n' ' ' <"$d/serve.err")"; return 1; }
		[ "$(val_of "$d" probe)" = 0x0 ] && [ "$(val_of "$d" held)" = 0 ] &&
			[ "$(val_of "$d" probe_held)" = 0 ] && [ "$(val_of "$d" rmword_held)" = 0 ] ||
			{ why="held up: $(grep -o 'bad_ms=.*' "$d/out") $(grep -o 'probe=.*' "$d/out")"; return 1; } ;;
	esac
	grep -q '"reason":"the caller does not hold the client.s control file at rmCtrlFd"' "$d/audit.jsonl" ||
		{ why="no audit record names the refused map"; return 1; }
}

# The NVJPG objects of one session: JPEG_CONTEXTS per engine the fake's GPU
# 0 lists, one object where it lists none (exec_engines.c, fail closed).
jpeg_per_session() {
	local v
	v=$(stat_of "$1" gpu0.nvjpg_engines)
	[ -n "$v" ] && [ "$v" -ge 1 ] && echo $((JPEG_CONTEXTS * v)) || echo 1
}

# The engine instances of kind (nvdec, nvjpg) the fake's GPU 0 lists,
# 1 when it lists none (what the supervisor then takes).
engine_instances() {
	local v
	v=$(stat_of "$1" "gpu0.$2_engines")
	[ -n "$v" ] && [ "$v" -ge 1 ] && echo "$v" || echo 1
}

# video_sessions: N whole sessions under video.decoders = N, the next
# refused at its first object, one opening again after a destroy (by
# RM_FREE, by close); NVJPG the same (two clients a session); the driver's
# own peaks N x I (N x 2 x I for NVJPG).
check_video_sessions() {
	local d=$1 i_dec i_jpg dec_max jpg_max k
	i_dec=$(engine_instances "$d" nvdec) i_jpg=$(engine_instances "$d" nvjpg)
	dec_max=$((DECODERS * i_dec)) jpg_max=$((JPEG_SESSIONS * $(jpeg_per_session "$d")))
	[ "$(val_of "$d" nvdec_engines)" = "$i_dec" ] && [ "$(val_of "$d" nvjpg_engines)" = "$i_jpg" ] ||
		{ why="the program saw $(val_of "$d" nvdec_engines) NVDEC, the fake lists $i_dec"; return 1; }
	vals_are "$d" dec_full="$DECODERS" dec_stop=INSUFFICIENT_RESOURCES dec_first_objects="$i_dec" \
		dec_after_free=NV_OK dec_after_free_objects="$i_dec" dec_after_close=NV_OK \
		dec_after_close_objects="$i_dec" jpg_full="$JPEG_SESSIONS" jpg_stop=INSUFFICIENT_RESOURCES || return 1
	[ "$(stat_of "$d" gpu0.nvdec_peak)" = "$dec_max" ] && [ "$(stat_of "$d" gpu0.nvjpg_peak)" = "$jpg_max" ] ||
		{ why="driver nvdec_peak=$(stat_of "$d" gpu0.nvdec_peak) nvjpg_peak=$(stat_of "$d" gpu0.nvjpg_peak), want $dec_max, $jpg_max"; return 1; }
	[ "$(stat_of "$d" gpu0.nvdec_live)" = 0 ] && [ "$(stat_of "$d" gpu0.nvjpg_live)" = 0 ] &&
		[ "$(stat_of "$d" gpu0.nvenc_live)" = 0 ] ||
		{ why="the driver still holds engines at the end"; return 1; }
	# Encoders where the GPU has them: 1 session of I objects, then refused.
	k=$(stat_of "$d" gpu0.nvenc_engines)
	if [ "${k:-0}" -gt 0 ]; then
		[ "$(val_of "$d" nvenc_engines)" = "$k" ] && [ "$(val_of "$d" enc_full)" = "$ENCODER_SESSIONS" ] &&
			[ "$(val_of "$d" enc_stop)" = INSUFFICIENT_RESOURCES ] &&
			[ "$(stat_of "$d" gpu0.nvenc_peak)" = $((ENCODER_SESSIONS * k)) ] ||
			{ why="NVENC: enc_full=$(val_of "$d" enc_full) enc_stop=$(val_of "$d" enc_stop) peak $(stat_of "$d" gpu0.nvenc_peak), want $ENCODER_SESSIONS x $k"; return 1; }
	elif [ "$name" = video_sessions:nvenc ]; then
		why="the fake lists no NVENC"; return 1
	fi
	# Optical flow under video.ofa = 0: not one object.
	k=$(stat_of "$d" gpu0.ofa_engines)
	if [ "${k:-0}" -gt 0 ]; then
		[ "$(val_of "$d" ofa_full)" = 0 ] && [ "$(val_of "$d" ofa_stop)" = INSUFFICIENT_RESOURCES ] &&
			[ "$(stat_of "$d" gpu0.ofa_peak)" = 0 ] ||
			{ why="OFA under video.ofa = 0: ofa_full=$(val_of "$d" ofa_full) peak $(stat_of "$d" gpu0.ofa_peak)"; return 1; }
	fi
	grep -q '"reason":"video engine quota exceeded".*"resource":"video.decoders"' "$d/audit.jsonl" ||
		grep -q '"resource":"video.decoders".*"reason":"video engine quota exceeded"' "$d/audit.jsonl" ||
		{ why="no audit record names the session refusal"; return 1; }
}

check_positive() {
	local name=$1 d=$2 ok nomem other s
	s=$(summary_of "$d")
	if [ -z "$s" ] && [ "$name" != kill_super ]; then
		why="no SUMMARY line (exit $rc): $(tail -c 300 "$d/out" "$d/err" | tr '\n' ' ')"
		return 1
	fi
	read -r ok nomem other <<<"$s"
	case "$name" in
	race_size:size | race_size:both | race_size:ptr | race_size:proc)
		ge "$ok" 1 && ge "$nomem" 1 ||
			{ why="not exercised: ok=$ok nomem=$nomem other=$other"; return 1; } ;;
	race_size:class)
		# A 0x40 read must have been refused; the 768 MiB hold must stand.
		ge "$nomem" 1 && ge "$peak" $((768 * MIB)) ||
			{ why="not exercised: nomem=$nomem peak=$(mib "$peak")"; return 1; } ;;
	exec_again)
		# One task, both stages (the exec kept its pid), and every
		# answer of the second reached it through a fresh open.
		local k
		for k in stage1_open stage1_alloc stage1_free stage2_open stage2_alloc stage2_free; do
			[ "$(val_of "$d" $k)" = 0x0 ] || { why="$k=$(val_of "$d" $k)"; return 1; }
		done
		[ "$(grep -o 'pid=[0-9]*' "$d/out" | sort -u | wc -l)" = 1 ] ||
			{ why="the stages were not one task: $(grep -o 'pid=[0-9]*' "$d/out" | tr '\n' ' ')"; return 1; }
		ge "$ok" 1 || { why="not exercised: ok=$ok"; return 1; } ;;
	static_raw | xfer)
		ge "$ok" 1 && ge "$nomem" 1 ||
			{ why="not exercised: ok=$ok nomem=$nomem other=$other"; return 1; }
		[ "$(val_of "$d" realloc)" = 0x0 ] ||
			{ why="allocation after free-after-refusal got $(val_of "$d" realloc)"; return 1; } ;;
	nvos21 | vidheap | vidheap_egm)
		local k
		for k in direct_ok direct_nomem xfer_ok xfer_nomem; do
			ge "$(val_of "$d" $k)" 1 ||
				{ why="not exercised: $k=$(val_of "$d" $k)"; return 1; }
		done
		if [ "$name" = vidheap ] && [ "$(val_of "$d" realloc)" != 0x0 ]; then
			why="allocation after free-after-refusal got $(val_of "$d" realloc)"
			return 1
		fi ;;
	forged_words)
		[ -n "$(val_of "$d" words)" ] &&
			[ "$(val_of "$d" words_refused)" = "$(val_of "$d" words)" ] ||
			{ why="words refused $(val_of "$d" words_refused)/$(val_of "$d" words): $(grep '^word=' "$d/out" | tr '\n' ';')"; return 1; } ;;
	fork_both)
		ge "$ok" 1 && ge "$(val_of "$d" parent_nomem)" 1 && ge "$(val_of "$d" child_nomem)" 1 ||
			{ why="not exercised: $(grep parent_ok "$d/out")"; return 1; } ;;
	fd_pass)
		[ "$(val_of "$d" a_alloc)" = 0x0 ] && ge "$(val_of "$d" recv_nomem)" 1 &&
			ge "$(val_of "$d" own_nomem)" 1 ||
			{ why="not exercised: a_alloc=$(val_of "$d" a_alloc) $(grep recv_ok "$d/out")"; return 1; } ;;
	continue_swap | continue_swap:proc)
		# The attack ran: chunks granted up to the quota, then refused.
		ge "$ok" 1 && ge "$nomem" 1 && ge "$(val_of "$d" swaps)" 1000 ||
			{ why="not exercised: ok=$ok nomem=$nomem swaps=$(val_of "$d" swaps)"; return 1; } ;;
	continue_swap:size)
		# A size RM_ALLOC does not take: nothing granted, on any file.
		[ "$ok" = 0 ] && ge "$other" 1 ||
			{ why="ok=$ok other=$other: a wrong-size RM_ALLOC was granted"; return 1; } ;;
	uvm_share:*as_user)
		check_uvm_share_as_user "$name" "$d" || return 1 ;;
	uvm_share | uvm_share:replace | uvm_share:memory)
		# The maps and a second client's dups of the mapped memory, as
		# without gpusandbox: the supervisor's share must keep the
		# driver's default policy (uvm_share.c), and under replace be
		# made again once the workload replaced its client's list. By
		# the fake: every map made, no CLIENT policy on any memory, one
		# on A's client object (one share per client, issue #31).
		[ "$(val_of "$d" first)" = 0x0 ] && [ "$(val_of "$d" map)" = 0x0 ] && [ "$(val_of "$d" dup)" = 0x0 ] &&
			[ "$(val_of "$d" replaced)" = 0x0 ] && [ "$(val_of "$d" mid)" = 0x0 ] &&
			[ "$(val_of "$d" map2)" = 0x0 ] && [ "$(val_of "$d" dup2)" = 0x0 ] && [ "$(val_of "$d" maps)" = 3 ] &&
			[ "$(val_of "$d" obj_policies)" = 0 ] && [ "$(val_of "$d" client_policies)" = 1 ] &&
			[ "$(val_of "$d" token_policies)" = 0 ] ||
			{ why="$(head -1 "$d/out"), want every status 0x0, maps=3 obj_policies=0 client_policies=1 token_policies=0"; return 1; } ;;
	uvm_hold:p2p)
		# Refused as a driver without P2P pages answers; A then freed.
		[ "$(val_of "$d" first)" = 0x0 ] && [ "$(val_of "$d" map)" = 0x56 ] &&
			[ "$(val_of "$d" second)" = 0x0 ] ||
			{ why="first=$(val_of "$d" first) p2p=$(val_of "$d" map) second=$(val_of "$d" second)"; return 1; }
		grep -q '"reason":"P2P pages would keep memory past its charge"' "$d/audit.jsonl" ||
			{ why="no audit record names the refused P2P range"; return 1; } ;;
	uvm_hold:*)
		# Mapped, its handle gone, and the memory really freed: the
		# second 768 MiB fits (the driver's peak is checked above).
		[ "$(val_of "$d" first)" = 0x0 ] && [ "$(val_of "$d" map)" = 0x0 ] &&
			[ "$(val_of "$d" free)" = 0x0 ] && [ "$(val_of "$d" second)" = 0x0 ] ||
			{ why="first=$(val_of "$d" first) map=$(val_of "$d" map) free=$(val_of "$d" free) second=$(val_of "$d" second)"; return 1; }
		[ "$name" != uvm_hold:race ] || ge "$(val_of "$d" flips)" 1000 ||
			{ why="the race did not run: flips=$(val_of "$d" flips)"; return 1; }
		# The GPUs' instances reversed: our dup of the memory under a
		# device of its own GPU, by the fake's count.
		[ "$name" != uvm_hold:reversed ] || [ "$(stat_of "$d" dups_cross_gpu)" = 0 ] ||
			{ why="our dup hung under another GPU's device ($(stat_of "$d" dups_cross_gpu) dups)"; return 1; }
		# The handoffs: the fake maps nothing while the process that
		# was passed the UVM file still holds it (B made).
		[ "${name#uvm_hold:handoff}" = "$name" ] || [ "$(val_of "$d" held_mappings)" = 0 ] ||
			{ why="the fake still had $(val_of "$d" held_mappings) mappings through the kept UVM file"; return 1; }
		[ "$(stat_of "$d" uvm_mappings)" = 0 ] ||
			{ why="$(stat_of "$d" uvm_mappings) mappings left after the run"; return 1; } ;;
	uvm_ctlfd:*)
		check_uvm_ctlfd "$name" "$d" || return 1 ;;
	uvm_channel:*)
		check_uvm_channel "$name" "$d" || return 1 ;;
	quick_return)
		# Every client made, by the program's count and the driver's.
		[ "$(val_of "$d" clients_ok)" = 20 ] && [ "$(val_of "$d" clients_rise)" = 20 ] ||
			{ why="$(grep -E '^client|^clients_ok' "$d/out" | tr '\n' ';')"; return 1; } ;;
	sem_surf)
		# The surface was made and kept its memory: the next round was
		# refused, and each release let a new allocation through.
		[ "$(val_of "$d" rounds)" = 1 ] && [ "$(val_of "$d" surf)" = NV_OK ] &&
			[ "$(val_of "$d" refused)" = NO_MEMORY ] && [ "$(val_of "$d" last)" = NV_OK ] &&
			[ "$(val_of "$d" after_free)" = NV_OK ] && [ "$(val_of "$d" after_parent)" = NV_OK ] ||
			{ why="$(head -1 "$d/out")"; return 1; }
		[ "$(stat_of "$d" semsurf_kept)" = 0 ] && [ "$(stat_of "$d" gpu0.vidmem_used)" = 0 ] ||
			{ why="the driver still keeps $(stat_of "$d" semsurf_kept) objects, $(stat_of "$d" gpu0.vidmem_used) bytes"; return 1; } ;;
	sem_surf:sysmem)
		# The driver (sem_surf.c) takes no video memory for a surface.
		[ "$(val_of "$d" surf)" = INVALID_PARAMETER ] && [ "$(val_of "$d" after_free)" = NV_OK ] ||
			{ why="$(head -1 "$d/out")"; return 1; } ;;
	dup_free)
		local first dup second third
		first=$(val_of "$d" first); dup=$(val_of "$d" dup)
		second=$(val_of "$d" second); third=$(val_of "$d" third)
		[ "$first" = 0x0 ] || { why="first 768 MiB allocation got $first"; return 1; }
		if [ "$dup" = 0x0 ] && [ "$second" != 0x51 ]; then
			why="allocation while the dup holds 768 MiB got $second, want 0x51"
			return 1
		fi
		[ "$third" = 0x0 ] ||
			{ why="allocation after freeing every handle got $third (charge leaked)"; return 1; } ;;
	close_reopen)
		local r1 r2
		r1=$(val_of "$d" round1_ok); r2=$(val_of "$d" round2_ok)
		ge "$r1" 1 && ge "$nomem" 1 || { why="not exercised: round1_ok=$r1 nomem=$nomem"; return 1; }
		[ "$r2" = "$r1" ] ||
			{ why="after close+reopen got $r2 chunks, first round $r1 (charges not released)"; return 1; } ;;
	gpus|gpus_uuid)
		vals_are "$d" cards=1 card_minor=1 probed=1 attached=1 info_hidden=INVALID_ARGUMENT info_visible=NV_OK \
			info_instance=1 dev0=INVALID_ARGUMENT dev1=NV_OK mem1=NV_OK legacy_dev0=INVALID_ARGUMENT \
			uvm_reg0=status:0x1b acct_hidden=INVALID_ARGUMENT acct_hidden_state=0 acct_visible=NV_OK || return 1
		[ "$(stat_of "$d" gpu0.vidmem_peak)" = 0 ] || { why="video memory reached the hidden GPU 0"; return 1; }
		[ "$(stat_of "$d" gpu0.channel_groups_peak)" = 0 ] ||
			{ why="a channel group reached the hidden GPU 0 (legacy_group0=$(val_of "$d" legacy_group0))"; return 1; }
		# Its node is /dev/null in the sandbox: UVM, which asks for the
		# node alone, did not register it (by the fake's count).
		[ "$(stat_of "$d" gpu0.uvm_registered_peak)" = 0 ] ||
			{ why="the hidden GPU 0 was registered with UVM (uvm_node0=$(val_of "$d" uvm_node0))"; return 1; }
		grep -q '"reason":"GPU not visible in this sandbox"' "$d/audit.jsonl" ||
			{ why="no audit record names the refused device"; return 1; }
		return 0 ;;
	default_caps)
		[ "$(val_of "$d" groups_ok)" = "$DEFAULT_CHANNEL_GROUPS" ] &&
			[ "$(val_of "$d" groups_stop)" = INSUFFICIENT_RESOURCES ] &&
			[ "$(val_of "$d" ch_ok)" = "$DEFAULT_CHANNELS" ] &&
			[ "$(val_of "$d" ch_stop)" = INSUFFICIENT_RESOURCES ] ||
			{ why="$(tr '\n' ' ' <"$d/out")"; return 1; }
		grep -q '"reason":"channel group quota exceeded"' "$d/audit.jsonl" &&
			grep -q '"reason":"channel quota exceeded"' "$d/audit.jsonl" ||
			{ why="no audit record names the default caps' refusals"; return 1; }
		return 0 ;;
	channels)
		local g c a r
		g=$(val_of "$d" groups_ok); c=$(val_of "$d" ch_ok); a=$(val_of "$d" ch_after_free)
		r=$(val_of "$d" race_refused)
		[ "$g" = "$CHANNEL_GROUPS" ] && [ "$c" = "$CHANNELS" ] && [ "$a" = "$CHANNELS" ] &&
			[ "$(val_of "$d" groups_stop)" = INSUFFICIENT_RESOURCES ] &&
			[ "$(val_of "$d" channels_stop)" = INSUFFICIENT_RESOURCES ] && ge "$r" 1 ||
			{ why="groups_ok=$g ch_ok=$c ch_after_free=$a race_refused=$r stops=$(val_of "$d" groups_stop)/$(val_of "$d" channels_stop)"; return 1; }
		grep -q '"reason":"channel quota exceeded"' "$d/audit.jsonl" ||
			{ why="no audit record names the channel refusal"; return 1; }
		[ "$(val_of "$d" sched)" = NV_OK,NV_OK,INSUFFICIENT_RESOURCES,NV_OK,NV_OK ] ||
			{ why="scheduling under --active-channel-groups $ACTIVE_GROUPS: $(val_of "$d" sched)"; return 1; }
		[ "$(stat_of "$d" gpu0.channel_groups_scheduled)" -le "$ACTIVE_GROUPS" ] ||
			{ why="driver has $(stat_of "$d" gpu0.channel_groups_scheduled) groups scheduled"; return 1; }
		return 0 ;;
	fb_report)
		local kib=$((QUOTA / 1024)) k
		for k in v2_total v2_heap v1_total after_total; do
			[ "$(val_of "$d" $k)" = "$kib" ] || { why="$k=$(val_of "$d" $k), want $kib"; return 1; }
		done
		[ "$(val_of "$d" v2_free)" -le "$kib" ] && [ "$(val_of "$d" v1_free)" -le "$kib" ] &&
			[ "$(val_of "$d" after_free)" -le $((kib - 262144)) ] ||
			{ why="free v2=$(val_of "$d" v2_free) v1=$(val_of "$d" v1_free) after=$(val_of "$d" after_free)"; return 1; }
		return 0 ;;
	grown_tail)
		[ "$(stat_of "$d" grown_tail_reads)" -ge 1 ] ||
			{ why="the driver read no NV50_P2P params (p2p=$(val_of "$d" p2p))"; return 1; }
		[ "$(stat_of "$d" grown_tail_nonzero)" = 0 ] ||
			{ why="the driver read an earlier call's bytes past gpusandbox's copy"; return 1; }
		return 0 ;;
	fb_report_other_abi)
		[ "$(val_of "$d" v2_status)" = INVALID_PARAM_STRUCT ] && [ "$(val_of "$d" v2_total)" = 0 ] ||
			{ why="v2_status=$(val_of "$d" v2_status) v2_total=$(val_of "$d" v2_total), want INVALID_PARAM_STRUCT 0"; return 1; }
		grep -q '"reason":"control params of another size than the running driver.s"' "$d/audit.jsonl" ||
			{ why="no audit record of the size refusal"; return 1; }
		return 0 ;;
	policy_verdicts)
		local k
		vals_are "$d" unknown_class=INVALID_CLASS debug_class=INVALID_CLASS allowed_class=NV_OK \
			unknown_control=NOT_SUPPORTED debug_control=NOT_SUPPORTED allowed_control=NV_OK \
			service_interrupts=NV_OK \
			xfer_class=INVALID_CLASS unknown_escape=EINVAL || return 1
		for k in '"reason":"class unknown to gpusandbox"' '"group":"debug"' \
			'"reason":"control unknown to gpusandbox"' '"reason":"control not allowed by the policy"' \
			'"reason":"escape unknown to gpusandbox","escape":"0x50"'; do
			grep -q "$k" "$d/audit.jsonl" || { why="no audit record with $k"; return 1; }
		done
		return 0 ;;
	engines | engines:no_list)
		# A stacker in one client and one channel: one session per I
		# objects, so cap x I objects (I = 1 where the driver does not
		# list its engines).
		local i_dec i_jpg dec_max jpg_max
		i_dec=$(engine_instances "$d" nvdec) i_jpg=$(engine_instances "$d" nvjpg)
		dec_max=$((DECODERS * i_dec)) jpg_max=$((JPEG_SESSIONS * $(jpeg_per_session "$d")))
		if [ "$name" = engines ]; then
			ge "$i_dec" 2 && ge "$i_jpg" 2 || { why="the fake lists $i_dec NVDEC, $i_jpg NVJPG: vacuous"; return 1; }
		else
			[ "$i_dec" = 1 ] || { why="the fake listed its engines"; return 1; }
		fi
		[ "$(val_of "$d" channel)" = NV_OK ] && [ "$(val_of "$d" dec_ok)" = "$dec_max" ] &&
			[ "$(val_of "$d" dec_stop)" = INSUFFICIENT_RESOURCES ] &&
			[ "$(val_of "$d" dec_after_free)" = 1 ] && [ "$(val_of "$d" dec_after_full)" = INSUFFICIENT_RESOURCES ] &&
			[ "$(val_of "$d" jpg_ok)" = "$jpg_max" ] &&
			[ "$(val_of "$d" jpg_stop)" = INSUFFICIENT_RESOURCES ] && ge "$(val_of "$d" race_refused)" 1 ||
			{ why="want dec_ok=$dec_max jpg_ok=$jpg_max: $(grep -E 'dec_ok|stop|full' "$d/out" | tr '\n' ' ')"; return 1; }
		# The driver's own count: never more decoders or JPEG engines than the caps allow.
		[ "$(stat_of "$d" gpu0.nvdec_peak)" = "$dec_max" ] && [ "$(stat_of "$d" gpu0.nvjpg_peak)" = "$jpg_max" ] ||
			{ why="driver nvdec_peak=$(stat_of "$d" gpu0.nvdec_peak) nvjpg_peak=$(stat_of "$d" gpu0.nvjpg_peak), want $dec_max, $jpg_max"; return 1; }
		grep -q '"reason":"video engine quota exceeded"' "$d/audit.jsonl" &&
			grep -q '"resource":"video.decoders"' "$d/audit.jsonl" ||
			{ why="no audit record names the engine refusal"; return 1; }
		[ "$(val_of "$d" dup_engine)" = INVALID_ARGUMENT ] &&
			grep -q '"reason":"a video engine object cannot be duplicated"' "$d/audit.jsonl" ||
			{ why="dup_engine=$(val_of "$d" dup_engine), or not refused by gpusandbox"; return 1; }
		return 0 ;;
	video_sessions | video_sessions:one_engine | video_sessions:nvenc)
		check_video_sessions "$d" || return 1 ;;
	lone_channels)
		local want=NV_OK,NV_OK,INSUFFICIENT_RESOURCES,NV_OK,NV_OK,NV_OK
		[ "$(val_of "$d" chan_ok)" = 3 ] && [ "$(val_of "$d" sched)" = "$want" ] ||
			{ why="chan_ok=$(val_of "$d" chan_ok) sched=$(val_of "$d" sched), want $want"; return 1; }
		[ "$(val_of "$d" fake_scheduled)" = "$ACTIVE_GROUPS" ] ||
			{ why="the driver had $(val_of "$d" fake_scheduled) units scheduled, want $ACTIVE_GROUPS"; return 1; }
		grep -q '"reason":"active channel group limit reached"' "$d/audit.jsonl" ||
			{ why="the refusal is not audited"; return 1; }
		return 0 ;;
	managed)
		local k
		vals_are "$d" uvm_fixed=EPERM uvm_hint=EPERM uvm_validate=EPERM remap=EPERM file_shared=OK anon_shared=OK || return 1
		# Not the shape of a UVM mapping: never trapped, so never EPERM.
		for k in uvm_offset0 uvm_readonly; do
			[ -n "$(val_of "$d" $k)" ] && [ "$(val_of "$d" $k)" != EPERM ] ||
				{ why="$k=$(val_of "$d" $k): refused, or not tried"; return 1; }
		done
		if [ "$(val_of "$d" i386)" != unavailable ]; then
			[ "$(val_of "$d" i386_mmap2)" = EPERM ] && [ "$(val_of "$d" i386_old_mmap)" = EPERM ] ||
				{ why="i386_mmap2=$(val_of "$d" i386_mmap2) i386_old_mmap=$(val_of "$d" i386_old_mmap), want EPERM"; return 1; }
		fi
		[ "$(grep -c '"resource":"managed"' "$d/audit.jsonl")" -ge 3 ] &&
			grep -q '"reason":"managed = deny: the mapping would create a managed (UVM) range"' "$d/audit.jsonl" ||
			{ why="the refusals are not audited"; return 1; }
		return 0 ;;
	managed_default)
		# allow-unaccounted: every call reaches the kernel and the fake.
		[ "$(val_of "$d" file_shared)" = OK ] && [ "$(val_of "$d" remap)" = OK ] && ! grep -q '=EPERM$' "$d/out" ||
			{ why="refused without managed = deny: $(grep -E '=' "$d/out" | tr '\n' ' ')"; return 1; }
		! grep -q '"resource":"managed"' "$d/audit.jsonl" || { why="audited a managed refusal"; return 1; }
		return 0 ;;
	second_client)
		# Both clients' memory charged: 512 MiB under each, the next
		# 256 MiB refused; B made by the workload's process (the fake's
		# same-process dup passes); B freed, a third client made.
		local want="mem_a=NV_OK second=NV_OK device_b=NV_OK mem_b=NV_OK over=NO_MEMORY dup=NV_OK free_b=NV_OK third=NV_OK"
		local got="" k
		for k in mem_a second device_b mem_b over dup free_b third; do got="$got $k=$(val_of "$d" $k)"; done
		[ "${got# }" = "$want" ] && [ "$peak" -eq "$QUOTA" ] && ge "$(stat_of "$d" clients_peak)" 2 ||
			{ why="got${got}, peak $(mib "$peak"), clients_peak $(stat_of "$d" clients_peak); want $want, peak 1024 MiB, 2 clients"; return 1; }
		return 0 ;;
	second_client:flip_*)
		# Both paths raced (a second client injected, 1 GiB refused), 768
		# MiB held: the quota check above is the assertion.
		local injected
		injected=$(grep -c '"reason":"a second client on the control file, made by the caller' "$d/audit.jsonl")
		ge "$injected" 10 && ge "$(val_of "$d" flip_refused)" 100 && ge "$peak" $((768 * MIB)) ||
			{ why="not exercised: $(grep -o 'flip_ok=.*' "$d/out") injected=$injected peak=$(mib "$peak")"; return 1; }
		return 0 ;;
	second_client:clients)
		# --clients 3 counts the clients on one file, not the file.
		[ "$(val_of "$d" second)" = NV_OK ] && [ "$(val_of "$d" third)" = NV_OK ] &&
			[ "$(val_of "$d" fourth)" = INSUFFICIENT_RESOURCES ] && [ "$(stat_of "$d" clients_peak)" = "$CLIENTS" ] ||
			{ why="second=$(val_of "$d" second) third=$(val_of "$d" third) fourth=$(val_of "$d" fourth) clients_peak=$(stat_of "$d" clients_peak), want NV_OK NV_OK INSUFFICIENT_RESOURCES $CLIENTS"; return 1; }
		return 0 ;;
	second_client:signal)
		[ "$(val_of "$d" handled)" = "$(val_of "$d" sent)" ] && [ "$(val_of "$d" other)" = 0 ] &&
			ge "$(val_of "$d" ok)" 1 && ge "$(val_of "$d" sent)" 1 ||
			{ why="$(grep -o 'sent=.*' "$d/out"), want every signal handled once (one at least sent during an injection), no other status, a client made"; return 1; }
		return 0 ;;
	client_flip)
		# Many attempts, and a held 768 MiB: the quota check above is the
		# assertion; here only that the race ran.
		ge "$(val_of "$d" flip_refused)" 100 && ge "$peak" $((768 * MIB)) ||
			{ why="not exercised: flip_refused=$(val_of "$d" flip_refused) peak=$(mib "$peak")"; return 1; }
		return 0 ;;
	io_uring)
		[ "$(val_of "$d" setup)" = ENOSYS ] && [ "$(val_of "$d" enter)" = ENOSYS ] &&
			[ "$(val_of "$d" register)" = ENOSYS ] ||
			{ why="io_uring reached the kernel: $(head -1 "$d/out")"; return 1; }
		return 0 ;;
	client_fdswap:busy)
		# A many-threaded process still makes every client it asks
		# for while its other threads' calls are in flight.
		[ "$(val_of "$d" made)" = 300 ] && [ "$(val_of "$d" refused)" = 0 ] ||
			{ why="clients refused under load: $(grep -o 'attempts=.*' "$d/out") $(grep -o '"reason":"[^"]*"' "$d/audit.jsonl" | sort | uniq -c | tr '\n' ' ')"; return 1; }
		return 0 ;;
	client_fdswap:thread | client_fdswap:proc)
		# Every attempt ran, and some client allocations were continued
		# (the fast path and the quiesced one both ran), among them every
		# calm one (the swapper alive, holding off: a legitimate client
		# with a sharer to stop); the quota check above is the assertion.
		[ "$(val_of "$d" attempts)" = 6000 ] && ge "$(val_of "$d" made)" 1 &&
			[ "$(val_of "$d" calm_made)" = "$(val_of "$d" calm)" ] && ge "$(val_of "$d" calm)" 1 &&
			ge "$(val_of "$d" refused)" 1 && ge "$peak" $((768 * MIB)) ||
			{ why="not exercised: $(grep -o 'attempts=.*' "$d/out") peak=$(mib "$peak")"; return 1; }
		# The swapper process could not be made with clone3, which a
		# filter cannot follow: it came through the clone the filter
		# traps (filter.h).
		[ "$name" != client_fdswap:proc ] || [ "$(val_of "$d" clone3)" = ENOSYS ] ||
			{ why="clone3=$(val_of "$d" clone3): a process sharing the fd table made unseen"; return 1; }
		return 0 ;;
	odd_size)
		[ "$(val_of "$d" nv_errno)" = EINVAL ] && [ "$(val_of "$d" null_errno)" = ENOTTY ] &&
			[ "$(val_of "$d" uvm_rc)" = 0 ] && [ "$(val_of "$d" os_desc_status)" = 0x56 ] &&
			[ "$(val_of "$d" register_ctl)" = EINVAL ] && [ "$(val_of "$d" register_gpu)" = 0 ] &&
			grep -q '"reason":"escape with a size the driver does not accept"' "$d/audit.jsonl" ||
			{ why="nv_errno=$(val_of "$d" nv_errno) null_errno=$(val_of "$d" null_errno) uvm_rc=$(val_of "$d" uvm_rc) os_desc_status=$(val_of "$d" os_desc_status) register_ctl=$(val_of "$d" register_ctl) register_gpu=$(val_of "$d" register_gpu), or no audit record"; return 1; }
		return 0 ;;
	client_refree)
		# The free seen: B gets A's 768 MiB back, C one chunk; by the
		# fake, never more than the quota (the generic peak check).
		[ "$(val_of "$d" free)" = NV_OK ] && [ "$(val_of "$d" round1_ok)" = 3 ] &&
			[ "$(val_of "$d" round2_ok)" = 3 ] && [ "$(val_of "$d" round3_ok)" = 1 ] ||
			{ why="$(head -1 "$d/out"), want free=NV_OK 3 3 1"; return 1; } ;;
	client_reuse)
		local c1 c2 c3
		c1=$(val_of "$d" round1_ok); c2=$(val_of "$d" round2_ok); c3=$(val_of "$d" round3_ok)
		[ "$c1" = 3 ] && [ "$c2" = 3 ] ||
			{ why="handle not re-used as planned: round1_ok=$c1 round2_ok=$c2"; return 1; }
		[ "$c3" = 1 ] ||
			{ why="after re-using a dead client's handle, round 3 got $c3 chunks, want 1"; return 1; } ;;
	per_gpu | per_gpu:ordered)
		# The driver's own account of GPU 1: exactly its quota, in 64 MiB
		# chunks, and the next one refused.
		v=$(stat_of "$d" gpu1.vidmem_peak)
		[ -n "$v" ] && [ "$v" -le "$PER_GPU_QUOTA" ] ||
			{ why="driver gpu1.vidmem_peak = $(mib "${v:-0}") > its quota $(mib "$PER_GPU_QUOTA")"; return 1; }
		[ "$(val_of "$d" ok)" = $((PER_GPU_QUOTA / (64 * MIB))) ] && [ "$(val_of "$d" stop)" = 0x51 ] ||
			{ why="ok=$(val_of "$d" ok) stop=$(val_of "$d" stop) instance=$(val_of "$d" instance)"; return 1; }
		local want_instance=1
		[ "$name" = per_gpu ] && want_instance=0
		[ "$(val_of "$d" instance)" = "$want_instance" ] ||
			{ why="GPU 1 was instance $(val_of "$d" instance), want $want_instance: the fake did not model it"; return 1; }
		grep -q '"device":1,"call":"RM_ALLOC","class":"0x40"' "$d/audit.jsonl" ||
			{ why="the audit log does not name GPU 1 as the device"; return 1; }
		return 0 ;;
	own_driver)
		# The look-alike answered (the attack was mounted), and the real
		# driver's second allocation was refused: client X's charge stood.
		vals_are "$d" real1=0x0 evil_client=0x0 evil_free=0x0 real2=0x51 || return 1
		return 0 ;;
	user_nobody)
		ge "$ok" 1 && ge "$nomem" 1 ||
			{ why="not exercised as nobody: ok=$ok nomem=$nomem other=$other"; return 1; } ;;
	broker | broker_hide)
		# The broker's pipe directory is masked: it cannot be reached.
		local c
		c=$(val_of "$d" connect)
		[ -n "$c" ] && [ "$c" != OK ] && [ "$(val_of "$d" granted)" = 0 ] ||
			{ why="the workload reached the broker: connect=$c granted=$(val_of "$d" granted)"; return 1; } ;;
	audit_hostile)
		# The supervisor lived (exit 0 above), wrote the record of the
		# call the driver failed, and every record is valid UTF-8 JSON.
		[ "$(val_of "$d" alloc_errno)" = "$UNNAMED_ERRNO" ] ||
			{ why="not exercised: alloc=$(val_of "$d" alloc)"; return 1; }
		strict_json_lines "$d/audit.jsonl" 2>"$d/json-err" ||
			{ why="invalid record: $(tail -1 "$d/json-err")"; return 1; }
		python3 - "$d/audit.jsonl" "$UNNAMED_ERRNO" <<'PY' ||
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
# Each byte that is not UTF-8 is U+FFFD; control characters are escapes.
assert any(r.get("comm") == "\ufffd\ufffd\x01\x1b[31mx" and r.get("errno") == sys.argv[2]
           for r in recs)
PY
			{ why="no record with the cleaned thread name and errno $UNNAMED_ERRNO"; return 1; }
		audit_verify "$d/audit.jsonl"
		[ "$verify_rc" = 0 ] || { why="audit verify: $verify_err"; return 1; }
		return 0 ;;
	clients)
		# The cap holds, and follows the driver: a closed file's client
		# and an RM_FREEd one make room. The driver's own peak judges.
		[ "$(val_of "$d" fill_ok)" = "$CLIENTS" ] && [ "$(val_of "$d" fill_stop)" = INSUFFICIENT_RESOURCES ] &&
			[ "$(val_of "$d" after_close)" = 1 ] && [ "$(val_of "$d" after_free)" = 1 ] &&
			ge "$(val_of "$d" race_ok)" 1 && ge "$(val_of "$d" race_refused)" 1 ||
			{ why="$(tr '\n' ' ' <"$d/out")"; return 1; }
		local peak_clients
		peak_clients=$(stat_of "$d" clients_peak)
		[ -n "$peak_clients" ] && [ "$peak_clients" -le "$CLIENTS" ] ||
			{ why="the driver had ${peak_clients:-?} clients at once, cap $CLIENTS"; return 1; }
		grep -q '"reason":"client quota exceeded"' "$d/audit.jsonl" &&
			grep -q '"resource":"clients"' "$d/audit.jsonl" ||
			{ why="no audit record names the client refusal"; return 1; }
		grep -q "client quota exceeded (--clients $CLIENTS) x" "$d/err" ||
			{ why="the line at exit does not name --clients: $(grep refused "$d/err")"; return 1; }
		return 0 ;;
	slow_call | baseline-slow_call)
		# Another process's calls went through while one process's
		# slow call was in the driver, by the program's account
		# (overlapped=1: it finished before the slow call returned)
		# and by the fake's (its pairs reached the fake while the late
		# reply was pending). With one notify thread per sandbox
		# (b73c4c9) both fail: overlapped=0, served_while_late=0.
		[ "$(val_of "$d" quick_status)" = NV_OK ] && [ "$(val_of "$d" slow_status)" = NV_OK ] ||
			{ why="calls failed: $(tr '\n' ' ' <"$d/out")"; return 1; }
		[ "$(val_of "$d" quick_pairs)" = "$SLOW_QUICK_PAIRS" ] || { why="quick_pairs $(val_of "$d" quick_pairs)"; return 1; }
		[ "$(val_of "$d" overlapped)" = 1 ] ||
			{ why="the quick process waited for the slow call (overlapped=$(val_of "$d" overlapped))"; return 1; }
		local served
		served=$(stat_of "$d" served_while_late)
		[ "${served:-0}" -ge $((2 * SLOW_QUICK_PAIRS)) ] ||
			{ why="the fake served ${served:-0} ioctls while the slow reply was pending, want >= $((2 * SLOW_QUICK_PAIRS))"; return 1; }
		return 0 ;;
	handle_zero)
		# The run ended (on main the supervisor spun for ever, deaf to
		# SIGTERM), every step went through, and the driver holds nothing.
		local want=dev=0x0,mem=0x0,free_mem=0x0,free_dev=0x0,dev2=0x0,again=0x0 k got=
		for k in dev mem free_mem free_dev dev2 again; do got="$got${got:+,}$k=$(val_of "$d" $k)"; done
		[ "$got" = "$want" ] || { why="$got, want $want"; return 1; }
		[ "$(stat_of "$d" gpu0.vidmem_used)" = 0 ] ||
			{ why="the driver still holds $(stat_of "$d" gpu0.vidmem_used) bytes"; return 1; }
		return 0 ;;
	audit_path_hidden)
		# The supervisor's command line (the init's /proc/1/cmdline, a
		# copy of it) no longer names the log: on 0f432b6 audit_forge
		# found it there. Nothing was forged, and the log verifies.
		[ "$(val_of "$d" found_by)" = none ] && [ "$(val_of "$d" forged)" = 0 ] ||
			{ why="the workload found the log: $(head -1 "$d/out")"; return 1; }
		audit_verify "$d/audit.jsonl"
		[ "$verify_rc" = 0 ] || { why="audit verify: $verify_err"; return 1; }
		return 0 ;;
	audit_forge)
		# The workload guessed the log's path; the file there is masked
		# (/dev/null over it): nothing was forged, and the log verifies
		# with the real start record first.
		[ "$(val_of "$d" found)" = "$d/audit.jsonl" ] && [ "$(val_of "$d" forged)" = 0 ] ||
			{ why="the forgery landed: found=$(val_of "$d" found) forged=$(val_of "$d" forged)"; return 1; }
		head -1 "$d/audit.jsonl" | grep -q '"command":\[".*audit_forge"' ||
			{ why="the real start record is not first"; return 1; }
		audit_verify "$d/audit.jsonl"
		[ "$verify_rc" = 0 ] || { why="audit verify exit $verify_rc: $verify_err"; return 1; }
		return 0 ;;
	audit_forge:unguarded)
		# The guard off: the workload reached the log (here by a guess)
		# and rewrote it; the chain must give it away.
		[ "$(val_of "$d" found)" = "$d/audit.jsonl" ] && ge "$(val_of "$d" forged)" 1 ||
			{ why="not exercised: found=$(val_of "$d" found) forged=$(val_of "$d" forged)"; return 1; }
		head -1 "$d/audit.jsonl" | grep -q '"command":\["benign"\]' ||
			{ why="the forged start record is not first"; return 1; }
		audit_verify "$d/audit.jsonl"
		[ "$verify_rc" = 1 ] && grep -q 'does not follow' <<<"$verify_err" ||
			{ why="audit verify exit $verify_rc on the forged log: $verify_err"; return 1; }
		return 0 ;;
	baseline-audit_forge)
		# Without the chain (main's log format), nothing tells the
		# forgery apart: records numbered 0..n-1 of one sandbox, the
		# forged start first, the supervisor's summary last.
		[ "$(val_of "$d" forged)" -ge 1 ] 2>/dev/null || { why="not exercised"; return 1; }
		python3 - "$d/audit.jsonl" <<'PY' 2>"$d/py-err" ||
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["seq"] for r in recs] == list(range(len(recs)))
assert len({r["sandbox"] for r in recs}) == 1
assert recs[0]["event"] == "start" and recs[0]["command"] == ["benign"]
assert recs[-2]["event"] == "summary"
PY
			{ why="the forgery is visible without the chain: $(tail -1 "$d/py-err")"; return 1; }
		return 0 ;;
	audit_forge_fd)
		# The log is out of reach: nothing found, nothing forged, and
		# it verifies with the real command in its start record.
		[ "$(val_of "$d" found)" = none ] && [ "$(val_of "$d" forged)" = 0 ] &&
			[ "$(val_of "$d" fd_scan)" != "links:1" ] ||
			{ why="the workload reached the log: $(head -1 "$d/out")"; return 1; }
		audit_verify "$d/private/audit.jsonl"
		[ "$verify_rc" = 0 ] && head -1 "$d/private/audit.jsonl" | grep -q '"command":\[".*audit_forge"\]' ||
			{ why="audit verify exit $verify_rc: $verify_err"; return 1; }
		return 0 ;;
	dmabuf)
		[ "$(val_of "$d" alloc)" = NV_OK,NV_OK,NV_OK ] &&
			[ "$(val_of "$d" export)" = NOT_SUPPORTED,NOT_SUPPORTED,NOT_SUPPORTED ] &&
			[ "$(val_of "$d" ctl_export)" = EINVAL ] ||
			{ why="alloc=$(val_of "$d" alloc) export=$(val_of "$d" export) ctl_export=$(val_of "$d" ctl_export)"; return 1; }
		grep -q '"reason":"dma-buf export would keep memory past its charge"' "$d/audit.jsonl" ||
			{ why="no audit record names the refused export"; return 1; } ;;
	share_import)
		local want=status:0x1b # NV_ERR_INSUFFICIENT_PERMISSIONS
		[ "$(val_of "$d" dup)" = "$want,$want,$want,$want" ] &&
			[ "$(grep -o 'alloc=[^ ]*' "$d/donor.out")" = alloc=NV_OK,NV_OK,NV_OK,NV_OK ] &&
			[ "$(grep -o 'share=[^ ]*' "$d/donor.out")" = share=NV_OK,NV_OK,NV_OK,NV_OK ] ||
			{ why="dup=$(val_of "$d" dup) donor: $(tr '\n' ' ' <"$d/donor.out")"; return 1; }
		grep -q '"reason":"import of an object from a client outside the sandbox"' "$d/audit.jsonl" ||
			{ why="no audit record names the refused import"; return 1; } ;;
	dup_cross)
		[ "$(val_of "$d" first)" = NV_OK ] && [ "$(val_of "$d" dup)" = NV_OK ] &&
			[ "$(val_of "$d" second)" = NO_MEMORY ] && [ "$(val_of "$d" third)" = NV_OK ] ||
			{ why="first=$(val_of "$d" first) dup=$(val_of "$d" dup) second=$(val_of "$d" second) third=$(val_of "$d" third), want NV_OK NV_OK NO_MEMORY NV_OK"; return 1; } ;;
	group_dup)
		local ok4=NV_OK,NV_OK,NV_OK,NV_OK,INSUFFICIENT_RESOURCES,INSUFFICIENT_RESOURCES
		[ "$(val_of "$d" keep)" = "$ok4" ] && [ "$(val_of "$d" lone)" = "$ok4" ] ||
			{ why="keep=$(val_of "$d" keep) lone=$(val_of "$d" lone), want $ok4"; return 1; }
		[ "$(val_of "$d" sched)" = NV_OK,NV_OK,INSUFFICIENT_RESOURCES,INSUFFICIENT_RESOURCES ] &&
			[ "$(val_of "$d" fake_sched_max)" = "$ACTIVE_GROUPS" ] ||
			{ why="sched=$(val_of "$d" sched) fake_sched_max=$(val_of "$d" fake_sched_max)"; return 1; } ;;
	compat_i386)
		[ "$(val_of "$d" native)" = 0x0 ] && ge "$peak" $((512 * MIB)) ||
			{ why="native 512 MiB allocation failed: $(val_of "$d" native)"; return 1; } ;;
	dupcache_swap | dupcache_close)
		check_dupcache "$name" "$d" || return 1 ;;
	esac
	return 0
}

check_kill_super() {
	local d=$1 r=$1/report
	[ -s "$r" ] || { why="no report (exit $rc): $(tail -c 300 "$d/err" | tr '\n' ' ')"; return 1; }
	grep -q '^before_kill status=0x0$' "$r" ||
		{ why="allocation before the kill failed: $(grep before_kill "$r")"; return 1; }
	grep -q '^killing ' "$r" || { why="workload never reached the kill"; return 1; }
	# The workload cannot reach its supervisor: gpusandbox ends normally.
	grep -q '^gpusandbox exit 0$' "$d/err" ||
		{ why="the workload reached its supervisor: $(grep 'gpusandbox exit' "$d/err")"; return 1; }
	grep -q '^scan killed=' "$r" || { why="workload never reached the scan: $(tail -1 "$r")"; return 1; }
	# Its parent is the sandbox's init, which ignores the kill; had the
	# parent exited, nothing may have been granted after it.
	if grep -q '^parent_exited=1$' "$r"; then
		if grep -q '^after_kill .* status=0x0 ' "$r"; then
			why="allocation succeeded after the supervisor was killed: $(grep -c '^after_kill .* status=0x0 ' "$r") times"
			return 1
		fi
	fi
	return 0
}
