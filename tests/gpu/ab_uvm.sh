set -u
nvcc -O2 -o /tmp/bench_memalloc tests/gpu/bench_memalloc.c -lcuda || exit 1
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for i in 1 2 3; do
	echo "pair native $(timeout 60 /tmp/bench_memalloc 2 3000)"
	for b in base 3c1d982 final; do
		bin=build/gpusandbox-static-$b; [ $b = final ] && bin=build/gpusandbox-static
		echo "pair $b $(timeout 60 $bin --user root --mem 120g -- /tmp/bench_memalloc 2 3000)"
	done
done
GPUSANDBOX_PROFILE=1 timeout 60 build/gpusandbox-static --user root --mem 120g -- /tmp/bench_memalloc 2 3000 2>&1 | grep -E 'other|RM_FREE|RM_ALLOC |RM_CONTROL'
