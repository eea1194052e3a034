/* SPDX-License-Identifier: MIT */
/*
 * gpusandbox's filter refuses a second seccomp listener on every ABI it
 * covers, also after the supervisor's listener is gone (issue #17, 1).
 *
 * The kernel allows one listener per filter chain only while that
 * listener is open: the baseline below installs a plain listener filter,
 * closes the listener, as a killed supervisor would, and gets a second
 * one. Under gpusandbox's filter the same attempt is refused with EBUSY,
 * natively, through i386's int $0x80, through x32's syscall number, and
 * with op's upper 32 bits forged (the kernel reads op as 32 bits). A
 * filter without a listener stays allowed. Each attempt runs in a child
 * of its own; needs neither root nor FUSE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvrm/rm_abi.h"
#include "arch.h"
#include "check.h"
#include "filter.h"

#define I386_NR_SECCOMP 354
#define X32_SYSCALL_BIT 0x40000000L
#define X86_64_NR_SECCOMP 317
/* An exit status no errno uses: the attempt itself could not run. */
#define UNAVAILABLE 250
#define SUCCEEDED   0

static struct sock_filter allow_code[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
static struct sock_fprog allow_prog = { .len = 1, .filter = allow_code };

enum attempt { NATIVE, FORGED_OP, I386, X32, NO_LISTENER };

static long try_listener(enum attempt how)
{
	switch (how) {
	case NATIVE:
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		               &allow_prog);
	case FORGED_OP:
		return syscall(SYS_seccomp, (1UL << 32) | SECCOMP_SET_MODE_FILTER,
		               SECCOMP_FILTER_FLAG_NEW_LISTENER, &allow_prog);
	case X32:
		return syscall(X32_SYSCALL_BIT | X86_64_NR_SECCOMP, SECCOMP_SET_MODE_FILTER,
		               SECCOMP_FILTER_FLAG_NEW_LISTENER, &allow_prog);
	case I386: {
		/* The pointer is not below 4 GiB: a call that got past the
		 * filter fails with EFAULT, a refused one never reads it. */
		long rc;
		__asm__ volatile("int $0x80"
		                 : "=a"(rc)
		                 : "a"(I386_NR_SECCOMP), "b"(SECCOMP_SET_MODE_FILTER),
		                   "c"(SECCOMP_FILTER_FLAG_NEW_LISTENER), "d"(&allow_prog)
		                 : "memory");
		if (rc < 0 && rc > -4096) {
			errno = (int)-rc;
			return -1;
		}
		return rc;
	}
	case NO_LISTENER:
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &allow_prog);
	}
	return -1;
}

/* The first filter: gpusandbox's, or a plain listener filter. Its
 * listener is closed at once, as when the supervisor is killed. */
static int install_first(bool ours)
{
	struct gs_filter_opts opts = { 0 };
	struct gs_error err = { 0 };
	long fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	opts.rm_abi = gs_rm_abi_default();
	if (ours)
		fd = gs_filter_install(&opts, &err);
	else
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		             &allow_prog);
	if (fd < 0)
		return -1;
	close((int)fd);
	return 0;
}

/* Exit status of a child that installs the first filter and tries: 0 when
 * the call succeeded, its errno, or UNAVAILABLE. */
static int attempt(bool ours, enum attempt how)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (install_first(ours) < 0)
			_exit(UNAVAILABLE);
		_exit(try_listener(how) >= 0 ? SUCCEEDED : errno);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return UNAVAILABLE;
	return WIFEXITED(st) ? WEXITSTATUS(st) : UNAVAILABLE;
}

/* Can this kernel run i386 code at all (ia32 emulation)? */
static bool have_i386(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		long rc;
		__asm__ volatile("int $0x80" : "=a"(rc) : "a"(20L) : "memory"); /* getpid */
		_exit(rc == getpid() ? 0 : 1);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
	if (gs_abi_resolve() < 0) {
		fprintf(stderr, "libseccomp cannot resolve ioctl\n");
		return 1;
	}
	/* Baseline: with the first listener closed, the kernel gives a
	 * second one. This is the hole, and what makes the test sensitive. */
	CHECK(attempt(false, NATIVE) == SUCCEEDED);
	/* gpusandbox's filter refuses it on every way in. */
	CHECK(attempt(true, NATIVE) == EBUSY);
	CHECK(attempt(true, FORGED_OP) == EBUSY);
	CHECK(attempt(true, X32) == EBUSY);
	if (have_i386())
		CHECK(attempt(true, I386) == EBUSY);
	else
		printf("i386: no ia32 emulation on this kernel, not tried\n");
	/* A filter without a listener is still the workload's to install. */
	CHECK(attempt(true, NO_LISTENER) == SUCCEEDED);
	return check_summary();
}
