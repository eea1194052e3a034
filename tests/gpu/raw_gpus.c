/* SPDX-License-Identifier: MIT */
/*
 * GPU tier: GPU visibility against raw RM ioctls (static, no CUDA).
 * Lists the GPUs (CARD_INFO, probed ids), attaches what it sees, then tries
 * NV01_DEVICE_0 for device instances 0..3 whatever the listings said.
 * Prints cards= probed= and devN=STATUS lines.
 * Build: cc -static -O2 -Iinclude -o raw_gpus tests/gpu/raw_gpus.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvrm_abi.h"

#define TRY_INSTANCES 4
#define H_DEVICE0 0x5c000100u

static int ctl;

static nv_status_t control(uint32_t client, uint32_t cmd, void *p, uint32_t n)
{
	struct nvos54 c = { .h_client = client, .h_object = client, .cmd = cmd,
	                    .params = (uintptr_t)p, .params_size = n };
	if (syscall(SYS_ioctl, ctl, NV_IOC_WORD(NV_ESC_RM_CONTROL, sizeof(c)), &c) < 0)
		return NV_ERR_GENERIC;
	return c.status;
}

int main(void)
{
	struct nv_card_info cards[NV0000_CTRL_GPU_MAX_IDS];
	struct nv0000_probed_ids_params probed;
	struct nv0000_attach_ids_params attach;
	uint32_t client = 0, n_cards = 0, n_probed = 0;
	int gpu_fds[TRY_INSTANCES];

	ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	/* Hold every GPU node we can open: the driver wants one for a device. */
	for (int i = 0; i < TRY_INSTANCES; i++) {
		char node[32];
		snprintf(node, sizeof(node), "/dev/nvidia%d", i);
		gpu_fds[i] = open(node, O_RDWR | O_CLOEXEC);
	}
	memset(cards, 0, sizeof(cards));
	syscall(SYS_ioctl, ctl, NV_IOC_WORD(NV_ESC_CARD_INFO, sizeof(cards)), cards);
	for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++)
		n_cards += cards[i].valid;
	struct nvos64 a = { .h_class = NV01_ROOT_CLIENT, .p_alloc_parms = (uintptr_t)&client };
	if (syscall(SYS_ioctl, ctl, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(a)), &a) < 0 || a.status)
		return 2;
	client = a.h_object_new;
	memset(&probed, 0xff, sizeof(probed));
	control(client, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, &probed, sizeof(probed));
	memset(&attach, 0xff, sizeof(attach));
	for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++)
		if (probed.gpu_ids[i] != NV0000_CTRL_GPU_INVALID_ID)
			attach.gpu_ids[n_probed++] = probed.gpu_ids[i];
	control(client, NV0000_CTRL_CMD_GPU_ATTACH_IDS, &attach, sizeof(attach));
	printf("cards=%u probed=%u\n", n_cards, n_probed);
	for (uint32_t inst = 0; inst < TRY_INSTANCES; inst++) {
		struct nv0080_alloc_params dp = { .device_id = inst, .h_client_share = client };
		struct nvos64 d = { .h_root = client, .h_object_parent = client,
		                    .h_object_new = H_DEVICE0 + inst, .h_class = NV01_DEVICE_0,
		                    .p_alloc_parms = (uintptr_t)&dp };
		long rc = syscall(SYS_ioctl, ctl, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(d)), &d);
		printf("dev%u=%s0x%x\n", inst, rc < 0 ? "errno:" : "", rc < 0 ? 0 : d.status);
	}
	for (int i = 0; i < TRY_INSTANCES; i++)
		if (gpu_fds[i] >= 0)
			close(gpu_fds[i]);
	return 0;
}
