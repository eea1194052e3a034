/* SPDX-License-Identifier: MIT */
/*
 * GPU tier benchmark: cost of a trapped call, in nanoseconds per call.
 *  - "control": NV0000 SYSTEM_GET_FEATURES on a client, an RM_CONTROL the
 *    supervisor performs itself (trap, copies, pidfd_getfd, ioctl, answer);
 *  - "foreign": an RM_CONTROL-shaped ioctl on /dev/null, which the filter
 *    traps and the supervisor continues after looking at the fd;
 *  - "plain": a size-0 word whose low byte is a trapped escape's (RM_CONTROL),
 *    as UVM's plain-integer commands are: the filter traps it and the
 *    supervisor continues it without a look (executor.c, route_ioctl), the
 *    cheapest trapped call, which a CUDA program makes (UVM's 42, 74, ...).
 * Run natively and under gpusandbox; the difference is the per-call cost.
 * Build: cc -static -O2 -Iinclude -o bench_trap tests/gpu/bench_trap.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nvrm_abi.h"

#define CTRL_GET_FEATURES 0x1f0u
#define DEFAULT_ITERS 20000
#define WARMUP 200

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : DEFAULT_ITERS;
	int ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	uint32_t client = 0, features = 0;
	struct nvos64 a = { .h_class = NV01_ROOT_CLIENT, .p_alloc_parms = (uintptr_t)&client };

	if (ctl < 0 || null < 0 || syscall(SYS_ioctl, ctl, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(a)), &a) < 0 ||
	    a.status != NV_OK) {
		fprintf(stderr, "bench_trap: cannot open a client\n");
		return 2;
	}
	client = a.h_object_new;
	struct nvos54 c = { .h_client = client, .h_object = client, .cmd = CTRL_GET_FEATURES,
	                    .params = (uintptr_t)&features, .params_size = sizeof(features) };
	for (int i = 0; i < WARMUP; i++)
		syscall(SYS_ioctl, ctl, NV_IOC_WORD(NV_ESC_RM_CONTROL, sizeof(c)), &c);
	double t0 = now_ns();
	for (int i = 0; i < iters; i++)
		syscall(SYS_ioctl, ctl, NV_IOC_WORD(NV_ESC_RM_CONTROL, sizeof(c)), &c);
	double t1 = now_ns();
	for (int i = 0; i < iters; i++)
		syscall(SYS_ioctl, null, NV_IOC_WORD(NV_ESC_RM_CONTROL, sizeof(c)), &c);
	double t2 = now_ns();
	for (int i = 0; i < iters; i++)
		syscall(SYS_ioctl, null, (unsigned long)NV_ESC_RM_CONTROL, 0);
	double t3 = now_ns();
	printf("control_ns=%.0f\nforeign_ns=%.0f\nplain_ns=%.0f\nstatus=0x%x\niters=%d\n", (t1 - t0) / iters,
	       (t2 - t1) / iters, (t3 - t2) / iters, c.status, iters);
	return 0;
}
