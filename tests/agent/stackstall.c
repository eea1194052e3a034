/* SPDX-License-Identifier: MIT */
/*
 * stackstall - a refused RM call made with the stack pointer in a page of
 * a FUSE file whose reads answer only after a stall (tests/sm/stallfs,
 * named by GS_STALL_FILE). The supervisor audits a refusal with the
 * caller's call stack, which it reads from the task's stack pointer
 * (supervisor/core/tasks/stack.c) while it holds the audit log's lock and the
 * session's: a workload chooses its stack pointer, so it can make that
 * read wait as long as it likes. For tests/agent/sm.sh stall-audit (static:
 * it runs in a busybox container; x86-64 only, like the stack reader).
 *
 *   stackstall
 *
 * The call is the workload's own FIFO_DISABLE_CHANNELS, which is always
 * refused; its parameters lie in ordinary memory. Prints
 * "stalled_ms=N status=S"; exits 0, or 2 when set-up fails.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rmclient.h"

#define EXIT_SETUP 2
#define STALL_PAGE 4096
/* Where the stack pointer goes: near the end of the stalling page, so the
 * reader's first bytes are in it. */
#define SP_BELOW_END 128
#define MS_PER_S 1000
#define NS_PER_MS 1000000

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * MS_PER_S + ts.tv_nsec / NS_PER_MS;
}

/* ioctl(fd, word, arg) made with the stack pointer at sp for the system
 * call itself (restored after; nothing is pushed meanwhile). */
static long ioctl_on_stack(int fd, unsigned long word, void *arg, void *sp)
{
	long ret;

	__asm__ volatile("mov %%rsp, %%r12\n\t"
	                 "mov %[sp], %%rsp\n\t"
	                 "syscall\n\t"
	                 "mov %%r12, %%rsp\n\t"
	                 : "=a"(ret)
	                 : "0"((long)SYS_ioctl), "D"((long)fd), "S"(word), "d"(arg), [sp] "r"(sp)
	                 : "rcx", "r11", "r12", "memory");
	return ret;
}

int main(void)
{
	const char *path = getenv("GS_STALL_FILE");
	struct rmc_session s;
	int sf = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	char *page = sf >= 0 ? mmap(NULL, STALL_PAGE, PROT_READ, MAP_SHARED, sf, 0) : MAP_FAILED;

	if (page == MAP_FAILED || rmc_session_open(&s, -1) != NV_OK) {
		fprintf(stderr, "stackstall: set-up failed (GS_STALL_FILE, or the driver)\n");
		return EXIT_SETUP;
	}
	struct nv2080_fifo_disable_channels dc = { .b_disable = 0, .num_channels = 0 };
	struct nvos54 a = {
		.h_client = s.client,
		.h_object = s.subdevice,
		.cmd = NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS,
		.params = (uint64_t)(uintptr_t)&dc,
		.params_size = sizeof(dc),
	};
	long t0 = now_ms();
	long r = ioctl_on_stack(s.fd, NV_IOC_WORD(NV_ESC_RM_CONTROL, sizeof(a)), &a,
	                        page + STALL_PAGE - SP_BELOW_END);
	long t1 = now_ms();

	printf("stalled_ms=%ld status=%s\n", t1 - t0, r < 0 ? "errno" : rmc_status_str(a.status));
	fflush(stdout);
	return 0;
}
