// SPDX-License-Identifier: MIT
// ctx_alloc: the smallest GPU job a container start benchmark can run:
// cuInit, a context, cuMemAlloc of MIB MiB (argv[1], default 64), a memset,
// free, exit 0. Exits 1 with the CUDA error's name on any failure, so a
// refused or broken start is counted, not hidden.
// Build on the GPU machine: nvcc -o ctx_alloc ctx_alloc.c -lcuda
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, CUresult r)
{
	const char *name = NULL;
	cuGetErrorName(r, &name);
	fprintf(stderr, "ctx_alloc: %s: %s\n", what, name ? name : "?");
	return 1;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoull(argv[1], NULL, 0) : 64;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;
	CUresult r;

	if ((r = cuInit(0)) != CUDA_SUCCESS)
		return fail("cuInit", r);
	if ((r = cuDeviceGet(&dev, 0)) != CUDA_SUCCESS)
		return fail("cuDeviceGet", r);
	if ((r = cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS)
		return fail("cuDevicePrimaryCtxRetain", r);
	if ((r = cuCtxSetCurrent(ctx)) != CUDA_SUCCESS)
		return fail("cuCtxSetCurrent", r);
	if ((r = cuMemAlloc(&p, mib << 20)) != CUDA_SUCCESS)
		return fail("cuMemAlloc", r);
	if ((r = cuMemsetD8(p, 0x5a, mib << 20)) != CUDA_SUCCESS)
		return fail("cuMemsetD8", r);
	if ((r = cuCtxSynchronize()) != CUDA_SUCCESS)
		return fail("cuCtxSynchronize", r);
	cuMemFree(p);
	cuDevicePrimaryCtxRelease(dev);
	return 0;
}
