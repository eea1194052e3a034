/* SPDX-License-Identifier: MIT */
/*
 * The filter traps ioctl by the escape number in the low byte of the request
 * word, never by the exact word and never by path:
 *  - the driver looks only at _IOC_NR and _IOC_SIZE, so a filter keyed on
 *    0xC030462B is bypassed by forging the direction or type bits
 *    (design.md 1.12);
 *  - fds can be duplicated, passed over sockets or reopened through /proc,
 *    so the path tells nothing.
 * Everything else runs at kernel speed. The supervisor then looks at the size
 * bits and the fd to decide what the call is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "filter.h"
#include "rm_decode.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* Masks the request word down to _IOC_NR. */
#define IOCTL_NR_MASK 0xffu

static scmp_filter_ctx build_filter(struct gs_error *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	size_t n;
	const uint8_t *escapes = rm_trapped_escapes(&n);

	if (!ctx) {
		gs_fail(err, ENOMEM, "seccomp_init");
		return NULL;
	}
	/* A syscall from an ABI we did not add is killed (libseccomp's default
	 * bad-arch action), so adding every ABI is what keeps compat ioctls
	 * from slipping past. */
	for (unsigned i = 0; i < gs_abi_count(); i++) {
		const struct gs_abi *abi = gs_abi_at(i);
		int rc = seccomp_arch_add(ctx, abi->scmp_arch);
		if (rc < 0 && rc != -EEXIST) {
			gs_fail(err, -rc, "seccomp_arch_add(%s)", abi->name);
			goto fail;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1,
		                          SCMP_A1(SCMP_CMP_MASKED_EQ, IOCTL_NR_MASK, escapes[i]));
		if (rc < 0) {
			gs_fail(err, -rc, "seccomp_rule_add(ioctl nr 0x%02x)", escapes[i]);
			goto fail;
		}
	}
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}

/* libseccomp 2.5 cannot ask for WAIT_KILLABLE_RECV, so we export the BPF and
 * load it ourselves. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *prog, struct gs_error *err)
{
	int fd = memfd_create("gpusandbox-bpf", MFD_CLOEXEC);
	off_t len;
	int rc;

	if (fd < 0)
		return gs_fail(err, errno, "memfd_create");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		close(fd);
		return gs_fail(err, -rc, "seccomp_export_bpf");
	}
	len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || len % (off_t)sizeof(struct sock_filter) != 0) {
		close(fd);
		return gs_fail(err, EINVAL, "exported BPF has a bad length %lld", (long long)len);
	}
	prog->filter = malloc((size_t)len);
	prog->len = (unsigned short)(len / (off_t)sizeof(struct sock_filter));
	if (!prog->filter || pread(fd, prog->filter, (size_t)len, 0) != len) {
		free(prog->filter);
		close(fd);
		return gs_fail(err, errno ? errno : EIO, "reading exported BPF");
	}
	close(fd);
	return 0;
}

int gs_filter_install(struct gs_error *err)
{
	struct sock_fprog prog = { 0 };
	scmp_filter_ctx ctx = build_filter(err);
	long fd;

	if (!ctx)
		return -1;
	if (export_bpf(ctx, &prog, err) < 0) {
		seccomp_release(ctx);
		return -1;
	}
	seccomp_release(ctx);
	/* WAIT_KILLABLE_RECV: once the supervisor has received a notification,
	 * only a fatal signal may interrupt the trapped call. Otherwise a
	 * signal would restart the syscall after the supervisor had already
	 * performed it, and an allocation would be done twice. */
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	             SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		             SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	free(prog.filter);
	if (fd < 0)
		return gs_fail(err, errno, "loading the seccomp filter");
	return (int)fd;
}

int gs_filter_dump(int fd, struct gs_error *err)
{
	scmp_filter_ctx ctx = build_filter(err);
	int rc;

	if (!ctx)
		return -1;
	rc = seccomp_export_pfc(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0)
		return gs_fail(err, -rc, "seccomp_export_pfc");
	return 0;
}
