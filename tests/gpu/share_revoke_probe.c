// GPU tier (issue #17 item 9, follow-up): the share policy steps the
// supervisor's UVM map takes, on the real driver, without gpusandbox.
//
// The parent makes a cuMemAlloc (CUDA maps it through UVM: map_spy.h
// learns CUDA's client, memory and control fd). A child process makes a
// client of its own (C) with a device on GPU 0. Then, printing each NV
// status:
//   dup_before=    C dups the parent's memory: the default policy is the
//                  same process only (expect 0x1b)
//   share=         the parent shares the memory with C alone, composed
//                  (RS_SHARE_TYPE_CLIENT, RS_SHARE_ACTION_FLAG_COMPOSE)
//   dup_shared=    C dups it (expect 0x0), and frees its dup
//   revoke=        the parent revokes that policy (COMPOSE | REVOKE)
//   dup_revoked=   C dups it again (expect 0x1b: nothing names C any more)
//   same_process=  a second client of the parent dups it (expect 0x0: the
//                  default policy was kept by COMPOSE)
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "nvrm_abi.h"
#include "map_spy.h"

#define BYTES (2ull << 20)
#define DEV 0xbeef0201u
#define DUP 0xbeef0202u

static uint32_t rm(int fd, uint32_t nr, void *arg, uint32_t size)
{
	return syscall(SYS_ioctl, fd, NV_IOC_WORD(nr, size), arg) == 0 ? 0 : 0xe0000000u | (uint32_t)errno;
}

// A client with a device on GPU 0, on a control file of its own.
static nv_handle_t make_client(int *ctl_out)
{
	int ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC), gpu = open("/dev/nvidia0", O_RDWR | O_CLOEXEC);
	struct nvos21 a = { 0, 0, 0, NV01_ROOT_CLIENT, 0, 0, 0 };
	struct nv0080_alloc_params dp = { .device_id = 0 };

	*ctl_out = ctl;
	if (ctl < 0 || gpu < 0 || rm(ctl, NV_ESC_RM_ALLOC, &a, sizeof(a)) || a.status)
		return 0;
	struct nvos21 d = { a.h_object_new, a.h_object_new, DEV, NV01_DEVICE_0, (uintptr_t)&dp, sizeof(dp), 0 };
	if (rm(ctl, NV_ESC_RM_ALLOC, &d, sizeof(d)) || d.status)
		return 0;
	return a.h_object_new;
}

// Dups (src_client, src_mem) under our device, frees the dup; the status.
static uint32_t try_dup(int ctl, nv_handle_t client, nv_handle_t src_client, nv_handle_t src_mem)
{
	struct nvos55 dup = { client, DEV, DUP, src_client, src_mem, 0, 0 };
	uint32_t e = rm(ctl, NV_ESC_RM_DUP_OBJECT, &dup, sizeof(dup));

	if (e || dup.status)
		return e ? e : dup.status;
	struct nvos00 f = { client, DEV, DUP, 0 };
	(void)rm(ctl, NV_ESC_RM_FREE, &f, sizeof(f));
	return 0;
}

static uint32_t share(uint8_t action, nv_handle_t target)
{
	struct nvos57 sh = { last_map.h_client, last_map.h_memory,
	                     { target, RS_ACCESS_DUP_OBJECT_BIT, RS_SHARE_TYPE_CLIENT, action, 0 }, 0 };
	uint32_t e = rm(last_map.ctl_fd, NV_ESC_RM_SHARE, &sh, sizeof(sh));
	return e ? e : sh.status;
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;
	int to_child[2], to_parent[2];
	nv_handle_t c = 0, src[2];
	char step;

	if (pipe(to_child) || pipe(to_parent))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		int ctl;
		c = make_client(&ctl);
		if (write(to_parent[1], &c, sizeof(c)) != sizeof(c) || read(to_child[0], src, sizeof(src)) != sizeof(src))
			_exit(1);
		printf("dup_before=0x%x\n", try_dup(ctl, c, src[0], src[1]));
		fflush(stdout);
		for (int i = 0; i < 2; i++) {
			if (write(to_parent[1], "s", 1) != 1 || read(to_child[0], &step, 1) != 1)
				_exit(1);
			printf("%s=0x%x\n", step == 'r' ? "dup_revoked" : "dup_shared", try_dup(ctl, c, src[0], src[1]));
			fflush(stdout);
		}
		(void)!write(to_parent[1], "e", 1);
		_exit(0);
	}
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&p, BYTES) || last_map_fd < 0 || read(to_parent[0], &c, sizeof(c)) != sizeof(c) || !c) {
		printf("setup=fail\n");
		return 1;
	}
	src[0] = last_map.h_client;
	src[1] = last_map.h_memory;
	if (write(to_child[1], src, sizeof(src)) != sizeof(src) || read(to_parent[0], &step, 1) != 1)
		return 1;
	printf("share=0x%x\n", share(RS_SHARE_ACTION_FLAG_COMPOSE, c));
	fflush(stdout);
	if (write(to_child[1], "d", 1) != 1 || read(to_parent[0], &step, 1) != 1)
		return 1;
	printf("revoke=0x%x\n", share(RS_SHARE_ACTION_FLAG_COMPOSE | RS_SHARE_ACTION_FLAG_REVOKE, c));
	fflush(stdout);
	if (write(to_child[1], "r", 1) != 1 || read(to_parent[0], &step, 1) != 1)
		return 1;
	int ctl2;
	nv_handle_t mine = make_client(&ctl2);
	printf("same_process=0x%x\n", mine ? try_dup(ctl2, mine, src[0], src[1]) : 0xffffffffu);
	waitpid(pid, NULL, 0);
	cuMemFree(p);
	return 0;
}
