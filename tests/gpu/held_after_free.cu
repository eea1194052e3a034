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
//   held_after_free uvmfree N cuMemAlloc 1 GiB (CUDA maps it into UVM with
//                             UVM_MAP_EXTERNAL_ALLOCATION), then free its
//                             RM handle with a raw RM_FREE while UVM still
//                             maps it, and set the memory again through
//                             the mapping; N times (issue #17 item 9). The
//                             handle is read from gpusandbox's --trace
//                             output (GS_TRACE_FILE), so it runs only
//                             under gpusandbox --trace-output.
//
// Each step prints "step I ok|fail ERR". At the end the program holds what
// it has for HOLD_S seconds (default 3) so that a monitor outside can read
// the driver's own figure (nvidia-smi memory.used): the quota's word is not
// the judge here, the driver's is.
#include <cuda.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/ioctl.h>
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

/* The raw RM_FREE (NV_ESC_RM_FREE, NVOS00: hRoot, hObjectParent,
 * hObjectOld, status; include/nvrm_abi.h) of the newest 1 GiB video memory
 * handle that gpusandbox's trace shows and this program has not freed yet,
 * tried on every /dev/nvidiactl of the process: RM answers a client's
 * handle only on that client's own file. Returns the RM status of the
 * first file that knew the client, or -1. */
#define RM_FREE_WORD 0xc0104629u
static uint32_t freed[64];
static int nfreed;

static int newest_gib_handle(uint32_t *client, uint32_t *object)
{
	const char *path = getenv("GS_TRACE_FILE");
	char line[1024];
	FILE *f = path ? fopen(path, "r") : NULL;
	int found = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned c, o;
		const char *a = strstr(line, "RM_ALLOC(hClient=0x");
		if (!a || !strstr(line, "size=1073741824)") || !strstr(line, "NV_OK"))
			continue;
		if (sscanf(a, "RM_ALLOC(hClient=0x%x, hObject=0x%x", &c, &o) != 2)
			continue;
		int seen = 0;
		for (int i = 0; i < nfreed; i++)
			seen |= freed[i] == o;
		if (!seen) {
			*client = c;
			*object = o;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static long raw_free_newest(void)
{
	uint32_t client, object;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[64], target[64];
	long status = -1;
	if (!d || !newest_gib_handle(&client, &object))
		return -1;
	while ((e = readdir(d)) && status != 0) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strcmp(target, "/dev/nvidiactl"))
			continue;
		uint32_t p[4] = { client, client, object, 0 };
		if (ioctl(atoi(e->d_name), RM_FREE_WORD, p) == 0 && (status < 0 || p[3] == 0))
			status = p[3];
	}
	closedir(d);
	if (status == 0 && nfreed < 64)
		freed[nfreed++] = object;
	return status;
}

static CUresult uvmfree_one(int i)
{
	CUdeviceptr p;
	CUresult r = cuMemAlloc(&p, GIB);
	if (r == CUDA_SUCCESS)
		r = cuMemsetD8(p, 0x11, GIB);
	if (r == CUDA_SUCCESS)
		r = cuCtxSynchronize();
	if (r != CUDA_SUCCESS)
		return r;
	long st = raw_free_newest();
	printf("uvmfree %d raw_rm_free_status %ld\n", i, st);
	/* Still usable through UVM's mapping? */
	r = cuMemsetD8(p, 0x22, GIB);
	if (r == CUDA_SUCCESS)
		r = cuCtxSynchronize();
	printf("uvmfree %d set_after_free %s\n", i, r == CUDA_SUCCESS ? "ok" : "fail");
	return CUDA_SUCCESS;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: held_after_free vmm|export|dmabuf|uvmfree|ctx N\n");
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
		else if (!strcmp(argv[1], "uvmfree"))
			r = uvmfree_one(i);
		else
			return 2;
		step(i, r);
	}
	sleep((unsigned)hold_s());
	return 0;
}
