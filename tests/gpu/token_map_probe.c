// GPU tier (issue #31, a question for the next design): could the
// supervisor have UVM map the workload's own memory handle, with no dup of
// its own per map?
//
// UVM dups the memory it maps into its kernel client; RM judges that dup
// against the calling thread (cliresShareCallback, client_resource.c,
// 580.95.05): for an RS_SHARE_TYPE_OS_SECURITY_TOKEN share, the caller's
// euid or pid must be the workload client's (osValidateClientTokens, os.c).
// So after one such share of the workload's client, a supervisor thread
// whose effective uid is the workload's could name the workload's handle.
//
// Run as root. A child drops to UID (65534), makes a CUDA allocation (which
// CUDA maps through UVM: map_spy.h keeps its parameters) and waits. The
// parent takes the child's control and UVM files (pidfd_getfd) and redoes
// that same map, naming the child's client and memory:
//   plain_root   as root, before any share        (the driver's default)
//   token_root   as root, after a token share     (euid 0 is not the child's)
//   token_euid   from a thread whose euid is UID  (setresuid on that thread)
//   other_dup    a fresh process of UID, no sandbox, dups the child's memory
//                into a client of its own (what the share opens to others);
//                then one of another uid (1001), which it does not
// Prints each status (0x0 = NV_OK); asserts nothing.
#define _GNU_SOURCE
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvrm_abi.h"
#include "map_spy.h"

#define UID_NOBODY 65534
#define UID_OTHER 1001
#define BYTES (2ull << 20)
#define OTHER_DEVICE 0xbeef0201u
#define OTHER_DUP 0xbeef0202u

struct seen { struct map_params map; int ctl, uvm; pid_t pid; };

static uint32_t rm(int fd, uint32_t nr, void *arg, uint32_t size)
{
	return syscall(SYS_ioctl, fd, NV_IOC_WORD(nr, size), arg) == 0 ? 0 : 0xe0000000u | 1u;
}

static int uvm_fd, ctl_fd;
static struct map_params want;

static uint32_t redo_map(void)
{
	struct map_params p = want;
	p.ctl_fd = ctl_fd;
	p.status = 0xffffffffu;
	if (syscall(SYS_ioctl, uvm_fd, UVM_MAP_EXTERNAL_ALLOCATION, &p) != 0)
		return 0xe0000000u;
	return p.status;
}

static void *as_uid(void *arg)
{
	uint32_t *st = arg;
	/* This thread only (the raw system call; glibc's would set every
	 * thread's), saved uid kept at 0 to come back. */
	if (syscall(SYS_setresuid, -1, UID_NOBODY, -1) != 0) {
		*st = 0xe0000001u;
		return NULL;
	}
	*st = redo_map();
	(void)syscall(SYS_setresuid, -1, 0, -1);
	return NULL;
}

static int take(pid_t pid, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

int main(void)
{
	int up[2], down[2];
	struct seen s;

	if (pipe(up) || pipe(down))
		return 2;
	pid_t kid = fork();
	if (kid == 0) {
		CUdevice dev;
		CUcontext ctx;
		CUdeviceptr p;
		char c;
		if (setresgid(UID_NOBODY, UID_NOBODY, UID_NOBODY) || setresuid(UID_NOBODY, UID_NOBODY, UID_NOBODY) ||
		    cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
		    cuCtxSetCurrent(ctx) || cuMemAlloc(&p, BYTES))
			_exit(3);
		s = (struct seen){ .map = last_map, .ctl = last_map.ctl_fd, .uvm = last_map_fd, .pid = getpid() };
		(void)!write(up[1], &s, sizeof(s));
		(void)!read(down[0], &c, 1);
		_exit(0);
	}
	if (read(up[0], &s, sizeof(s)) != (ssize_t)sizeof(s)) {
		printf("child=fail\n");
		return 1;
	}
	fflush(stdout);
	printf("child_map status=0x%x h_client=0x%x h_memory=0x%x\n", s.map.status, s.map.h_client,
	       s.map.h_memory);
	want = s.map;
	ctl_fd = take(s.pid, s.ctl);
	uvm_fd = take(s.pid, s.uvm);
	printf("taken ctl=%d uvm=%d\n", ctl_fd, uvm_fd);

	printf("plain_root=0x%x\n", redo_map());
	struct nvos57 share = { .h_client = want.h_client, .h_object = want.h_client,
	                        .policy = { .target = 0, .access_mask = RS_ACCESS_DUP_OBJECT_BIT,
	                                    .type = RS_SHARE_TYPE_OS_SECURITY_TOKEN,
	                                    .action = RS_SHARE_ACTION_FLAG_COMPOSE } };
	uint32_t e = rm(ctl_fd, NV_ESC_RM_SHARE, &share, sizeof(share));
	printf("token_share=0x%x status=0x%x\n", e, share.status);
	printf("token_root=0x%x\n", redo_map());
	uint32_t st = 0;
	pthread_t t;
	pthread_create(&t, NULL, as_uid, &st);
	pthread_join(t, NULL);
	printf("token_euid=0x%x\n", st);
	fflush(stdout);

	for (int k = 0; k < 2; k++) {
	const uid_t uid = k ? UID_OTHER : UID_NOBODY;
	pid_t other = fork();
	if (other == 0) {
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(3);
		int ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
		int node = open("/dev/nvidia0", O_RDWR | O_CLOEXEC);
		struct nvos21 a = { 0, 0, 0, NV01_ROOT_CLIENT, 0, 0, 0 };
		rm(ctl, NV_ESC_RM_ALLOC, &a, sizeof(a));
		struct nv0080_alloc_params dp = { .device_id = 0 };
		struct nvos21 d = { a.h_object_new, a.h_object_new, OTHER_DEVICE, NV01_DEVICE_0, (uintptr_t)&dp,
		                    sizeof(dp), 0 };
		rm(ctl, NV_ESC_RM_ALLOC, &d, sizeof(d));
		struct nvos55 dup = { a.h_object_new, OTHER_DEVICE, OTHER_DUP, want.h_client, want.h_memory, 0, 0 };
		uint32_t de = rm(ctl, NV_ESC_RM_DUP_OBJECT, &dup, sizeof(dup));
		printf("other_dup uid=%u: 0x%x status=0x%x (device 0x%x, node %d)\n", (unsigned)uid, de, dup.status,
		       d.status, node);
		fflush(stdout);
		_exit(0);
	}
	waitpid(other, NULL, 0);
	}
	(void)!write(down[1], "x", 1);
	waitpid(kid, NULL, 0);
	return 0;
}
