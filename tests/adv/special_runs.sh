# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# tests/adv/special_runs.sh - the tests/adv cases that do not run as
# run_case runs them (sourced by tests/adv/run.sh): the supervisor killed
# under its workload, a workload that outlives it, the audit broker and
# fd, two sandboxes sharing memory or a token, fd exports, pid lists, a
# FUSE file the workload serves; and the helpers their checks use. Each
# run_* leaves its files in $tmp/NAME; the variables it reads and sets are
# run.sh's.

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
