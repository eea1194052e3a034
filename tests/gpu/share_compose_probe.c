// GPU tier (issue #17 item 9, follow-up): does the supervisor's UVM map
// change who may dup the workload's memory?
//
// The supervisor performs CUDA's UVM_MAP_EXTERNAL_ALLOCATION through a
// client of its own, after an RM_SHARE of the memory with that client
// (exec_uvm.c). A handle's first share starts from an empty list unless it
// asks for RS_SHARE_ACTION_FLAG_COMPOSE (clientShareResource_IMPL,
// resserv/src/rs_client.c, 580.95.05), and the empty list no longer holds
// the driver's default policy (clients of the owner's process may dup).
//
// This program, run natively and under gpusandbox: a cuMemAlloc (which
// CUDA maps through UVM), then a second RM client of this process, on a
// control file of its own with a device on GPU 0, dups the memory CUDA
// mapped. Prints cuda_map=, client=, device=, dup= (NV status; 0xe...
// is an errno) and the memory's first word written through the dup's
// owner's context afterwards (still_usable=ok|fail).
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvrm_abi.h"
#include "map_spy.h"

#define BYTES (2ull << 20)
#define WORD 0x5a5a5a5au
#define OWN_DEVICE 0xbeef0101u
#define OWN_DUP 0xbeef0102u

static uint32_t rm(int fd, uint32_t nr, void *arg, uint32_t size)
{
	return syscall(SYS_ioctl, fd, NV_IOC_WORD(nr, size), arg) == 0 ? 0 : 0xe0000000u | (uint32_t)errno;
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;
	uint32_t got = 0;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&p, BYTES)) {
		printf("setup=fail\n");
		return 1;
	}
	printf("cuda_map=%s status=0x%x h_client=0x%x h_memory=0x%x\n", last_map_fd >= 0 ? "seen" : "none",
	       last_map.status, last_map.h_client, last_map.h_memory);
	int ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	struct nvos21 a = { 0, 0, 0, NV01_ROOT_CLIENT, 0, 0, 0 };
	uint32_t e = rm(ctl, NV_ESC_RM_ALLOC, &a, sizeof(a));
	nv_handle_t client = a.h_object_new;
	printf("client=0x%x status=0x%x\n", e, a.status);
	struct nv0080_alloc_params dp = { .device_id = 0 };
	struct nvos21 d = { client, client, OWN_DEVICE, NV01_DEVICE_0, (uintptr_t)&dp, sizeof(dp), 0 };
	e = rm(ctl, NV_ESC_RM_ALLOC, &d, sizeof(d));
	printf("device=0x%x status=0x%x\n", e, d.status);
	struct nvos55 dup = { client, OWN_DEVICE, OWN_DUP, last_map.h_client, last_map.h_memory, 0, 0 };
	e = rm(ctl, NV_ESC_RM_DUP_OBJECT, &dup, sizeof(dup));
	printf("dup=0x%x status=0x%x\n", e, dup.status);
	if (dup.status == 0) {
		struct nvos00 f = { client, OWN_DEVICE, OWN_DUP, 0 };
		e = rm(ctl, NV_ESC_RM_FREE, &f, sizeof(f));
		printf("dup_free=0x%x status=0x%x\n", e, f.status);
	}
	close(ctl);
	int ok = cuMemsetD32(p, WORD, BYTES / 4) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS &&
	         cuMemcpyDtoH(&got, p, 4) == CUDA_SUCCESS && got == WORD;
	printf("still_usable=%s\n", ok ? "ok" : "fail");
	cuMemFree(p);
	return 0;
}
