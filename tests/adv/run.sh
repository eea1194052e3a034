#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/adv/run.sh [NAME...] - adversarial GPU memory quota tests.
#
# Each program under build/tests/adv/ tries to get more than the quota
# (--mem 1g) out of a 16 GiB fake GPU. It runs as
#   with-fake-nvidia --vidmem 16g -- gpusandbox --mem 1g --audit-log A -- PROG
# and is judged from the FAKE DRIVER's final stats (GS_FAKE_STATS_OUT), not
# from the program's word: every gpuN.vidmem_peak and gpuN.vidmem_used must
# be <= 1 GiB. The program's own output is used only for a positive check
# that the run was not vacuous (it got some memory and saw NV_ERR_NO_MEMORY
# refusals, or whatever the test needs). Baseline cases run some programs
# without gpusandbox and require the fake's peak to go OVER 1 GiB: that is
# what shows the quota check, and nothing else, stops them.
#
# Builds nothing: run `make` first. Output: `PASS name` or
# `FAIL name: reason` per test (`SKIP name: reason` when the fake driver
# cannot run here), then `N passed, M failed`. Exit status 1 on any
# failure. Environment: GPUSANDBOX (default build/gpusandbox),
# GPUSANDBOX_SWITCHED (default build/switches/gpusandbox: the test build,
# which alone honours the GPUSANDBOX_TEST_* switches; it runs only the
# cases that set one), WITH_FAKE (default tests/fakedrv/with-fake-nvidia),
# GS_ADV_TIMEOUT (seconds per run, default 120), GS_ADV_KEEP=DIR to keep
# every run's output there.
set -u

cd "$(dirname "$0")/../.." || exit 2

GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
GPUSANDBOX_SWITCHED=${GPUSANDBOX_SWITCHED:-build/switches/gpusandbox}
WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
ADV=build/tests/adv
TIMEOUT=${GS_ADV_TIMEOUT:-120}
FAKE_VIDMEM=16g
QUOTA_ARG=1g
MIB=$((1 << 20))
QUOTA=$((1024 * MIB))
# Channel quotas passed to every sandboxed run (the fake's pool is 64).
CHANNELS=8
CHANNEL_GROUPS=4
ACTIVE_GROUPS=2
# default_caps runs with no channel option, on a fake whose pool is far
# above gpusandbox's default caps (policy/quota.h).
DEFAULT_CHANNELS=640
DEFAULT_CHANNEL_GROUPS=128
DEFAULT_CAPS_POOL=2048
# --clients for the clients test (the quota kind added as a row), and how
# many clients it tries at most (MAX_FILES in clients.c).
CLIENTS=3
CLIENT_FILES=8

. tests/lib/harness.sh
harness_tmpdir "${GS_ADV_KEEP:-}" gs-adv

# name | mode (sandbox|bare) | program and arguments
TESTS=(
	"race_size:size|sandbox|race_size size"
	"race_size:class|sandbox|race_size class"
	"race_size:both|sandbox|race_size both"
	"race_size:ptr|sandbox|race_size ptr"
	"race_size:proc|sandbox|race_size proc"
	"static_raw|sandbox|static_raw"
	"xfer|sandbox|xfer"
	"nvos21|sandbox|nvos21"
	"forged_words|sandbox|forged_words"
	"vidheap|sandbox|vidheap"
	"vidheap_egm|sandbox|vidheap egm"
	"fork_both|sandbox|fork_both"
	"fd_pass|sandbox|fd_pass"
	"dup_free|sandbox|dup_free"
	"close_reopen|sandbox|close_reopen"
	"client_reuse|sandbox|client_reuse"
	"client_refree|sandbox|client_refree"
	"client_flip|sandbox|client_flip"
	"second_client|sandbox|second_client basic"
	"second_client:flip_proc|sandbox|second_client flip proc"
	"second_client:signal|sandbox|second_client signal"
	"second_client:clients|sandbox|second_client clients"
	"client_fdswap:thread|sandbox|client_fdswap thread"
	"client_fdswap:proc|sandbox|client_fdswap proc"
	"client_fdswap:busy|sandbox|client_fdswap busy"
	"io_uring|sandbox|io_uring"
	"odd_size|sandbox|odd_size"
	"compat_i386|sandbox|compat_i386"
	"kill_super|sandbox|kill_super"
	"outlive|sandbox|outlive"
	"broker|sandbox|broker"
	"broker_hide|sandbox|broker"
	"broker_allowed|sandbox|broker"
	"user_nobody|sandbox|static_raw"
	"channels|sandbox|channels"
	"fb_report|sandbox|fb_report"
	"fb_report_other_abi|sandbox|fb_report"
	"grown_tail|sandbox|grown_tail"
	"gpus|sandbox|gpus"
	"gpus_uuid|sandbox|gpus"
	"policy_verdicts|sandbox|policy_verdicts"
	"engines|sandbox|engines"
	"engines:no_list|sandbox|engines"
	"video_sessions|sandbox|video_sessions"
	"video_sessions:one_engine|sandbox|video_sessions"
	"video_sessions:nvenc|sandbox|video_sessions"
	"baseline-video_sessions|sandbox|video_sessions"
	"managed|sandbox|managed"
	"lone_channels|sandbox|lone_channels"
	"managed_default|sandbox|managed"
	"own_driver|sandbox|own_driver"
	"per_gpu|sandbox|per_gpu"
	"per_gpu:ordered|sandbox|per_gpu"
	"audit_hostile|sandbox|audit_hostile"
	"audit_forge|sandbox|audit_forge guess"
	"audit_forge:unguarded|sandbox|audit_forge guess"
	"audit_path_hidden|sandbox|audit_forge"
	"audit_forge_fd|sandbox|audit_forge"
	"audit_reach:dir|sandbox|audit_reach"
	"audit_reach:file|sandbox|audit_reach"
	"audit_reach:fd|sandbox|audit_reach"
	"audit_reach:append|sandbox|audit_reach"
	"handle_zero|sandbox|handle_zero"
	"dmabuf|sandbox|dmabuf"
	"share_import|sandbox|share_import"
	"fd_export:one|sandbox|fd_export one"
	"fd_export:cross|sandbox|fd_export cross"
	"fd_export:hostile|sandbox|fd_export hostile"
	"fd_export:charged|sandbox|fd_export cross"
	"fd_export:charged_over|sandbox|fd_export cross"
	"pid_list|sandbox|pid_list"
	"smi_views|sandbox|smi_views views"
	"smi_views:setters|sandbox|smi_views setters"
	"smi_views:opaque|sandbox|smi_views opaque"
	"smi_views:opaque_no_monitoring|sandbox|smi_views opaque"
	"smi_views:sessions|sandbox|smi_views sessions"
	"smi_views:sessions_video|sandbox|smi_views sessions"
	"group_dup|sandbox|group_dup"
	"dup_cross|sandbox|dup_cross"
	"default_caps|sandbox|default_caps"
	"slow_call|sandbox|slow_call"
	"quick_return|sandbox|quick_return"
	"clients|sandbox|clients"
	"dupcache_swap|sandbox|dupcache swap"
	"dupcache_close|sandbox|dupcache close"
	"uvm_hold:free|sandbox|uvm_hold free"
	"uvm_hold:close|sandbox|uvm_hold close"
	"uvm_hold:race|sandbox|uvm_hold race"
	"uvm_hold:reversed|sandbox|uvm_hold free"
	"uvm_hold:p2p|sandbox|uvm_hold p2p"
	"uvm_hold:free_as_user|sandbox|uvm_hold free"
	"uvm_hold:race_as_user|sandbox|uvm_hold race"
	"uvm_share|sandbox|uvm_share"
	"uvm_share:replace|sandbox|uvm_share replace"
	"uvm_share:memory|sandbox|uvm_share memory"
	"uvm_share:as_user|sandbox|uvm_share"
	"uvm_share:replace_as_user|sandbox|uvm_share replace"
	"uvm_share:memory_as_user|sandbox|uvm_share memory"
	"token_neighbour|sandbox|token_neighbour"
	"continue_swap|sandbox|continue_swap"
	"continue_swap:size|sandbox|continue_swap size"
	"continue_swap:proc|sandbox|continue_swap proc"
	"uvm_hold:handoff|sandbox|uvm_hold handoff"
	"uvm_hold:handoff_free|sandbox|uvm_hold handoff_free"
	"uvm_ctlfd:other|sandbox|uvm_ctlfd other"
	"uvm_ctlfd:pipe|sandbox|uvm_ctlfd pipe"
	"uvm_ctlfd:fuse|sandbox|uvm_ctlfd fuse"
	"uvm_ctlfd:race|sandbox|uvm_ctlfd race"
	"uvm_ctlfd:race_dup|sandbox|uvm_ctlfd race"
	"uvm_channel:free|sandbox|uvm_channel free"
	"uvm_channel:lone|sandbox|uvm_channel lone"
	"uvm_channel:flow|sandbox|uvm_channel flow"
	"uvm_channel:race|sandbox|uvm_channel race"
	"uvm_channel:swap|sandbox|uvm_channel swap"
	"uvm_channel:swap_wide|sandbox|uvm_channel swap"
	"uvm_channel:stall|sandbox|uvm_channel stall"
	"uvm_channel:overlap|sandbox|uvm_channel overlap"
	"uvm_channel:clone|sandbox|uvm_channel clone"
	"uvm_channel:clone_held|sandbox|uvm_channel clone"
	"uvm_channel:free_as_user|sandbox|uvm_channel free"
	"uvm_channel:lone_as_user|sandbox|uvm_channel lone"
	"uvm_channel:flow_as_user|sandbox|uvm_channel flow"
	"uvm_channel:race_as_user|sandbox|uvm_channel race"
	"uvm_channel:stall_as_user|sandbox|uvm_channel stall"
	"uvm_channel:overlap_as_user|sandbox|uvm_channel overlap"
	"uvm_channel:swap_as_user|sandbox|uvm_channel swap"
	"sem_surf|sandbox|sem_surf"
	"sem_surf:sysmem|sandbox|sem_surf sysmem"
	"baseline-race_size:size|bare|race_size size"
	"baseline-race_size:class|bare|race_size class"
	"baseline-race_size:ptr|bare|race_size ptr"
	"baseline-race_size:proc|bare|race_size proc"
	"baseline-static_raw|bare|static_raw"
	"baseline-channels|bare|channels"
	"baseline-fb_report|bare|fb_report"
	"baseline-fb_report_other_abi|bare|fb_report"
	"baseline-grown_tail|bare|grown_tail"
	"baseline-gpus|bare|gpus"
	"baseline-policy_verdicts|bare|policy_verdicts"
	"baseline-engines|bare|engines"
	"baseline-lone_channels|bare|lone_channels"
	"baseline-own_driver|bare|own_driver"
	"baseline-outlive|bare|outlive"
	"baseline-broker|bare|broker"
	"baseline-vidheap_egm|bare|vidheap egm"
	"baseline-audit_hostile|bare|audit_hostile"
	"baseline-audit_forge|sandbox|audit_forge guess"
	"baseline-handle_zero|bare|handle_zero"
	"baseline-dmabuf|bare|dmabuf"
	"baseline-share_import|bare|share_import"
	"baseline-fd_export:one|sandbox|fd_export one"
	"baseline-fd_export:cross|sandbox|fd_export cross"
	"baseline-fd_export:native|bare|fd_export one"
	"baseline-fd_export:hostile|bare|fd_export hostile"
	"baseline-pid_list|bare|pid_list"
	"baseline-smi_views:setters|bare|smi_views setters"
	"baseline-smi_views:sessions|bare|smi_views sessions"
	"baseline-group_dup|bare|group_dup"
	"baseline-dup_cross|bare|dup_cross"
	"baseline-default_caps|bare|default_caps"
	"baseline-slow_call|bare|slow_call"
	"baseline-quick_return|sandbox|quick_return"
	"baseline-clients|bare|clients"
	"baseline-io_uring|bare|io_uring"
	"baseline-uvm_hold:free|bare|uvm_hold free"
	"baseline-uvm_hold:close|bare|uvm_hold close"
	"baseline-uvm_hold:race|bare|uvm_hold race"
	"baseline-uvm_hold:p2p|bare|uvm_hold p2p"
	"baseline-uvm_share|bare|uvm_share"
	"baseline-client_refree|sandbox|client_refree"
	"baseline-uvm_share:replace|sandbox|uvm_share replace"
	"exec_again|sandbox|exec_again"
	"baseline-exec_again:no_reopen|sandbox|exec_again"
	"baseline-uvm_share:memory|sandbox|uvm_share memory"
	"baseline-token_neighbour|bare|token_neighbour"
	"baseline-token_neighbour:other_uid|bare|token_neighbour"
	"baseline-token_neighbour:dup_mode|bare|token_neighbour"
	"baseline-continue_swap|sandbox|continue_swap"
	"baseline-continue_swap:untracked|sandbox|continue_swap proc"
	"baseline-uvm_hold:handoff|bare|uvm_hold handoff"
	"baseline-uvm_hold:handoff_free|bare|uvm_hold handoff_free"
	"baseline-uvm_ctlfd:other|bare|uvm_ctlfd other"
	"baseline-uvm_ctlfd:pipe|bare|uvm_ctlfd pipe"
	"baseline-uvm_channel:free|bare|uvm_channel free"
	"baseline-uvm_channel:lone|bare|uvm_channel lone"
	"baseline-uvm_channel:swap|sandbox|uvm_channel swap"
	"baseline-uvm_channel:stall|sandbox|uvm_channel stall"
	"baseline-uvm_channel:overlap|sandbox|uvm_channel overlap"
	"baseline-uvm_channel:clone|sandbox|uvm_channel clone"
	"baseline-uvm_ctlfd:fuse|sandbox|uvm_ctlfd fuse"
	"baseline-uvm_ctlfd:race|sandbox|uvm_ctlfd race"
	"baseline-uvm_ctlfd:park|sandbox|uvm_ctlfd race"
	"baseline-second_client:signal|sandbox|second_client signal"
	"baseline-second_client:flip_proc|sandbox|second_client flip proc"
	"baseline-client_fdswap:thread|sandbox|client_fdswap thread 24000"
	"baseline-client_fdswap:proc|sandbox|client_fdswap proc 24000"
	"baseline-client_fdswap:untracked|sandbox|client_fdswap proc 24000"
	"baseline-dupcache_swap|sandbox|dupcache swap"
	"baseline-dupcache_close|sandbox|dupcache close"
	"baseline-sem_surf|sandbox|sem_surf"
	"baseline-audit_reach|sandbox|audit_reach"
)
# slow_call: REGISTER_VIDMEM answered this late (ms); the quick process
# makes SLOW_QUICK_PAIRS pairs meanwhile, two ioctls each.
SLOW_CONTROL=503c0104:1000
SLOW_QUICK_PAIRS=20
# audit_hostile's fake fails video memory allocations with an errno the C
# library has no name for.
UNNAMED_ERRNO=200
# The engines and video_sessions tests run under the shipped example
# policy, whose caps are 2 decoder sessions and 1 JPEG session. A session
# holds up to one object per engine instance of the GPU (the fake's
# gpu0.nvdec_engines, 7 by default as on an H200; exec_engines.c).
ENGINE_POLICY=policy/video-transcode.policy
DECODERS=2
JPEG_SESSIONS=1
# An NVJPG session (an nvJPEG hardware decoder) holds two objects per
# engine, from two clients (exec_engines.c, session_shape).
JPEG_CONTEXTS=2
# video_sessions makes a channel per engine instance, as libnvcuvid does:
# three sessions' worth, with room.
VIDEO_CHANNELS=32
VIDEO_CHANNEL_GROUPS=8
# video_sessions:nvenc's GPU (its NVJPG and OFA as the fake's default).
NVENC_GPU_NVDEC=4
NVENC_GPU_NVENC=3
ENCODER_SESSIONS=1
# uvm_ctlfd fuse and race: the server answers the supervisor's first
# request late (OWNFS_STALL_MS in uvm_ctlfd.c) and says in its stats when
# it did; a call that was in flight across that answer ("held", counted by
# uvm_ctlfd itself) waited for it. No duration is judged.
# uvm_channel swap's baseline and swap_wide: the continue this long after
# the look, so that the swapper flips the number in between every round
# (one time slice of a loaded machine many times over).
SWAP_LOOK_DELAY_US=50000
# uvm_ctlfd race's and park's baselines: the dup of rmCtrlFd comes this
# long after the look at the caller's fd table (GPUSANDBOX_TEST_LOOK_DELAY_US),
# so that the flipper wins many of the maps (2000, as in the case itself);
# without it 3 to 20 of 10000 won on a quiet machine, none on a loaded one.
OWNFS_LOOK_DELAY_US=5000
# client_fdswap's baselines: the continue of a client allocation comes this
# long after the look, so that the swapper's dup2 lands in between; without
# it the thread baseline won 0 of 24000 once in a loaded CI run
# (2026-12-02; 1 within 9-73 attempts on a quiet machine).
FDSWAP_LOOK_DELAY_US=5000
# --uvm-map as-user's cases: the workload's uid, which no other process of
# the test machine has.
AS_USER_UID=47011
# token_neighbour:other_uid's taker.
OTHER_UID=47012
# per_gpu: GPU 1's own quota in its policy.
PER_GPU_QUOTA_ARG=256m
PER_GPU_QUOTA=$((256 * MIB))



# ---- environment probe ----------------------------------------------------
harness_probe_or_skip "$@"

# ---- helpers over one run's files (dir=$tmp/NAME) ---------------------------
# Last `key=value` token the program printed (word-bounded key).
val_of() { grep -oE "(^|[ (])$2=[^ )]*" "$1/out" 2>/dev/null | tail -1 | sed 's/^.*=//'; }
summary_of() {
	# prints "ok nomem other" from the SUMMARY line
	sed -n 's/^SUMMARY ok=\([0-9]*\) nomem=\([0-9]*\) other=\([0-9]*\)$/\1 \2 \3/p' \
		"$1/out" | tail -1
}
mib() { echo "$(($1 / MIB)) MiB"; }

# Every GPU's peak and final use must be within the quota. Sets $peak to
# gpu0's peak. Returns 1 (with $why) on violation.
check_driver_within() {
	local d=$1 k v ch_cap=$CHANNELS grp_cap=$CHANNEL_GROUPS
	if [ "$prog" = default_caps ]; then
		ch_cap=$DEFAULT_CHANNELS
		grp_cap=$DEFAULT_CHANNEL_GROUPS
	fi
	if [ "$prog" = video_sessions ]; then
		ch_cap=$VIDEO_CHANNELS
		grp_cap=$VIDEO_CHANNEL_GROUPS
	fi
	peak=$(stat_of "$d" gpu0.vidmem_peak)
	if [ ! -s "$d/stats" ] || [ -z "$peak" ]; then
		why="no driver stats (run exit $rc): $(tail -c 300 "$d/err" | tr '\n' ' ')"
		return 1
	fi
	for k in $(awk '$1 ~ /^gpu[0-9]+\.vidmem_(peak|used)$/ { print $1 }' "$d/stats"); do
		v=$(stat_of "$d" "$k")
		if [ "$v" -gt "$QUOTA" ]; then
			why="driver $k = $(mib "$v") > quota $(mib "$QUOTA")"
			return 1
		fi
	done
	v=$(awk '$1 ~ /^gpu[0-9]+\.channels_peak$/ { s += $2 } END { print s + 0 }' "$d/stats")
	[ "$v" -le "$ch_cap" ] || { why="driver channels_peak $v > channel cap $ch_cap"; return 1; }
	v=$(awk '$1 ~ /^gpu[0-9]+\.channel_groups_peak$/ { s += $2 } END { print s + 0 }' "$d/stats")
	[ "$v" -le "$grp_cap" ] ||
		{ why="driver channel_groups_peak $v > channel group cap $grp_cap"; return 1; }
	return 0
}

# sandbox_command: sets sb to the command that runs the supervisor: with
# the test switches a case put in sb_env (env GPUSANDBOX_TEST_...=...),
# the test build, since the release build reads none of them
# (include/test_switch.h); otherwise $GPUSANDBOX, the build under test.
sandbox_command() {
	if [ ${#sb_env[@]} -gt 0 ]; then
		sb=("${sb_env[@]}" "$GPUSANDBOX_SWITCHED")
	else
		sb=("$GPUSANDBOX")
	fi
}

# ---- one run -----------------------------------------------------------------
run_case() {
	local name=$1 mode=$2 d
	shift 2
	d="$tmp/${name//:/_}"
	harness_rm_tree "$d"
	mkdir -p "$d"
	local prog=$1
	shift
	# The visibility test runs on a two-GPU fake and shows only GPU 1.
	local fake_gpus=1 sb_gpus=() fake_extra=()
	# EGM requests on a driver without the bit (535, 595): video memory.
	[ "${name#baseline-}" = vidheap_egm ] && fake_extra=(--no-egm)
	[ "$prog" = audit_hostile ] && fake_extra=(--alloc-errno "$UNNAMED_ERRNO")
	# handle_zero's fake names objects 0 when it picks their handle.
	[ "$prog" = handle_zero ] && fake_extra=(--handle-zero)
	# slow_call's fake answers REGISTER_VIDMEM late, serving the rest.
	# Its slow call is on CUDA's P2P object, which the default
	# (p2p-register auto, none without the p2p group) does not make.
	if [ "$prog" = slow_call ]; then
		fake_extra=(--slow-control "$SLOW_CONTROL")
		sb_gpus=(--p2p-register perform)
	fi
	# A 535 driver (FB_GET_INFO_V2 is 436 bytes there) decoded with the 580
	# tables (1028): the supervisor must refuse, not pass the call with
	# its memory report skipped.
	# A 590 driver (NV50_P2P: 88 bytes) decoded with the 580 tables (72),
	# with the p2p group allowed: the driver reads 16 bytes gpusandbox
	# never copied (grown_tail.c).
	if [ "$prog" = grown_tail ]; then
		fake_extra=(--driver-version 590.48.01)
		printf 'allow = compute, memory, monitoring, p2p\n' >"$d/p2p.policy"
		sb_gpus=(--driver-abi 580 --policy "$d/p2p.policy")
	fi
	if [ "${name#baseline-}" = fb_report_other_abi ]; then
		fake_extra=(--driver-version 535.288.01)
		sb_gpus=(--driver-abi 580)
	fi
	if [ "$prog" = engines ] || [ "$prog" = lone_channels ] || [ "$prog" = video_sessions ]; then
		sb_gpus=(--policy "$ENGINE_POLICY")
	fi
	# A driver that does not answer GET_ENGINES_V2: every engine object
	# is a session of its own (fail closed). A GPU of one engine each:
	# a session is one object.
	[ "$name" = engines:no_list ] && fake_extra=(--engines none)
	[ "$name" = video_sessions:one_engine ] && fake_extra=(--engines nvdec=1,nvjpg=1)
	# A GPU with NVENC engines (an H200 has none): 3, as Ada's AD102.
	[ "$name" = video_sessions:nvenc ] && fake_extra=(--engines nvdec=$NVENC_GPU_NVDEC,nvenc=$NVENC_GPU_NVENC)
	# smi_views: each call on stderr with its verdict (performed: allow).
	[ "$prog" = smi_views ] && sb_gpus=(--trace)
	# ...and the closed-firmware commands named by a policy file.
	if [ "$name" = smi_views:opaque_no_monitoring ]; then
		printf 'allow = compute, memory\n' >"$d/opaque.policy"
		sb_gpus=(--trace --policy "$d/opaque.policy")
	fi
	[ "$name" = managed ] && sb_gpus=(--managed deny)
	[ "$prog" = clients ] && sb_gpus=(--clients "$CLIENTS")
	[ "$name" = second_client:clients ] && sb_gpus=(--clients "$CLIENTS")
	# Run as nobody: the fake's files (allow_other, 0666) must stay usable.
	[ "$name" = user_nobody ] && sb_gpus=(--user 65534 --group 65534)
	# --uvm-map as-user: the maps made with the workload's uid, a uid of
	# its own (AS_USER_UID), its memory shared by token (own_rm.h).
	case "$name" in *_as_user | *:as_user) sb_gpus=(--user "$AS_USER_UID" --group "$AS_USER_UID" --uvm-map as-user) ;; esac
	if [ "$prog" = gpus ]; then
		fake_gpus=2
		sb_gpus=(--gpus 1)
		# The same GPU by the UUID the fake gives it.
		[ "$name" = gpus_uuid ] && sb_gpus=(--gpus GPU-00000000-0000-0000-0000-000000000001)
	fi
	# per_gpu: a policy with its own quota for GPU 1, on two GPUs whose
	# device instances are not their minors (unless :ordered).
	local fake_args=() mem_args=(--mem "$QUOTA_ARG")
	local chan_args=(--channels "$CHANNELS" --channel-groups "$CHANNEL_GROUPS"
		--active-channel-groups "$ACTIVE_GROUPS")
	if [ "$prog" = default_caps ]; then
		chan_args=()
		fake_extra=(--channels "$DEFAULT_CAPS_POOL")
	fi
	[ "$prog" = video_sessions ] &&
		chan_args=(--channels "$VIDEO_CHANNELS" --channel-groups "$VIDEO_CHANNEL_GROUPS")
	if [ "$prog" = per_gpu ]; then
		fake_gpus=2
		mem_args=()
		printf 'mem = %s\ngpu.1.mem = %s\n' "$QUOTA_ARG" "$PER_GPU_QUOTA_ARG" >"$d/per_gpu.policy"
		sb_gpus=(--policy "$d/per_gpu.policy")
		[ "$name" = per_gpu ] && fake_args=(--reverse-instances)
	fi
	# Two GPUs attached out of minor order: the map's dup must hang under a
	# device of the memory's own GPU (own_rm.h).
	if [ "$name" = uvm_hold:reversed ]; then
		fake_gpus=2
		fake_args=(--reverse-instances)
	fi
	# own_driver talks to a look-alike driver mounted beside the fake
	# (with-lookalike), which gpusandbox must not take for the driver.
	local wrap=()
	# client_fdswap's baseline: gpusandbox with the fd-table quiesce of
	# continued client allocations turned off, in the supervisor's own
	# environment (GPUSANDBOX_TEST_NO_QUIESCE, read at start).
	local sb_env=() sb
	[ "${name%:*}" = baseline-client_fdswap ] &&
		sb_env=(env GPUSANDBOX_TEST_NO_QUIESCE=1 GPUSANDBOX_TEST_LOOK_DELAY_US=$FDSWAP_LOOK_DELAY_US)
	# ...and the quiesce on, but the clone that makes the swapper process
	# not trapped: the supervisor takes no fd table to be shared beyond a
	# thread group, and stops the caller's threads alone.
	[ "$name" = baseline-client_fdswap:untracked ] &&
		sb_env=(env GPUSANDBOX_TEST_NO_CLONE_TRACK=1 GPUSANDBOX_TEST_LOOK_DELAY_US=$FDSWAP_LOOK_DELAY_US)
	# second_client's baseline: a second client continued from the
	# workload's own struct, as a first one is, instead of made by the
	# caller from the supervisor's page (exec_alloc.c inject_client).
	# Both with the look's window widened (GPUSANDBOX_TEST_LOOK_DELAY_US,
	# after the look at the file, before the continue or the injection):
	# without it the flipping process did not win once in 422 continued
	# second clients on a loaded machine.
	[ "${name%:*}" = baseline-second_client ] &&
		sb_env=(env GPUSANDBOX_TEST_SECOND_CLIENT_CONTINUE=1 GPUSANDBOX_TEST_LOOK_DELAY_US=$SWAP_LOOK_DELAY_US)
	case "$name" in second_client:flip_*) sb_env=(env GPUSANDBOX_TEST_LOOK_DELAY_US=$SWAP_LOOK_DELAY_US) ;; esac
	# second_client signal: the injected ioctl comes 20 ms after the page
	# is written, so that the signal sent once the caller is seen stopped
	# lands in the injection.
	[ "$name" = second_client:signal ] && sb_env=(env GPUSANDBOX_TEST_INJECT_DELAY_US=20000)
	# Its baseline: the signals met during the injection not sent again.
	[ "$name" = baseline-second_client:signal ] &&
		sb_env=(env GPUSANDBOX_TEST_INJECT_DELAY_US=20000 GPUSANDBOX_TEST_INJECT_DROP_SIGNALS=1)
	# continue_swap's baseline: the same hold off, for the calls continued
	# on a file that is not the driver's.
	[ "$name" = baseline-continue_swap ] && sb_env=(env GPUSANDBOX_TEST_NO_QUIESCE=1)
	# ...and its untracked one: the quiesce on, but the CLONE_FILES clone
	# that makes the swapper process not followed, so that the caller,
	# alone in its thread group, is taken for alone with its table: its
	# look first (issue #31, continue_other_file) is all there is.
	[ "$name" = baseline-continue_swap:untracked ] && sb_env=(env GPUSANDBOX_TEST_NO_CLONE_TRACK=1)
	# uvm_channel swap's: a registration then lands in whichever UVM file
	# the number names when the kernel runs it.
	# The window between the supervisor's look at the number and the
	# kernel's own lookup after the continue is microseconds wide: on a
	# loaded machine the swapper did not run in it once in 48 rounds. So
	# the continue comes SWAP_LOOK_DELAY_US after the look
	# (GPUSANDBOX_TEST_LOOK_DELAY_US), in the baseline and in
	# swap_wide, the same attack against the quiesce with that window.
	[ "$name" = baseline-uvm_channel:swap ] &&
		sb_env=(env GPUSANDBOX_TEST_NO_QUIESCE=1 GPUSANDBOX_TEST_LOOK_DELAY_US=$SWAP_LOOK_DELAY_US)
	[ "$name" = uvm_channel:swap_wide ] && sb_env=(env GPUSANDBOX_TEST_LOOK_DELAY_US=$SWAP_LOOK_DELAY_US)
	# uvm_channel stall: the fake answers the first registration late
	# (tests/adv/uvm_channel.c, STALL_LATE_MS); its baseline unregisters
	# without waiting for a registration in flight.
	case "${name#baseline-}" in uvm_channel:stall | uvm_channel:stall_as_user) fake_extra=(--register-late-ms 7000) ;; esac
	[ "$name" = baseline-uvm_channel:stall ] && sb_env=(env GPUSANDBOX_TEST_SETTLE_IN_FLIGHT=1)
	# uvm_channel overlap and clone: the registration answered late
	# (tests/adv/uvm_channel.c, LATE_MS). overlap's baseline: the worker
	# waits, under the session lock, for the continued caller to leave
	# (before the hand-off); clone's: a sharer's clone is not held back.
	case "${name#baseline-}" in uvm_channel:overlap | uvm_channel:overlap_as_user | uvm_channel:clone)
		fake_extra=(--register-late-ms 1000) ;;
	esac
	# clone_held: the registration outlasts the clone's wait (7 s), which
	# must then fail, recorded.
	[ "$name" = uvm_channel:clone_held ] && fake_extra=(--register-late-ms 9000)
	[ "$name" = baseline-uvm_channel:overlap ] && sb_env=(env GPUSANDBOX_TEST_QUIESCE_WAIT=1)
	# quick_return: the interrupt of a continued caller 50 ms late, so the
	# caller traps again first; its baseline: that new trap does not let
	# the held threads go (tests/adv/quick_return.c).
	[ "$name" = quick_return ] && sb_env=(env GPUSANDBOX_TEST_QUIESCE_INTERRUPT_DELAY_US=50000)
	[ "$name" = baseline-quick_return ] &&
		sb_env=(env GPUSANDBOX_TEST_QUIESCE_INTERRUPT_DELAY_US=50000 GPUSANDBOX_TEST_NO_CALLER_BACK=1)
	[ "$name" = baseline-uvm_channel:clone ] && sb_env=(env GPUSANDBOX_TEST_CLONE_NO_WAIT=1)
	# dupcache's baselines: a kept dup used without kcmp, or never closed
	# for being idle (tests/adv/dupcache_checks.sh).
	[ "$name" = baseline-dupcache_swap ] && sb_env=(env GPUSANDBOX_TEST_DUPCACHE_NO_KCMP=1)
	[ "$name" = baseline-dupcache_close ] && sb_env=(env GPUSANDBOX_TEST_DUPCACHE_NO_EXPIRY=1)
	# client_refree's baseline: RM_FREE not trapped (issue #31's study,
	# 4a), so the supervisor does not see the client's free.
	[ "$name" = baseline-client_refree ] && sb_env=(env GPUSANDBOX_TEST_FREE_UNTRAPPED=1)
	# uvm_share:replace's baseline: the client share, once replaced by
	# the workload, is not made again (exec_uvm.c dup_for_map).
	case "$name" in baseline-uvm_share:replace | baseline-uvm_share:memory) sb_env=(env GPUSANDBOX_TEST_NO_RESHARE=1) ;; esac
	[ "$name" = baseline-exec_again:no_reopen ] && sb_env=(env GPUSANDBOX_TEST_MM_KEEP_NO_REOPEN=1)
	# sem_surf: a GPU with 32-bit semaphores (two memory objects per
	# surface) on a driver without the limit of surfaces to sysmem
	# (tests/fakedrv/fake_semsurf.c); sem_surf:sysmem runs on the
	# faithful fake. Its baseline: the driver's references not charged.
	if [ "$prog" = sem_surf ] && [ "${1:-}" != sysmem ]; then
		fake_extra=(--semaphores-32bit --semsurf-any-memory)
	fi
	[ "$name" = baseline-sem_surf ] && sb_env=(env GPUSANDBOX_TEST_NO_KEEP=1)
	# Every video engine object a session of its own, as before issue #29.
	[ "$name" = baseline-video_sessions ] && sb_env=(env GPUSANDBOX_TEST_ENGINE_OBJECTS=1)
	# dupcache close counts the closes of the fake's descriptors.
	[ "$prog" = dupcache ] && fake_extra=(--count-closes)
	# audit_forge:unguarded and baseline-audit_forge: the log neither
	# masked nor append-only (audit_guard.h), so that the forgery lands and
	# what the chain tells of it can be checked.
	case "$name" in audit_forge:unguarded | baseline-audit_forge) sb_env=(env GPUSANDBOX_TEST_NO_AUDIT_GUARD=1) ;; esac
	# audit_forge guess: the workload guesses where its log is.
	[ "$prog" = audit_forge ] && [ "${1:-}" = guess ] && set -- "$d/audit.jsonl"
	if [ "$prog" = own_driver ]; then
		wrap=(tests/adv/with-lookalike "$d/lookalike" --)
		set -- "$d/lookalike/nvidiactl"
	fi
	if [ "$mode" = sandbox ]; then
		sandbox_command
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
			"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" --gpus "$fake_gpus" ${fake_args[@]+"${fake_args[@]}"} \
			${fake_extra[@]+"${fake_extra[@]}"} -- ${wrap[@]+"${wrap[@]}"} \
			"${sb[@]}" ${mem_args[@]+"${mem_args[@]}"} ${chan_args[@]+"${chan_args[@]}"} \
			${sb_gpus[@]+"${sb_gpus[@]}"} --audit-log "$d/audit.jsonl" -- \
			"$ADV/$prog" "$@" >"$d/out" 2>"$d/err"
	else
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
			"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" --gpus "$fake_gpus" ${fake_extra[@]+"${fake_extra[@]}"} \
			-- ${wrap[@]+"${wrap[@]}"} \
			"$ADV/$prog" "$@" >"$d/out" 2>"$d/err"
	fi
	rc=$?
	dir=$d
}

# kill_super needs the wrapper shell to outlive gpusandbox: with-fake-nvidia
# copies the stats (and tears the fake down) when its command exits, and the
# workload's attempts come after gpusandbox is dead. The shell waits for the
# report's END line (bounded: a workload killed with its supervisor never
# writes it).
run_kill_super() {
	local d="$tmp/kill_super"
	harness_rm_tree "$d"
	mkdir -p "$d"
	# shellcheck disable=SC2016 # expanded by the inner shell
	GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
		"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
			"$1" --mem "$2" --audit-log "$3" -- "$4" "$5"
			echo "gpusandbox exit $?" >&2
			i=0
			while [ $i -lt 50 ] && ! grep -q "^END" "$5" 2>/dev/null; do
				sleep 0.1
				i=$((i + 1))
			done
			exit 0' sh "$GPUSANDBOX" "$QUOTA_ARG" "$d/audit.jsonl" "$ADV/kill_super" \
		"$d/report" >"$d/out" 2>"$d/err"
	rc=$?
	dir=$d
}

# outlive: the harness kills gpusandbox from outside once the survivor at
# the end of the workload's process chain is ready, marks the report with
# KILLED, and gives the survivor time to install its own listener and
# allocate. Bare (the baseline) the program runs alone.
run_outlive() {
	local mode=$1 d="$tmp/$2"
	harness_rm_tree "$d"
	mkdir -p "$d"
	if [ "$mode" = bare ]; then
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- \
			"$ADV/outlive" "$d/report" >"$d/out" 2>"$d/err"
	else
		# shellcheck disable=SC2016 # expanded by the inner shell
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
			"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
				"$1" --mem "$2" --audit-log "$3" -- "$4" "$5" &
				sup=$!
				i=0
				while [ $i -lt 100 ] && ! grep -q "^listener try=" "$5" 2>/dev/null; do
					sleep 0.1
					i=$((i + 1))
				done
				kill -KILL "$sup"
				wait "$sup"
				echo KILLED >>"$5"
				sleep 3
				exit 0' sh "$GPUSANDBOX" "$QUOTA_ARG" "$d/audit.jsonl" "$ADV/outlive" \
			"$d/report" >"$d/out" 2>"$d/err"
	fi
	rc=$?
	dir=$d
}

check_outlive() {
	local d=$1 r=$1/report after
	[ -s "$r" ] || { why="no report (exit $rc): $(tail -c 300 "$d/err" | tr '\n' ' ')"; return 1; }
	grep -q '^before status=0x0$' "$r" || { why="first allocation failed: $(head -1 "$r")"; return 1; }
	grep -q '^listener try=0 errno=EBUSY$' "$r" ||
		{ why="the survivor never tried while supervised: $(tr '\n' ' ' <"$r")"; return 1; }
	grep -q '^KILLED$' "$r" || { why="the harness did not kill gpusandbox"; return 1; }
	# The kernel ended every task of the sandbox with its init.
	after=$(sed -n '/^KILLED$/,$p' "$r" | sed 1d)
	[ -z "$after" ] || { why="a task outlived the supervisor: $(echo "$after" | tr '\n' ' ')"; return 1; }
	return 0
}

# broker: a stand-in MPS server listens in its pipe directory (named by
# CUDA_MPS_PIPE_DIRECTORY, as MPS's is) and allocates for whoever asks.
# The client asks it for 3 GiB, under gpusandbox or (baseline) without.
run_broker() {
	local mode=$1 d="$tmp/$2" client=()
	harness_rm_tree "$d"
	mkdir -p "$d/mps"
	[ "$mode" = sandbox ] && client=("$GPUSANDBOX" --mem "$QUOTA_ARG" --audit-log "$d/audit.jsonl")
	# --allow-mps leaves the pipe directory open; --hide closes it again.
	[ "$2" = broker_allowed ] && client+=(--allow-mps)
	[ "$2" = broker_hide ] && client+=(--allow-mps --hide "$d/mps")
	[ "$mode" = sandbox ] && client+=(--)
	# shellcheck disable=SC2016 # expanded by the inner shell
	GS_FAKE_STATS_OUT="$d/stats" CUDA_MPS_PIPE_DIRECTORY="$d/mps" timeout "$TIMEOUT" \
		"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
			dir=$1 broker=$2
			shift 2
			"$broker" serve "$dir" &
			b=$!
			i=0
			while [ $i -lt 100 ] && [ ! -e "$dir/ready" ]; do
				sleep 0.05
				i=$((i + 1))
			done
			"$@"
			rc=$?
			kill "$b"
			wait "$b"
			exit $rc' sh "$d/mps" "$ADV/broker" ${client[@]+"${client[@]}"} "$ADV/broker" ask "$d/mps" \
		>"$d/out" 2>"$d/err"
	rc=$?
	dir=$d
}

# audit_forge_fd: the log goes to --audit-fd 3, a file the harness (root,
# with capabilities) opens in a directory only nobody may enter; the
# workload runs as uid 0 without capabilities and cannot. sh execs
# gpusandbox so that no other process holds the descriptor.
run_audit_fd() {
	local d="$tmp/audit_forge_fd"
	harness_rm_tree "$d"
	mkdir -p "$d"
	install -d -o nobody -m 0700 "$d/private"
	# shellcheck disable=SC2016 # expanded by the inner shell
	GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" \
		"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c 'exec "$1" --mem "$2" --audit-fd 3 -- "$3" 3>>"$4"' \
		sh "$GPUSANDBOX" "$QUOTA_ARG" "$ADV/audit_forge" "$d/private/audit.jsonl" >"$d/out" 2>"$d/err"
	rc=$?
	dir=$d
}

# share_import: a donor and a taker, each in its own sandbox (--mem 1g
# each) or (baseline) without one, pass memory with RM_SHARE and
# RM_DUP_OBJECT. The taker's output is the run's out; the donor's is
# donor.out.
run_share() {
	local mode=$1 d="$tmp/$2" gs=()
	harness_rm_tree "$d"
	mkdir -p "$d/x"
	[ "$mode" = sandbox ] && gs=("$GPUSANDBOX" --mem "$QUOTA_ARG")
	# shellcheck disable=SC2016 # expanded by the inner shell
	GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
			d=$1 prog=$2
			shift 2
			if [ $# -gt 0 ]; then
				"$@" --audit-log "$d/donor.jsonl" -- "$prog" donor "$d/x" >"$d/donor.out" 2>&1 &
				"$@" --audit-log "$d/audit.jsonl" -- "$prog" take "$d/x"
			else
				"$prog" donor "$d/x" >"$d/donor.out" 2>&1 &
				"$prog" take "$d/x"
			fi
			rc=$?
			wait
			exit $rc' sh "$d" "$ADV/share_import" ${gs[@]+"${gs[@]}"} >"$d/out" 2>"$d/err"
	rc=$?
	dir=$d
}

# token_neighbour (token_neighbour.c): the owner under --uvm-map as-user as
# AS_USER_UID maps its memory (the supervisor shares its client by token),
# then a taker dups it: token_neighbour, from a second sandbox of the same
# uid (refused: a client outside its sandbox); the baselines, outside
# every sandbox: as the owner's uid (the driver lets it in: why the uid
# must be the sandbox's alone), :other_uid as another (the driver refuses
# it), :dup_mode as the owner's uid with the owner's sandbox mapping by
# dup (no token share, the driver refuses it). The program and its
# handshake directory live where both uids reach them.
run_token() {
	local name=$1 d="$tmp/${1//:/_}" pub as_owner=(--user "$AS_USER_UID" --group "$AS_USER_UID")
	local taker=(setpriv --reuid "$AS_USER_UID" --regid "$AS_USER_UID" --clear-groups)
	harness_rm_tree "$d"
	mkdir -p "$d"
	pub=$(mktemp -d /tmp/gs-token.XXXXXX) || return
	chmod 0711 "$pub"
	install -m 0755 "$ADV/token_neighbour" "$pub/token_neighbour"
	install -d -m 0777 "$pub/x"
	[ "$name" = baseline-token_neighbour:dup_mode ] || as_owner+=(--uvm-map as-user)
	[ "$name" = baseline-token_neighbour:other_uid ] &&
		taker=(setpriv --reuid "$OTHER_UID" --regid "$OTHER_UID" --clear-groups)
	[ "$name" = token_neighbour ] &&
		taker=("$GPUSANDBOX" --user "$AS_USER_UID" --group "$AS_USER_UID" --uvm-map as-user
		       --audit-log "$d/audit.jsonl" --)
	{
		printf '%q ' "$GPUSANDBOX" "${as_owner[@]}" --audit-log "$d/owner.jsonl" -- "$pub/token_neighbour" owner "$pub/x"
		printf '>%q 2>&1 &\n' "$d/owner.out"
		printf '%q ' "${taker[@]}" "$pub/token_neighbour" take "$pub/x"
		printf '\nrc=$?\nwait\nexit $rc\n'
	} >"$d/run.sh"
	GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- bash "$d/run.sh" \
		>"$d/out" 2>"$d/err"
	rc=$?
	rm -rf "$pub"
	dir=$d
}

# fd_export: memory shared through an export file (fd_export.c). one: both
# processes in one sandbox (--mem 1g); cross: exporter and importer each in
# its own (--mem 1g each). Baselines, in the supervisor's environment:
# one with exports that pin nothing (GPUSANDBOX_TEST_NO_EXPORT_PIN), cross
# with the importer's sandbox letting a foreign import through uncharged
# (GPUSANDBOX_TEST_FOREIGN_IMPORT). The importer's output is the run's out.
run_fd_export() {
	local name=$1 how=$2 d="$tmp/${1//:/_}" env_one=() env_imp=() bin=$GPUSANDBOX bin_imp=$GPUSANDBOX
	harness_rm_tree "$d"
	mkdir -p "$d"
	# A switch exists only in the test build (include/test_switch.h).
	[ "$name" = baseline-fd_export:one ] && env_one=(GPUSANDBOX_TEST_NO_EXPORT_PIN=1) && bin=$GPUSANDBOX_SWITCHED
	# native: the fake's model alone, no gpusandbox.
	local gs=("$bin" --mem "$QUOTA_ARG" --audit-log "$d/audit.jsonl" --)
	[ "$name" = baseline-fd_export:native ] || [ "$name" = baseline-fd_export:hostile ] && gs=()
	[ "$name" = baseline-fd_export:cross ] && env_imp=(GPUSANDBOX_TEST_FOREIGN_IMPORT=1) && bin_imp=$GPUSANDBOX_SWITCHED
	# charged: the importer's policy lets a foreign import in, charged.
	local imp_policy=()
	local prefill=
	[ "$name" = fd_export:charged_over ] && prefill=prefill
	if [ "$name" = fd_export:charged ] || [ "$name" = fd_export:charged_over ]; then
		printf 'fd-import = foreign\n' >"$d/foreign.policy"
		imp_policy=(--policy "$d/foreign.policy")
	fi
	if [ "$how" != cross ]; then
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- \
			env ${env_one[@]+"${env_one[@]}"} ${gs[@]+"${gs[@]}"} "$ADV/fd_export" "$how" >"$d/out" 2>"$d/err"
	else
		# shellcheck disable=SC2016 # expanded by the inner shell
		GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
				d=$1 gs=$2 q=$3 prog=$4 pol=$5 pre=$6 gs_imp=$7
				shift 7
				"$gs" --mem "$q" --audit-log "$d/exporter.jsonl" -- "$prog" cross_export "$d/sock" \
					>"$d/exporter.out" 2>&1 &
				ep=$!
				env "$@" "$gs_imp" --mem "$q" ${pol:+--policy "$pol"} --audit-log "$d/audit.jsonl" -- \
					"$prog" cross_import "$d/sock" \
					"$d/exporter.gone" $pre &
				ip=$!
				wait $ep
				touch "$d/exporter.gone"
				wait $ip' sh "$d" "$GPUSANDBOX" "$QUOTA_ARG" "$ADV/fd_export" "${imp_policy[1]:-}" "$prefill" "$bin_imp" \
			${env_imp[@]+"${env_imp[@]}"} \
			>"$d/out" 2>"$d/err"
	fi
	rc=$?
	dir=$d
}

# fd_export's verdicts, from the programs' statuses, the fake's account
# (its stats: exports and imports it made, memory it holds) and the audit
# log. Sets why on failure.
check_fd_export() {
	local name=$1 d=$2 peak
	peak=$(stat_of "$d" gpu0.vidmem_peak)
	[ -n "$peak" ] || { why="no driver stats (exit $rc): $(tail -c 300 "$d/err" | tr '\n' ' ')"; return 1; }
	case $name in
	fd_export:one)
		[ "$(val_of "$d" held)" = NO_MEMORY ] && [ "$(val_of "$d" info)" = NV_OK ] &&
			[ "$(val_of "$d" import)" = NV_OK ] && [ "$(val_of "$d" map)" = NV_OK ] && [ "$(val_of "$d" second)" = NO_MEMORY ] &&
			[ "$(val_of "$d" fits)" = NV_OK ] && [ "$(val_of "$d" third)" = NV_OK ] &&
			[ "$(val_of "$d" fake_used_mib)" = 768 ] ||
			{ why="$(sed -n 2p "$d/out"), want held=NO_MEMORY info=NV_OK import=NV_OK map=NV_OK second=NO_MEMORY fits=NV_OK third=NV_OK fake_used_mib=768"; return 1; }
		ge "$(stat_of "$d" imports_made)" 1 && ge "$(stat_of "$d" export_files_released)" 1 ||
			{ why="the fake made no import or released no export file"; return 1; }
		[ "$peak" -le "$QUOTA" ] || { why="driver peak $(mib "$peak") over the quota"; return 1; } ;;
	fd_export:hostile)
		[ "$(val_of "$d" pipe)" = INVALID_PARAMETER ] && [ "$(val_of "$d" node)" = INVALID_PARAMETER ] &&
			[ "$(val_of "$d" device)" = NOT_SUPPORTED ] && [ "$(val_of "$d" fresh)" = status:0x1b ] &&
			[ "$(stat_of "$d" exports_made)" = 0 ] ||
			{ why="$(head -1 "$d/out") exports_made=$(stat_of "$d" exports_made), want pipe=node=INVALID_PARAMETER device=NOT_SUPPORTED fresh=status:0x1b, none made"; return 1; }
		grep -q '"reason":"export of an object that is not video memory charged to this sandbox"' "$d/audit.jsonl" ||
			{ why="no audit record names the refused export"; return 1; } ;;
	baseline-fd_export:hostile)
		# The driver exports the device (and would keep it past its
		# handle): what the sandbox's refusal takes away.
		[ "$(val_of "$d" device)" = NV_OK ] && [ "$(stat_of "$d" exports_made)" = 1 ] ||
			{ why="without gpusandbox: $(head -1 "$d/out"): not sensitive"; return 1; } ;;
	baseline-fd_export:native)
		# The driver's own behaviour, as the fake models it: the export
		# keeps the memory after its handle and the exporter are gone,
		# the import keeps it after the file is released, and it goes
		# with the last reference (the 768 MiB asked for last fit).
		[ "$(val_of "$d" held)" = NV_OK ] && [ "$(val_of "$d" import)" = NV_OK ] &&
			[ "$(val_of "$d" fake_used_mib)" = 1536 ] && [ "$(val_of "$d" third)" = NV_OK ] &&
			[ "$(stat_of "$d" exports_made)" = 1 ] && [ "$(stat_of "$d" imports_made)" = 1 ] &&
			[ "$(stat_of "$d" export_files_released)" = 1 ] && [ "$(stat_of "$d" export_files_live)" = 0 ] ||
			{ why="the fake's model: $(head -2 "$d/out" | tr '\n' ' ') exports=$(stat_of "$d" exports_made) imports=$(stat_of "$d" imports_made) released=$(stat_of "$d" export_files_released)"; return 1; } ;;
	baseline-fd_export:one)
		# Without the pins the exporter's free drops the charge while the
		# file holds the memory: the next 768 MiB go through.
		[ "$(val_of "$d" held)" = NV_OK ] && [ "$peak" -gt "$QUOTA" ] ||
			{ why="exports unpinned: held=$(val_of "$d" held) peak $(mib "$peak"): not sensitive"; return 1; } ;;
	fd_export:cross)
		[ "$(val_of "$d" import)" = status:0x1b ] && [ "$(val_of "$d" own)" = NV_OK ] &&
			[ "$(val_of "$d" fits)" = NV_OK ] &&
			[ "$(stat_of "$d" imports_made)" = 0 ] && ge "$(stat_of "$d" exports_made)" 1 ||
			{ why="$(head -1 "$d/out") exporter: $(tr '\n' ' ' <"$d/exporter.out") imports_made=$(stat_of "$d" imports_made)"; return 1; }
		[ "$(val_of "$d" fake_used_mib)" -le 1024 ] ||
			{ why="the importer's sandbox holds $(val_of "$d" fake_used_mib) MiB by the fake"; return 1; }
		grep -q '"reason":"import from an export file made outside this sandbox"' "$d/audit.jsonl" ||
			{ why="no audit record names the refused import"; return 1; }
		# The exporter's sandbox ended while the importer held the file:
		# it says the memory outlives it.
		grep -q '"reason":"an export file outlives the sandbox: the driver keeps its memory"' "$d/exporter.jsonl" &&
			grep -q 'export file(s) outlive the sandbox, holding 805306368 bytes' "$d/exporter.out" ||
			{ why="the exporter's sandbox did not report its export file outliving it"; return 1; } ;;
	fd_export:charged)
		# fd-import = foreign: allowed and charged to the importer, so
		# its own 768 MiB no longer fit beside it, 192 MiB do.
		[ "$(val_of "$d" import)" = NV_OK ] && [ "$(val_of "$d" own)" = NO_MEMORY ] &&
			[ "$(val_of "$d" fits)" = NV_OK ] && [ "$(val_of "$d" fake_used_mib)" -le 1024 ] &&
			[ "$(stat_of "$d" imports_made)" = 1 ] ||
			{ why="$(head -1 "$d/out") imports_made=$(stat_of "$d" imports_made), want import=NV_OK own=NO_MEMORY fits=NV_OK, at most 1024 MiB"; return 1; }
		grep -q '"fd_import":"foreign"' "$d/audit.jsonl" ||
			{ why="the importer's audit log does not record fd-import = foreign"; return 1; } ;;
	fd_export:charged_over)
		# Charged over the quota: the import is undone (the fake made
		# it, then freed it) and refused as a quota denial, audited.
		[ "$(val_of "$d" prefill)" = NV_OK ] && [ "$(val_of "$d" import)" = NO_MEMORY ] &&
			[ "$(stat_of "$d" imports_made)" = 1 ] && [ "$(val_of "$d" fake_used_mib)" -le 1024 ] ||
			{ why="$(head -1 "$d/out") imports_made=$(stat_of "$d" imports_made), want prefill=NV_OK import=NO_MEMORY"; return 1; }
		grep -q '"reason":"video memory quota exceeded by an import from another sandbox'"'"'s export file"' "$d/audit.jsonl" ||
			{ why="no audit record names the import over the quota"; return 1; } ;;
	baseline-fd_export:cross)
		# Let through, the import keeps the other sandbox's 768 MiB
		# beside the importer's own 768 once the exporter is gone.
		[ "$(val_of "$d" import)" = NV_OK ] && [ "$(val_of "$d" own)" = NV_OK ] &&
			[ "$(val_of "$d" fake_used_mib)" -gt 1024 ] ||
			{ why="foreign import allowed: $(head -1 "$d/out"): not sensitive"; return 1; } ;;
	esac
	return 0
}

# pid_list: a holder (256 MiB) and a looker (128 MiB), each in its own
# sandbox (--mem 1g) or (baseline) without one; the looker asks the GPU's
# process lists (pid_list.c). Its output is the run's out.
run_pid_list() {
	local mode=$1 d="$tmp/$2" gs=()
	harness_rm_tree "$d"
	mkdir -p "$d"
	[ "$mode" = sandbox ] && gs=("$GPUSANDBOX" --mem "$QUOTA_ARG" --audit-log "$d/audit.jsonl" --)
	# shellcheck disable=SC2016 # expanded by the inner shell
	GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
			d=$1 prog=$2
			shift 2
			"$@" "$prog" hold "$d/ready" >"$d/holder.out" 2>&1 &
			i=0
			while [ ! -e "$d/ready" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
			other=$(pgrep -n -f "$prog hold")
			"$@" "$prog" look "${other:-0}"
			rc=$?
			touch "$d/ready.done"
			wait
			exit $rc' sh "$d" "$ADV/pid_list" ${gs[@]+"${gs[@]}"} >"$d/out" 2>"$d/err"
	rc=$?
	dir=$d
}

check_pid_list() {
	local name=$1 d=$2
	if [ "$name" = baseline-pid_list ]; then
		# Natively the holder is listed and its 256 MiB reported.
		ge "$(val_of "$d" others)" 1 && [ "$(val_of "$d" others_mib)" -ge 256 ] ||
			{ why="without gpusandbox: $(head -1 "$d/out"): not sensitive"; return 1; }
		return 0
	fi
	[ "$(val_of "$d" pids_status)" = NV_OK ] && [ "$(val_of "$d" pids)" = 1 ] &&
		[ "$(val_of "$d" self_listed)" = 1 ] && [ "$(val_of "$d" own_mib)" = 128 ] &&
		[ "$(val_of "$d" others)" = 0 ] && [ "$(val_of "$d" others_mib)" = 0 ] &&
		[ "$(val_of "$d" other_result)" = INVALID_ARGUMENT ] ||
		{ why="$(head -1 "$d/out"), want pids=1 self_listed=1 own_mib=128 others=0 others_mib=0 other_result=INVALID_ARGUMENT"; return 1; }
	# The fake holds both tenants' memory: the holder was there to be seen.
	ge "$(stat_of "$d" gpu0.vidmem_peak)" $((384 * MIB)) ||
		{ why="the holder held nothing by the fake"; return 1; }
}

# uvm_ctlfd fuse and race: the file the workload serves itself is served
# by `uvm_ctlfd serve`, mounted beside the sandbox as tests/sm/stallfs is
# (uvm_ctlfd.c says why); its account of the requests that came from
# outside the sandbox (the supervisor) is $d/ownfs.stats. Their baselines:
# the supervisor with its rmCtrlFd check off (fuse), or made only by its
# first look at the caller's fd table (race).
run_ownfs() {
	local name=$1 mode=$2 d="$tmp/${1//:/_}" sb_env=() sb
	harness_rm_tree "$d"
	mkdir -p "$d/ownfs"
	[ "$name" = baseline-uvm_ctlfd:fuse ] && sb_env=(env GPUSANDBOX_TEST_UVM_CTLFD=unchecked)
	# The baselines' window (between the look and the dup) is widened
	# (OWNFS_LOOK_DELAY_US), so that a win is not left to the scheduler.
	[ "$name" = baseline-uvm_ctlfd:race ] &&
		sb_env=(env GPUSANDBOX_TEST_UVM_CTLFD=first-look GPUSANDBOX_TEST_LOOK_DELAY_US=$OWNFS_LOOK_DELAY_US)
	# park: the dup a lost race took closed at once, as before parking.
	# race_dup and park: rmCtrlFd dup'ed at every map, as before issue
	# #31's client share (which needs no dup once the client is shared,
	# exec_uvm.c shared_needs_no_dup), so that every round has the window
	# between the look and the dup.
	[ "$name" = baseline-uvm_ctlfd:park ] &&
		sb_env=(env GPUSANDBOX_TEST_NO_PARK=1 GPUSANDBOX_TEST_LOOK_DELAY_US=$OWNFS_LOOK_DELAY_US
			GPUSANDBOX_TEST_SHARE_PER_MAP=1)
	[ "$name" = uvm_ctlfd:race_dup ] && sb_env=(env GPUSANDBOX_TEST_SHARE_PER_MAP=1)
	local rounds=
	# park's baseline races on until the supervisor's dup of the served
	# file shows (uvm_ctlfd.c, until-outside; 2000 is its FLIP_ROUNDS).
	[ "$name" = baseline-uvm_ctlfd:park ] && rounds="2000 until-outside"
	sandbox_command
	# shellcheck disable=SC2016 # expanded by the inner shell
	GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
			d=$1 prog=$2 mode=$3 rounds=$4
			shift 4
			"$prog" serve "$d/ownfs" "$d/ownfs.stats" 2>"$d/serve.err" &
			s=$!
			i=0
			while [ $i -lt 100 ] && [ ! -e "$d/ownfs.stats" ]; do
				sleep 0.05
				i=$((i + 1))
			done
			"$@" --audit-log "$d/audit.jsonl" -- "$prog" "$mode" "$d/ownfs/ctl" $rounds
			rc=$?
			kill "$s"
			wait "$s"
			umount -l "$d/ownfs"
			exit $rc' sh "$d" "$ADV/uvm_ctlfd" "$mode" "$rounds" "${sb[@]}" \
		--mem "$QUOTA_ARG" >"$d/out" 2>"$d/err"
	rc=$?
	dir=$d
}
own_stat() { awk -v k="$2" '$1 == k { print $2 }' "$1/ownfs.stats" 2>/dev/null | tail -1; }

# `gpusandbox audit verify` on a run's log: sets $verify_rc and $verify_err.
audit_verify() {
	verify_err=$("$GPUSANDBOX" audit verify "$1" 2>&1 >/dev/null)
	verify_rc=$?
}

# Every line a JSON object in strict UTF-8 (python3), "/" never "\/".
strict_json_lines() {
	python3 - "$1" <<'PY'
import json, sys
for n, raw in enumerate(open(sys.argv[1], "rb"), 1):
    rec = json.loads(raw.decode("utf-8", "strict"))
    assert isinstance(rec, dict), f"line {n}: not an object"
    assert b"\\/" not in raw, f"line {n}: escaped slash"
PY
}

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
	local name=$1 d=$2 k want refused=0x1b
	[ "$name" = uvm_ctlfd:pipe ] && refused=0x1b,0x1b
	case "$name" in uvm_ctlfd:race | uvm_ctlfd:race_dup) refused=race ;; esac
	for k in first=0x0 bad=$refused map_ok=0x0 free=0x0 left_mappings=0 left_used=0; do
		want=${k#*=}; k=${k%%=*}
		[ "$(val_of "$d" "$k")" = "$want" ] || { why="$k=$(val_of "$d" "$k"), want $want"; return 1; }
	done
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
	local d=$1 i_dec i_jpg dec_max jpg_max k want
	i_dec=$(engine_instances "$d" nvdec) i_jpg=$(engine_instances "$d" nvjpg)
	dec_max=$((DECODERS * i_dec)) jpg_max=$((JPEG_SESSIONS * $(jpeg_per_session "$d")))
	[ "$(val_of "$d" nvdec_engines)" = "$i_dec" ] && [ "$(val_of "$d" nvjpg_engines)" = "$i_jpg" ] ||
		{ why="the program saw $(val_of "$d" nvdec_engines) NVDEC, the fake lists $i_dec"; return 1; }
	for k in dec_full="$DECODERS" dec_stop=INSUFFICIENT_RESOURCES dec_first_objects="$i_dec" \
		dec_after_free=NV_OK dec_after_free_objects="$i_dec" dec_after_close=NV_OK \
		dec_after_close_objects="$i_dec" jpg_full="$JPEG_SESSIONS" jpg_stop=INSUFFICIENT_RESOURCES; do
		want=${k#*=}; k=${k%%=*}
		[ "$(val_of "$d" "$k")" = "$want" ] || { why="$k=$(val_of "$d" "$k"), want $want"; return 1; }
	done
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
		local k want
		for k in cards=1 card_minor=1 probed=1 attached=1 info_hidden=INVALID_ARGUMENT info_visible=NV_OK \
			info_instance=1 dev0=INVALID_ARGUMENT dev1=NV_OK mem1=NV_OK legacy_dev0=INVALID_ARGUMENT \
			uvm_reg0=status:0x1b acct_hidden=INVALID_ARGUMENT acct_hidden_state=0 acct_visible=NV_OK; do
			want=${k#*=}; k=${k%%=*}
			[ "$(val_of "$d" "$k")" = "$want" ] || { why="$k=$(val_of "$d" "$k"), want $want"; return 1; }
		done
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
		local k want
		for k in unknown_class=INVALID_CLASS debug_class=INVALID_CLASS allowed_class=NV_OK \
			unknown_control=NOT_SUPPORTED debug_control=NOT_SUPPORTED allowed_control=NV_OK \
			service_interrupts=NV_OK \
			xfer_class=INVALID_CLASS unknown_escape=EINVAL; do
			want=${k#*=}; k=${k%%=*}
			[ "$(val_of "$d" "$k")" = "$want" ] || { why="$k=$(val_of "$d" "$k"), want $want"; return 1; }
		done
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
		local k want
		for k in uvm_fixed=EPERM uvm_hint=EPERM uvm_validate=EPERM remap=EPERM file_shared=OK anon_shared=OK; do
			want=${k#*=}; k=${k%%=*}
			[ "$(val_of "$d" "$k")" = "$want" ] || { why="$k=$(val_of "$d" "$k"), want $want"; return 1; }
		done
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
		local k want
		for k in real1=0x0 evil_client=0x0 evil_free=0x0 real2=0x51; do
			want=${k#*=}; k=${k%%=*}
			[ "$(val_of "$d" "$k")" = "$want" ] || { why="$k=$(val_of "$d" "$k"), want $want"; return 1; }
		done
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

# ---- main loop ---------------------------------------------------------------
have_sandbox=1
[ -x "$GPUSANDBOX" ] || have_sandbox=0

for t in "${TESTS[@]}"; do
	IFS='|' read -r name mode cmd <<<"$t"
	selected "$name" "$@" || continue
	read -r -a argv <<<"$cmd"
	prog=${argv[0]}
	if [ ! -x "$ADV/${argv[0]}" ]; then
		fail "$name" "$ADV/${argv[0]} not built (run make)"
		continue
	fi
	if [ "$mode" = sandbox ] && [ "$have_sandbox" = 0 ]; then
		fail "$name" "$GPUSANDBOX not built (run make)"
		continue
	fi
	why=
	if [ "$name" = kill_super ]; then
		run_kill_super
	elif [ "$prog" = outlive ]; then
		run_outlive "$mode" "$name"
	elif [ "$prog" = broker ]; then
		run_broker "$mode" "$name"
	elif [ "$name" = audit_forge_fd ]; then
		run_audit_fd
	elif [ "$prog" = audit_reach ]; then
		run_audit_reach "$name"
	elif [ "$prog" = token_neighbour ]; then
		run_token "$name"
	elif [ "$prog" = share_import ]; then
		run_share "$mode" "$name"
	elif [ "$prog" = fd_export ]; then
		run_fd_export "$name" "${argv[1]}"
	elif [ "$prog" = pid_list ]; then
		run_pid_list "$mode" "$name"
	elif [ "$prog" = smi_views ] && [ "${argv[1]}" = sessions ]; then
		run_smi_sessions "$mode" "$name"
	elif [ "$prog" = uvm_ctlfd ] && { [ "${argv[1]}" = fuse ] || [ "${argv[1]}" = race ]; }; then
		run_ownfs "$name" "${argv[1]}"
	else
		run_case "$name" "$mode" "${argv[@]}"
	fi
	# The report is kill_super's primary evidence, valid even if the run
	# then hung (a workload outliving its supervisor can keep the fake's
	# files busy).
	if [ "$name" = kill_super ] && ! check_kill_super "$dir"; then
		fail "$name" "$why"
		continue
	fi
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail "$name" "timed out after ${TIMEOUT}s"
		continue
	fi
	if [ "$prog" = token_neighbour ]; then
		check_token "$name" "$dir" && pass "$name" || fail "$name" "$why"
		continue
	fi
	if [ "$prog" = fd_export ]; then
		check_fd_export "$name" "$dir" && pass "$name" || fail "$name" "$why"
		continue
	fi
	if [ "$prog" = pid_list ]; then
		check_pid_list "$name" "$dir" && pass "$name" || fail "$name" "$why"
		continue
	fi
	if [ "$prog" = smi_views ]; then
		check_smi_views "$name" "$dir" && pass "$name" || fail "$name" "$why"
		continue
	fi
	if [ "$name" = outlive ] && ! check_outlive "$dir"; then
		fail "$name" "$why"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-outlive ]; then
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		grep -q '^listener ok' "$dir/report" && [ -n "$v" ] && [ "$v" -gt "$QUOTA" ] && pass "$name" ||
			fail "$name" "without gpusandbox: peak ${v:-?}, $(tr '\n' ' ' <"$dir/report" | tail -c 200): not sensitive"
		continue
	fi
	if [ "$name" = broker_allowed ]; then
		# The trusted broker is reached, and allocates outside the quota:
		# what --allow-mps means, and proof that the masking is what stops
		# the broker test.
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		[ "$(val_of "$dir" connect)" = OK ] && [ -n "$v" ] && [ "$v" -gt "$QUOTA" ] && pass "$name" ||
			fail "$name" "with --allow-mps: connect=$(val_of "$dir" connect) peak ${v:-?}"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-broker ]; then
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		[ "$(val_of "$dir" connect)" = OK ] && [ -n "$v" ] && [ "$v" -gt "$QUOTA" ] && pass "$name" ||
			fail "$name" "without gpusandbox: connect=$(val_of "$dir" connect) peak ${v:-?}: not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-default_caps ]; then
		v=$(stat_of "$dir" gpu0.channel_groups_peak)
		k=$(stat_of "$dir" gpu0.channels_peak)
		[ -n "$v" ] && [ "$v" -gt "$DEFAULT_CHANNEL_GROUPS" ] && [ -n "$k" ] && [ "$k" -gt "$DEFAULT_CHANNELS" ] &&
			pass "$name" ||
			fail "$name" "without gpusandbox the driver's peaks are groups ${v:-?}, channels ${k:-?}: not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-channels ]; then
		v=$(stat_of "$dir" gpu0.channels_peak)
		[ -n "$v" ] && [ "$v" -gt "$CHANNELS" ] && pass "$name" ||
			fail "$name" "without gpusandbox the driver's channel peak is only ${v:-?}: not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-policy_verdicts ]; then
		[ "$(val_of "$dir" unknown_class)" = NV_OK ] && [ "$(val_of "$dir" unknown_control)" = NV_OK ] &&
			[ "$(val_of "$dir" unknown_escape)" = 0 ] && pass "$name" ||
			fail "$name" "without gpusandbox: $(tr '\n' ' ' <"$dir/out"): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-lone_channels ]; then
		[ "$(val_of "$dir" sched)" = NV_OK,NV_OK,NV_OK,NV_OK,NV_OK,NV_OK ] &&
			[ "$(val_of "$dir" fake_scheduled)" = 3 ] && pass "$name" ||
			fail "$name" "without gpusandbox: sched=$(val_of "$dir" sched) fake_scheduled=$(val_of "$dir" fake_scheduled): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-engines ]; then
		v=$(stat_of "$dir" gpu0.nvdec_peak)
		k=$((DECODERS * $(engine_instances "$dir" nvdec)))
		[ -n "$v" ] && [ "$v" -gt "$k" ] && pass "$name" ||
			fail "$name" "without gpusandbox the driver's NVDEC peak is only ${v:-?} (cap $k objects): not sensitive"
		continue
	fi
	if [ "$name" = baseline-video_sessions ]; then
		# Counting objects, as before: the first session stops at the
		# cap's object count, and no session opens whole.
		[ "$(val_of "$dir" dec_full)" = 0 ] && [ "$(val_of "$dir" dec_first_objects)" = "$DECODERS" ] &&
			[ "$(val_of "$dir" dec_stop)" = INSUFFICIENT_RESOURCES ] && pass "$name" ||
			fail "$name" "objects counted: $(grep -E '^dec_full' "$dir/out"): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-gpus ]; then
		[ "$(val_of "$dir" cards)" = 2 ] && [ "$(val_of "$dir" dev0)" = NV_OK ] &&
			[ "$(val_of "$dir" legacy_dev0)" = NV_OK ] && [ "$(val_of "$dir" legacy_group0)" = NV_OK ] &&
			[ "$(stat_of "$dir" gpu0.channel_groups_peak)" -ge 1 ] && [ "$(val_of "$dir" uvm_reg0)" = NV_OK ] &&
			[ "$(stat_of "$dir" gpu0.uvm_registered_peak)" -ge 1 ] &&
			[ "$(val_of "$dir" acct_hidden)" = NV_OK ] && [ "$(val_of "$dir" acct_hidden_state)" = 1 ] && pass "$name" ||
			fail "$name" "without gpusandbox: cards=$(val_of "$dir" cards) acct_hidden=$(val_of "$dir" acct_hidden) dev0=$(val_of "$dir" dev0) legacy_dev0=$(val_of "$dir" legacy_dev0) legacy_group0=$(val_of "$dir" legacy_group0) uvm_reg0=$(val_of "$dir" uvm_reg0): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-audit_hostile ]; then
		# The fake really answers an unnamed errno, to a thread whose
		# name is not UTF-8.
		[ "$(val_of "$dir" alloc_errno)" = "$UNNAMED_ERRNO" ] &&
			[ "$(val_of "$dir" comm_hex)" = fffe011b5b33316d78 ] && pass "$name" ||
			fail "$name" "without gpusandbox: $(head -1 "$dir/out"): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-handle_zero ]; then
		# The fake really names the device 0: memory under parent 0 works.
		[ "$(val_of "$dir" dev)" = 0x0 ] && [ "$(val_of "$dir" mem)" = 0x0 ] &&
			[ "$(val_of "$dir" free_dev)" = 0x0 ] && pass "$name" ||
			fail "$name" "without gpusandbox: $(head -1 "$dir/out"): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "${name%%:*}" = baseline-uvm_hold ]; then
		# Without gpusandbox the mapping keeps A: the driver holds 1.5 GiB
		# (for the handoffs, through the UVM file the other process kept).
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		k=1
		[ "${name#baseline-uvm_hold:handoff}" = "$name" ] || k=$(val_of "$dir" held_mappings)
		[ "$(val_of "$dir" map)" = 0x0 ] && [ "$(val_of "$dir" second)" = 0x0 ] && [ -n "$v" ] &&
			[ "$v" -gt "$QUOTA" ] && [ "$k" = 1 ] && pass "$name" ||
			fail "$name" "without gpusandbox: map=$(val_of "$dir" map) second=$(val_of "$dir" second) peak ${v:-?} held_mappings=$k: not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "${name%%:*}" = baseline-uvm_channel ]; then
		# Without gpusandbox each registration keeps its group after the
		# workload freed it: the driver holds more than the cap.
		v=$(stat_of "$dir" gpu0.channel_groups_peak)
		k=$(val_of "$dir" rounds)
		ge "$k" 1 && [ "$(val_of "$dir" reg_ok)" = "$k" ] && [ -n "$v" ] && [ "$v" -gt "$CHANNEL_GROUPS" ] &&
			[ "$(val_of "$dir" fake_groups_max)" = "$v" ] && pass "$name" ||
			fail "$name" "without gpusandbox: reg_ok=$(val_of "$dir" reg_ok) of ${k:-?}, groups peak ${v:-?}, fake_groups_max=$(val_of "$dir" fake_groups_max): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "${name%%:*}" = baseline-uvm_ctlfd ]; then
		# The driver ignores rmCtrlFd: every map is made, and its memory
		# stays mapped past the free (what gpusandbox refuses, it refuses
		# itself).
		case "$(val_of "$dir" bad)" in 0x0 | 0x0,0x0) k=1 ;; *) k=0 ;; esac
		[ "$k" = 1 ] && [ "$(val_of "$dir" left_mappings)" = 1 ] && pass "$name" ||
			fail "$name" "without gpusandbox: bad=$(val_of "$dir" bad) left_mappings=$(val_of "$dir" left_mappings): not sensitive"
		continue
	fi
	if [ "$name" = baseline-uvm_ctlfd:park ]; then
		# Closed at once, the dup of the served file holds the map that
		# took it until the server answers its FLUSH (the first, late).
		ge "$(val_of "$dir" held)" 1 && ge "$(own_stat "$dir" outside_other)" 1 && pass "$name" ||
			fail "$name" "not parked: held=$(val_of "$dir" held) bad_ms=$(val_of "$dir" bad_ms) outside_other=$(own_stat "$dir" outside_other): not sensitive"
		continue
	fi
	if [ "${name%%:*}" = baseline-uvm_ctlfd ]; then
		# The check off (fuse) or made once (race): the supervisor's
		# ioctl reaches the workload's file, which holds it (and, fuse,
		# the probe behind it) as long as it likes.
		v=$(own_stat "$dir" outside_ioctls)
		k=ok
		[ "$name" != baseline-uvm_ctlfd:fuse ] || [ "$(val_of "$dir" probe_held)" = 1 ] || k=
		ge "$v" 1 && [ -n "$k" ] && pass "$name" ||
			fail "$name" "check off: outside_ioctls=${v:-?} $(grep -o 'probe=.*' "$dir/out"): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-dmabuf ]; then
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		[ "$(val_of "$dir" export)" = NV_OK,NV_OK,NV_OK ] && [ -n "$v" ] && [ "$v" -gt "$QUOTA" ] && pass "$name" ||
			fail "$name" "without gpusandbox: export=$(val_of "$dir" export) peak ${v:-?}: not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-share_import ]; then
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		[ "$(val_of "$dir" dup)" = NV_OK,NV_OK,NV_OK,NV_OK ] && [ -n "$v" ] && [ "$v" -gt "$QUOTA" ] && pass "$name" ||
			fail "$name" "without gpusandbox: dup=$(val_of "$dir" dup) peak ${v:-?}: not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-group_dup ]; then
		v=$(stat_of "$dir" gpu0.channel_groups_peak)
		[ "$(val_of "$dir" sched)" = NV_OK,NV_OK,NV_OK,NV_OK ] && [ "$(val_of "$dir" fake_sched_max)" = 3 ] &&
			[ -n "$v" ] && [ "$v" -gt "$CHANNEL_GROUPS" ] && pass "$name" ||
			fail "$name" "without gpusandbox: groups peak ${v:-?} sched=$(val_of "$dir" sched) fake_sched_max=$(val_of "$dir" fake_sched_max): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-grown_tail ]; then
		v=$(stat_of "$dir" grown_tail_nonzero)
		[ -n "$v" ] && [ "$v" -ge 1 ] && pass "$name" ||
			fail "$name" "without gpusandbox the driver read no non-zero tail (${v:-?}): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-clients ]; then
		# Natively every client is granted: the driver holds all of them.
		v=$(stat_of "$dir" clients_peak)
		[ "$(val_of "$dir" fill_ok)" = "$CLIENT_FILES" ] && [ -n "$v" ] && [ "$v" -ge "$CLIENT_FILES" ] &&
			pass "$name" ||
			fail "$name" "without gpusandbox: fill_ok=$(val_of "$dir" fill_ok) clients_peak=${v:-?}: not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-io_uring ]; then
		# Natively the ring is made: what the sandbox's ENOSYS takes away.
		[ "$(val_of "$dir" setup)" = OK ] && [ "$(val_of "$dir" enter)" = EBADF ] && pass "$name" ||
			fail "$name" "without gpusandbox: $(head -1 "$dir/out"): not sensitive (io_uring disabled here?)"
		continue
	fi
	if [ "$name" = baseline-client_refree ]; then
		# The free unseen: A's close released B's charges, and the
		# driver held more than the quota.
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		[ "$(val_of "$dir" free)" = NV_OK ] && [ -n "$v" ] && [ "$v" -gt "$QUOTA" ] && pass "$name" ||
			fail "$name" "free unseen: $(head -1 "$dir/out") peak ${v:-?}: not sensitive"
		continue
	fi
	if [ "$name" = baseline-exec_again:no_reopen ]; then
		# Not opened again: stage 1 was answered; stage 2's first answer
		# that carries bytes (the allocation's outputs: the device's
		# answer changes none) was lost in the old address space.
		[ "$(val_of "$dir" stage1_alloc)" = 0x0 ] && [ -n "$(val_of "$dir" stage2_alloc)" ] &&
			[ "$(val_of "$dir" stage2_alloc)" != 0x0 ] && pass "$name" ||
			fail "$name" "not opened again: $(tr '\n' ' ' <"$dir/out"): not sensitive"
		continue
	fi
	if [ "$name" = baseline-uvm_share:memory ]; then
		# Not shared per memory: the fake refused the map of the
		# memory whose own list was edited, and made the others.
		[ "$(val_of "$dir" replaced)" = 0x0 ] && [ "$(val_of "$dir" mid)" = 0x1b ] && [ "$(val_of "$dir" maps)" = 2 ] &&
			pass "$name" ||
			fail "$name" "not shared per memory: $(head -1 "$dir/out"): not sensitive"
		continue
	fi
	if [ "$name" = baseline-uvm_share:replace ]; then
		# Not shared again: the fake refused the maps after the
		# workload replaced its client's list.
		[ "$(val_of "$dir" replaced)" = 0x0 ] && [ "$(val_of "$dir" map2)" = 0x1b ] && [ "$(val_of "$dir" maps)" = 1 ] &&
			pass "$name" ||
			fail "$name" "not shared again: $(head -1 "$dir/out"): not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-uvm_share ]; then
		# The fake lets a second client of the same process dup mapped
		# memory, as the driver's default policy does.
		check_positive "$name" "$dir" && [ "$(val_of "$dir" dup)" = 0x0 ] && [ "$(val_of "$dir" dup2)" = 0x0 ] &&
			pass "$name" || fail "$name" "without gpusandbox: $why $(head -1 "$dir/out")"
		continue
	fi
	if [ "$mode" = bare ] && [ "$name" = baseline-slow_call ]; then
		# Natively the fake serves the quick process during the slow
		# call: the test can tell overlap from waiting.
		check_positive "$name" "$dir" && pass "$name" || fail "$name" "without gpusandbox: $why: not sensitive"
		continue
	fi
	if [ "$mode" = bare ] && [ "${name%_other_abi}" = baseline-fb_report ]; then
		v=$(val_of "$dir" v2_total)
		[ -n "$v" ] && [ "$v" -gt $((QUOTA / 1024)) ] && pass "$name" ||
			fail "$name" "without gpusandbox the reported total is only ${v:-?} KiB: not sensitive"
		continue
	fi
	if [ "$mode" = bare ]; then
		peak=$(stat_of "$dir" gpu0.vidmem_peak)
		if [ -z "$peak" ]; then
			fail "$name" "no driver stats (exit $rc)"
		elif [ "$peak" -le "$QUOTA" ]; then
			fail "$name" "without gpusandbox the driver peak is only $(mib "$peak"): the attack is not sensitive"
		else
			pass "$name"
		fi
		continue
	fi
	if [ "${name#baseline-}" != "$name" ] && [ "$prog" = dupcache ]; then
		check_dupcache_baseline "$name" "$dir" && pass "$name" || fail "$name" "$why"
		continue
	fi
	if [ "$name" = baseline-uvm_channel:stall ]; then
		# Unregistered before the registration landed: the driver keeps
		# the group every handle of which was freed.
		grep -q '^stall: register=NV_OK child_free=NV_OK groups_end=1$' "$dir/out" &&
			[ "$(val_of "$dir" registered_end)" = 1 ] && pass "$name" ||
			fail "$name" "settled in flight: $(grep '^stall' "$dir/out") registered_end=$(val_of "$dir" registered_end): not sensitive"
		continue
	fi
	if [ "$name" = baseline-quick_return ]; then
		# The caller's next client waits for threads the first quiesce
		# still holds, and is refused: the driver saw fewer clients.
		[ "$(val_of "$dir" clients_rise)" != "" ] && [ "$(val_of "$dir" clients_rise)" -lt 20 ] &&
			grep -q '^client [0-9]*: ' "$dir/out" && pass "$name" ||
			fail "$name" "no refusal: $(grep -E '^client|^clients_ok' "$dir/out" | tr '\n' ';'): not sensitive"
		continue
	fi
	if [ "$name" = baseline-uvm_channel:overlap ]; then
		# The worker waiting for the continued caller under the session
		# lock: the other process's first call waits behind it.
		grep -q '^overlap: quick=NV_OK pairs=20 overlapped=0$' "$dir/out" &&
			[ "$(val_of "$dir" served_while_late)" = 0 ] && pass "$name" ||
			fail "$name" "waiting: $(grep -E '^(overlap|late):' "$dir/out" | tr '\n' ';'): not sensitive"
		continue
	fi
	if [ "$name" = baseline-uvm_channel:clone ]; then
		# Not held back: the clone returns while the caller is inside.
		grep -q '^clone: clone=ok clone_while_late=1$' "$dir/out" && pass "$name" ||
			fail "$name" "not held back: $(grep -E '^(clone|late):' "$dir/out" | tr '\n' ';'): not sensitive"
		continue
	fi
	if [ "$name" = baseline-uvm_channel:swap ]; then
		# The quiesce off: registrations land in the file the supervisor
		# does not hold, and keep their groups past the frees.
		v=$(stat_of "$dir" gpu0.channel_groups_peak)
		[ -n "$v" ] && [ "$v" -gt "$CHANNEL_GROUPS" ] && ge "$(val_of "$dir" registered_end)" 1 && pass "$name" ||
			fail "$name" "quiesce off: groups peak ${v:-?}, registered_end=$(val_of "$dir" registered_end), reg_ok=$(val_of "$dir" reg_ok): not sensitive"
		continue
	fi
	if [ "$prog" = audit_reach ]; then
		check_audit_reach "$name" "$dir" && pass "$name" || fail "$name" "$why"
		continue
	fi
	if [ "$name" = baseline-sem_surf ]; then
		# The driver's references not charged: every round is let
		# through and the driver holds them all (3 GiB under 1 GiB).
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		[ "$(val_of "$dir" rounds)" = 3 ] && [ -n "$v" ] && [ "$v" -ge $((3 * QUOTA)) ] && pass "$name" ||
			fail "$name" "keep off: rounds=$(val_of "$dir" rounds) peak ${v:-?}: not sensitive"
		continue
	fi
	if [ "$name" = baseline-second_client:signal ]; then
		# Not sent again, the signals met during the injection are lost.
		h=$(val_of "$dir" handled)
		[ -n "$h" ] && [ "$h" -lt "$(val_of "$dir" sent)" ] && pass "$name" ||
			fail "$name" "signals dropped: $(grep -o 'sent=.*' "$dir/out"): not sensitive"
		continue
	fi
	if [ "${name%:*}" = baseline-second_client ]; then
		# Continued from the workload's struct, a flip to 1 GiB under
		# the first client wins on the fake.
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		[ -n "$v" ] && [ "$v" -gt "$QUOTA" ] && pass "$name" ||
			fail "$name" "second client continued: driver peak ${v:-?}, $(grep -o 'flip_ok=.*' "$dir/out"): not sensitive"
		continue
	fi
	if [ "${name%:*}" = baseline-client_fdswap ] || [ "${name%:*}" = baseline-continue_swap ]; then
		# The same attack with the quiesce off must win on the fake.
		v=$(stat_of "$dir" gpu0.vidmem_peak)
		[ -n "$v" ] && [ "$v" -gt "$QUOTA" ] && pass "$name" ||
			fail "$name" "quiesce off: driver peak ${v:-?}, $(grep -o 'attempts=.*' "$dir/out"): not sensitive"
		continue
	fi
	if ! check_driver_within "$dir"; then
		fail "$name" "$why"
		continue
	fi
	if [ "$name" = kill_super ] || [ "$name" = outlive ]; then
		pass "$name" # report already checked above
		continue
	fi
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc: $(tail -c 300 "$dir/err" | tr '\n' ' ')"
		continue
	fi
	check_positive "$name" "$dir" && pass "$name" || fail "$name" "$why"
done

harness_summary
