# Interleaved A/B of the 2 MiB cuMemAlloc/cuMemFree pair (issue #16):
# per round, native, then each binary of BINS (build/gpusandbox-static-NAME,
# "final" meaning build/gpusandbox-static), then the per-call profile of
# each. Figures are printed, never asserted. ROUNDS and PAIRS set the size.
set -u
BINS=${BINS:-"base final"}
ROUNDS=${ROUNDS:-3}
PAIRS=${PAIRS:-3000}
bin_of() { [ "$1" = final ] && echo build/gpusandbox-static || echo "build/gpusandbox-static-$1"; }
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for i in $(seq "$ROUNDS"); do
	echo "pair native $(timeout 60 /tmp/bench_memalloc 2 "$PAIRS")"
	for b in $BINS; do
		echo "pair $b $(timeout 60 "$(bin_of "$b")" --user root --mem 120g -- /tmp/bench_memalloc 2 "$PAIRS")"
	done
done
for b in $BINS; do
	echo "# profile $b"
	GPUSANDBOX_PROFILE=1 timeout 60 "$(bin_of "$b")" --user root --mem 120g -- /tmp/bench_memalloc 2 "$PAIRS" 2>&1 |
		grep -E 'other|RM_FREE|RM_ALLOC |RM_CONTROL|notifications'
done
