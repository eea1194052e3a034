/* SPDX-License-Identifier: MIT */
/*
 * GPU tier (issue #31, a measurement): does the driver take longer for an
 * RM_ALLOC of video memory made by another process through a dup of the
 * client's control file (what the supervisor does) than for the client's
 * own process? Sets a client up as raw_rm_alloc.c does, then times 2 MiB
 * RM_ALLOC/RM_FREE pairs made by this process and by a forked child that
 * took the control file with pidfd_getfd, in alternating rounds. Prints
 * figures; asserts nothing.
 *
 * Build: cc -static -O2 -Iinclude -o xproc_alloc tests/gpu/xproc_alloc.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvrm_abi.h"

#define CHUNK (2ull << 20)
#define MAX_CHUNKS 64
#define MAX_NODES 8
#define ALIGN_2M (2ull << 20)
#define GPU_IDS 32
#define INVALID_GPU_ID 0xffffffffu
#define CTRL_GET_PROBED_IDS 0x214u
#define CTRL_ATTACH_IDS 0x215u
#define CTRL_GET_ID_INFO_V2 0x205u
#define CUDA_VIDMEM_FLAGS 0x1c101u   /* as CUDA sends them (traces) */
#define CUDA_VIDMEM_ATTR 0x18000000u
#define H_DEVICE 0x5c000001u
#define H_SUBDEV 0x5c000002u
#define H_MEM0 0x5c100000u

static int ctl;

static long raw_ioctl(int fd, unsigned long req, void *arg)
{
	return syscall(SYS_ioctl, fd, req, arg);
}

static nv_status_t rm_alloc(uint32_t client, uint32_t parent, uint32_t *h, uint32_t cls, void *p)
{
	struct nvos64 a = { .h_root = client, .h_object_parent = parent, .h_object_new = *h,
	                    .h_class = cls, .p_alloc_parms = (uintptr_t)p };
	if (raw_ioctl(ctl, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(a)), &a) < 0)
		return NV_ERR_GENERIC;
	*h = a.h_object_new;
	return a.status;
}

static nv_status_t rm_control(uint32_t client, uint32_t obj, uint32_t cmd, void *p, uint32_t n)
{
	struct nvos54 c = { .h_client = client, .h_object = obj, .cmd = cmd,
	                    .params = (uintptr_t)p, .params_size = n };
	if (raw_ioctl(ctl, NV_IOC_WORD(NV_ESC_RM_CONTROL, sizeof(c)), &c) < 0)
		return NV_ERR_GENERIC;
	return c.status;
}

static nv_status_t rm_free(uint32_t client, uint32_t parent, uint32_t obj)
{
	struct nvos00 f = { .h_root = client, .h_object_parent = parent, .h_object_old = obj };
	if (raw_ioctl(ctl, NV_IOC_WORD(NV_ESC_RM_FREE, sizeof(f)), &f) < 0)
		return NV_ERR_GENERIC;
	return f.status;
}

static nv_status_t alloc_vidmem(uint32_t client, uint32_t h)
{
	struct nv_memory_allocation_params p = { .owner = client, .flags = CUDA_VIDMEM_FLAGS,
	                                         .attr = CUDA_VIDMEM_ATTR, .size = CHUNK,
	                                         .alignment = ALIGN_2M };
	return rm_alloc(client, H_DEVICE, &h, NV01_MEMORY_LOCAL_USER, &p);
}

#define PAIRS 3000
#define ROUNDS 3
#define NS_PER_US 1000.0

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / NS_PER_US;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* PAIRS allocations and frees on ctl; prints mean and median of each. */
static void loop(const char *who, int round, uint32_t client)
{
	static double ta[PAIRS], tf[PAIRS];
	double sa = 0, sf = 0;

	for (int i = 0; i < PAIRS; i++) {
		double t0 = now_us();
		nv_status_t st = alloc_vidmem(client, H_MEM0);
		double t1 = now_us();
		nv_status_t sf_st = rm_free(client, H_DEVICE, H_MEM0);
		double t2 = now_us();
		if (st != NV_OK || sf_st != NV_OK) {
			printf("who=%s round=%d failed alloc=0x%x free=0x%x at %d\n", who, round, st, sf_st, i);
			return;
		}
		ta[i] = t1 - t0;
		tf[i] = t2 - t1;
		sa += ta[i];
		sf += tf[i];
	}
	qsort(ta, PAIRS, sizeof(ta[0]), cmp);
	qsort(tf, PAIRS, sizeof(tf[0]), cmp);
	printf("who=%s round=%d alloc_mean_us=%.2f alloc_median_us=%.2f free_mean_us=%.2f free_median_us=%.2f\n",
	       who, round, sa / PAIRS, ta[PAIRS / 2], sf / PAIRS, tf[PAIRS / 2]);
	fflush(stdout);
}

int main(void)
{
	uint32_t client = 0, probed[3 * GPU_IDS], attach[GPU_IDS + 1], info[8] = { 0 };
	uint32_t h;
	nv_status_t st;
	int gpu_fd;

	ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	if (ctl < 0) { perror("open /dev/nvidiactl"); return 2; }
	h = 0;
	if ((st = rm_alloc(0, 0, &h, NV01_ROOT_CLIENT, &client)) != NV_OK) {
		printf("client_status=0x%x\n", st); return 2; }
	client = h;
	memset(probed, 0xff, sizeof(probed));
	st = rm_control(client, client, CTRL_GET_PROBED_IDS, probed, sizeof(probed));
	if (st != NV_OK || probed[0] == INVALID_GPU_ID) { printf("probe_status=0x%x\n", st); return 2; }
	memset(attach, 0xff, sizeof(attach));
	attach[0] = probed[0];
	st = rm_control(client, client, CTRL_ATTACH_IDS, attach, sizeof(attach));
	info[0] = probed[0];
	if (st == NV_OK)
		st = rm_control(client, client, CTRL_GET_ID_INFO_V2, info, sizeof(info));
	if (st != NV_OK) { printf("attach_status=0x%x\n", st); return 2; }
	int opened = 0;
	for (int i = 0; i < MAX_NODES; i++) {
		char node[32];
		snprintf(node, sizeof(node), "/dev/nvidia%d", i);
		gpu_fd = open(node, O_RDWR | O_CLOEXEC);
		opened += gpu_fd >= 0;
	}
	if (!opened) { perror("/dev/nvidia*"); return 2; }
	struct nv0080_alloc_params dp = { .device_id = info[2], .h_client_share = client };
	struct nv2080_alloc_params sp = { 0 };
	h = H_DEVICE;
	if ((st = rm_alloc(client, client, &h, NV01_DEVICE_0, &dp)) != NV_OK) {
		printf("device_status=0x%x\n", st); return 2; }
	h = H_SUBDEV;
	if ((st = rm_alloc(client, H_DEVICE, &h, NV20_SUBDEVICE_0, &sp)) != NV_OK) {
		printf("subdevice_status=0x%x\n", st); return 2; }

	for (int r = 1; r <= ROUNDS; r++) {
		loop("own", r, client);
		pid_t parent = getpid(), kid = fork();
		if (kid == 0) {
			int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
			int theirs = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, ctl, 0);
			if (theirs < 0) { perror("pidfd_getfd"); _exit(2); }
			ctl = theirs;
			loop("other", r, client);
			_exit(0);
		}
		waitpid(kid, NULL, 0);
	}
	rm_free(client, client, client);
	return 0;
}
