/* SPDX-License-Identifier: MIT */
/*
 * stack_fp - a refused call through a system call wrapper shaped like
 * Ubuntu 24.04's glibc ioctl (push rbp; mov rbp, rsp; sub rsp, N; syscall),
 * whose CFI finds its caller through rbp, called from code built without
 * frame pointers that keeps a junk value in rbp (as libcuda does). Seen
 * on an H100 (docs/gpu-results/2026-11-24-h100-head-check): PyTorch's
 * refusal was recorded as "ioctl+0x3d" and one wrong frame. The recorded
 * stack must name fp_ioctl, level3, level2, level1 and main in order.
 * Prints refused=1 when the call was refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>

#include "adv.h"

#define STACK_ASK (2048ull * RMC_MIB)
#define STACK_HANDLE 0xa1200002u
#define JUNK_RBP 0x4141u

static struct rmc_session s;

/* The wrapper: a frame of its own, named by rbp in its CFI. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) static long
fp_ioctl(int fd, unsigned long req, void *arg)
{
	volatile char locals[64];
	long ret;

	locals[0] = 0;
	__asm__ volatile("" : : "m"(locals)); /* the frame is used */
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "0"((long)SYS_ioctl), "D"((long)fd), "S"(req), "d"(arg)
	                 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) static int level3(void)
{
	struct nv_memory_allocation_params p;
	struct nvos64 a = {
		.h_root = s.client, .h_object_parent = s.device, .h_object_new = STACK_HANDLE,
		.h_class = NV01_MEMORY_LOCAL_USER, .p_alloc_parms = (uint64_t)(uintptr_t)&p,
		.params_size = sizeof(p),
	};
	long r;

	rmc_fill_vidmem_params(&p, s.client, STACK_ASK);
	/* rbp holds junk across the call, as in code without frame
	 * pointers: no frame chain leads past the wrapper. */
	__asm__ volatile("mov %0, %%rbp" : : "i"(JUNK_RBP) : "rbp");
	r = fp_ioctl(s.fd, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(a)), &a);
	return r == 0 && a.status == NV_ERR_NO_MEMORY;
}

__attribute__((noinline)) static int level2(void)
{
	int r = level3();
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return r;
}

__attribute__((noinline)) static int level1(void)
{
	int r = level2();
	__asm__ volatile("" ::: "memory");
	return r;
}

int main(void)
{
	int refused;

	adv_session_or_die(&s, -1, "stack_fp");
	refused = level1();
	printf("refused=%d\n", refused);
	rmc_session_close(&s);
	return 0;
}
