# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# tests/adv/smi_checks.sh - the checks of tests/adv smi_views (sourced by
# tests/adv/run.sh): nvidia-smi's views in a sandbox under the default
# policy (issue #29 item 3). Each returns 1 with $why. Uses val_of and
# stat_of from run.sh and the harness.
#
#  smi_views               the views' objects and queries, and every control
#                          of the monitoring group: none refused, judged by
#                          the audit log (no record with outcome policy or
#                          quota) and stderr (no "calls refused" line); the
#                          answers are the fake driver's model of an H200
#                          (tests/fakedrv/fake_smi.c).
#  smi_views:setters       an administrator's setters stay refused, and the
#                          fake driver counts none of them performed.
#  baseline-smi_views:setters  the same program without gpusandbox: the fake
#                          performs both (what makes the refusal the
#                          sandbox's doing).
#  smi_views:opaque        a BinaryApi and a GSS-legacy command nvidia-smi
#                          sends, at its sizes: refused by the default policy
#                          (their handlers are closed GSP firmware).
#  smi_views:sessions      another tenant (outside any sandbox) holds an NVENC
#                          session; the sandbox's NVENC session statistics
#                          show none (its policy cannot make sessions);
#                          :sessions_video (video allowed) and the baseline
#                          (no sandbox) show the fake's count, 1.
#  smi_views:opaque_allowed  the same named by a policy file
#                          (allow.control): performed, the fake's answers
#                          passed on (BinaryApi NV_OK; the fake refuses
#                          every bit-15 command itself, NOT_SUPPORTED).

# Fewer monitoring controls than this in the sweep means the table walk
# found next to nothing (33 rows on 580 when this was written; fewer on
# 535, which lacks several).
SMI_SWEEP_MIN=20
# The controls added for nvidia-smi -q (controls.def), each of which must be
# recorded as performed in the monitoring group.
# FB_GET_OFFLINED_PAGES is performed too, and answered NOT_SUPPORTED by the
# fake as by the H200.
SMI_NEW_CONTROLS="NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS NV2080_CTRL_GPU_GET_NVFBC_SW_SESSION_STATS
NV2080_CTRL_CMD_ECC_GET_REPAIR_STATUS NV2080_CTRL_CMD_ECC_GET_UNREPAIRABLE_MEMORY_FLAG
NV208F_CTRL_CMD_GPU_VERIFY_INFOROM"

# smi_views:sessions*: another tenant, outside any sandbox, holds an NVENC
# session record; the looker asks the GPU's NVENC session statistics in a
# sandbox under the default policy (:sessions), under a policy allowing
# the video group (:sessions_video), or without one (the baseline).
run_smi_sessions() {
	local mode=$1 name=$2 d="$tmp/${2//:/_}" gs=()
	harness_rm_tree "$d"
	mkdir -p "$d"
	printf 'allow = compute, memory, monitoring, video\n' >"$d/video.policy"
	[ "$mode" = sandbox ] && gs=("$GPUSANDBOX" --mem "$QUOTA_ARG" --trace --audit-log "$d/audit.jsonl" --)
	[ "$name" = smi_views:sessions_video ] &&
		gs=("$GPUSANDBOX" --mem "$QUOTA_ARG" --trace --policy "$d/video.policy" --audit-log "$d/audit.jsonl" --)
	# shellcheck disable=SC2016 # expanded by the inner shell
	GS_FAKE_STATS_OUT="$d/stats" timeout "$TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
			d=$1 prog=$2
			shift 2
			"$prog" hold "$d/ready" >"$d/holder.out" 2>&1 &
			i=0
			while [ ! -e "$d/ready" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
			"$@" "$prog" sessions
			rc=$?
			touch "$d/ready.done"
			wait
			exit $rc' sh "$d" "$ADV/smi_views" ${gs[@]+"${gs[@]}"} >"$d/out" 2>"$d/err"
	rc=$?
	dir=$d
}

# The holder's status: 535 has no NVENC_SW_SESSION class (its generated
# table), so no session can exist there (tests/versions/run.sh).
smi_held() {
	case "${GS_FAKE_DRIVER_VERSION:-580.95.05}" in 535.*) echo INVALID_CLASS ;; *) echo NV_OK ;; esac
}

smi_no_refusal() {
	local d=$1 n
	n=$(grep -cE '"outcome":"(policy|quota)"' "$d/audit.jsonl" 2>/dev/null)
	[ -s "$d/audit.jsonl" ] || { why="no audit log"; return 1; }
	[ "$n" = 0 ] ||
		{ why="$n refusals in the audit log: $(grep -E '"outcome":"(policy|quota)"' "$d/audit.jsonl" | head -3 | tr '\n' ' ' | cut -c1-600)"; return 1; }
	! grep -qE 'refused|\[(refuse|deny)' "$d/err" ||
		{ why="stderr: $(grep -E 'refused|\[(refuse|deny)' "$d/err" | head -2)"; return 1; }
}

# The trace line of a call performed by the supervisor (verdict allow, not
# passed on unexamined) with the driver's status: $2 the call's class=
# or cmd= text, $3 the status's hex.
smi_performed() {
	grep -F "$2)" "$1/err" | grep -qE "= 0 ([A-Z_]+ )?$3 \[allow"
}

check_smi_views() {
	local name=$1 d=$2 k c
	case "$name" in
	smi_views)
		# Before 580 (tests/versions/run.sh) the repair status is no
		# control: not sent.
		local repair=NV_OK
		case "${GS_FAKE_DRIVER_VERSION:-580.95.05}" in 535.* | 550.* | 570.*) repair=absent ;; esac
		vals_are "$d" inforom=NV_OK dispcmn=NOT_SUPPORTED diag=NV_OK diag_again=STATE_IN_USE \
			verify_inforom=NV_OK nvenc=NV_OK nvenc_sessions=0 nvfbc=NV_OK nvfbc_sessions=0 \
			offlined=NOT_SUPPORTED repair=$repair unrepairable=NV_OK || return 1
		ge "$(val_of "$d" sweep_sent)" "$SMI_SWEEP_MIN" ||
			{ why="sweep_sent=$(val_of "$d" sweep_sent), want >= $SMI_SWEEP_MIN"; return 1; }
		smi_no_refusal "$d" || return 1
		# Performed by the supervisor (--trace: verdict allow), not let
		# by; the default policy allows them only through monitoring.
		for c in $SMI_NEW_CONTROLS; do
			[ "$(val_of "$d" repair)" = absent ] && [ "$c" = NV2080_CTRL_CMD_ECC_GET_REPAIR_STATUS ] && continue
			smi_performed "$d" "$c" 0x0 || { why="no trace of $c performed with NV_OK"; return 1; }
		done
		smi_performed "$d" "NV2080_CTRL_CMD_FB_GET_OFFLINED_PAGES" 0x56 ||
			{ why="no trace of FB_GET_OFFLINED_PAGES performed (NOT_SUPPORTED by the driver)"; return 1; }
		smi_performed "$d" "class=0x208f NV20_SUBDEVICE_DIAG" 0x0 ||
			{ why="no trace of NV20_SUBDEVICE_DIAG performed"; return 1; }
		smi_performed "$d" "class=0x73 NV04_DISPLAY_COMMON" 0x56 ||
			{ why="no trace of NV04_DISPLAY_COMMON performed and answered NOT_SUPPORTED by the driver"; return 1; } ;;
	smi_views:setters)
		[ "$(val_of "$d" compute_mode)" = NOT_SUPPORTED ] && [ "$(val_of "$d" diag)" = NV_OK ] &&
			[ "$(val_of "$d" diag_write)" = NOT_SUPPORTED ] ||
			{ why="$(tr '\n' ' ' <"$d/out"), want compute_mode=NOT_SUPPORTED diag=NV_OK diag_write=NOT_SUPPORTED"; return 1; }
		[ "$(stat_of "$d" compute_mode_sets)" = 0 ] && [ "$(stat_of "$d" diag_config_writes)" = 0 ] ||
			{ why="the fake performed compute_mode_sets=$(stat_of "$d" compute_mode_sets) diag_config_writes=$(stat_of "$d" diag_config_writes)"; return 1; }
		grep -q 'gpusandbox: 2 calls refused' "$d/err" ||
			{ why="stderr summary: $(grep gpusandbox: "$d/err" | head -2)"; return 1; }
		for k in '"reason":"control not allowed by the policy"' '"reason":"control unknown to gpusandbox"'; do
			grep -q "$k" "$d/audit.jsonl" || { why="no audit record with $k"; return 1; }
		done ;;
	smi_views:opaque)
		# The default policy: in monitoring (answered natively to an
		# unprivileged user), performed, no refusal. The bit-15 rows
		# were measured on 580 only: on another branch (tests/versions)
		# the GSS command is unknown, refused as such, as CUDA's are.
		case "${GS_FAKE_DRIVER_VERSION:-580.95.05}" in
		580.*) ;;
		*)
			[ "$(val_of "$d" binapi)" = NV_OK ] && [ "$(val_of "$d" gss)" = NOT_SUPPORTED ] &&
				smi_performed "$d" "NV2081_BINAPI_CTRL_0x20810110" 0x0 &&
				grep -q '"control":"0x2080a618".*"reason":"control unknown to gpusandbox"' "$d/audit.jsonl" ||
				{ why="$(tr '\n' ' ' <"$d/out"): want binapi performed, gss unknown on ${GS_FAKE_DRIVER_VERSION}"; return 1; }
			return 0 ;;
		esac
		[ "$(val_of "$d" binapi)" = NV_OK ] && [ "$(val_of "$d" gss)" = NOT_SUPPORTED ] ||
			{ why="$(tr '\n' ' ' <"$d/out"), want binapi=NV_OK gss=NOT_SUPPORTED (the fake's)"; return 1; }
		smi_performed "$d" "NV2081_BINAPI_CTRL_0x20810110" 0x0 &&
			smi_performed "$d" "cmd=0x2080a618 NV2080_CTRL_GSS_LEGACY" 0x56 ||
			{ why="not performed: $(grep -E '20810110|2080a618' "$d/err" | head -2)"; return 1; }
		smi_no_refusal "$d" || return 1 ;;
	smi_views:opaque_no_monitoring)
		# A policy without monitoring: both refused by it, audited.
		[ "$(val_of "$d" binapi)" = NOT_SUPPORTED ] && [ "$(val_of "$d" gss)" = NOT_SUPPORTED ] ||
			{ why="$(tr '\n' ' ' <"$d/out"), want binapi=NOT_SUPPORTED gss=NOT_SUPPORTED"; return 1; }
		grep -q 'gpusandbox: 2 calls refused' "$d/err" ||
			{ why="stderr summary: $(grep gpusandbox: "$d/err" | head -2)"; return 1; }
		grep -q '"control_name":"NV2081_BINAPI_CTRL_0x20810110".*"reason":"control not allowed by the policy"' \
			"$d/audit.jsonl" ||
			{ why="no audit record of the BinaryApi command refused by the policy"; return 1; } ;;
	smi_views:sessions)
		grep -q "^held=$(smi_held)" "$d/holder.out" || { why="the other tenant: $(cat "$d/holder.out"), want held=$(smi_held)"; return 1; }
		[ "$(val_of "$d" nvenc)" = NV_OK ] && [ "$(val_of "$d" nvenc_sessions)" = 0 ] ||
			{ why="$(tr '\n' ' ' <"$d/out"), want nvenc=NV_OK nvenc_sessions=0 (another tenant's session hidden)"; return 1; }
		smi_performed "$d" NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS 0x0 ||
			{ why="not performed by the supervisor"; return 1; }
		smi_no_refusal "$d" || return 1 ;;
	smi_views:sessions_video | baseline-smi_views:sessions)
		# A sandbox that may make sessions sees the GPU-wide count (the
		# driver keeps no per-client one); without a sandbox, the same.
		grep -q "^held=$(smi_held)" "$d/holder.out" || { why="the other tenant: $(cat "$d/holder.out"), want held=$(smi_held)"; return 1; }
		k=1
		[ "$(smi_held)" = NV_OK ] || k=0
		[ "$(val_of "$d" nvenc)" = NV_OK ] && [ "$(val_of "$d" nvenc_sessions)" = "$k" ] ||
			{ why="$(tr '\n' ' ' <"$d/out"), want nvenc_sessions=$k (the fake's count)"; return 1; } ;;
	baseline-smi_views:setters)
		[ "$(val_of "$d" compute_mode)" = NV_OK ] && [ "$(val_of "$d" diag_write)" = NV_OK ] &&
			[ "$(stat_of "$d" compute_mode_sets)" = 1 ] && [ "$(stat_of "$d" diag_config_writes)" = 1 ] ||
			{ why="without gpusandbox: $(tr '\n' ' ' <"$d/out") sets=$(stat_of "$d" compute_mode_sets) writes=$(stat_of "$d" diag_config_writes): not sensitive"; return 1; } ;;
	*)
		why="no check for $name"
		return 1 ;;
	esac
	return 0
}
