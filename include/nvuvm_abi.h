/* SPDX-License-Identifier: MIT */
/*
 * nvuvm_abi.h - our own declaration of the /dev/nvidia-uvm ioctl ABI: its
 * command numbers and the parameter structs that gpusandbox, the fake
 * driver and the tests read or write.
 *
 * As in nvrm_abi.h, these are facts (numbers, field order, sizes and
 * offsets), each with the uvm_ioctl.h tags or the driver it was measured
 * on beside it. No NVIDIA header text is reproduced. Every struct size and
 * every offset we use carries a _Static_assert, so an ABI drift is a build
 * failure, not a silent misdecode.
 *
 * It includes nvrm_abi.h for the types the two share (nv_handle_t,
 * nv_status_t); nvrm_abi.h, the RM ABI, does not include it.
 */
#ifndef GPUSANDBOX_NVUVM_ABI_H
#define GPUSANDBOX_NVUVM_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "nvrm_abi.h"

/* ---- /dev/nvidia-uvm --------------------------------------------------- */
/* /dev/nvidia-uvm is minor 0 of the uvm major; minor 1 is nvidia-uvm-tools. */
#define NV_UVM_DEVICE_MINOR 0u
/* UVM commands are plain integers, not _IOC words. */
#define UVM_INITIALIZE                 0x30000001u
#define UVM_MAP_EXTERNAL_ALLOCATION    33u
#define UVM_FREE                       34u
#define UVM_MIGRATE                    51u
#define UVM_UNMAP_EXTERNAL             66u
#define UVM_CREATE_EXTERNAL_RANGE      73u
#define UVM_ALLOC_DEVICE_P2P           78u
#define UVM_PAGEABLE_MEM_ACCESS        39u
#define UVM_ALLOC_SEMAPHORE_POOL       68u
#define UVM_VALIDATE_VA_RANGE          72u
#define UVM_REGISTER_CHANNEL           27u
#define UVM_UNREGISTER_CHANNEL         28u
#define UVM_REGISTER_GPU               37u

/* UVM_REGISTER_GPU: a GPU, by UUID, registered in the caller's VA space
 * (for managed memory, among others). The same layout from 535 to 595
 * (uvm_ioctl.h). UVM lets it through once the calling process holds the
 * GPU's node, RM device or not (nvGpuOpsGetGpuInfo -> osIsGpuAccessible,
 * nv_gpu_ops.c, 580.95.05); the tests' fake models that (fake_uvm.c). */
struct uvm_register_gpu_params {
	uint8_t     gpu_uuid[16];
	uint8_t     numa_enabled;   /* NvBool */
	uint8_t     pad0[3];
	int32_t     numa_node_id;
	int32_t     rm_ctrl_fd;
	nv_handle_t h_client;
	nv_handle_t h_smc_part_ref;
	nv_status_t rm_status;
};
_Static_assert(sizeof(struct uvm_register_gpu_params) == 40, "UVM_REGISTER_GPU_PARAMS size");
_Static_assert(offsetof(struct uvm_register_gpu_params, rm_ctrl_fd) == 24, "UVM_REGISTER_GPU rmCtrlFd");
_Static_assert(offsetof(struct uvm_register_gpu_params, rm_status) == 36, "UVM_REGISTER_GPU rmStatus");

/* UVM_INITIALIZE: flags 0 asks for the most a VA space can have (the flags
 * only take features away: DISABLE_HMM 0x1, MULTI_PROCESS_SHARING 0x2). */
struct uvm_initialize_params {
	uint64_t    flags;
	nv_status_t rm_status;
	uint32_t    pad;
};
_Static_assert(sizeof(struct uvm_initialize_params) == 16, "UVM_INITIALIZE_PARAMS size");
_Static_assert(offsetof(struct uvm_initialize_params, rm_status) == 8, "UVM_INITIALIZE rmStatus");

/* UVM_PAGEABLE_MEM_ACCESS: may the GPUs of this VA space reach pageable
 * (malloc'd) memory, through HMM or ATS? */
struct uvm_pageable_mem_access_params {
	uint8_t     pageable_mem_access;  /* NvBool */
	uint8_t     pad[3];
	nv_status_t rm_status;
};
_Static_assert(sizeof(struct uvm_pageable_mem_access_params) == 8, "PAGEABLE_MEM_ACCESS size");
_Static_assert(offsetof(struct uvm_pageable_mem_access_params, rm_status) == 4,
               "PAGEABLE_MEM_ACCESS rmStatus");

/* UVM_VALIDATE_VA_RANGE: NV_OK iff the VA space has a range of exactly
 * [base, base + length), of any type. */
struct uvm_validate_va_range_params {
	uint64_t    base;
	uint64_t    length;
	nv_status_t rm_status;
	uint32_t    pad;
};
_Static_assert(sizeof(struct uvm_validate_va_range_params) == 24, "VALIDATE_VA_RANGE size");
_Static_assert(offsetof(struct uvm_validate_va_range_params, rm_status) == 16,
               "VALIDATE_VA_RANGE rmStatus");

/* ---- UVM's external mappings (issue #17 item 9) --------------------------
 * UVM_MAP_EXTERNAL_ALLOCATION maps RM memory (hClient, hMemory) into an
 * external range of the file's VA space, on each GPU listed, and dups the
 * memory into UVM's own RM client for as long as the mapping lives
 * (uvm_map_external.c, 580.95.05). A mapping over an existing one on the
 * same GPU first unmaps what it overlaps, splitting a partly covered
 * mapping at the new one's edges; UVM_UNMAP_EXTERNAL does the same for
 * [base, base + length) on one GPU; UVM_FREE destroys a whole range and
 * its mappings. The VA space comes from the file, never from current->mm,
 * and rmCtrlFd is not used (uvm_common.h: "TODO: Bug 1624521"). */

/* UvmGpuMappingAttributes: the GPU (its UUID, or a MIG instance's, as 16
 * raw bytes) and how to map on it. */
#define UVM_UUID_BYTES 16u
struct uvm_gpu_mapping_attrs {
	uint8_t  gpu_uuid[UVM_UUID_BYTES];
	uint32_t mapping_type;
	uint32_t caching_type;
	uint32_t format_type;
	uint32_t element_bits;
	uint32_t compression_type;
};
_Static_assert(sizeof(struct uvm_gpu_mapping_attrs) == 36, "UvmGpuMappingAttributes size");

/* The map's per-GPU array has UVM_MAX_GPUS entries: NV_MAX_DEVICES (32)
 * on 535 and 550, NV_MAX_DEVICES x UVM_PARENT_ID_MAX_SUB_PROCESSORS
 * (32 x 8) from 570 on (uvm_types.h at each branch's last tag). The
 * fields around it are the same: a head of three u64 and a tail. */
#define UVM_MAX_GPUS_535 32u
#define UVM_MAX_GPUS_570 256u
struct uvm_map_external_head {
	uint64_t base;
	uint64_t length;
	uint64_t offset;
};
struct uvm_map_external_tail {
	uint64_t    gpu_count;
	int32_t     rm_ctrl_fd;
	nv_handle_t h_client;
	nv_handle_t h_memory;
	nv_status_t rm_status;
};
_Static_assert(sizeof(struct uvm_map_external_head) == 24, "MAP_EXTERNAL head");
_Static_assert(sizeof(struct uvm_map_external_tail) == 24, "MAP_EXTERNAL tail");
_Static_assert(offsetof(struct uvm_map_external_tail, rm_status) == 20, "MAP_EXTERNAL rmStatus");
/* Where the tail starts and how big the struct is, for max_gpus entries. */
#define UVM_MAP_EXTERNAL_TAIL_OFF(max_gpus) \
	(sizeof(struct uvm_map_external_head) + (size_t)(max_gpus) * sizeof(struct uvm_gpu_mapping_attrs))
#define UVM_MAP_EXTERNAL_SIZE(max_gpus) \
	(UVM_MAP_EXTERNAL_TAIL_OFF(max_gpus) + sizeof(struct uvm_map_external_tail))
_Static_assert(UVM_MAP_EXTERNAL_SIZE(UVM_MAX_GPUS_570) == 9264, "MAP_EXTERNAL size, 570+");
_Static_assert(UVM_MAP_EXTERNAL_SIZE(UVM_MAX_GPUS_535) == 1200, "MAP_EXTERNAL size, 535/550");
_Static_assert(UVM_MAP_EXTERNAL_TAIL_OFF(UVM_MAX_GPUS_570) % 8 == 0 &&
               UVM_MAP_EXTERNAL_TAIL_OFF(UVM_MAX_GPUS_535) % 8 == 0, "MAP_EXTERNAL tail alignment");

/* UVM_UNMAP_EXTERNAL: the same on every branch. */
struct uvm_unmap_external_params {
	uint64_t    base;
	uint64_t    length;
	uint8_t     gpu_uuid[UVM_UUID_BYTES];
	nv_status_t rm_status;
	uint32_t    pad;
};
_Static_assert(sizeof(struct uvm_unmap_external_params) == 40, "UNMAP_EXTERNAL size");
_Static_assert(offsetof(struct uvm_unmap_external_params, rm_status) == 32, "UNMAP_EXTERNAL rmStatus");

/* UVM_FREE: (base, length) up to 580, a range of exactly that extent
 * (uvm_va_range.c: a partial free is an error); from 590 on only base,
 * the range that starts there. */
struct uvm_free_params {
	uint64_t    base;
	uint64_t    length;
	nv_status_t rm_status;
	uint32_t    pad;
};
struct uvm_free_params_590 {
	uint64_t    base;
	nv_status_t rm_status;
	uint32_t    pad;
};
_Static_assert(sizeof(struct uvm_free_params) == 24, "UVM_FREE size, up to 580");
_Static_assert(offsetof(struct uvm_free_params, rm_status) == 16, "UVM_FREE rmStatus");
_Static_assert(sizeof(struct uvm_free_params_590) == 16, "UVM_FREE size, 590+");
_Static_assert(offsetof(struct uvm_free_params_590, rm_status) == 8, "UVM_FREE rmStatus, 590+");

/* UVM_ALLOC_DEVICE_P2P (570 on): a range of P2P pages for another PCI
 * device, backed by RM memory that UVM dups and keeps until the range is
 * freed (uvm_va_range_device_p2p.c, 580.95.05): the same hold as a map.
 * The same layout on 570-595. */
struct uvm_alloc_device_p2p_params {
	uint64_t    base;
	uint64_t    length;
	uint64_t    offset;
	uint8_t     gpu_uuid[UVM_UUID_BYTES];
	int32_t     rm_ctrl_fd;
	nv_handle_t h_client;
	nv_handle_t h_memory;
	nv_status_t rm_status;
};
_Static_assert(sizeof(struct uvm_alloc_device_p2p_params) == 56, "ALLOC_DEVICE_P2P size");
_Static_assert(offsetof(struct uvm_alloc_device_p2p_params, rm_status) == 52, "ALLOC_DEVICE_P2P rmStatus");

/* ---- UVM's channel registrations (issue #17 item 4) ----------------------
 * UVM_REGISTER_CHANNEL hands UVM an RM channel (hClient, hChannel) of the
 * file's VA space, to service its faults. UVM has RM retain the channel
 * (nvGpuOpsRetainChannel, nv_gpu_ops.c, 580.95.05): RM dups the channel's
 * group (TSG) into UVM's own client and allocates a UVM_CHANNEL_RETAINER
 * that holds the channel's ID and its instance block
 * (uvm_channel_retainer.c). Both stay until UVM_UNREGISTER_CHANNEL, the
 * unregistration of the GPU VA space or the GPU, or the teardown of the VA
 * space (uvm_user_channel.c): whatever happens to the RM handles. UVM
 * finds a registration by (hClient, hChannel) alone; rmCtrlFd is not
 * used ("TODO: Bug 1624521"), and RM looks hClient up among every client.
 * Register is the same on 535-595; unregister lost its gpuUuid in 590
 * (uvm_ioctl.h at 535.288.01, 550.163.01, 570.211.01, 575.64.05, 580.142,
 * 590.48.01, 595.45.04). */
struct uvm_register_channel_params {
	uint8_t     gpu_uuid[UVM_UUID_BYTES];
	int32_t     rm_ctrl_fd;
	nv_handle_t h_client;
	nv_handle_t h_channel;
	uint32_t    pad0;
	uint64_t    base;
	uint64_t    length;
	nv_status_t rm_status;
	uint32_t    pad1;
};
_Static_assert(sizeof(struct uvm_register_channel_params) == 56, "REGISTER_CHANNEL size");
_Static_assert(offsetof(struct uvm_register_channel_params, h_channel) == 24, "REGISTER_CHANNEL hChannel");
_Static_assert(offsetof(struct uvm_register_channel_params, base) == 32, "REGISTER_CHANNEL base");
_Static_assert(offsetof(struct uvm_register_channel_params, rm_status) == 48, "REGISTER_CHANNEL rmStatus");

/* Up to 580. */
struct uvm_unregister_channel_params {
	uint8_t     gpu_uuid[UVM_UUID_BYTES];
	nv_handle_t h_client;
	nv_handle_t h_channel;
	nv_status_t rm_status;
	uint32_t    pad;
};
_Static_assert(sizeof(struct uvm_unregister_channel_params) == 32, "UNREGISTER_CHANNEL size, up to 580");
_Static_assert(offsetof(struct uvm_unregister_channel_params, rm_status) == 24,
               "UNREGISTER_CHANNEL rmStatus, up to 580");
/* 590 on: no GPU (it never chose anything: UVM looks the pair up in the
 * whole VA space). */
struct uvm_unregister_channel_params_590 {
	nv_handle_t h_client;
	nv_handle_t h_channel;
	nv_status_t rm_status;
};
_Static_assert(sizeof(struct uvm_unregister_channel_params_590) == 12, "UNREGISTER_CHANNEL size, 590+");
_Static_assert(offsetof(struct uvm_unregister_channel_params_590, rm_status) == 8,
               "UNREGISTER_CHANNEL rmStatus, 590+");
/* The first branch with the short form. */
#define UVM_UNREGISTER_CHANNEL_SHORT_BRANCH 590

/* UVM_CREATE_EXTERNAL_RANGE: an empty external range of [base, base +
 * length), 4 KiB aligned, overlapping no other range. */
struct uvm_create_external_range_params {
	uint64_t    base;
	uint64_t    length;
	nv_status_t rm_status;
	uint32_t    pad;
};
_Static_assert(sizeof(struct uvm_create_external_range_params) == 24, "CREATE_EXTERNAL_RANGE size");
_Static_assert(offsetof(struct uvm_create_external_range_params, rm_status) == 16,
               "CREATE_EXTERNAL_RANGE rmStatus");

#endif /* GPUSANDBOX_NVUVM_ABI_H */
