/* SPDX-License-Identifier: MIT */
/*
 * GPU tier benchmark: cuMemAlloc + cuMemFree pairs per second for a size.
 * Build on the GPU machine: nvcc -O2 -o bench_memalloc bench_memalloc.c -lcuda
 * Usage: bench_memalloc SIZE_MIB ITERS
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WARMUP 20

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 2) << 20;
	int iters = argc > 2 ? atoi(argv[2]) : 2000;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "bench_memalloc: CUDA init failed\n");
		return 2;
	}
	for (int i = 0; i < WARMUP; i++) {
		if (cuMemAlloc(&p, bytes)) return 3;
		cuMemFree(p);
	}
	double t0 = now_s();
	for (int i = 0; i < iters; i++) {
		if (cuMemAlloc(&p, bytes)) { fprintf(stderr, "alloc failed at %d\n", i); return 3; }
		cuMemFree(p);
	}
	double dt = now_s() - t0;
	printf("size_mib=%zu iters=%d pairs_per_s=%.1f us_per_pair=%.2f\n", bytes >> 20, iters,
	       iters / dt, dt / iters * 1e6);
	return 0;
}
