// SPDX-License-Identifier: MIT
// ctx_churn: ROUNDS (argv[1], default 30) times a CUDA context is made,
// 2 MiB allocated, set and freed, and the context destroyed. Each context
// registers its channels with UVM and CUDA unregisters them at the
// destroy, then frees their groups: under gpusandbox --channel-groups G
// (a few contexts' worth) every round must still succeed, which it does
// only if the ledger lets each destroyed context's channels go (issue #17
// item 4, uvm_maps.h). Prints "churn ok N" or the failing round and the
// CUDA error's name (exit 1).
// Build on the GPU machine: nvcc -o ctx_churn ctx_churn.c -lcuda
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNK (2u << 20)

static int fail(int round, const char *what, CUresult r)
{
	const char *name = NULL;
	cuGetErrorName(r, &name);
	printf("churn failed round %d %s: %s\n", round, what, name ? name : "?");
	return 1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 30;
	CUdevice dev;
	CUresult r;

	if ((r = cuInit(0)) != CUDA_SUCCESS)
		return fail(-1, "cuInit", r);
	if ((r = cuDeviceGet(&dev, 0)) != CUDA_SUCCESS)
		return fail(-1, "cuDeviceGet", r);
	for (int i = 0; i < rounds; i++) {
		CUcontext ctx;
		CUdeviceptr p;
		if ((r = cuCtxCreate(&ctx, NULL, 0, dev)) != CUDA_SUCCESS)
			return fail(i, "cuCtxCreate", r);
		if ((r = cuMemAlloc(&p, CHUNK)) != CUDA_SUCCESS)
			return fail(i, "cuMemAlloc", r);
		if ((r = cuMemsetD8(p, 1, CHUNK)) != CUDA_SUCCESS || (r = cuCtxSynchronize()) != CUDA_SUCCESS)
			return fail(i, "cuMemsetD8", r);
		if ((r = cuMemFree(p)) != CUDA_SUCCESS)
			return fail(i, "cuMemFree", r);
		if ((r = cuCtxDestroy(ctx)) != CUDA_SUCCESS)
			return fail(i, "cuCtxDestroy", r);
	}
	printf("churn ok %d\n", rounds);
	return 0;
}
