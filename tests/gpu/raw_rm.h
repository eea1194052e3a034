/* SPDX-License-Identifier: MIT */
/*
 * raw_rm.h - the raw RM calls the static GPU-tier programs make with no
 * CUDA library in the process (raw_rm_alloc.c, xproc_alloc.c), and the
 * attach of the first GPU the way CUDA makes it: probed ids, attach, id
 * info, every GPU node held open, a device and a subdevice.
 */
#ifndef GPUSANDBOX_GPU_RAW_RM_H
#define GPUSANDBOX_GPU_RAW_RM_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvrm_abi.h"

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

/* size bytes of video memory at handle h, flagged as CUDA's are. */
static nv_status_t alloc_vidmem_of(uint32_t client, uint32_t h, uint64_t size)
{
	struct nv_memory_allocation_params p = { .owner = client, .flags = CUDA_VIDMEM_FLAGS,
	                                         .attr = CUDA_VIDMEM_ATTR, .size = size,
	                                         .alignment = ALIGN_2M };
	return rm_alloc(client, H_DEVICE, &h, NV01_MEMORY_LOCAL_USER, &p);
}

/* Opens the control file (ctl), makes a client (*client) and attaches the
 * first GPU with a device (H_DEVICE) and a subdevice (H_SUBDEV). 0, or 2
 * after printing which step failed. */
static int attach_first_gpu(uint32_t *out_client)
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
	/* The driver lets a process allocate a device only while it holds an
	 * open node of that GPU. Device instances follow the attach order, not
	 * the node numbers, so hold every node there is. */
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

	*out_client = client;
	return 0;
}

#endif
