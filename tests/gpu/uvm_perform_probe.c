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
// libc's for libcuda: built with -rdynamic). The parent, another process,
// takes the child's UVM fd with pidfd_getfd and, through its dup, prints
// each step's NV status:
//   validate=   UVM_VALIDATE_VA_RANGE of CUDA's range (it exists: 0x0)
//   unmap=      UVM_UNMAP_EXTERNAL of CUDA's mapping on the GPU
//   map=        UVM_MAP_EXTERNAL_ALLOCATION from the parent's copy
//   map_us=     how long that took
// then the child writes and reads the memory through the (re)made mapping
// (child_check=ok|fail), and the parent frees the range with UVM_FREE
// (free=, then validate_after_free=, 0x1b... expected: no such range).
// With argument "user", both run as uid/gid 65534 (a supervisor that is
// not root, as the command line may be run).
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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

#define UVM_MAP_EXTERNAL_ALLOCATION 33u
#define UVM_FREE 34u
#define UVM_UNMAP_EXTERNAL 66u
#define UVM_VALIDATE_VA_RANGE 72u
#define MAX_GPUS_580 (32 * 8) /* NV_MAX_DEVICES x UVM_PARENT_ID_MAX_SUB_PROCESSORS */
#define BYTES (64ull << 20)
#define WORD_A 0x11111111u
#define WORD_B 0x22222222u

struct gpu_attrs { uint8_t uuid[16]; uint32_t mapping, caching, format, element_bits, compression; };
struct map_params {
	uint64_t base, length, offset;
	struct gpu_attrs gpu[MAX_GPUS_580];
	uint64_t gpu_count;
	int32_t ctl_fd;
	uint32_t h_client, h_memory, status;
};
struct unmap_params { uint64_t base, length; uint8_t uuid[16]; uint32_t status, pad; };
struct range_params { uint64_t base, length; uint32_t status, pad; };
static_assert(sizeof(struct gpu_attrs) == 36, "UvmGpuMappingAttributes");
static_assert(offsetof(struct map_params, gpu_count) == 24 + 36 * MAX_GPUS_580, "gpuAttributesCount");
static_assert(sizeof(struct unmap_params) == 40, "UVM_UNMAP_EXTERNAL_PARAMS");

static struct map_params last_map;
static int last_map_fd = -1;

// In front of libc's ioctl for libcuda: records CUDA's last map.
extern "C" int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	long rc = syscall(SYS_ioctl, fd, req, arg);
	if (req == UVM_MAP_EXTERNAL_ALLOCATION && rc == 0) {
		memcpy(&last_map, arg, sizeof(last_map));
		last_map_fd = fd;
	}
	return (int)rc;
}

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
	struct report r = { getpid(), -1, {}, 0 };
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

static uint32_t validate(int fd, uint64_t base, uint64_t len)
{
	struct range_params q = { base, len, 0xffffffffu, 0 };
	return syscall(SYS_ioctl, fd, UVM_VALIDATE_VA_RANGE, &q) == 0 ? q.status : 0xeeeeeeeeu;
}

int main(int argc, char **argv)
{
	int up[2], down[2];
	bool as_user = argc > 1 && !strcmp(argv[1], "user");

	if (as_user && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))) {
		perror("drop");
		return 1;
	}
	printf("as=%s uid=%d\n", as_user ? "user" : "root", (int)getuid());
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
	struct unmap_params u = { r.map.base, r.map.length, {}, 0xffffffffu, 0 };
	memcpy(u.uuid, r.map.gpu[0].uuid, sizeof(u.uuid));
	long rc = syscall(SYS_ioctl, ufd, UVM_UNMAP_EXTERNAL, &u);
	printf("unmap=0x%x rc=%ld\n", u.status, rc);
	struct map_params m = r.map;
	m.status = 0xffffffffu;
	double t0 = now_us();
	rc = syscall(SYS_ioctl, ufd, UVM_MAP_EXTERNAL_ALLOCATION, &m);
	double t1 = now_us();
	printf("map=0x%x rc=%ld map_us=%.1f\n", m.status, rc, t1 - t0);
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
