// GPU tier (issue #29 item 1): memory shared between two processes through
// a POSIX fd, as NCCL's cuMem path, PyTorch's expandable segments and vLLM
// do it. Two roles of one program, meeting on a unix socket:
//
//   ipc_fd_share export SOCK MIB
//       cuMemCreate(MIB) with POSIX fd handles, cuMemExportToShareableHandle
//       (the driver: NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD on a fresh
//       control file), sends the fd over SOCK (SCM_RIGHTS), then releases
//       its handle and exits: only the fd keeps the memory.
//   ipc_fd_share import SOCK MORE_MIB HOLD_S
//       receives the fd, cuMemImportFromShareableHandle, maps it, writes and
//       reads it back, then asks for MORE_MIB more in 256 MiB cuMemAlloc
//       steps until one fails, and holds everything HOLD_S seconds (the
//       script reads nvidia-smi's device total meanwhile).
//
// Each line printed is "key=value" so that the script can judge it: the
// CUresult of each step, the MiB the importer got on top.
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MIB (1ull << 20)
#define STEP_MIB 256u
#define MAX_STEPS 4096u

static CUdevice dev;
static CUcontext ctx;

static int say(const char *what, CUresult r)
{
	const char *name = "?";

	cuGetErrorName(r, &name);
	printf("%s=%d(%s)\n", what, (int)r, name);
	fflush(stdout);
	return r == CUDA_SUCCESS ? 0 : -1;
}

static int start_cuda(void)
{
	if (say("init", cuInit(0)) || say("device", cuDeviceGet(&dev, 0)))
		return -1;
	return say("ctx", cuDevicePrimaryCtxRetain(&ctx, dev)) || say("set_ctx", cuCtxSetCurrent(ctx));
}

static CUmemAllocationProp fd_prop(void)
{
	CUmemAllocationProp p;

	memset(&p, 0, sizeof(p));
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = 0;
	p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	return p;
}

static size_t rounded(size_t bytes)
{
	CUmemAllocationProp p = fd_prop();
	size_t g = 2 * MIB;

	cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	return (bytes + g - 1) / g * g;
}

static int unix_socket(const char *path, int listening)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (s < 0)
		return -1;
	if (listening) {
		unlink(path);
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 1))
			return -1;
		return s;
	}
	for (int i = 0; i < 600; i++) {  // the exporter may start later
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			return s;
		usleep(100000);
	}
	return -1;
}

static int send_fd(int s, int fd, uint64_t bytes)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { &bytes, sizeof(bytes) };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(s, &m, 0) == (ssize_t)sizeof(bytes) ? 0 : -1;
}

static int recv_fd(int s, uint64_t *bytes)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { bytes, sizeof(*bytes) };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*bytes))
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static int do_export(const char *sock, unsigned mib)
{
	CUmemAllocationProp p = fd_prop();
	CUmemGenericAllocationHandle h;
	size_t bytes = rounded((size_t)mib * MIB);
	int fd = -1, ls, s;

	if (start_cuda() || say("create", cuMemCreate(&h, bytes, &p, 0)))
		return 1;
	if (say("export", cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)))
		return 1;
	ls = unix_socket(sock, 1);
	s = ls < 0 ? -1 : accept(ls, NULL, NULL);
	if (s < 0 || send_fd(s, fd, bytes)) {
		printf("sent=0\n");
		return 1;
	}
	printf("sent=%zu\n", bytes / MIB);
	close(fd);
	say("release", cuMemRelease(h));
	fflush(stdout);
	return 0;  // exits: only the importer's fd holds the memory now
}

static int map_and_touch(int fd, uint64_t bytes)
{
	CUmemGenericAllocationHandle h;
	CUmemAccessDesc acc = { .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 }, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUdeviceptr va;
	unsigned char back = 0;

	if (say("import", cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)))
		return -1;
	if (say("reserve", cuMemAddressReserve(&va, bytes, 0, 0, 0)) || say("map", cuMemMap(va, bytes, 0, h, 0)) ||
	    say("access", cuMemSetAccess(va, bytes, &acc, 1)))
		return -1;
	if (say("memset", cuMemsetD8(va, 0x5a, bytes)) || say("sync", cuCtxSynchronize()) ||
	    say("read", cuMemcpyDtoH(&back, va + bytes - 1, 1)))
		return -1;
	printf("readback=0x%02x\n", back);
	return 0;
}

static int do_import(const char *sock, unsigned more_mib, unsigned hold_s)
{
	static CUdeviceptr more[MAX_STEPS];
	uint64_t bytes = 0;
	unsigned got = 0;
	CUresult last = CUDA_SUCCESS;
	int s, fd;

	if (start_cuda())
		return 1;
	s = unix_socket(sock, 0);
	fd = s < 0 ? -1 : recv_fd(s, &bytes);
	printf("received=%s mib=%llu\n", fd >= 0 ? "yes" : "no", (unsigned long long)(bytes / MIB));
	if (fd < 0 || map_and_touch(fd, bytes))
		return 1;
	close(fd);  // the imported handle holds it now
	while (got * STEP_MIB < more_mib && got < MAX_STEPS) {
		last = cuMemAlloc(&more[got], (size_t)STEP_MIB * MIB);
		if (last != CUDA_SUCCESS)
			break;
		got++;
	}
	say("more_last", last);
	printf("more_mib=%u\n", got * STEP_MIB);
	printf("holding=%u\n", hold_s);
	fflush(stdout);
	sleep(hold_s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "export"))
		return do_export(argv[2], (unsigned)atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "import"))
		return do_import(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	fprintf(stderr, "usage: %s export SOCK MIB | import SOCK MORE_MIB HOLD_S\n", argv[0]);
	return 2;
}
