// GPU tier (research for issue #17 item 9): can the supervisor perform a
// workload's UVM_MAP_EXTERNAL_ALLOCATION itself, from its own copy of the
// parameters, through a dup of the workload's /dev/nvidia-uvm file?
//
// Why it matters: today the call is continued, so the driver reads the
// parameters from the workload's memory after we looked, and UVM's dup of
// the memory (uvm_map_external.c, nvUvmInterfaceDupMemory) keeps it alive
// past the workload's RM_FREE of its handle. A mapping the supervisor makes
// from its copy is one it knows, and can charge until it is gone. In the
// 580.95.05 source, the map, unmap and free ioctls take the VA space from
// the file, never current->mm, and never use rmCtrlFd; the open question is
// RM's: nvGpuOpsDupMemory dups with NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_
// PRIVILEGE, i.e. as the calling process, and the workload's client
// belongs to another process.
//
// A child makes a CUDA context and a 64 MiB cuMemAlloc, recording CUDA's
// own MAP_EXTERNAL parameters (this program's ioctl() stands in front of
// libc's for libcuda: linked with --export-dynamic). The parent, another
// process, takes the child's UVM and control fds with pidfd_getfd and,
// through its dups, prints each step's NV status:
//   validate=   UVM_VALIDATE_VA_RANGE of CUDA's range (it exists: 0x0)
//   unmap=      UVM_UNMAP_EXTERNAL of CUDA's mapping on the GPU
//   map=        UVM_MAP_EXTERNAL_ALLOCATION from the parent's copy, with
//               the child's client and memory handles (2026-11-29: 0x1b)
// then, when own=1 (the default), the way round the share policy that a
// supervisor would take: a client of its own with a device on GPU 0, an
// RM_SHARE of the child's memory with that client alone
// (RS_SHARE_TYPE_CLIENT), an RM_DUP_OBJECT of it into that client, and
// the map made with the parent's client and dup:
//   own_client= own_device= share= dup= own_map= (and _us timings)
//   own_free=   the parent frees its dup: UVM keeps its own reference
// then the child writes and reads the memory through the (re)made mapping
// (child_check=ok|fail), and the parent frees the range with UVM_FREE
// (free=, then validate_after_free=: no such range).
#define _GNU_SOURCE
#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvrm_abi.h"
#include "map_spy.h"

#define UVM_FREE 34u
#define UVM_UNMAP_EXTERNAL 66u
#define UVM_VALIDATE_VA_RANGE 72u
#define BYTES (64ull << 20)
#define WORD_A 0x11111111u
#define WORD_B 0x22222222u

struct unmap_params { uint64_t base, length; uint8_t uuid[16]; uint32_t status, pad; };
struct range_params { uint64_t base, length; uint32_t status, pad; };
_Static_assert(sizeof(struct unmap_params) == 40, "UVM_UNMAP_EXTERNAL_PARAMS");

struct report { pid_t pid; int uvm_fd; struct map_params map; CUdeviceptr p; };

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static bool check_word(CUdeviceptr p, uint32_t w)
{
	uint32_t got = 0;
	if (cuMemsetD32(p, w, BYTES / 4) != CUDA_SUCCESS || cuCtxSynchronize() != CUDA_SUCCESS ||
	    cuMemcpyDtoH(&got, p + BYTES - 4, 4) != CUDA_SUCCESS)
		return false;
	return got == w;
}

static void child(int to_parent, int from_parent)
{
	CUdevice dev;
	CUcontext ctx;
	struct report r = { getpid(), -1, { 0 }, 0 };
	char b;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&r.p, BYTES)) {
		printf("child_setup=fail\n");
		_exit(1);
	}
	printf("child_before=%s\n", check_word(r.p, WORD_A) ? "ok" : "fail");
	r.uvm_fd = last_map_fd;
	r.map = last_map;
	printf("cuda_map base=0x%llx length=0x%llx offset=0x%llx gpus=%llu h_client=0x%x h_memory=0x%x fd=%d\n",
	       (unsigned long long)r.map.base, (unsigned long long)r.map.length,
	       (unsigned long long)r.map.offset, (unsigned long long)r.map.gpu_count, r.map.h_client,
	       r.map.h_memory, r.uvm_fd);
	fflush(stdout);
	if (write(to_parent, &r, sizeof(r)) != sizeof(r) || read(from_parent, &b, 1) != 1)
		_exit(1);
	printf("child_check=%s\n", b == 'm' && check_word(r.p, WORD_B) ? "ok" : "fail");
	fflush(stdout);
	if (write(to_parent, "c", 1) != 1 || read(from_parent, &b, 1) != 1)
		_exit(1);
	_exit(0); // the range is gone: the memory is not touched again
}


static uint32_t rm(int fd, uint32_t nr, void *arg, uint32_t size)
{
	return syscall(SYS_ioctl, fd, NV_IOC_WORD(nr, size), arg) == 0 ? 0 : 0xe0000000u | (uint32_t)errno;
}

#define OWN_DEVICE 0xbeef0001u
#define OWN_DUP    0xbeef0002u

// The way a supervisor would make the mapping: its own client, a share of
// the child's memory with that client only, a dup into it, and the map
// with the dup. Returns the map's status.
static uint32_t map_through_own_client(int pidfd, const struct report *r)
{
	int ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC), gpu = open("/dev/nvidia0", O_RDWR | O_CLOEXEC);
	int child_ctl = (int)syscall(SYS_pidfd_getfd, pidfd, r->map.ctl_fd, 0);
	int ufd = (int)syscall(SYS_pidfd_getfd, pidfd, r->uvm_fd, 0);
	double t0, t1;

	printf("own_fds ctl=%d gpu=%d child_ctl=%d uvm=%d\n", ctl, gpu, child_ctl, ufd);
	struct nvos21 a = { 0, 0, 0, NV01_ROOT_CLIENT, 0, 0, 0 };
	uint32_t e = rm(ctl, NV_ESC_RM_ALLOC, &a, sizeof(a));
	nv_handle_t client = a.h_object_new;
	printf("own_client=0x%x status=0x%x handle=0x%x\n", e, a.status, client);
	struct nv0080_alloc_params dp = { .device_id = 0 };
	struct nvos21 d = { client, client, OWN_DEVICE, NV01_DEVICE_0, (uintptr_t)&dp, sizeof(dp), 0 };
	e = rm(ctl, NV_ESC_RM_ALLOC, &d, sizeof(d));
	printf("own_device=0x%x status=0x%x\n", e, d.status);
	struct nvos57 sh = { r->map.h_client, r->map.h_memory,
	                     { client, RS_ACCESS_DUP_OBJECT_BIT, RS_SHARE_TYPE_CLIENT, 0, 0 }, 0 };
	t0 = now_us();
	e = rm(child_ctl, NV_ESC_RM_SHARE, &sh, sizeof(sh));
	t1 = now_us();
	printf("share=0x%x status=0x%x share_us=%.1f\n", e, sh.status, t1 - t0);
	struct nvos55 dup = { client, OWN_DEVICE, OWN_DUP, r->map.h_client, r->map.h_memory, 0, 0 };
	t0 = now_us();
	e = rm(ctl, NV_ESC_RM_DUP_OBJECT, &dup, sizeof(dup));
	t1 = now_us();
	printf("dup=0x%x status=0x%x dup_us=%.1f\n", e, dup.status, t1 - t0);
	struct map_params m = r->map;
	m.ctl_fd = ctl;
	m.h_client = client;
	m.h_memory = OWN_DUP;
	m.status = 0xffffffffu;
	t0 = now_us();
	long rc = syscall(SYS_ioctl, ufd, UVM_MAP_EXTERNAL_ALLOCATION, &m);
	t1 = now_us();
	printf("own_map=0x%x rc=%ld own_map_us=%.1f\n", m.status, rc, t1 - t0);
	struct nvos00 f = { client, OWN_DEVICE, OWN_DUP, 0 };
	e = rm(ctl, NV_ESC_RM_FREE, &f, sizeof(f));
	printf("own_free=0x%x status=0x%x\n", e, f.status);
	return m.status;
}

static uint32_t validate(int fd, uint64_t base, uint64_t len)
{
	struct range_params q = { base, len, 0xffffffffu, 0 };
	return syscall(SYS_ioctl, fd, UVM_VALIDATE_VA_RANGE, &q) == 0 ? q.status : 0xeeeeeeeeu;
}

int main(int argc, char **argv)
{
	int up[2], down[2];
	(void)argc, (void)argv;
	printf("uid=%d\n", (int)getuid());
	fflush(stdout);
	if (pipe(up) || pipe(down))
		return 1;
	pid_t pid = fork();
	if (pid == 0)
		child(up[1], down[0]);
	struct report r;
	if (read(up[0], &r, sizeof(r)) != sizeof(r)) {
		printf("parent: no report\n");
		return 1;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, r.pid, 0);
	int ufd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, r.uvm_fd, 0);
	printf("getfd=%s\n", ufd >= 0 ? "ok" : strerror(errno));
	if (ufd < 0) {
		kill(r.pid, SIGKILL); // it waits on us, holding our output open
		waitpid(pid, NULL, 0);
		return 1;
	}
	printf("validate=0x%x\n", validate(ufd, r.map.base, r.map.length));
	struct unmap_params u = { r.map.base, r.map.length, { 0 }, 0xffffffffu, 0 };
	memcpy(u.uuid, r.map.gpu[0].uuid, sizeof(u.uuid));
	long rc = syscall(SYS_ioctl, ufd, UVM_UNMAP_EXTERNAL, &u);
	printf("unmap=0x%x rc=%ld\n", u.status, rc);
	struct map_params m = r.map;
	m.status = 0xffffffffu;
	double t0 = now_us();
	rc = syscall(SYS_ioctl, ufd, UVM_MAP_EXTERNAL_ALLOCATION, &m);
	double t1 = now_us();
	printf("map=0x%x rc=%ld map_us=%.1f\n", m.status, rc, t1 - t0);
	if (m.status != 0)
		m.status = map_through_own_client(pidfd, &r);
	fflush(stdout);
	char b = m.status == 0 ? 'm' : 'x';
	if (write(down[1], &b, 1) != 1 || read(up[0], &b, 1) != 1)
		return 1;
	struct range_params f = { r.map.base, r.map.length, 0xffffffffu, 0 };
	rc = syscall(SYS_ioctl, ufd, UVM_FREE, &f);
	printf("free=0x%x rc=%ld\n", f.status, rc);
	printf("validate_after_free=0x%x\n", validate(ufd, r.map.base, r.map.length));
	fflush(stdout);
	if (write(down[1], "q", 1) != 1)
		return 1;
	int st;
	waitpid(pid, &st, 0);
	printf("child_exit=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
