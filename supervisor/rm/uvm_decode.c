/* SPDX-License-Identifier: MIT */
/*
 * uvm_decode.c - the decode stage of UVM's external-mapping calls
 * (uvm_call.h). Facts from NVIDIA/open-gpu-kernel-modules, uvm_ioctl.h and
 * uvm_types.h at 535.288.01, 550.163.01, 570.211.01, 580.95.05, 590.48.01
 * and 595.45.04 (abi-drift.md): MAP_EXTERNAL's per-GPU array has 32
 * entries up to 550 and 256 from 570; UVM_FREE lost its length in 590;
 * UNMAP_EXTERNAL never changed. UVM's own range check (uvm_api.h,
 * uvm_api_range_invalid_4k) is 4 KiB alignment of base and length, a
 * non-zero length and no wrap.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nvrm/rm_abi.h"
#include "uvm_call.h"

#define UVM_PAGE_4K 4096ull

static const struct {
	const char *branch;
	struct gs_uvm_layout layout;
} layouts[] = {
	{ "535", { UVM_MAX_GPUS_535, true } },  { "550", { UVM_MAX_GPUS_535, true } },
	{ "570", { UVM_MAX_GPUS_570, true } },  { "575", { UVM_MAX_GPUS_570, true } },
	{ "580", { UVM_MAX_GPUS_570, true } },  { "590", { UVM_MAX_GPUS_570, false } },
	{ "595", { UVM_MAX_GPUS_570, false } },
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

bool gs_uvm_cmd_performed(uint32_t cmd)
{
	return cmd == UVM_MAP_EXTERNAL_ALLOCATION || cmd == UVM_UNMAP_EXTERNAL || cmd == UVM_FREE;
}

uint32_t gs_uvm_params_size(const struct gs_uvm_layout *lay, uint32_t cmd)
{
	switch (cmd) {
	case UVM_MAP_EXTERNAL_ALLOCATION:
		return (uint32_t)UVM_MAP_EXTERNAL_SIZE(lay->max_gpus);
	case UVM_UNMAP_EXTERNAL:
		return sizeof(struct uvm_unmap_external_params);
	case UVM_FREE:
		return lay->free_has_length ? sizeof(struct uvm_free_params)
		                            : sizeof(struct uvm_free_params_590);
	}
	return 0;
}

uint32_t gs_uvm_status_offset(const struct gs_uvm_layout *lay, uint32_t cmd)
{
	switch (cmd) {
	case UVM_MAP_EXTERNAL_ALLOCATION:
		return (uint32_t)(UVM_MAP_EXTERNAL_TAIL_OFF(lay->max_gpus) +
		                  offsetof(struct uvm_map_external_tail, rm_status));
	case UVM_UNMAP_EXTERNAL:
		return offsetof(struct uvm_unmap_external_params, rm_status);
	case UVM_FREE:
		return lay->free_has_length ? offsetof(struct uvm_free_params, rm_status)
		                            : offsetof(struct uvm_free_params_590, rm_status);
	}
	return 0;
}

static void set_range(struct gs_uvm_call *out, uint64_t base, uint64_t length)
{
	out->base = base;
	out->length = length;
	out->range_ok = length && !(base % UVM_PAGE_4K) && !(length % UVM_PAGE_4K) &&
	                base + length - 1 >= base;
	out->last = out->range_ok ? base + length - 1 : 0;
}

static void decode_map(const struct gs_uvm_layout *lay, const uint8_t *p, struct gs_uvm_call *out)
{
	struct uvm_map_external_head head;
	struct uvm_map_external_tail tail;

	memcpy(&head, p, sizeof(head));
	memcpy(&tail, p + UVM_MAP_EXTERNAL_TAIL_OFF(lay->max_gpus), sizeof(tail));
	out->name = "UVM_MAP_EXTERNAL_ALLOCATION";
	set_range(out, head.base, head.length);
	out->offset = head.offset;
	out->gpu_count_ok = tail.gpu_count >= 1 && tail.gpu_count <= lay->max_gpus;
	out->n_gpus = out->gpu_count_ok ? (uint32_t)tail.gpu_count : 0;
	out->gpus = (const struct uvm_gpu_mapping_attrs *)(p + sizeof(head));
	out->rm_ctrl_fd = tail.rm_ctrl_fd;
	out->h_client = tail.h_client;
	out->h_memory = tail.h_memory;
}

int gs_decode_uvm(const struct gs_uvm_layout *lay, uint32_t cmd, const void *params, uint32_t len,
                  struct gs_uvm_call *out)
{
	const uint8_t *p = params;
	uint32_t need = gs_uvm_params_size(lay, cmd);

	memset(out, 0, sizeof(*out));
	if (!need || len < need)
		return -1;
	out->cmd = cmd;
	if (cmd == UVM_MAP_EXTERNAL_ALLOCATION) {
		decode_map(lay, p, out);
	} else if (cmd == UVM_UNMAP_EXTERNAL) {
		struct uvm_unmap_external_params u;
		memcpy(&u, p, sizeof(u));
		out->name = "UVM_UNMAP_EXTERNAL";
		set_range(out, u.base, u.length);
		out->unmap_uuid = p + offsetof(struct uvm_unmap_external_params, gpu_uuid);
	} else if (lay->free_has_length) {
		struct uvm_free_params f;
		memcpy(&f, p, sizeof(f));
		out->name = "UVM_FREE";
		set_range(out, f.base, f.length);
	} else {
		struct uvm_free_params_590 f;
		memcpy(&f, p, sizeof(f));
		out->name = "UVM_FREE";
		/* The range that starts at base, whatever its length. */
		out->base = f.base;
		out->range_ok = !(f.base % UVM_PAGE_4K);
	}
	return 0;
}
