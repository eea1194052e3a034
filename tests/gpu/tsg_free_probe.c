// SPDX-License-Identifier: MIT
// tsg_free_probe: what a UVM channel registration keeps after the
// channel's group is freed (issue #17 item 4), on the real driver.
// cuCtxCreate makes CUDA's channel groups (RM_ALLOC of
// KEPLER_CHANNEL_GROUP_A, seen by this program's own ioctl(), which stands
// in front of libc's for libcuda: link with -rdynamic) and registers every
// channel with UVM. The probe then frees each group with a raw RM_FREE on
// CUDA's control fd, behind CUDA's back, and prints the device's
// memory.used (nvidia-smi, device-wide, MiB) before the context, after it and
// after the frees (read outside the sandbox, which virtualises what
// nvidia-smi reports inside: the probe names each stage by a file in DIR,
// argv[1], and waits for DIR/STAGE.mib, which uvm_channel_check.sh writes):
// natively, UVM keeps each group (its dup) and channel
// ID (the retainer), and their memory, until the UVM file closes; under
// gpusandbox the supervisor unregisters the freed channels (its profile
// counts the unregisters UVM answered NV_OK: registrations that were
// still there after the frees). Exits with _exit: CUDA's own teardown
// would touch the freed handles.
// Build on the GPU machine: nvcc -Iinclude -o tsg_free_probe tsg_free_probe.c -lcuda -Xlinker -export-dynamic
#include <cuda.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvrm_abi.h"

#define MAX_GROUPS 64
#define KEPLER_CHANNEL_GROUP_A 0xa06cu
#define UVM_REGISTER 27u
#define ESC_RM_ALLOC 0x2bu
#define ESC_RM_FREE  0x29u
#define SETTLE_US    200000

static struct { int fd; uint32_t client, parent, group; } groups[MAX_GROUPS];
static int n_groups, n_registered;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	long rc = syscall(SYS_ioctl, fd, req, arg);
	if (rc == 0 && (req & 0xff) == ESC_RM_ALLOC && ((req >> 16) & 0x3fff) == sizeof(struct nvos64)) {
		const struct nvos64 *a = arg;
		if (a->h_class == KEPLER_CHANNEL_GROUP_A && a->status == 0 && n_groups < MAX_GROUPS)
			groups[n_groups++] = (typeof(groups[0])){ fd, a->h_root, a->h_object_parent, a->h_object_new };
	}
	if (rc == 0 && req == UVM_REGISTER)
		n_registered++;
	return (int)rc;
}

#define STAGE_WAIT_TRIES 100
#define STAGE_POLL_US    100000

/* Names the stage by a file in dir and waits for the MiB the watcher
 * read then (dir/stage.mib); 0 when none came. */
static unsigned long long used_mib(const char *dir, const char *stage)
{
	char path[512];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, stage);
	if ((f = fopen(path, "w")))
		fclose(f);
	snprintf(path, sizeof(path), "%s/%s.mib", dir, stage);
	for (int i = 0; i < STAGE_WAIT_TRIES && !v; i++) {
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%llu", &v) != 1)
				v = 0;
			fclose(f);
		}
		if (!v)
			usleep(STAGE_POLL_US);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	CUdevice dev;
	CUcontext ctx;

	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS) {
		printf("probe: setup failed\n");
		return 1;
	}
	unsigned long long before = used_mib(dir, "before");
	if (cuCtxCreate(&ctx, NULL, 0, dev) != CUDA_SUCCESS) {
		printf("probe: cuCtxCreate failed\n");
		return 1;
	}
	usleep(SETTLE_US);
	unsigned long long with_ctx = used_mib(dir, "with_ctx");
	int freed = 0;
	for (int i = 0; i < n_groups; i++) {
		struct nvos00 f = { groups[i].client, groups[i].parent, groups[i].group, 0 };
		if (syscall(SYS_ioctl, groups[i].fd, NV_IOC_WORD(ESC_RM_FREE, sizeof(f)), &f) == 0 && f.status == 0)
			freed++;
	}
	usleep(SETTLE_US);
	printf("probe: groups=%d registered=%d freed=%d used_mib before=%llu with_ctx=%llu after_free=%llu\n",
	       n_groups, n_registered, freed, before, with_ctx, used_mib(dir, "after_free"));
	fflush(stdout);
	_exit(0);
}
