#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier: issue #31's PyTorch figure, two builds interleaved with native
# in one session: the expandable-segments fill of 24 GiB in 64 MiB tensors
# (bench_torch.py fill64), REPS rounds in a rotated order. Prints each
# run's seconds and, per build, the median time ratio native/build of the
# same round (1 is native speed; issue #31 asks >= 0.75). Figures are
# printed, never asserted.
#
#   OLD=build/ab/gpusandbox-old NEW=build/gpusandbox-static REPS=3 tests/gpu/fill_ab.sh
#
# AS_USER=1 adds a fourth configuration: NEW with --uvm-map as-user, the
# workload run as AS_USER_UID (default 47011, a uid no process of the
# machine has), its HOME a directory of its own under /tmp; OLD_AS_USER=1
# a fifth, OLD the same way.
#
# KINDS=1 adds KINDS_REPS (default 1) rounds of one run natively, one under
# NEW and, with AS_USER=1, one under NEW as-user, each with
# tests/gpu/ioctl_time.c preloaded into the workload alone (OUT, default
# /tmp/fill-kinds; its folders writable by AS_USER_UID), and prints where
# the whole process's ioctl time went by call kind (init and fill
# together; OUT/kinds-CONFIG.txt): the calls the fill makes 384 of are its
# own.
set -u
cd "$(dirname "$0")/../.." || exit 2
OLD=${OLD:?set OLD to the build before}
NEW=${NEW:-build/gpusandbox-static}
REPS=${REPS:-3}
PY=${PY:-python3}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) OLD=$OLD NEW=$NEW reps=$REPS"
secs() { "$@" "$PY" tests/gpu/bench_torch.py fill64 2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["fill_s"])'; }
declare -A T
CFG=(native old new)
AS_USER_UID=${AS_USER_UID:-47011}
if [ "${AS_USER:-0}" = 1 ]; then
	CFG+=(asuser)
	[ "${OLD_AS_USER:-0}" = 1 ] && CFG+=(oldasuser)
	mkdir -p /tmp/gs-asuser-home && chmod 0777 /tmp/gs-asuser-home
fi
as_user() { # build
	echo "$1" --user "$AS_USER_UID" --group "$AS_USER_UID" --uvm-map as-user --mem 120g -- env HOME=/tmp/gs-asuser-home
}
for r in $(seq "$REPS"); do
	for i in $(seq 0 $((${#CFG[@]} - 1))); do
		c=${CFG[$(((i + r) % ${#CFG[@]}))]}
		case $c in
		native) T[$c,$r]=$(secs) ;;
		old) T[$c,$r]=$(secs "$OLD" --user root --mem 120g --) ;;
		new) T[$c,$r]=$(secs "$NEW" --user root --mem 120g --) ;;
		asuser) T[$c,$r]=$(secs $(as_user "$NEW")) ;;
		oldasuser) T[$c,$r]=$(secs $(as_user "$OLD")) ;;
		esac
		echo "round=$r $c seconds=${T[$c,$r]}"
	done
done
for c in "${CFG[@]:1}"; do
	rs=""
	for r in $(seq "$REPS"); do rs="$rs ${T[native,$r]}/${T[$c,$r]}"; done
	python3 -c "import statistics,sys; v=[eval(x) for x in sys.argv[2:]]; print(f'{sys.argv[1]}: native/build time ratio median {statistics.median(v):.3f} [{min(v):.3f}-{max(v):.3f}]')" "$c" $rs
done
if [ "${KINDS:-0}" = 1 ]; then
	OUT=${OUT:-/tmp/fill-kinds}
	mkdir -p "$OUT"
	cc -O2 -shared -fPIC -Iinclude -o "$OUT/ioctl_time.so" tests/gpu/ioctl_time.c -ldl || exit 1
	chmod 0755 "$OUT" "$OUT/ioctl_time.so"
	kinds() { # config, round, then the command's prefix
		local d=$OUT/$1/r$2; shift 2
		mkdir -p "$d" && chmod 0777 "$d" "${d%/*}"
		"$@" env IOCTL_TIME_DIR="$d" LD_PRELOAD="$OUT/ioctl_time.so" "$PY" tests/gpu/bench_torch.py fill64 2>/dev/null
	}
	KCFG=(native new)
	[ "${AS_USER:-0}" = 1 ] && KCFG+=(asuser)
	for r in $(seq "${KINDS_REPS:-1}"); do
		for c in "${KCFG[@]}"; do
			case $c in
			native) echo "kinds round=$r native $(kinds native "$r")" ;;
			new) echo "kinds round=$r new $(kinds new "$r" "$NEW" --user root --mem 120g --)" ;;
			asuser) echo "kinds round=$r asuser $(kinds asuser "$r" "$NEW" --user "$AS_USER_UID" \
				--group "$AS_USER_UID" --uvm-map as-user --mem 120g -- env HOME=/tmp/gs-asuser-home)" ;;
			esac
		done
	done
	for c in "${KCFG[@]:1}"; do
		python3 tests/gpu/ioctl_time_summary.py "$OUT/native" "$OUT/$c" native "$c" >"$OUT/kinds-$c.txt"
		head -24 "$OUT/kinds-$c.txt"
	done
fi
