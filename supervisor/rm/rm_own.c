/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "rm_own.h"

bool gs_driver_timing;
__thread uint64_t gs_driver_ns[2];

int gs_driver_ioctl(int fd, unsigned long request, void *arg, bool own)
{
	if (!gs_driver_timing)
		return ioctl(fd, request, arg);
	const uint64_t t0 = gs_monotonic_ns();
	const int rc = ioctl(fd, request, arg), saved = errno;

	gs_driver_ns[own] += gs_monotonic_ns() - t0;
	errno = saved;
	return rc;
}

/* setresuid(-1, euid, -1) on the calling thread alone (rm_own.h). */
static int thread_set_euid(uid_t euid)
{
	return (int)syscall(SYS_setresuid, (uid_t)-1, euid, (uid_t)-1);
}

/* Back to root after euid, or the end of the supervisor (rm_own.h). */
static void take_back_root(uid_t euid)
{
	if (thread_set_euid(0) < 0) {
		fprintf(stderr, "gpusandbox: a thread could not take back uid 0 after uid %u\n", (unsigned)euid);
		abort();
	}
}

int gs_driver_ioctl_as(int fd, unsigned long request, void *arg, uid_t euid)
{
	if (thread_set_euid(euid) < 0)
		return -1;
	const int rc = gs_driver_ioctl(fd, request, arg, false), saved = errno;

	take_back_root(euid);
	errno = saved;
	return rc;
}

bool gs_can_call_as(uid_t euid)
{
	uid_t r, e, s;

	if (getresuid(&r, &e, &s) < 0 || r != 0 || e != 0 || s != 0)
		return false;
	if (thread_set_euid(euid) < 0)
		return false;
	take_back_root(euid);
	return true;
}

nv_status_t rm_own_control(int fd, nv_handle_t client, nv_handle_t object, uint32_t cmd,
                           void *params, uint32_t size)
{
	struct nvos54 c = { .h_client = client, .h_object = object, .cmd = cmd,
	                    .params = (uintptr_t)params, .params_size = size };

	if (gs_driver_ioctl(fd, NV_IOC_WORD(NV_ESC_RM_CONTROL, sizeof(c)), &c, true) < 0)
		return NV_ERR_GENERIC;
	return c.status;
}

nv_status_t rm_own_alloc(int fd, nv_handle_t client, nv_handle_t parent, nv_handle_t *handle,
                         uint32_t cls, void *params, uint32_t size)
{
	struct nvos64 a = { .h_root = client, .h_object_parent = parent,
	                    .h_object_new = *handle, .h_class = cls,
	                    .p_alloc_parms = (uintptr_t)params, .params_size = size };

	if (gs_driver_ioctl(fd, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(a)), &a, true) < 0)
		return NV_ERR_GENERIC;
	if (a.status == NV_OK)
		*handle = a.h_object_new;
	return a.status;
}

nv_status_t rm_own_free(int fd, nv_handle_t client, nv_handle_t parent, nv_handle_t object)
{
	struct nvos00 f = { .h_root = client, .h_object_parent = parent, .h_object_old = object };

	if (gs_driver_ioctl(fd, NV_IOC_WORD(NV_ESC_RM_FREE, sizeof(f)), &f, true) < 0)
		return NV_ERR_GENERIC;
	return f.status;
}

nv_status_t rm_own_share(int fd, struct nvos57 *s)
{
	if (gs_driver_ioctl(fd, NV_IOC_WORD(NV_ESC_RM_SHARE, sizeof(*s)), s, true) < 0)
		return NV_ERR_GENERIC;
	return s->status;
}

nv_status_t rm_own_dup(int fd, struct nvos55 *d)
{
	if (gs_driver_ioctl(fd, NV_IOC_WORD(NV_ESC_RM_DUP_OBJECT, sizeof(*d)), d, true) < 0)
		return NV_ERR_GENERIC;
	return d->status;
}

#define GPU_NODE_FMT "/dev/nvidia%u"
#define NODE_PATH_MAX 32

unsigned rm_own_open_gpu_nodes(int *nodes, unsigned max)
{
	unsigned n = 0;

	for (unsigned m = 0; m < max; m++) {
		char path[NODE_PATH_MAX];
		snprintf(path, sizeof(path), GPU_NODE_FMT, m);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			nodes[n++] = fd;
	}
	return n;
}

void rm_own_close_fds(const int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}
