# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# tests/adv/dupcache_checks.sh - the checks of tests/adv dupcache (sourced
# by tests/adv/run.sh): the supervisor's kept dups of a workload's file
# (supervisor/core/tasks/dupcache.h), judged by the fake driver's own account.
# Each returns 1 with $why. Uses val_of and $MIB from run.sh.

# The fake's video memory delta of one 2 MiB allocation (dupcache.c).
DUPCACHE_PAIR_BYTES=$((2 * MIB))
# A closed (or exited) file must be released: the supervisor drops an
# idle dup after GS_DUP_CACHE_IDLE_MS (5 ms) and a sweep. No duration is
# asserted (a loaded machine may take any time): the program waits up to
# its liveness deadline (RELEASE_WAIT_MS, 5 s) and prints -1 when the file
# was never released, as the baseline keeps it for the whole run.
# 200 pairs (RM_ALLOC + RM_FREE) and the session are over 400 trapped
# calls; without the cache every one closes a
# dup (a close the fake counts). With it, a few misses at most.
DUPCACHE_PAIRS=200
# REGISTER_FDs performed on a GPU node: each takes two dups, the GPU
# node's (never kept) and its target control file's (a second reach into
# the task, dup_trapped_fd: never kept either), so each closes two.
DUPCACHE_GPU_CALLS=20
DUPCACHE_GPU_CLOSES=$((2 * DUPCACHE_GPU_CALLS))

check_dupcache() {
	local name=$1 d=$2 v
	case "$name" in
	dupcache_swap)
		[ "$(val_of "$d" first_pair)" = NV_OK ] ||
			{ why="the first pair failed: $(tr '\n' ' ' <"$d/out")"; return 1; }
		# Under A's client on a number that names B now: never made
		# on A (the driver, given B, refuses A's client).
		[ "$(val_of "$d" stale_fake_delta)" = 0 ] ||
			{ why="performed on the kept file: $(grep stale_ "$d/out")"; return 1; }
		[ "$(val_of "$d" stale_status)" != NV_OK ] ||
			{ why="A's client on B's file answered NV_OK: $(grep stale_ "$d/out")"; return 1; }
		# Under B's client: made, on B.
		[ "$(val_of "$d" new_status)" = 0x0 ] &&
			[ "$(val_of "$d" new_fake_delta)" = "$DUPCACHE_PAIR_BYTES" ] ||
			{ why="not performed on the new file: $(grep stale_ "$d/out")"; return 1; } ;;
	dupcache_close)
		[ "$(val_of "$d" pairs_ok)" = "$DUPCACHE_PAIRS" ] ||
			{ why="pairs failed: $(grep pairs= "$d/out")"; return 1; }
		# The cache is used: far fewer dups dropped than calls.
		v=$(val_of "$d" fd_closes)
		[ -n "$v" ] && [ "$v" -lt "$DUPCACHE_PAIRS" ] ||
			{ why="the fake saw ${v:-?} closes for $DUPCACHE_PAIRS pairs (no dup kept?)"; return 1; }
		for v in freed_ms exit_freed_ms; do
			local ms
			ms=$(val_of "$d" $v)
			[ -n "$ms" ] && [ "$ms" -ge 0 ] ||
				{ why="$v=$ms: the fake never saw the file released"; return 1; }
		done
		[ "$(val_of "$d" gpu_calls)" = "$DUPCACHE_GPU_CALLS" ] &&
			ge "$(val_of "$d" gpu_fd_closes)" "$DUPCACHE_GPU_CLOSES" ||
			{ why="a GPU node's dup was kept: $(grep gpu_calls "$d/out")"; return 1; } ;;
	esac
	return 0
}

# The baselines (run.sh's sb_env) must show what the defence prevents.
check_dupcache_baseline() {
	local name=$1 d=$2
	case "$name" in
	baseline-dupcache_swap)
		# No kcmp: the call is performed on the kept file A.
		[ "$(val_of "$d" stale_fake_delta)" = "$DUPCACHE_PAIR_BYTES" ] ||
			{ why="kcmp off: $(grep stale_ "$d/out"): not sensitive"; return 1; } ;;
	baseline-dupcache_close)
		# No idle bound: the kept dup holds the file while the
		# workload lives.
		[ "$(val_of "$d" freed_ms)" = -1 ] ||
			{ why="idle bound off: $(grep freed_ms "$d/out"): not sensitive"; return 1; } ;;
	*)
		why="no baseline check for $name"
		return 1 ;;
	esac
	return 0
}
