/* SPDX-License-Identifier: MIT */
/*
 * gpus - GPU visibility is enforced in RM calls, raw ioctls included.
 *
 * Run on a fake with two GPUs under gpusandbox --gpus 1 (the runner passes
 * both). Lists the GPUs every way a program can (CARD_INFO, probed and
 * attached ids, id info), then tries to create a device on GPU 0 with a raw
 * RM_ALLOC, and on GPU 1, and allocates video memory there. Then the legacy
 * path: an RM_ALLOC_OBJECT of NV01_DEVICE_0 takes no params, so the driver
 * makes device instance 0 (the hidden GPU; deviceConstruct_IMPL, device.c
 * at 580.x), and a channel group under it (issue #17 item 13: that path
 * skipped the --gpus check). Judged by the fake's gpu0.channel_groups_peak.
 * Last, UVM: the hidden GPU registered in a VA space by its UUID (known
 * outside the sandbox: nvidia-smi prints it), which UVM grants to any
 * process holding the GPU's node, with no RM device of its own there
 * (fake_uvm_gpu.c; managed memory can then live on that GPU). Judged by
 * the fake's gpu0.uvm_registered_peak.
 * Prints cards= card_minor= probed= attached= info_hidden= info_visible=
 * dev0= dev1= mem1= legacy_dev0= legacy_group0= uvm_node0= uvm_reg0= and
 * SUMMARY.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../fakedrv/fake_rm.h"
#include "../lib/uuid_text.h"
#include "adv.h"
#include "nvuvm_abi.h"

#define CARDS NV0000_CTRL_GPU_MAX_IDS
#define H_DEV0 0x5c00f000u
#define H_DEV1 0x5c00f001u
#define H_MEM1 0x5c00f100u
#define H_LEGACY_DEV0 0x5c00f200u
#define H_LEGACY_GROUP0 0x5c00f201u
#define TSG_PARAMS 20          /* NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS */
#define GPU_ID_HIDDEN 0x100u   /* the fake's gpuId of GPU 0 */
#define GPU_ID_SHOWN  0x200u   /* and of GPU 1 */

static unsigned count_ids(const uint32_t *ids)
{
	unsigned n = 0;
	for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++)
		n += ids[i] != NV0000_CTRL_GPU_INVALID_ID;
	return n;
}

/* RM_ALLOC_OBJECT of NV01_DEVICE_0: no params, instance 0. */
static rmc_status_t legacy_device(struct rmc_session *s, nv_handle_t h)
{
	struct nvos05 a = { .h_root = s->client, .h_object_parent = s->client, .h_object_new = h,
	                    .h_class = NV01_DEVICE_0 };
	int rc = rmc_escape(s->fd, NULL, NV_ESC_RM_ALLOC_OBJECT, &a, sizeof(a));

	return rc < 0 ? (rmc_status_t)-1 : a.status;
}

static rmc_status_t device(struct rmc_session *s, nv_handle_t h, uint32_t instance)
{
	struct nv0080_alloc_params p = { .device_id = instance, .h_client_share = s->client };
	return rmc_alloc(s->fd, NULL, s->client, s->client, &h, NV01_DEVICE_0, &p, 0);
}

/* GPU 0 registered with UVM through its node: its open's errno (0: it
 * opened) in *node_errno, the registration's status returned. The files
 * stay open (the registration lives with the UVM file). */
static rmc_status_t uvm_register_hidden(int *node_errno)
{
	char text[64];
	struct uvm_register_gpu_params p = { .rm_ctrl_fd = -1, .rm_status = NV_ERR_GENERIC };
	struct uvm_initialize_params init = { 0 };

	*node_errno = open("/dev/nvidia0", O_RDWR | O_CLOEXEC) < 0 ? errno : 0;
	snprintf(text, sizeof(text), FAKE_GPU_UUID_FMT, 0u);
	int ufd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	if (uuid_from_text(text, p.gpu_uuid) < 0 || ufd < 0 || syscall(SYS_ioctl, ufd, UVM_INITIALIZE, &init) < 0)
		return RMC_SYSERR(ufd < 0 ? errno : EIO);
	if (syscall(SYS_ioctl, ufd, UVM_REGISTER_GPU, &p) < 0)
		return RMC_SYSERR(errno);
	return p.rm_status;
}

int main(void)
{
	struct nv_card_info cards[CARDS];
	struct nv0000_probed_ids_params probed;
	struct nv0000_gpu_ids_params attached;
	struct nv0000_attach_ids_params attach;
	struct nv0000_id_info_v2_params info;
	struct rmc_session s = { .fd = rmc_open_ctl() };
	unsigned n_cards = 0, card_minor = 99;
	rmc_status_t st;

	if (s.fd < 0)
		return ADV_EXIT_SETUP;
	memset(cards, 0, sizeof(cards));
	if (syscall(SYS_ioctl, s.fd, NV_IOC_WORD(NV_ESC_CARD_INFO, sizeof(cards)), cards) == 0)
		for (unsigned i = 0; i < CARDS; i++)
			if (cards[i].valid) {
				n_cards++;
				card_minor = cards[i].minor_number;
			}
	printf("cards=%u card_minor=%u\n", n_cards, card_minor);
	if (rmc_alloc_client(s.fd, NULL, &s.client) != NV_OK)
		return ADV_EXIT_SETUP;
	memset(&probed, 0xff, sizeof(probed));
	st = rmc_control(s.fd, NULL, s.client, s.client, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, &probed,
	                 rmc_ctrl_size(NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, sizeof(probed)));
	printf("probed=%u probed_status=%s\n", count_ids(probed.gpu_ids), rmc_status_str(st));
	memset(&attach, 0xff, sizeof(attach));
	attach.gpu_ids[0] = GPU_ID_SHOWN;
	rmc_control(s.fd, NULL, s.client, s.client, NV0000_CTRL_CMD_GPU_ATTACH_IDS, &attach, sizeof(attach));
	memset(&attached, 0xff, sizeof(attached));
	rmc_control(s.fd, NULL, s.client, s.client, NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, &attached,
	            sizeof(attached));
	printf("attached=%u\n", count_ids(attached.gpu_ids));
	memset(&info, 0, sizeof(info));
	info.gpu_id = GPU_ID_HIDDEN;
	st = rmc_control(s.fd, NULL, s.client, s.client, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &info,
	                 sizeof(info));
	printf("info_hidden=%s\n", rmc_status_str(st));
	memset(&info, 0, sizeof(info));
	info.gpu_id = GPU_ID_SHOWN;
	st = rmc_control(s.fd, NULL, s.client, s.client, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &info,
	                 sizeof(info));
	printf("info_visible=%s info_instance=%u\n", rmc_status_str(st), info.device_instance);
	/* nvidia-smi's accounting query names a GPU by gpuId too. */
	struct nv0000_gpuacct_state_params acct = { .gpu_id = GPU_ID_HIDDEN };
	st = rmc_control(s.fd, NULL, s.client, s.client, NV0000_CTRL_CMD_GPUACCT_GET_ACCOUNTING_STATE,
	                 &acct, sizeof(acct));
	printf("acct_hidden=%s acct_hidden_state=%u\n", rmc_status_str(st), acct.state);
	acct = (struct nv0000_gpuacct_state_params){ .gpu_id = GPU_ID_SHOWN };
	st = rmc_control(s.fd, NULL, s.client, s.client, NV0000_CTRL_CMD_GPUACCT_GET_ACCOUNTING_STATE,
	                 &acct, sizeof(acct));
	printf("acct_visible=%s\n", rmc_status_str(st));
	/* Raw: the hidden GPU by its device instance. */
	printf("dev0=%s\n", rmc_status_str(device(&s, H_DEV0, 0)));
	st = device(&s, H_DEV1, 1);
	printf("dev1=%s\n", rmc_status_str(st));
	struct nv_memory_allocation_params mp;
	rmc_fill_vidmem_params(&mp, s.client, ADV_CHUNK);
	nv_handle_t h = H_MEM1;
	st = rmc_alloc(s.fd, NULL, s.client, H_DEV1, &h, NV01_MEMORY_LOCAL_USER, &mp, 0);
	printf("mem1=%s\n", rmc_status_str(st));
	st = legacy_device(&s, H_LEGACY_DEV0);
	printf("legacy_dev0=%s\n", rmc_status_str(st));
	static uint8_t tsg[TSG_PARAMS];
	h = H_LEGACY_GROUP0;
	st = rmc_alloc(s.fd, NULL, s.client, H_LEGACY_DEV0, &h, KEPLER_CHANNEL_GROUP_A, tsg, 0);
	printf("legacy_group0=%s\n", rmc_status_str(st));
	int node_errno;
	st = uvm_register_hidden(&node_errno);
	printf("uvm_node0=%d uvm_reg0=%s\n", node_errno, rmc_status_str(st));
	adv_print_summary(&(struct adv_tally){ 0 });
	return 0;
}
