// GPU tier (issue #17): what the agent's kept own client rests on, on the
// real driver, without gpusandbox (a static C program, no CUDA).
//
// A child process A opens a control file, makes a client C (the driver
// picks its handle) with a device on GPU 0, passes the control file to
// this process over a socket (SCM_RIGHTS, as the agent hands its own
// client to the keeper) and exits. Then, printing each NV status:
//   creator_gone=1   A has exited and been reaped
//   taken_held=      a fresh process asks for a client at C's handle while
//                    this process holds A's file: expect a refusal (the
//                    client lives with its file, not with its maker, so
//                    its handle stays taken)
//   free_device=     this process frees C's device through the file
//                    (RM's strict client check compares files: expect 0x0;
//                    what gs_own_rm_retire does)
//   free_client=     this process frees C itself through the file (0x0)
//   taken_freed=     a fresh process asks for C's handle again: expect
//                    0x0 (the handle is anyone's once the client is gone:
//                    why the agent must not let its client go while a
//                    share may name it)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvrm_abi.h"

#define DEV 0xbeef0301u

static uint32_t rm(int fd, uint32_t nr, void *arg, uint32_t size)
{
	return syscall(SYS_ioctl, fd, NV_IOC_WORD(nr, size), arg) == 0 ? 0 : 0xe0000000u | (uint32_t)errno;
}

static uint32_t alloc(int ctl, nv_handle_t client, nv_handle_t parent, nv_handle_t *h, uint32_t cls,
                      void *params, uint32_t size)
{
	struct nvos21 a = { client, parent, *h, cls, (uintptr_t)params, size, 0 };
	uint32_t e = rm(ctl, NV_ESC_RM_ALLOC, &a, sizeof(a));

	*h = a.h_object_new;
	return e ? e : a.status;
}

static uint32_t rm_free(int ctl, nv_handle_t client, nv_handle_t object)
{
	struct nvos00 f = { client, client, object, 0 };
	uint32_t e = rm(ctl, NV_ESC_RM_FREE, &f, sizeof(f));

	return e ? e : f.status;
}

// In a fresh process: a client asked for at handle h (RM reads the handle
// asked for from hRoot: _nv04AllocWithSecInfo, serverAllocClient); freed
// at once. *got: the handle RM gave.
static uint32_t try_take(nv_handle_t h, nv_handle_t *got)
{
	int p[2];
	uint32_t st[2] = { 0xffffffffu, 0 };

	if (pipe(p))
		return st[0];
	pid_t pid = fork();
	if (pid == 0) {
		int ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
		nv_handle_t made = 0;
		uint32_t s[2] = { ctl < 0 ? 0xe0000000u | (uint32_t)errno : alloc(ctl, h, 0, &made, NV01_ROOT_CLIENT, NULL, 0), 0 };
		if (s[0] == 0)
			(void)rm_free(ctl, made, made);
		s[1] = made;
		(void)!write(p[1], s, sizeof(s));
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], st, sizeof(st)) != sizeof(st))
		st[0] = 0xffffffffu;
	close(p[0]);
	waitpid(pid, NULL, 0);
	*got = st[1];
	return st[0];
}

static int send_fd(int sock, int fd, nv_handle_t client)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &client, sizeof(client) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == sizeof(client) ? 0 : -1;
}

static int recv_fd(int sock, nv_handle_t *client)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { client, sizeof(*client) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                     .msg_controllen = sizeof(u.buf) };
	int fd = -1;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != sizeof(*client))
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

// The maker: a client with a device on GPU 0, its file sent, then exit.
static void maker(int sock)
{
	int ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC), gpu = open("/dev/nvidia0", O_RDWR | O_CLOEXEC);
	nv_handle_t client = 0, dev = DEV;
	struct nv0080_alloc_params dp = { .device_id = 0 };

	if (ctl < 0 || gpu < 0 || alloc(ctl, 0, 0, &client, NV01_ROOT_CLIENT, &client, 0) ||
	    alloc(ctl, client, client, &dev, NV01_DEVICE_0, &dp, sizeof(dp)) || send_fd(sock, ctl, client))
		_exit(1);
	_exit(0);
}

int main(void)
{
	int sv[2], status = 0;
	nv_handle_t client = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return 1;
	pid_t pid = fork();
	if (pid == 0)
		maker(sv[1]);
	close(sv[1]);
	int ctl = recv_fd(sv[0], &client);
	waitpid(pid, &status, 0);
	if (ctl < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("setup=fail\n");
		return 1;
	}
	nv_handle_t got = 0;
	printf("client=0x%x creator_gone=1\n", client);
	uint32_t st = try_take(client, &got);
	printf("taken_held=0x%x got=0x%x\n", st, got);
	printf("free_device=0x%x\n", rm_free(ctl, client, DEV));
	printf("free_client=0x%x\n", rm_free(ctl, client, client));
	st = try_take(client, &got);
	printf("taken_freed=0x%x got=0x%x\n", st, got);
	return 0;
}
