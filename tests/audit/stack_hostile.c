/* SPDX-License-Identifier: MIT */
/*
 * stack_hostile - a refused call made from a stack the workload forged:
 * before the ioctl, the stack pointer is moved to a buffer of words that
 * point back into the buffer (frame-pointer and CFI cycles), into code at
 * odd places, at the buffer's end, and at nothing, and the frame pointer
 * at that buffer too. The call (escape 0x50, unknown) is refused; the
 * supervisor's unwinder reads what it finds there. tests/audit/run.sh
 * checks the refusal was recorded, with a bounded stack or a stack_error,
 * the log verifies, and the supervisor lives on to a second refusal from
 * an ordinary stack (STACK_ASK of video memory, over the --mem 1g of the
 * test). x86-64 only (prints skip=1 elsewhere). Prints hostile=EINVAL
 * ordinary=NO_MEMORY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adv.h"

#define UNKNOWN_ESCAPE 0x50u
#define ARG_SIZE 8u
#define FORGED_WORDS 4096u
#define GOLDEN 0x9e3779b97f4a7c15ull
#define STACK_ASK (2048ull * RMC_MIB)
#define ORDINARY_HANDLE 0xa1300001u

static uint64_t forged[FORGED_WORDS] __attribute__((aligned(16)));

/* Words a hostile unwinder input is made of, chosen by a fixed sequence. */
static void forge(void)
{
	uint64_t x = GOLDEN;

	for (unsigned i = 0; i < FORGED_WORDS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (x % 5) {
		case 0: forged[i] = (uint64_t)(uintptr_t)&forged[x % FORGED_WORDS]; break; /* a cycle */
		case 1: forged[i] = (uint64_t)(uintptr_t)forge + (x % 64); break;           /* code */
		case 2: forged[i] = (uint64_t)(uintptr_t)&forged[FORGED_WORDS - 1];   break; /* the end */
		case 3: forged[i] = x;                                                  break; /* junk */
		default: forged[i] = 0;                                                 break;
		}
	}
}

static int ioctl_errno(long rc)
{
	return rc < 0 ? (int)-rc : 0;
}

#if defined(__x86_64__)
/* The ioctl with rsp and rbp in the forged buffer, both restored after. */
static long ioctl_from_forged_stack(int fd, unsigned long req, void *arg)
{
	void *top = &forged[FORGED_WORDS / 2];
	long ret;

	__asm__ volatile("mov %%rsp, %%r12\n\t"
	                 "mov %%rbp, %%r13\n\t"
	                 "mov %[top], %%rsp\n\t"
	                 "mov %[top], %%rbp\n\t"
	                 "syscall\n\t"
	                 "mov %%r12, %%rsp\n\t"
	                 "mov %%r13, %%rbp\n\t"
	                 : "=a"(ret)
	                 : "a"((long)SYS_ioctl), "D"((long)fd), "S"(req), "d"(arg), [top] "r"(top)
	                 : "rcx", "r11", "r12", "r13", "memory");
	return ret;
}
#endif

int main(void)
{
	struct rmc_session s;
	uint64_t arg = 0;
	const unsigned long req = NV_IOC_WORD(UNKNOWN_ESCAPE, ARG_SIZE);

#if !defined(__x86_64__)
	printf("skip=1\n");
	return 0;
#else
	adv_session_or_die(&s, -1, "stack_hostile");
	forge();
	const int hostile = ioctl_errno(ioctl_from_forged_stack(s.fd, req, &arg));
	const rmc_status_t ordinary = adv_alloc_rm(&s, NULL, ORDINARY_HANDLE, STACK_ASK);
	printf("hostile=%s ordinary=%s\n", hostile && strerrorname_np(hostile) ? strerrorname_np(hostile) : "0",
	       ordinary == NV_ERR_NO_MEMORY ? "NO_MEMORY" : "other");
	rmc_session_close(&s);
	return 0;
#endif
}
