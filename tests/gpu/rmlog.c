/* rmlog.c - an LD_PRELOAD logger of a program's RM calls as the driver
 * answered them, natively (no gpusandbox): what a library allocates, frees
 * and asks, with the driver's own status. Used to learn what libnvcuvid,
 * nvJPEG and NVML do before deciding how gpusandbox counts or allows it.
 *
 *   RMLOG=/tmp/x.log LD_PRELOAD=/tmp/rmlog.so PROGRAM ...
 *
 * One line per RM_ALLOC, RM_FREE, RM_CONTROL and RM_DUP_OBJECT after the real ioctl
 * returned: pid, the escape, handles, class or command, parameter size and
 * the RM status. The layouts are gpusandbox's own (include/nvrm_abi.h).
 *
 * RMLOG_NO_P2P=1 answers every RM_ALLOC of NV50_THIRD_PARTY_P2P with
 * NV_ERR_NOT_SUPPORTED without asking the driver, as a driver without the
 * class would: does CUDA then still allocate, and does it skip the
 * per-allocation REGISTER/UNREGISTER_VIDMEM controls (issue #31)?
 *
 * Build: gcc -O2 -shared -fPIC -Iinclude -o /tmp/rmlog.so tests/gpu/rmlog.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvrm_abi.h"

enum { CLASS_THIRD_PARTY_P2P = 0x503c, STATUS_NOT_SUPPORTED = 0x56 };

static int (*real_ioctl)(int, unsigned long, ...);
static int log_fd = -1, no_p2p;

__attribute__((constructor)) static void rmlog_init(void)
{
	const char *path = getenv("RMLOG");
	real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	no_p2p = getenv("RMLOG_NO_P2P") && atoi(getenv("RMLOG_NO_P2P"));
	log_fd = open(path ? path : "/dev/stderr", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static void say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n = snprintf(line, sizeof(line), "%d ", getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (log_fd >= 0 && n > 0)
		(void)!write(log_fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void log_call(unsigned long req, const void *arg)
{
	unsigned nr = NV_IOC_NR(req), size = NV_IOC_SIZE(req);

	if (nr == NV_ESC_RM_ALLOC && size == sizeof(struct nvos64)) {
		const struct nvos64 *a = arg;
		say("alloc client=0x%x parent=0x%x new=0x%x class=0x%x size=%u status=0x%x\n", a->h_root,
		    a->h_object_parent, a->h_object_new, a->h_class, a->params_size, a->status);
	} else if (nr == NV_ESC_RM_ALLOC && size == sizeof(struct nvos21)) {
		const struct nvos21 *a = arg;
		say("alloc client=0x%x parent=0x%x new=0x%x class=0x%x size=%u status=0x%x\n", a->h_root,
		    a->h_object_parent, a->h_object_new, a->h_class, a->params_size, a->status);
	} else if (nr == NV_ESC_RM_FREE && size == sizeof(struct nvos00)) {
		const struct nvos00 *f = arg;
		say("free client=0x%x parent=0x%x old=0x%x status=0x%x\n", f->h_root, f->h_object_parent,
		    f->h_object_old, f->status);
	} else if (nr == NV_ESC_RM_DUP_OBJECT && size == sizeof(struct nvos55)) {
		const struct nvos55 *d = arg;
		say("dup client=0x%x parent=0x%x new=0x%x from client=0x%x object=0x%x status=0x%x\n",
		    d->h_client, d->h_parent, d->h_object, d->h_client_src, d->h_object_src, d->status);
	} else if (nr == NV_ESC_RM_CONTROL && size == sizeof(struct nvos54)) {
		const struct nvos54 *c = arg;
		say("control client=0x%x object=0x%x cmd=0x%08x size=%u status=0x%x\n", c->h_client, c->h_object,
		    c->cmd, c->params_size, c->status);
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (no_p2p && arg && NV_IOC_NR(req) == NV_ESC_RM_ALLOC && NV_IOC_SIZE(req) == sizeof(struct nvos64) &&
	    ((struct nvos64 *)arg)->h_class == CLASS_THIRD_PARTY_P2P) {
		((struct nvos64 *)arg)->status = STATUS_NOT_SUPPORTED;
		log_call(req, arg);
		return 0;
	}
	int r = real_ioctl(fd, req, arg);
	if (arg && ((req >> 8) & 0xff) == NV_IOCTL_MAGIC)
		log_call(req, arg);
	return r;
}
