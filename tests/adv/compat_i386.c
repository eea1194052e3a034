/* SPDX-License-Identifier: MIT */
/*
 * compat_i386 - the quota must hold on every syscall ABI the kernel accepts.
 *
 * A 64-bit process allocates 512 MiB natively, then tries to allocate
 * 256 MiB chunks past the quota through:
 *   - the i386 ABI: int $0x80 with eax = 54 (i386 __NR_ioctl); every
 *     pointer it passes (top-level struct, nested params) is below 4 GiB
 *     (MAP_32BIT). A seccomp filter written for AUDIT_ARCH_X86_64 only
 *     never sees these calls.
 *   - x32: syscall number 16 | 0x40000000 (the x86-64 ioctl slot, which
 *     x32 callers cannot use) and 514 | 0x40000000 (x32's own ioctl). On
 *     a kernel without x32 both return ENOSYS, which is a fine answer.
 * Each ABI runs in a forked child sharing the open file and the client, so
 * a supervisor that kills the caller (SIGSYS) ends only that child.
 *
 * Prints native=0x..., then per ABI abi=NAME attempts= ok= nomem= other=
 * end=exit:N|signal:N first=STATUS, and SUMMARY over all attempts.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adv.h"

#define COMPAT_NATIVE_SIZE (512ull * RMC_MIB)
/* 8 x 256 MiB = 2 GiB on top of the 512 MiB: far past a 1 GiB quota. */
#define COMPAT_ATTEMPTS    8
#define I386_NR_GETPID     20

struct attempt_rec {
	int i;
	rmc_status_t st;
};

/* Is int $0x80 usable at all (CONFIG_IA32_EMULATION, ia32_emulation=)?
 * Try getpid in a child: without it the child dies of SIGSEGV. */
static const char *probe_i386(void)
{
	static char buf[48];
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long r;

		__asm__ volatile("int $0x80"
				 : "=a"(r)
				 : "a"((long)I386_NR_GETPID)
				 : "memory", "cc", "r8", "r9", "r10", "r11");
		_exit((int)r == getpid() ? 0 : 3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return "probe-failed";
	if (WIFSIGNALED(status)) {
		snprintf(buf, sizeof(buf), "probe-signal:%d", WTERMSIG(status));
		return buf;
	}
	return WEXITSTATUS(status) == 0 ? "available" : "probe-mismatch";
}

static void try_abi(struct rmc_session *s, enum rmc_abi abi, const char *name,
		    struct adv_tally *total)
{
	const struct rmc_how how = { .abi = abi };
	struct adv_tally t = { 0 };
	struct attempt_rec rec;
	rmc_status_t first = NV_ERR_GENERIC;
	int p[2], status, n = 0;
	char end[32];
	pid_t pid;

	if (pipe(p) < 0)
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (int i = 0; i < COMPAT_ATTEMPTS; i++) {
			rec.i = i;
			rec.st = adv_alloc_rm(s, &how, rmc_next_handle(s), ADV_CHUNK);
			if (write(p[1], &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
				_exit(ADV_EXIT_SETUP);
			/* ENOSYS etc. will not change on retry. */
			if (RMC_IS_SYSERR(rec.st))
				break;
		}
		_exit(0);
	}
	close(p[1]);
	while (read(p[0], &rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
		if (n++ == 0)
			first = rec.st;
		adv_count(&t, rec.st);
	}
	close(p[0]);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		snprintf(end, sizeof(end), "signal:%d", WTERMSIG(status));
	else
		snprintf(end, sizeof(end), "exit:%d", WEXITSTATUS(status));
	printf("abi=%s attempts=%d ok=%d nomem=%d other=%d end=%s first=%s\n", name, n, t.ok,
	       t.nomem, t.other, end, n ? rmc_status_str(first) : "none");
	fflush(stdout);
	adv_add(total, &t);
}

int main(void)
{
	struct rmc_session s;
	struct adv_tally total = { 0 };
	rmc_status_t native;
	const char *probe;

	adv_session_or_die(&s, -1, "compat_i386");
	native = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), COMPAT_NATIVE_SIZE);
	adv_count(&total, native);
	printf("native=0x%x (%s)\n", native, rmc_status_str(native));

	/* The children take handles from their own copy of the session; give
	 * each ABI its own handle range so retries never collide. */
	probe = probe_i386();
	printf("i386_probe=%s\n", probe);
	/* Try even when the probe failed: the child just dies the same way. */
	s.next_mem = RMC_H_MEM_BASE + 0x100;
	try_abi(&s, RMC_ABI_I386, "i386", &total);
	s.next_mem = RMC_H_MEM_BASE + 0x200;
	try_abi(&s, RMC_ABI_X32_16, "x32_16", &total);
	s.next_mem = RMC_H_MEM_BASE + 0x300;
	try_abi(&s, RMC_ABI_X32_514, "x32_514", &total);
	adv_print_summary(&total);
	return 0;
}
