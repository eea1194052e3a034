/* SPDX-License-Identifier: MIT */
/*
 * nvrm_abi.h - our own declaration of the NVIDIA Resource Manager ioctl ABI.
 *
 * These are facts (names, numbers, field order and offsets) gathered in
 * ../shared/reference/rm-abi.md from open-gpu-kernel-modules tag 580.142 and
 * re-checked against driver 580.159 on an H200 (design.md section 1). No
 * NVIDIA header text is reproduced. Every struct size and every offset that
 * gpusandbox reads or writes carries a _Static_assert, so an ABI drift is a
 * build failure, not a silent misdecode.
 *
 * Checked against: 580.65.06 .. 580.142 (source), 580.159 (measured).
 * /dev/nvidia-uvm's commands and structs are in nvuvm_abi.h.
 */
#ifndef GPUSANDBOX_NVRM_ABI_H
#define GPUSANDBOX_NVRM_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t nv_handle_t;
typedef uint32_t nv_status_t;

/* ---- ioctl request word ------------------------------------------------ */
/* The driver keys only on _IOC_NR and _IOC_SIZE; direction and type bits are
 * never checked (rm-abi.md 1.1, design.md 1.12). We build canonical words
 * with this magic when we issue calls ourselves. */
#define NV_IOCTL_MAGIC          0x46u /* 'F' */
#define NV_IOC_NR(cmd)          ((uint32_t)(cmd) & 0xffu)
#define NV_IOC_SIZE(cmd)        (((uint32_t)(cmd) >> 16) & 0x3fffu)
#define NV_IOC_READWRITE        3u
#define NV_IOC_WORD(nr, size) \
	((NV_IOC_READWRITE << 30) | ((uint32_t)(size) << 16) | (NV_IOCTL_MAGIC << 8) | (uint32_t)(nr))

/* Largest parameter block the driver accepts through XFER, and the largest
 * size a plain _IOC word can carry (14 bits). */
#define NV_ABSOLUTE_MAX_IOCTL_SIZE 16384u
#define NV_IOC_MAX_DIRECT_SIZE     16383u
/* RMAPI_PARAM_COPY_MAX_PARAMS_SIZE: nested alloc/control params limit. */
#define NV_RMAPI_MAX_PARAMS_SIZE   (1024u * 1024u)

/* ---- escape numbers ---------------------------------------------------- */
/* NV_ESC_<NAME>, one per row of nvrm/escapes.def. */
enum nv_escape {
#define RM_ESCAPE(nr_, name_, ...) NV_ESC_##name_ = (nr_),
#include "nvrm/escapes.def"
#undef RM_ESCAPE
};

/* Where NVIDIA numbers its escapes (rm-abi.md 1.2): the RM escapes
 * 0x27..0x5F, and the OS-level ones from NV_IOCTL_BASE (200) on, with room
 * for the ones a newer driver adds (595 ends at 218). */
#define NV_ESC_RM_FIRST 0x27u
#define NV_ESC_RM_LAST  0x5fu
#define NV_ESC_OS_FIRST NV_ESC_CARD_INFO
#define NV_ESC_OS_LAST  0xdfu

/* Minor of /dev/nvidiactl on the driver's major (nv.c,
 * NV_MINOR_DEVICE_NUMBER_CONTROL_DEVICE); GPUs take the low minors. */
#define NV_CTL_DEVICE_MINOR 255u

/* ---- top-level structs ------------------------------------------------- */

/* NV_ESC_IOCTL_XFER_CMD: the inner cmd is the bare escape number. */
struct nv_ioctl_xfer {
	uint32_t cmd;
	uint32_t size;
	uint64_t ptr;
};
_Static_assert(sizeof(struct nv_ioctl_xfer) == 16, "xfer size");
_Static_assert(offsetof(struct nv_ioctl_xfer, ptr) == 8, "xfer.ptr");

/* NVOS21_PARAMETERS: RM_ALLOC without access rights (32 bytes). */
struct nvos21 {
	nv_handle_t h_root;
	nv_handle_t h_object_parent;
	nv_handle_t h_object_new;
	uint32_t    h_class;
	uint64_t    p_alloc_parms;
	uint32_t    params_size;
	nv_status_t status;
};
_Static_assert(sizeof(struct nvos21) == 32, "NVOS21 size");
_Static_assert(offsetof(struct nvos21, h_object_new) == 8, "NVOS21.hObjectNew");
_Static_assert(offsetof(struct nvos21, h_class) == 12, "NVOS21.hClass");
_Static_assert(offsetof(struct nvos21, p_alloc_parms) == 16, "NVOS21.pAllocParms");
_Static_assert(offsetof(struct nvos21, status) == 28, "NVOS21.status");

/* NVOS64_PARAMETERS: RM_ALLOC with access rights (48 bytes). The driver tells
 * NVOS21 from NVOS64 only by the ioctl size. */
struct nvos64 {
	nv_handle_t h_root;
	nv_handle_t h_object_parent;
	nv_handle_t h_object_new;
	uint32_t    h_class;
	uint64_t    p_alloc_parms;
	uint64_t    p_rights_requested;
	uint32_t    params_size;
	uint32_t    flags;
	nv_status_t status;
	uint32_t    pad;
};
_Static_assert(sizeof(struct nvos64) == 48, "NVOS64 size");
_Static_assert(offsetof(struct nvos64, p_rights_requested) == 24, "NVOS64.pRightsRequested");
_Static_assert(offsetof(struct nvos64, params_size) == 32, "NVOS64.paramsSize");
_Static_assert(offsetof(struct nvos64, flags) == 36, "NVOS64.flags");
_Static_assert(offsetof(struct nvos64, status) == 40, "NVOS64.status");
#define NVOS64_FLAGS_FINN_SERIALIZED 0x1u
/* RS_ACCESS_MASK behind pRightsRequested. */
#define NV_RS_ACCESS_MASK_SIZE 4u

/* NVOS00_PARAMETERS: RM_FREE. Freeing hObjectOld == hRoot frees the client;
 * freeing any object frees its whole subtree. */
struct nvos00 {
	nv_handle_t h_root;
	nv_handle_t h_object_parent;
	nv_handle_t h_object_old;
	nv_status_t status;
};
_Static_assert(sizeof(struct nvos00) == 16, "NVOS00 size");
_Static_assert(offsetof(struct nvos00, status) == 12, "NVOS00.status");

/* NVOS54_PARAMETERS: RM_CONTROL. */
struct nvos54 {
	nv_handle_t h_client;
	nv_handle_t h_object;
	uint32_t    cmd;
	uint32_t    flags;
	uint64_t    params;
	uint32_t    params_size;
	nv_status_t status;
};
_Static_assert(sizeof(struct nvos54) == 32, "NVOS54 size");
_Static_assert(offsetof(struct nvos54, cmd) == 8, "NVOS54.cmd");
_Static_assert(offsetof(struct nvos54, flags) == 12, "NVOS54.flags");
_Static_assert(offsetof(struct nvos54, params) == 16, "NVOS54.params");
_Static_assert(offsetof(struct nvos54, params_size) == 24, "NVOS54.paramsSize");
_Static_assert(offsetof(struct nvos54, status) == 28, "NVOS54.status");
#define NVOS54_FLAGS_FINN_SERIALIZED 0x4u
/* Controls with bit 15 set take the legacy GSS path, which forwards
 * paramsSize opaque bytes and skips the CPU-side client check. */
#define NV_CTRL_GSS_LEGACY_MASK      0x8000u
/* Of those, bits 15:14 both set ask the driver for an administrator
 * (rmapi_gss_legacy_control.c, RmGssLegacyRpcCmd, at 580.142): judged from
 * the caller, who would be the supervisor. */
#define NV_CTRL_GSS_LEGACY_ADMIN     0xc000u

/* A bit-15 control that any caller may send: CPU-side RM copies its
 * paramsSize bytes to the GSP and follows no pointer in them, so
 * gpusandbox can perform it from its own copy on any driver branch without
 * a parameter row. What the GSP does with it is not in the open source:
 * it is allowed only where a policy names it. */
static inline bool nv_ctrl_is_gsp_opaque(uint32_t cmd)
{
	return (cmd & NV_CTRL_GSS_LEGACY_ADMIN) == NV_CTRL_GSS_LEGACY_MASK;
}
#define NV_CTRL_CMD_CLASS(cmd)       ((uint32_t)(cmd) >> 16)

/* NVOS05_PARAMETERS: RM_ALLOC_OBJECT, a legacy alloc with no params. */
struct nvos05 {
	nv_handle_t h_root;
	nv_handle_t h_object_parent;
	nv_handle_t h_object_new;
	uint32_t    h_class;
	nv_status_t status;
};
_Static_assert(sizeof(struct nvos05) == 20, "NVOS05 size");
_Static_assert(offsetof(struct nvos05, status) == 16, "NVOS05.status");

/* NVOS55_PARAMETERS: RM_DUP_OBJECT. A dup is a second handle on the same
 * underlying object: memory stays allocated until every handle is freed. */
struct nvos55 {
	nv_handle_t h_client;
	nv_handle_t h_parent;
	nv_handle_t h_object;
	nv_handle_t h_client_src;
	nv_handle_t h_object_src;
	uint32_t    flags;
	nv_status_t status;
};
_Static_assert(sizeof(struct nvos55) == 28, "NVOS55 size");
_Static_assert(offsetof(struct nvos55, h_object_src) == 16, "NVOS55.hObjectSrc");
_Static_assert(offsetof(struct nvos55, status) == 24, "NVOS55.status");

/* NVOS57_PARAMETERS: RM_SHARE adds a share policy (RS_SHARE_POLICY,
 * src/nvidia/inc/libraries/resserv/rs_access.h at 580.142) to an object:
 * who else may RM_DUP_OBJECT it. Without one only clients of the same
 * process may (RS_SHARE_TYPE_PID, rmapi/sharing.c). */
#define RS_SHARE_TYPE_ALL               1u
#define RS_SHARE_TYPE_OS_SECURITY_TOKEN 2u
#define RS_SHARE_TYPE_CLIENT            3u
#define RS_SHARE_TYPE_PID               4u
#define RS_SHARE_ACTION_FLAG_REVOKE     (1u << 0)
#define RS_SHARE_ACTION_FLAG_REQUIRE    (1u << 1)
/* Start an object's first edited list from the policies in force (its
 * ancestors' or the default) instead of an empty one (rs_client.c). */
#define RS_SHARE_ACTION_FLAG_COMPOSE    (1u << 2)
#define RS_ACCESS_DUP_OBJECT_BIT        (1u << 0) /* RS_ACCESS_DUP_OBJECT = 0 */
struct rs_share_policy {
	uint32_t target;
	uint32_t access_mask; /* RS_ACCESS_MASK: one limb */
	uint16_t type;
	uint8_t  action;
	uint8_t  pad;
};
struct nvos57 {
	nv_handle_t            h_client;
	nv_handle_t            h_object;
	struct rs_share_policy policy;
	nv_status_t            status;
};
_Static_assert(sizeof(struct rs_share_policy) == 12, "RS_SHARE_POLICY size");
_Static_assert(offsetof(struct rs_share_policy, type) == 8, "RS_SHARE_POLICY.type");
_Static_assert(sizeof(struct nvos57) == 24, "NVOS57 size");
_Static_assert(offsetof(struct nvos57, status) == 20, "NVOS57.status");

/* NVOS32_PARAMETERS: RM_VID_HEAP_CONTROL (184 bytes). Only the fields of the
 * ALLOC_SIZE-shaped union members are declared. */
struct nvos32 {
	nv_handle_t h_root;
	nv_handle_t h_object_parent;
	uint32_t    function;
	nv_handle_t h_va_space;
	int16_t     ivc_heap_number;
	uint16_t    pad0;
	nv_status_t status;
	uint64_t    total;
	uint64_t    free;
	union {
		struct {
			uint32_t    owner;       /* @40 */
			nv_handle_t h_memory;    /* @44 */
			uint32_t    type;        /* @48 */
			uint32_t    flags;       /* @52 */
			uint32_t    attr;        /* @56 */
			uint32_t    format;
			uint32_t    compr_covg;
			uint32_t    zcull_covg;
			uint32_t    part_stride;
			uint32_t    width;
			uint32_t    height;
			uint32_t    pad1;
			uint64_t    size;        /* @88 */
			uint64_t    alignment;   /* @96 */
			uint64_t    offset;      /* @104 */
			uint64_t    limit;
			uint64_t    address;
			uint64_t    range_begin;
			uint64_t    range_end;
			uint32_t    attr2;       /* @144 */
			uint32_t    ctag_offset;
		} alloc_size;
		struct {
			uint32_t    owner;       /* @40 */
			nv_handle_t h_memory;    /* @44 */
			uint32_t    flags;       /* @48 */
		} free;
		uint8_t raw[144];
	} data;
};
_Static_assert(sizeof(struct nvos32) == 184, "NVOS32 size");
_Static_assert(offsetof(struct nvos32, function) == 8, "NVOS32.function");
_Static_assert(offsetof(struct nvos32, status) == 20, "NVOS32.status");
_Static_assert(offsetof(struct nvos32, total) == 24, "NVOS32.total");
_Static_assert(offsetof(struct nvos32, data) == 40, "NVOS32.data");
_Static_assert(offsetof(struct nvos32, data.alloc_size.h_memory) == 44, "NVOS32.AllocSize.hMemory");
_Static_assert(offsetof(struct nvos32, data.alloc_size.flags) == 52, "NVOS32.AllocSize.flags");
_Static_assert(offsetof(struct nvos32, data.alloc_size.attr) == 56, "NVOS32.AllocSize.attr");
_Static_assert(offsetof(struct nvos32, data.alloc_size.size) == 88, "NVOS32.AllocSize.size");
_Static_assert(offsetof(struct nvos32, data.alloc_size.offset) == 104, "NVOS32.AllocSize.offset");
_Static_assert(offsetof(struct nvos32, data.alloc_size.attr2) == 144, "NVOS32.AllocSize.attr2");
_Static_assert(offsetof(struct nvos32, data.free.h_memory) == 44, "NVOS32.Free.hMemory");

enum nvos32_function {
	NVOS32_FUNCTION_ALLOC_SIZE             = 2,
	NVOS32_FUNCTION_FREE                   = 3,
	NVOS32_FUNCTION_INFO                   = 5,
	NVOS32_FUNCTION_ALLOC_TILED_PITCH_HEIGHT = 6,
	NVOS32_FUNCTION_ALLOC_SIZE_RANGE       = 14,
	NVOS32_FUNCTION_REACQUIRE_COMPR        = 15,
	NVOS32_FUNCTION_RELEASE_COMPR          = 16,
	NVOS32_FUNCTION_GET_MEM_ALIGNMENT      = 18,
	NVOS32_FUNCTION_HW_ALLOC               = 19,
	NVOS32_FUNCTION_HW_FREE                = 20,
	NVOS32_FUNCTION_ALLOC_OS_DESCRIPTOR    = 27,
};

/* NVOS02_PARAMETERS with fd: RM_ALLOC_MEMORY (device fd only). */
struct nvos02_with_fd {
	nv_handle_t h_root;
	nv_handle_t h_object_parent;
	nv_handle_t h_object_new;
	uint32_t    h_class;
	uint32_t    flags;
	uint32_t    pad0;
	uint64_t    p_memory;
	uint64_t    limit;
	nv_status_t status;
	uint32_t    pad1;
	int32_t     fd;
	uint32_t    pad2;
};
_Static_assert(sizeof(struct nvos02_with_fd) == 56, "NVOS02+fd size");
_Static_assert(offsetof(struct nvos02_with_fd, status) == 40, "NVOS02.status");
_Static_assert(offsetof(struct nvos02_with_fd, fd) == 48, "NVOS02.fd");

/* NV_ESC_REGISTER_FD: links the call's file to a control file's clients. */
struct nv_ioctl_register_fd {
	int32_t ctl_fd;
};
_Static_assert(sizeof(struct nv_ioctl_register_fd) == 4, "REGISTER_FD size");

/* NV_ESC_EXPORT_TO_DMABUF_FD on a GPU node: nv_ioctl_export_to_dma_buf_fd_t
 * (kernel-open/common/inc/nv-ioctl.h at 580.142, 2608 bytes). nvidia_ioctl
 * (kernel-open/nvidia/nv.c) takes only this exact size (else -EINVAL), only
 * on a GPU node (NV_ACTUAL_DEVICE_ONLY), and answers with the RM status of
 * nv_dma_buf_export in status and a return value of 0; the dma-buf it makes
 * dups every named memory handle into the driver's own client
 * (nv_dma_buf_dup_mem_handles, kernel-open/nvidia/nv-dmabuf.c), so the
 * memory outlives the workload's handle. Only the status is declared. */
#define NV_DMABUF_EXPORT_MAX_HANDLES 128u
struct nv_ioctl_export_to_dma_buf_fd {
	int32_t     fd;
	nv_handle_t h_client;
	uint32_t    total_objects;
	uint32_t    num_objects;
	uint32_t    index;
	uint32_t    pad0;
	uint64_t    total_size;
	uint8_t     mapping_type;
	uint8_t     allow_mmap;
	uint8_t     pad1[2];
	nv_handle_t handles[NV_DMABUF_EXPORT_MAX_HANDLES];
	uint32_t    pad2;
	uint64_t    offsets[NV_DMABUF_EXPORT_MAX_HANDLES];
	uint64_t    sizes[NV_DMABUF_EXPORT_MAX_HANDLES];
	nv_status_t status;
	uint32_t    pad3;
};
_Static_assert(sizeof(struct nv_ioctl_export_to_dma_buf_fd) == 2608, "EXPORT_TO_DMABUF_FD size");
_Static_assert(offsetof(struct nv_ioctl_export_to_dma_buf_fd, total_size) == 24,
               "EXPORT_TO_DMABUF_FD.totalSize");
_Static_assert(offsetof(struct nv_ioctl_export_to_dma_buf_fd, handles) == 36,
               "EXPORT_TO_DMABUF_FD.handles");
_Static_assert(offsetof(struct nv_ioctl_export_to_dma_buf_fd, offsets) == 552,
               "EXPORT_TO_DMABUF_FD.offsets");
_Static_assert(offsetof(struct nv_ioctl_export_to_dma_buf_fd, status) == 2600,
               "EXPORT_TO_DMABUF_FD.status");

/* NV_ESC_CHECK_VERSION_STR on the control device: nv_ioctl_rm_api_version_t
 * (kernel-open/common/inc/nv-ioctl.h at 580.142; 72 bytes on every tag,
 * abi-drift.md 6). With cmd QUERY the driver sets reply to RECOGNIZED and
 * copies its own NV_VERSION_STRING, NUL-terminated, into version_string,
 * checking nothing (RmPerformVersionCheck, src/nvidia/arch/nvalloc/unix/src/
 * osapi.c at 580.142); a size other than 72, or a GPU node instead of the
 * control device (nv.c, NV_CTL_DEVICE_ONLY), is refused with -EINVAL.
 * Drivers before 530 took '2' for another command and answer an empty
 * string. */
#define NV_RM_API_VERSION_STRING_LENGTH    64u
#define NV_RM_API_VERSION_CMD_QUERY        0x32u /* '2' */
#define NV_RM_API_VERSION_REPLY_RECOGNIZED 1u
struct nv_ioctl_rm_api_version {
	uint32_t cmd;
	uint32_t reply;
	char     version_string[NV_RM_API_VERSION_STRING_LENGTH];
};
_Static_assert(sizeof(struct nv_ioctl_rm_api_version) == 72, "nv_ioctl_rm_api_version_t size");
_Static_assert(offsetof(struct nv_ioctl_rm_api_version, version_string) == 8,
               "nv_ioctl_rm_api_version_t.versionString");

/* ---- nested alloc params ----------------------------------------------- */

/* NV_MEMORY_ALLOCATION_PARAMS (128 bytes): 0x40, 0x3e, 0x42, 0x50a0, 0x90ce. */
struct nv_memory_allocation_params {
	uint32_t    owner;
	uint32_t    type;
	uint32_t    flags;
	uint32_t    width;
	uint32_t    height;
	int32_t     pitch;
	uint32_t    attr;
	uint32_t    attr2;
	uint32_t    format;
	uint32_t    compr_covg;
	uint32_t    zcull_covg;
	uint32_t    pad0;
	uint64_t    range_lo;
	uint64_t    range_hi;
	uint64_t    size;
	uint64_t    alignment;
	uint64_t    offset;
	uint64_t    limit;
	uint64_t    address;
	uint32_t    ctag_offset;
	nv_handle_t h_va_space;
	uint32_t    internal_flags;
	uint32_t    tag;
	int32_t     numa_node;
	uint32_t    pad1;
};
_Static_assert(sizeof(struct nv_memory_allocation_params) == 128, "MEMORY_ALLOCATION_PARAMS size");
_Static_assert(offsetof(struct nv_memory_allocation_params, flags) == 8, "MAP.flags");
_Static_assert(offsetof(struct nv_memory_allocation_params, attr) == 24, "MAP.attr");
_Static_assert(offsetof(struct nv_memory_allocation_params, attr2) == 28, "MAP.attr2");
_Static_assert(offsetof(struct nv_memory_allocation_params, range_lo) == 48, "MAP.rangeLo");
_Static_assert(offsetof(struct nv_memory_allocation_params, size) == 64, "MAP.size");
_Static_assert(offsetof(struct nv_memory_allocation_params, offset) == 80, "MAP.offset");
_Static_assert(offsetof(struct nv_memory_allocation_params, h_va_space) == 108, "MAP.hVASpace");
_Static_assert(offsetof(struct nv_memory_allocation_params, numa_node) == 120, "MAP.numaNode");

/* NVOS32 attr/flags bits that decide where memory lives. */
#define NVOS32_ATTR_LOCATION_SHIFT   25
#define NVOS32_ATTR_LOCATION_MASK    0x3u
#define NVOS32_ATTR_LOCATION_VIDMEM  0x0u
#define NVOS32_ATTR_LOCATION(attr) \
	(((uint32_t)(attr) >> NVOS32_ATTR_LOCATION_SHIFT) & NVOS32_ATTR_LOCATION_MASK)
#define NVOS32_ATTR2_USE_EGM         (1u << 24)
#define NVOS32_ALLOC_FLAGS_VIRTUAL   0x00080000u

/* NV0080_ALLOC_PARAMETERS (optional): deviceId picks the GPU. */
struct nv0080_alloc_params {
	uint32_t    device_id;
	nv_handle_t h_client_share;
	nv_handle_t h_target_client;
	nv_handle_t h_target_device;
	uint32_t    flags;
	uint32_t    pad0;
	uint64_t    va_space_size;
	uint64_t    va_start_internal;
	uint64_t    va_limit_internal;
	uint32_t    va_mode;
	uint32_t    pad1;
};
_Static_assert(sizeof(struct nv0080_alloc_params) == 56, "NV0080_ALLOC_PARAMETERS size");
_Static_assert(offsetof(struct nv0080_alloc_params, device_id) == 0, "NV0080.deviceId");

/* NV2080_ALLOC_PARAMETERS (optional). */
struct nv2080_alloc_params {
	uint32_t sub_device_id;
};
_Static_assert(sizeof(struct nv2080_alloc_params) == 4, "NV2080_ALLOC_PARAMETERS size");

/* NV_SEMAPHORE_SURFACE_ALLOC_PARAMETERS (class 0xda, cl00da.h; the same 16
 * bytes on every branch from 535 to 595). The driver dups both memory
 * objects into its internal client for the surface's life
 * (_semsurfDupMemory, sem_surf.c, 580.95.05): the ledger keeps them
 * charged while the surface lives (docs/security/driver-refs.md). */
struct nv00da_alloc_params {
	nv_handle_t h_semaphore_mem;
	nv_handle_t h_max_submitted_mem;   /* 0: none; may equal h_semaphore_mem */
	uint64_t    flags;                 /* must be 0 */
};
_Static_assert(sizeof(struct nv00da_alloc_params) == 16, "NV_SEMAPHORE_SURFACE_ALLOC_PARAMETERS size");
_Static_assert(offsetof(struct nv00da_alloc_params, h_semaphore_mem) == 0, "NV00DA.hSemaphoreMem");
_Static_assert(offsetof(struct nv00da_alloc_params, h_max_submitted_mem) == 4, "NV00DA.hMaxSubmittedMem");
_Static_assert(offsetof(struct nv00da_alloc_params, flags) == 8, "NV00DA.flags");

/* NV_MEMORY_MAPPER_ALLOCATION_PARAMS (class 0xfe, cl00fe.h) as 570 to 595
 * have it (24 bytes; 550's is its first 8 bytes, 535's a 1-byte stub
 * without the surface: NV_MEMORY_MAPPER_SURFACE_BYTES covers both). The
 * mapper dups its semaphore surface into its internal client
 * (memmapperConstruct_IMPL, mem_mapper.c, 580.95.05). */
struct nv00fe_alloc_params {
	nv_handle_t h_semaphore_surface;
	uint32_t    max_queue_size;
	nv_handle_t h_notification_memory;
	uint32_t    pad0;
	uint64_t    notification_offset;
};
_Static_assert(sizeof(struct nv00fe_alloc_params) == 24, "NV_MEMORY_MAPPER_ALLOCATION_PARAMS size");
_Static_assert(offsetof(struct nv00fe_alloc_params, h_semaphore_surface) == 0, "NV00FE.hSemaphoreSurface");
_Static_assert(offsetof(struct nv00fe_alloc_params, notification_offset) == 16, "NV00FE.notificationOffset");
#define NV_MEMORY_MAPPER_SURFACE_BYTES (offsetof(struct nv00fe_alloc_params, max_queue_size) + sizeof(uint32_t))

/* ---- classes and controls ---------------------------------------------- */
/* One constant per row of nvrm/classes.def and nvrm/controls.def, so that a
 * number is written once. Control numbers above INT_MAX make enum
 * nv_ctrl_cmd an unsigned type (a GNU C extension gcc and clang accept). */
enum nv_class {
#define RM_CLASS(num_, name_, ...) name_ = (num_),
#include "nvrm/classes.def"
#undef RM_CLASS
};

enum nv_ctrl_cmd {
#define RM_CTRL(num_, name_, ...) name_ = num_##u,
#define RM_CTRL_OPAQUE(name_, num_, ...) name_##_##num_ = num_##u,
#include "nvrm/controls.def"
#undef RM_CTRL
#undef RM_CTRL_OPAQUE
};

/* ---- status codes (our own table of the values we use) ------------------ */
enum nv_status_code {
	NV_OK                          = 0x00000000,
	NV_ERR_BUFFER_TOO_SMALL        = 0x00000002,
	NV_ERR_GPU_UUID_NOT_FOUND      = 0x00000012,
	NV_ERR_INSERT_DUPLICATE_NAME   = 0x00000019,
	NV_ERR_INSUFFICIENT_RESOURCES  = 0x0000001A,
	NV_ERR_INSUFFICIENT_PERMISSIONS = 0x0000001B,
	NV_ERR_INVALID_ADDRESS         = 0x0000001E,
	NV_ERR_INVALID_ARGUMENT        = 0x0000001F,
	NV_ERR_INVALID_CHANNEL         = 0x00000021,
	NV_ERR_INVALID_CLASS           = 0x00000022,
	NV_ERR_INVALID_CLIENT          = 0x00000023,
	NV_ERR_INVALID_DEVICE          = 0x00000026,
	NV_ERR_INVALID_OBJECT_HANDLE   = 0x00000033,
	NV_ERR_INVALID_OBJECT_PARENT   = 0x00000036,
	NV_ERR_INVALID_PARAM_STRUCT    = 0x0000003A,
	NV_ERR_INVALID_PARAMETER       = 0x0000003B,
	NV_ERR_INVALID_STATE           = 0x00000040,
	NV_ERR_NO_MEMORY               = 0x00000051,
	NV_ERR_NOT_READY               = 0x00000055,
	NV_ERR_NOT_SUPPORTED           = 0x00000056,
	NV_ERR_OBJECT_NOT_FOUND        = 0x00000057,
	NV_ERR_OPERATING_SYSTEM        = 0x00000059,
	NV_ERR_OUT_OF_RANGE            = 0x0000005B,
	NV_ERR_STATE_IN_USE            = 0x00000063,
	NV_ERR_GENERIC                 = 0x0000FFFF,
};

/* ---- controls we decode ------------------------------------------------ */

/* The GPU's processes (ctrl2080gpu.h, 580.95.05; handlers in
 * subdevice_ctrl_gpu_kernel.c): GET_PIDS lists the pids (the clients'
 * ProcID, host pids) of processes with objects of a class on the GPU,
 * GET_PID_INFO a pid's video memory. exec_pids.c shows a sandbox only its
 * own, by the pids it sees. */
#define NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT     950u
#define NV2080_CTRL_GPU_GET_PIDS_ID_TYPE_CLASS 0u
struct nv2080_gpu_get_pids {
	uint32_t id_type;
	uint32_t id;
	uint32_t count;
	uint32_t pids[NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT];
};
_Static_assert(sizeof(struct nv2080_gpu_get_pids) == 3812, "GET_PIDS size");
_Static_assert(offsetof(struct nv2080_gpu_get_pids, pids) == 12, "GET_PIDS.pidTbl");
#define NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT       200u
#define NV2080_CTRL_GPU_PID_INFO_INDEX_VIDEO_MEMORY_USAGE 0u
struct nv2080_gpu_pid_info {
	uint32_t pid;
	uint32_t index;
	uint32_t result;
	uint32_t pad0;
	uint64_t mem_private;
	uint64_t mem_shared_owned;
	uint64_t mem_shared_duped;
	uint64_t protected_mem_private;
	uint64_t protected_mem_shared_owned;
	uint64_t protected_mem_shared_duped;
	uint32_t compute_instance_id;
	uint32_t gpu_instance_id;
};
_Static_assert(sizeof(struct nv2080_gpu_pid_info) == 72, "PID_INFO size");
struct nv2080_gpu_get_pid_info {
	uint32_t                   count;
	uint32_t                   pad;
	struct nv2080_gpu_pid_info list[NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT];
};
_Static_assert(sizeof(struct nv2080_gpu_get_pid_info) == 14408, "GET_PID_INFO size");

/* The GPU's engines (NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, ctrl2080gpu.h;
 * handler subdeviceCtrlCmdGpuGetEnginesV2_IMPL, subdevice_ctrl_gpu_kernel.c,
 * 580.95.05): a count, then that many NV2080_ENGINE_TYPE_* values, one per
 * engine instance. The list's length is the branch's
 * NV2080_GPU_MAX_ENGINES_LIST_SIZE: 0x3e on 535, 0x40 on 550, 0x54 from
 * 570 on (the params are 252, 260 and 340 bytes: the tables' size of the
 * control, include/nvrm/v<branch>/controls.def). Declared with the largest;
 * a caller sends the running branch's size. The video quotas count a
 * session per engine instance of the kind (exec_engines.c). */
#define NV2080_GPU_MAX_ENGINES_LIST_SIZE 0x54u
struct nv2080_gpu_get_engines_v2_params {
	uint32_t engine_count;
	uint32_t engine_list[NV2080_GPU_MAX_ENGINES_LIST_SIZE];
};
_Static_assert(sizeof(struct nv2080_gpu_get_engines_v2_params) == 340, "GET_ENGINES_V2 size (580)");
_Static_assert(offsetof(struct nv2080_gpu_get_engines_v2_params, engine_list) == 4,
               "GET_ENGINES_V2.engineList");
/* NV2080_ENGINE_TYPE_* of the video engines (cl2080_notification.h; the
 * same values on 535, 550, 570, 580 and 590): NVDEC0..7 (NVDEC0 is BSP),
 * NVENC0..2 (NVENC0 is MSENC) and NVENC3 (570 on), NVJPEG0..7 (NVJPEG0 is
 * NVJPG), OFA0 and OFA1 (570 on). */
#define NV2080_ENGINE_TYPE_NVDEC0  0x13u
#define NV2080_ENGINE_TYPE_NVDEC7  0x1au
#define NV2080_ENGINE_TYPE_NVENC0  0x1bu
#define NV2080_ENGINE_TYPE_NVENC2  0x1du
#define NV2080_ENGINE_TYPE_NVENC3  0x3fu
#define NV2080_ENGINE_TYPE_NVJPEG0 0x2bu
#define NV2080_ENGINE_TYPE_NVJPEG7 0x32u
#define NV2080_ENGINE_TYPE_OFA0    0x33u
#define NV2080_ENGINE_TYPE_OFA1    0x3eu
#define NV2080_ENGINE_TYPE_NVDEC_SIZE  8u
#define NV2080_ENGINE_TYPE_NVJPEG_SIZE 8u
_Static_assert(NV2080_ENGINE_TYPE_NVDEC7 - NV2080_ENGINE_TYPE_NVDEC0 + 1 == NV2080_ENGINE_TYPE_NVDEC_SIZE,
               "NVDEC0..7 are consecutive");
_Static_assert(NV2080_ENGINE_TYPE_NVJPEG7 - NV2080_ENGINE_TYPE_NVJPEG0 + 1 == NV2080_ENGINE_TYPE_NVJPEG_SIZE,
               "NVJPEG0..7 are consecutive");

/* NV0041_CTRL_CMD_GET_SURFACE_INFO on memory (ctrl0041.h; mem_ctrl.c,
 * memCtrlCmdGetSurfaceInfoLvm_IMPL, 580.95.05): a list of {index, data}
 * pairs behind a pointer; PHYS_SIZE_LO/HI are the allocation's size. */
#define NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_LO 0x2u
#define NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_HI 0x3u
struct nv0041_surface_info {
	uint32_t index;
	uint32_t data;
};
struct nv0041_get_surface_info_params {
	uint32_t count;
	uint32_t pad;
	uint64_t list;
};
_Static_assert(sizeof(struct nv0041_get_surface_info_params) == 16, "GET_SURFACE_INFO size");
_Static_assert(offsetof(struct nv0041_get_surface_info_params, list) == 8, "GET_SURFACE_INFO.surfaceInfoList");

/* Export and import of RM objects through a control file's fd
 * (NV0000_CTRL_CMD_OS_UNIX_*, ctrl0000unix.h; handlers in
 * src/nvidia/arch/nvalloc/unix/src/os.c, 580.95.05). The fd is resolved in
 * the CALLING thread's fd table (nv_get_file_private). Layouts as compiled
 * on x86_64; sizes as the v580 table's rows. */
#define NV0000_OS_UNIX_EXPORT_METADATA_BYTES 64u
#define NV0000_OS_UNIX_EXPORT_MAX_OBJECTS    512u  /* ..._EXPORT_OBJECTS_TO_FD_MAX_OBJECTS */
#define NV0000_OS_UNIX_IMPORT_MAX_OBJECTS    128u  /* ..._IMPORT_OBJECTS_TO_FD_MAX_OBJECTS */
/* objectTypes[] of an import */
#define NV0000_OS_UNIX_IMPORT_TYPE_NONE   0u
#define NV0000_OS_UNIX_IMPORT_TYPE_VIDMEM 1u
#define NV0000_OS_UNIX_IMPORT_TYPE_SYSMEM 2u
struct nv0000_os_unix_create_export_fd_params {
	nv_handle_t h_device;
	uint16_t    max_objects;
	uint8_t     metadata[NV0000_OS_UNIX_EXPORT_METADATA_BYTES];
	int32_t     fd;
};
_Static_assert(sizeof(struct nv0000_os_unix_create_export_fd_params) == 76, "CREATE_EXPORT_OBJECT_FD size");
_Static_assert(offsetof(struct nv0000_os_unix_create_export_fd_params, fd) == 72, "CREATE_EXPORT_OBJECT_FD.fd");
struct nv0000_os_unix_export_objects_params {
	int32_t     fd;
	nv_handle_t h_device;
	uint16_t    max_objects;
	uint8_t     metadata[NV0000_OS_UNIX_EXPORT_METADATA_BYTES];
	nv_handle_t objects[NV0000_OS_UNIX_EXPORT_MAX_OBJECTS];
	uint16_t    num_objects;
	uint16_t    index;
};
_Static_assert(sizeof(struct nv0000_os_unix_export_objects_params) == 2128, "EXPORT_OBJECTS_TO_FD size");
_Static_assert(offsetof(struct nv0000_os_unix_export_objects_params, objects) == 76, "EXPORT_OBJECTS_TO_FD.objects");
_Static_assert(offsetof(struct nv0000_os_unix_export_objects_params, num_objects) == 2124, "EXPORT_OBJECTS_TO_FD.numObjects");
struct nv0000_os_unix_import_objects_params {
	int32_t     fd;
	nv_handle_t h_parent;
	nv_handle_t objects[NV0000_OS_UNIX_IMPORT_MAX_OBJECTS];
	uint8_t     object_types[NV0000_OS_UNIX_IMPORT_MAX_OBJECTS];
	uint16_t    num_objects;
	uint16_t    index;
};
_Static_assert(sizeof(struct nv0000_os_unix_import_objects_params) == 652, "IMPORT_OBJECTS_FROM_FD size");
_Static_assert(offsetof(struct nv0000_os_unix_import_objects_params, num_objects) == 648, "IMPORT_OBJECTS_FROM_FD.numObjects");
struct nv0000_os_unix_export_info_params {
	int32_t  fd;
	uint32_t device_instance;
	uint32_t gpu_instance_id;
	uint16_t max_objects;
	uint8_t  metadata[NV0000_OS_UNIX_EXPORT_METADATA_BYTES];
};
_Static_assert(sizeof(struct nv0000_os_unix_export_info_params) == 80, "GET_EXPORT_OBJECT_INFO size");
_Static_assert(offsetof(struct nv0000_os_unix_export_info_params, metadata) == 14, "GET_EXPORT_OBJECT_INFO.metadata");

/* FB_GET_INFO lists: {index, data} pairs, data in KiB. */
struct nv2080_fb_info_entry {
	uint32_t index;
	uint32_t data;
};
_Static_assert(sizeof(struct nv2080_fb_info_entry) == 8, "FB info entry");
#define NV2080_CTRL_FB_INFO_MAX_LIST_SIZE 128u
/* V2: the list is inline (1028 bytes). */
struct nv2080_fb_get_info_v2_params {
	uint32_t                    list_size;
	struct nv2080_fb_info_entry list[NV2080_CTRL_FB_INFO_MAX_LIST_SIZE];
};
_Static_assert(sizeof(struct nv2080_fb_get_info_v2_params) == 1028, "FB_GET_INFO_V2 size");
_Static_assert(offsetof(struct nv2080_fb_get_info_v2_params, list) == 4, "FB_GET_INFO_V2.list");
/* V1: the list is behind a pointer (16 bytes). */
struct nv2080_fb_get_info_v1_params {
	uint32_t list_size;
	uint32_t pad;
	uint64_t list;
};
_Static_assert(sizeof(struct nv2080_fb_get_info_v1_params) == 16, "FB_GET_INFO size");
_Static_assert(offsetof(struct nv2080_fb_get_info_v1_params, list) == 8, "FB_GET_INFO.list");
/* Indices that reveal the size of the card (KiB). */
enum nv2080_fb_info_index {
	NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE            = 0x07,
	NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE      = 0x08,
	NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE           = 0x09,
	NV2080_CTRL_FB_INFO_INDEX_MAPPABLE_HEAP_SIZE  = 0x0A,
	NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE           = 0x16,
	NV2080_CTRL_FB_INFO_INDEX_USABLE_RAM_SIZE     = 0x20,
};

/* ---- GPU listing (NV0000, on the client) -------------------------------- */
#define NV0000_CTRL_CMD_GPU_DETACH_IDS       0x216u
#define NV0000_GPU_MAX_GID_LENGTH            256u
/* flags: FORMAT (1:0) ASCII = 0, TYPE (2:2) SHA1 = 0 */
#define NV0000_UUID_FLAGS_ASCII_SHA1         0u
#define NV0000_CTRL_GPU_MAX_IDS              32u
#define NV0000_CTRL_GPU_INVALID_ID           0xffffffffu
#define NV0000_CTRL_GPU_ATTACH_ALL_PROBED_IDS 0x0000ffffu

struct nv0000_gpu_ids_params {          /* GET_ATTACHED_IDS */
	uint32_t gpu_ids[NV0000_CTRL_GPU_MAX_IDS];
};
_Static_assert(sizeof(struct nv0000_gpu_ids_params) == 128, "GET_ATTACHED_IDS size");
struct nv0000_probed_ids_params {       /* GET_PROBED_IDS */
	uint32_t gpu_ids[NV0000_CTRL_GPU_MAX_IDS];
	uint32_t excluded_gpu_ids[NV0000_CTRL_GPU_MAX_IDS];
	uint32_t gpu_flags[NV0000_CTRL_GPU_MAX_IDS];
};
_Static_assert(sizeof(struct nv0000_probed_ids_params) == 384, "GET_PROBED_IDS size");
_Static_assert(offsetof(struct nv0000_probed_ids_params, gpu_flags) == 256, "GET_PROBED_IDS.gpuFlags");
struct nv0000_attach_ids_params {       /* ATTACH_IDS */
	uint32_t gpu_ids[NV0000_CTRL_GPU_MAX_IDS];
	uint32_t failed_id;
};
_Static_assert(sizeof(struct nv0000_attach_ids_params) == 132, "ATTACH_IDS size");
struct nv0000_id_info_v2_params {       /* GET_ID_INFO_V2 */
	uint32_t gpu_id;
	uint32_t gpu_flags;
	uint32_t device_instance;
	uint32_t subdevice_instance;
	uint32_t sli_status;
	uint32_t board_id;
	uint32_t gpu_instance;
	int32_t  numa_id;
};
_Static_assert(sizeof(struct nv0000_id_info_v2_params) == 32, "GET_ID_INFO_V2 size");
_Static_assert(offsetof(struct nv0000_id_info_v2_params, device_instance) == 8, "ID_INFO_V2.deviceInstance");
struct nv0000_uuid_from_gpu_id_params { /* GET_UUID_FROM_GPU_ID */
	uint32_t gpu_id;
	uint32_t flags;
	uint8_t  gpu_uuid[NV0000_GPU_MAX_GID_LENGTH];
	uint32_t uuid_str_len;
};
_Static_assert(sizeof(struct nv0000_uuid_from_gpu_id_params) == 268, "GET_UUID_FROM_GPU_ID size");
_Static_assert(offsetof(struct nv0000_uuid_from_gpu_id_params, uuid_str_len) == 264,
               "GET_UUID_FROM_GPU_ID.uuidStrLen");

/* GPUACCT_GET_ACCOUNTING_STATE: gpuId first, like the id queries above,
 * so a hidden GPU is answered the same way (exec_visibility.c). */
struct nv0000_gpuacct_state_params {
	uint32_t gpu_id;
	uint32_t pid;
	uint32_t state;
};
_Static_assert(sizeof(struct nv0000_gpuacct_state_params) == 12, "GPUACCT_GET_ACCOUNTING_STATE size");
#define NV0000_CTRL_GPU_ACCOUNTING_STATE_DISABLED 1u

/* GET_ID_INFO (V1): the same first fields, then a name pointer the driver
 * never follows. Only gpu_id is read here. */
#define NV0000_CTRL_GPU_GET_ID_INFO_SIZE 40u

/* NV_ESC_CARD_INFO: an array of these, one per possible GPU. */
struct nv_card_info {
	uint8_t  valid;
	uint8_t  pad0[3];
	uint32_t pci_domain;
	uint8_t  pci_bus, pci_slot, pci_function, pad1;
	uint16_t pci_vendor_id, pci_device_id;
	uint32_t gpu_id;
	uint16_t interrupt_line;
	uint8_t  pad2[2];
	uint64_t reg_address;
	uint64_t reg_size;
	uint64_t fb_address;
	uint64_t fb_size;
	uint32_t minor_number;
	uint8_t  dev_name[10];
	uint8_t  pad3[2];
};
_Static_assert(sizeof(struct nv_card_info) == 72, "nv_ioctl_card_info_t size");
_Static_assert(offsetof(struct nv_card_info, gpu_id) == 16, "card_info.gpu_id");
_Static_assert(offsetof(struct nv_card_info, fb_size) == 48, "card_info.fb_size");
_Static_assert(offsetof(struct nv_card_info, minor_number) == 56, "card_info.minor_number");

/* NV503C_CTRL_CMD_REGISTER_VIDMEM / UNREGISTER_VIDMEM on an
 * NV50_THIRD_PARTY_P2P object (ctrl503c.h, 580.95.05): inputs only. The
 * driver wants hMemory to be video memory under the P2P object's device
 * and address, size and offset aligned to NVRM_P2P_PAGESIZE_BIG_64K, size
 * non-zero, offset + size within the allocation
 * (thirdpartyp2pCtrlCmdRegisterVidmem_IMPL, third_party_p2p_ctrl.c). */
#define NV503C_P2P_PAGE_64K (64u * 1024u)
struct nv503c_register_vidmem_params {
	nv_handle_t h_memory;
	uint32_t    pad0;
	uint64_t    address;
	uint64_t    size;
	uint64_t    offset;
};
_Static_assert(sizeof(struct nv503c_register_vidmem_params) == 32, "NV503C_CTRL_REGISTER_VIDMEM_PARAMS size");
_Static_assert(offsetof(struct nv503c_register_vidmem_params, address) == 8, "register_vidmem.address");
_Static_assert(offsetof(struct nv503c_register_vidmem_params, size) == 16, "register_vidmem.size");
_Static_assert(offsetof(struct nv503c_register_vidmem_params, offset) == 24, "register_vidmem.offset");
struct nv503c_unregister_vidmem_params {
	nv_handle_t h_memory;
};
_Static_assert(sizeof(struct nv503c_unregister_vidmem_params) == 4, "NV503C_CTRL_UNREGISTER_VIDMEM_PARAMS size");

/* GPFIFO_SCHEDULE on a channel group (3 bytes). */
struct nva06c_gpfifo_schedule_params {
	uint8_t enable;
	uint8_t skip_submit;
	uint8_t skip_enable;
};
_Static_assert(sizeof(struct nva06c_gpfifo_schedule_params) == 3, "GPFIFO_SCHEDULE size");
/* PREEMPT on a channel group (8 bytes). */
struct nva06c_preempt_params {
	uint8_t  b_wait;
	uint8_t  b_manual_timeout;
	uint8_t  pad[2];
	uint32_t timeout_us;
};
_Static_assert(sizeof(struct nva06c_preempt_params) == 8, "NVA06C_CTRL_PREEMPT_PARAMS size");

/* ---- compute share (--sm) ----------------------------------------------- */
/* FIFO_DISABLE_CHANNELS on a subdevice (536 bytes, non-privileged): turns
 * the listed channels off or on. With only_disable_scheduling = 0 the
 * driver also preempts them, which is what makes a duty cycle bite
 * (design.md 1.6). The runlist preempt event is for kernel callers only. */
#define NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES 64u
struct nv2080_fifo_disable_channels {
	uint8_t     b_disable;
	uint8_t     pad0[3];
	uint32_t    num_channels;
	uint8_t     b_only_disable_scheduling;
	uint8_t     b_rewind_gp_put;
	uint8_t     pad1[6];
	uint64_t    p_runlist_preempt_event;
	nv_handle_t h_client_list[NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES];
	nv_handle_t h_channel_list[NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES];
};
_Static_assert(sizeof(struct nv2080_fifo_disable_channels) == 536, "DISABLE_CHANNELS size");
_Static_assert(offsetof(struct nv2080_fifo_disable_channels, num_channels) == 4, "DC.numChannels");
_Static_assert(offsetof(struct nv2080_fifo_disable_channels, b_only_disable_scheduling) == 8,
               "DC.bOnlyDisableScheduling");
_Static_assert(offsetof(struct nv2080_fifo_disable_channels, p_runlist_preempt_event) == 16,
               "DC.pRunlistPreemptEvent");
_Static_assert(offsetof(struct nv2080_fifo_disable_channels, h_client_list) == 24, "DC.hClientList");
_Static_assert(offsetof(struct nv2080_fifo_disable_channels, h_channel_list) == 280, "DC.hChannelList");

/* Controls that change whether a channel or group may run; a workload's
 * call of these is re-checked against the compute-share duty cycle. */

/* PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2 on a subdevice (non-privileged):
 * the driver's ring of engine-utilization samples, the source of NVML's
 * per-process utilization. Each sample names the process that was on the
 * engine when it was taken (host pid for a caller in the initial pid
 * namespace) and the busy share of its interval in units of 0.01 %. */
#define NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2 0x20802096u
#define NV2080_CTRL_GPUMON_SAMPLE_TYPE_PERFMON_UTIL 2u
#define NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL 72u
#define NV2080_GPUMON_PID_INVALID 0xffffffffu
#define NV2080_GPUMON_UTIL_FULL 10000u   /* util is in 0.01 % */
#define NV_SUBPROC_NAME_MAX_LENGTH 100u
struct nv2080_gpumon_engine_util_sample {
	uint32_t util;
	uint32_t vgpu_scale;
	uint32_t proc_id;
	uint32_t sub_process_id;
	char     sub_process_name[NV_SUBPROC_NAME_MAX_LENGTH];
	uint32_t pad;
	uint64_t p_os_pid_info;
};
_Static_assert(sizeof(struct nv2080_gpumon_engine_util_sample) == 128, "ENGINE_UTIL_SAMPLE size");
_Static_assert(offsetof(struct nv2080_gpumon_engine_util_sample, proc_id) == 8, "sample.procId");
_Static_assert(offsetof(struct nv2080_gpumon_engine_util_sample, p_os_pid_info) == 120,
               "sample.pOsPidInfo");
struct nv2080_gpumon_perfmon_util_sample {
	uint64_t timestamp_ns;
	struct nv2080_gpumon_engine_util_sample fb, gr, nvenc, nvdec, nvjpg, nvofa;
};
_Static_assert(sizeof(struct nv2080_gpumon_perfmon_util_sample) == 776, "PERFMON_UTIL_SAMPLE size");
_Static_assert(offsetof(struct nv2080_gpumon_perfmon_util_sample, gr) == 136, "sample.gr");
struct nv2080_perfmon_util_samples_v2 {
	uint8_t  type;
	uint8_t  pad[3];
	uint32_t buf_size;   /* must be sizeof(samples) */
	uint32_t count;
	uint32_t tracker;
	struct nv2080_gpumon_perfmon_util_sample samples[NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL];
};
_Static_assert(sizeof(struct nv2080_perfmon_util_samples_v2) == 55888, "UTIL_SAMPLES_V2 size");
_Static_assert(offsetof(struct nv2080_perfmon_util_samples_v2, samples) == 16, "UTIL_SAMPLES_V2.samples");

/* TIMER_GET_TIME on a subdevice (8 bytes): the GPU's PTIMER in ns
 * (subdevice_ctrl_timer_kernel.c, subdeviceCtrlCmdTimerGetTime_IMPL:
 * tmrGetCurrentTime, answered by the kernel RM, 580.95.05). RM loads
 * PTIMER with the host's wall clock at init and lets it run
 * (tmrSetCurrentTime_GV100/_GH100, timer_gv100.c/timer_gh100.c, 580.95.05),
 * so it is neither CLOCK_MONOTONIC nor kept in step with CLOCK_REALTIME:
 * the utilization samples' timestamps (ns, ctrl2080gpumon.h) are put on
 * CLOCK_MONOTONIC by bracketing this control (supervisor/compute/sampler.c). */
struct nv2080_timer_get_time_params {
	uint64_t time_nsec;
};
_Static_assert(sizeof(struct nv2080_timer_get_time_params) == 8, "TIMER_GET_TIME size");
_Static_assert(offsetof(struct nv2080_timer_get_time_params, time_nsec) == 0, "TIMER_GET_TIME.time_nsec");

#endif /* GPUSANDBOX_NVRM_ABI_H */
