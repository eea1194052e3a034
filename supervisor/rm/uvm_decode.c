/* SPDX-License-Identifier: MIT */
/*
 * uvm_decode.c - the decode stage of UVM_MAP_EXTERNAL_ALLOCATION and
 * UVM_REGISTER_CHANNEL (uvm_call.h). Facts from NVIDIA/open-gpu-kernel-modules, uvm_ioctl.h and
 * uvm_types.h at 535.288.01, 550.163.01, 570.211.01, 580.95.05, 590.48.01
 * and 595.45.04 (abi-drift.md): MAP_EXTERNAL's per-GPU array has 32
 * entries up to 550 and 256 from 570; the fields around it never changed.
 * UNREGISTER_CHANNEL lost its GPU in 590; REGISTER_CHANNEL never changed.
 * UVM's own range check (uvm_api.h,
 * uvm_api_range_invalid_4k) is 4 KiB alignment of base and length, a
 * non-zero length and no wrap.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nvrm/rm_abi.h"
#include "nvuvm_abi.h"
#include "uvm_call.h"

#define UVM_PAGE_4K 4096ull

static const struct {
	const char *branch;
	struct gs_uvm_layout layout;
} layouts[] = {
	{ "535", { UVM_MAX_GPUS_535, false } }, { "550", { UVM_MAX_GPUS_535, false } },
	{ "570", { UVM_MAX_GPUS_570, false } }, { "575", { UVM_MAX_GPUS_570, false } },
	{ "580", { UVM_MAX_GPUS_570, false } }, { "590", { UVM_MAX_GPUS_570, true } },
	{ "595", { UVM_MAX_GPUS_570, true } },
};

bool gs_uvm_layout_of(const struct gs_rm_abi *abi, struct gs_uvm_layout *out)
{
	const char *branch = abi ? gs_rm_abi_branch(abi) : NULL;

	for (size_t i = 0; branch && i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (strcmp(layouts[i].branch, branch) == 0) {
			*out = layouts[i].layout;
			return true;
		}
	}
	return false;
}

bool gs_uvm_cmd_trapped(uint32_t cmd)
{
	return cmd == UVM_MAP_EXTERNAL_ALLOCATION || cmd == UVM_ALLOC_DEVICE_P2P || cmd == UVM_REGISTER_CHANNEL;
}

uint32_t gs_uvm_map_size(const struct gs_uvm_layout *lay)
{
	return (uint32_t)UVM_MAP_EXTERNAL_SIZE(lay->max_gpus);
}

uint32_t gs_uvm_map_status_offset(const struct gs_uvm_layout *lay)
{
	return (uint32_t)(UVM_MAP_EXTERNAL_TAIL_OFF(lay->max_gpus) +
	                  offsetof(struct uvm_map_external_tail, rm_status));
}

int gs_decode_uvm_map(const struct gs_uvm_layout *lay, const void *params, uint32_t len,
                      struct gs_uvm_call *out)
{
	const uint8_t *p = params;
	struct uvm_map_external_head head;
	struct uvm_map_external_tail tail;

	memset(out, 0, sizeof(*out));
	if (len < gs_uvm_map_size(lay))
		return -1;
	memcpy(&head, p, sizeof(head));
	memcpy(&tail, p + UVM_MAP_EXTERNAL_TAIL_OFF(lay->max_gpus), sizeof(tail));
	out->base = head.base;
	out->length = head.length;
	out->range_ok = head.length && !(head.base % UVM_PAGE_4K) && !(head.length % UVM_PAGE_4K) &&
	                head.base + head.length - 1 >= head.base;
	out->last = out->range_ok ? head.base + head.length - 1 : 0;
	out->offset = head.offset;
	out->gpu_count_ok = tail.gpu_count >= 1 && tail.gpu_count <= lay->max_gpus;
	out->n_gpus = out->gpu_count_ok ? (uint32_t)tail.gpu_count : 0;
	out->gpus = (const struct uvm_gpu_mapping_attrs *)(p + sizeof(head));
	out->rm_ctrl_fd = tail.rm_ctrl_fd;
	out->h_client = tail.h_client;
	out->h_memory = tail.h_memory;
	return 0;
}

int gs_decode_uvm_register_channel(const void *params, uint32_t len, struct gs_uvm_channel_call *out)
{
	struct uvm_register_channel_params p;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(p))
		return -1;
	memcpy(&p, params, sizeof(p));
	memcpy(out->gpu_uuid, p.gpu_uuid, UVM_UUID_BYTES);
	out->rm_ctrl_fd = p.rm_ctrl_fd;
	out->h_client = p.h_client;
	out->h_channel = p.h_channel;
	out->base = p.base;
	out->length = p.length;
	return 0;
}
