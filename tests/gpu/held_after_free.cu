// SPDX-License-Identifier: MIT
// held_after_free: what keeps GPU memory alive after the handle that a quota
// counted is freed (issue #17 items 3, 9 and 13). Host code only, CUDA
// driver API; build: nvcc -o held_after_free held_after_free.cu -lcuda
//
//   held_after_free vmm N     cuMemCreate 1 GiB, map it, cuMemRelease the
//                             handle while the mapping stays; N times
//   held_after_free export N  cuMemCreate 1 GiB exportable, export a POSIX
//                             fd, cuMemRelease the handle, keep only the fd
//   held_after_free dmabuf N  cuMemAlloc 1 GiB, take a dma-buf fd of it,
//                             cuMemFree, keep only the fd
//   held_after_free ctx N     N processes, each a context and 1 MiB
//
// Each step prints "step I ok|fail ERR". At the end the program holds what
// it has for HOLD_S seconds (default 3) so that a monitor outside can read
// the driver's own figure (nvidia-smi memory.used): the quota's word is not
// the judge here, the driver's is.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GIB (1ull << 30)

static int hold_s(void)
{
	const char *s = getenv("HOLD_S");
	return s ? atoi(s) : 3;
}

static void step(int i, CUresult r)
{
	const char *name = NULL;
	cuGetErrorName(r, &name);
	printf("step %d %s %s\n", i, r == CUDA_SUCCESS ? "ok" : "fail", name ? name : "?");
	fflush(stdout);
}

static CUcontext primary(void)
{
	CUdevice dev;
	CUcontext ctx;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "no CUDA context\n");
		exit(2);
	}
	return ctx;
}

static CUresult vmm_one(int exportable, int *fd_out)
{
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	if (exportable)
		prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	CUmemGenericAllocationHandle h;
	CUresult r = cuMemCreate(&h, GIB, &prop, 0);
	if (r)
		return r;
	if (exportable) {
		r = cuMemExportToShareableHandle(fd_out, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
		if (r)
			return r;
		return cuMemRelease(h); /* only the fd is left */
	}
	CUdeviceptr va;
	r = cuMemAddressReserve(&va, GIB, 0, 0, 0);
	if (r)
		return r;
	r = cuMemMap(va, GIB, 0, h, 0);
	if (r)
		return r;
	CUmemAccessDesc acc;
	memset(&acc, 0, sizeof acc);
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = 0;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	r = cuMemSetAccess(va, GIB, &acc, 1);
	if (r)
		return r;
	r = cuMemsetD8(va, 0x5a, GIB); /* touch it: the pages are real */
	if (r)
		return r;
	return cuMemRelease(h); /* the mapping keeps the memory */
}

static CUresult dmabuf_one(int *fd_out)
{
	CUdeviceptr p;
	CUresult r = cuMemAlloc(&p, GIB);
	if (r)
		return r;
	r = cuMemGetHandleForAddressRange(fd_out, p, GIB, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r)
		return r;
	return cuMemFree(p); /* only the dma-buf fd is left */
}

static int ctx_children(int n)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			primary();
			CUdeviceptr p;
			CUresult r = cuMemAlloc(&p, 1u << 20);
			step(i, r);
			sleep((unsigned)hold_s() + 2);
			_exit(r ? 1 : 0);
		}
	}
	int bad = 0, st;
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: held_after_free vmm|export|dmabuf|ctx N\n");
		return 2;
	}
	int n = atoi(argv[2]);
	if (!strcmp(argv[1], "ctx"))
		return ctx_children(n);
	primary();
	for (int i = 0; i < n; i++) {
		int fd = -1;
		CUresult r;
		if (!strcmp(argv[1], "vmm"))
			r = vmm_one(0, NULL);
		else if (!strcmp(argv[1], "export"))
			r = vmm_one(1, &fd);
		else if (!strcmp(argv[1], "dmabuf"))
			r = dmabuf_one(&fd);
		else
			return 2;
		step(i, r);
	}
	sleep((unsigned)hold_s());
	return 0;
}
