/* SPDX-License-Identifier: MIT */
/*
 * per_gpu - a per-GPU quota must hold on the GPU it names (issue #17 item
 * 13).
 *
 * The policy gives GPU 1 (/dev/nvidia1, nvidia-smi's index) 256 MiB and
 * every other GPU 1 GiB. RM names GPUs in NV01_DEVICE_0 by device instance,
 * which follows attach order (gpumgrAllocDeviceInstance, gpu_mgr.c at
 * 580.142), not the minor; the fake runs with --reverse-instances, so GPU 1
 * is instance 0. The program finds GPU 1's instance the way CUDA does
 * (CARD_INFO for its gpuId, GET_ID_INFO_V2 for the instance), makes a
 * device on it and allocates 64 MiB chunks until refused. A supervisor that
 * keys quotas by instance applies GPU 0's 1 GiB to GPU 1. Judged by the
 * fake's gpu1.vidmem_peak.
 *
 * Prints instance= ok= stop= and SUMMARY.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"

#define TARGET_MINOR 1u
#define PG_CHUNK     (64ull * RMC_MIB)
#define PG_MAX       64

static int instance_of_minor(int fd, nv_handle_t client, unsigned minor, uint32_t *instance)
{
	struct nv_card_info cards[NV0000_CTRL_GPU_MAX_IDS];
	struct nv0000_id_info_v2_params p = { 0 };

	memset(cards, 0, sizeof(cards));
	if (rmc_escape(fd, NULL, NV_ESC_CARD_INFO, cards, sizeof(cards)) != 0)
		return -1;
	for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++)
		if (cards[i].valid && cards[i].minor_number == minor)
			p.gpu_id = cards[i].gpu_id;
	if (!p.gpu_id || rmc_control(fd, NULL, client, client, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2,
	                             &p, sizeof(p)) != NV_OK)
		return -1;
	*instance = p.device_instance;
	return 0;
}

int main(void)
{
	struct adv_tally t = { 0 };
	nv_handle_t client = 0, dev = RMC_H_DEVICE;
	uint32_t instance = 0;
	rmc_status_t st = NV_OK;
	int fd = rmc_open_ctl(), ok = 0;

	if (fd < 0 || rmc_alloc_client(fd, NULL, &client) != NV_OK ||
	    instance_of_minor(fd, client, TARGET_MINOR, &instance) < 0) {
		printf("per_gpu: setup failed\n");
		return ADV_EXIT_SETUP;
	}
	struct nv0080_alloc_params dp = { .device_id = instance };
	if (rmc_alloc(fd, NULL, client, client, &dev, NV01_DEVICE_0, &dp, sizeof(dp)) != NV_OK ||
	    rmc_alloc_subdevice(fd, client, dev, RMC_H_SUBDEVICE) != NV_OK) {
		printf("per_gpu: device on instance %u failed\n", instance);
		return ADV_EXIT_SETUP;
	}
	for (int i = 0; i < PG_MAX; i++) {
		st = rmc_alloc_vidmem(fd, NULL, client, dev, RMC_H_MEM_BASE + (nv_handle_t)i, PG_CHUNK);
		adv_count(&t, st);
		if (st != NV_OK)
			break;
		ok++;
	}
	printf("instance=%u ok=%d stop=0x%x\n", instance, ok, st);
	adv_print_summary(&t);
	return 0;
}
