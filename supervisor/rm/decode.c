/* SPDX-License-Identifier: MIT */
/*
 * decode.c - the decode stage (decode.h): one function per level of a
 * call, each reading only the supervisor's copy of that level.
 */
#include <stddef.h>
#include <string.h>

#include "decode.h"
#include "rm_decode.h"

/* The params the supervisor copies for a class: its size in the ABI table
 * when the call has params, none for a class we do not know (refused
 * before anything is copied), for a client (continued, never performed)
 * or for a process-bound class (refused). */
/* Every decoder starts from a zeroed record naming its tables, its escape
 * and whether it came inside an XFER: nothing of an earlier call stays. */
static void call_begin(struct gs_rm_call *out, const struct gs_rm_abi *abi, uint32_t escape,
                       bool via_xfer)
{
	memset(out, 0, sizeof(*out));
	out->abi = abi;
	out->escape = escape;
	out->via_xfer = via_xfer;
}

static uint32_t params_to_copy(const struct gs_rm_call *c, const struct rm_class_info *ci)
{
	if (!ci || !c->has_params || c->creates_client || ci->kind == RM_CLASS_PROCESS_BOUND)
		return 0;
	return ci->params_size;
}

int gs_decode_alloc_top(const struct gs_rm_abi *abi, const void *top, uint32_t top_size, bool via_xfer,
                        struct gs_rm_call *out)
{
	struct rm_alloc_view v;
	const struct rm_class_info *ci;

	memset(out, 0, sizeof(*out));
	out->abi = abi;
	if (rm_alloc_view_from(top, top_size, &v) < 0)
		return -1;
	ci = rm_class_lookup(abi, v.h_class);
	out->escape = NV_ESC_RM_ALLOC;
	out->via_xfer = via_xfer;
	out->nvos64 = v.is_nvos64;
	/* Serialized params are an opaque second format (NVOS64 only). */
	out->finn_serialized = v.is_nvos64 && (v.flags & NVOS64_FLAGS_FINN_SERIALIZED);
	out->h_client = v.h_root;
	out->h_parent = v.h_parent;
	out->h_object = v.h_new;
	out->h_class = v.h_class;
	out->class_known = ci != NULL;
	out->creates_client = rm_class_is_client(v.h_class);
	out->kind = ci ? ci->kind : RM_CLASS_OTHER;
	out->has_params = v.p_params != 0;
	out->has_rights = v.is_nvos64 && v.p_rights != 0;
	out->params_size = params_to_copy(out, ci);
	return 0;
}

/* The objects an allocation of call's class makes the driver keep, from
 * our copy of its params (call.h, kept). Only handles the driver dups:
 * a zero hMaxSubmittedMem names none, and one equal to hSemaphoreMem is
 * not dup'ed twice (_semsurfDupMemory, sem_surf.c, 580.95.05). */
static void decode_kept(struct gs_rm_call *call, const uint8_t *p)
{
	nv_handle_t h[GS_KEPT_HANDLES] = { 0, 0 };

	if (call->h_class == NV_SEMAPHORE_SURFACE && call->params_size >= sizeof(struct nv00da_alloc_params)) {
		memcpy(&h[0], p + offsetof(struct nv00da_alloc_params, h_semaphore_mem), sizeof(h[0]));
		memcpy(&h[1], p + offsetof(struct nv00da_alloc_params, h_max_submitted_mem), sizeof(h[1]));
		call->kept[call->n_kept++] = h[0];
		if (h[1] != 0 && h[1] != h[0])
			call->kept[call->n_kept++] = h[1];
	} else if (call->h_class == NV_MEMORY_MAPPER && call->params_size >= NV_MEMORY_MAPPER_SURFACE_BYTES) {
		memcpy(&h[0], p + offsetof(struct nv00fe_alloc_params, h_semaphore_surface), sizeof(h[0]));
		call->kept[call->n_kept++] = h[0];
	}
}

void gs_decode_alloc_params(struct gs_rm_call *call, const void *params, uint32_t len,
                            bool rights_copied)
{
	call->params_copied = call->params_size == 0 || (params && len >= call->params_size);
	call->rights_copied = !call->has_rights || rights_copied;
	const uint8_t *p = params;

	if (!params || len < call->params_size || !call->params_size)
		return;
	switch (call->kind) {
	case RM_CLASS_VIDMEM:
		/* By memcpy: the decoder takes any buffer, aligned or not. */
		call->has_size = true;
		memcpy(&call->size, p + offsetof(struct nv_memory_allocation_params, size),
		       sizeof(call->size));
		break;
	case RM_CLASS_DEVICE:
		/* NV01_DEVICE_0's params are optional; without them it is
		 * device 0. Read from our copy, before the driver writes. */
		memcpy(&call->device_instance, p + offsetof(struct nv0080_alloc_params, device_id),
		       sizeof(call->device_instance));
		break;
	case RM_CLASS_OTHER:
		decode_kept(call, p);
		break;
	default:
		break;
	}
}

/* Where ALLOC_SIZE memory lives decides whether it is charged. EGM
 * (attr2 bit 24) is honoured as host memory only by some drivers: 535
 * never had the bit and 595 dropped it, and there the same request is
 * ordinary video memory (issue #17 item 7). The bit is the workload's to
 * set, so it must not decide: EGM is charged like video memory, on every
 * driver. Virtual reservations and system memory are not charged. */
static bool charged_as_vidmem(const struct nvos32 *top)
{
	enum rm_mem_place place = rm_mem_place_of(top->data.alloc_size.flags,
	                                          top->data.alloc_size.attr,
	                                          top->data.alloc_size.attr2);
	return place == RM_MEM_VIDMEM || place == RM_MEM_EGM;
}

void gs_decode_vid_heap(const struct gs_rm_abi *abi, const struct nvos32 *top, bool via_xfer, struct gs_rm_call *out)
{
	call_begin(out, abi, NV_ESC_RM_VID_HEAP_CONTROL, via_xfer);
	out->function = top->function;
	out->h_client = top->h_root;
	out->h_parent = top->h_object_parent;
	/* No nested level: nothing else to copy. */
	out->params_copied = true;
	out->rights_copied = true;
	if (top->function == NVOS32_FUNCTION_FREE) {
		out->h_object = top->data.free.h_memory;
		return;
	}
	if (top->function != NVOS32_FUNCTION_ALLOC_SIZE)
		return;
	bool vidmem = charged_as_vidmem(top);
	out->h_object = top->data.alloc_size.h_memory;
	out->h_class = vidmem ? NV01_MEMORY_LOCAL_USER : NV01_MEMORY_SYSTEM;
	out->class_known = true;
	out->kind = vidmem ? RM_CLASS_VIDMEM : RM_CLASS_SYSMEM;
	out->has_size = true;
	out->size = top->data.alloc_size.size;
}

/*
 * The controls whose params the supervisor reads or rewrites after the
 * driver answered (exec_control.c after_control, exec_visibility.c), or
 * before (GPFIFO_SCHEDULE's enable). Their layout is the running driver's:
 * FB_GET_INFO_V2 is 436..460 bytes on 535..570 and 1028 on 580+,
 * GET_PROBED_IDS 256 / 384, GPFIFO_SCHEDULE 2 / 3 (the v<branch>/ rows).
 * Any other size would leave the supervisor reading a layout the driver
 * does not use, or skipping its work; the driver itself refuses a size
 * other than its own for every exported one of them (rs_resource.c).
 */
bool gs_is_fd_export_control(uint32_t cmd)
{
	return cmd == NV0000_CTRL_CMD_OS_UNIX_GET_EXPORT_OBJECT_INFO ||
	       cmd == NV0000_CTRL_CMD_OS_UNIX_CREATE_EXPORT_OBJECT_FD ||
	       cmd == NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD ||
	       cmd == NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD;
}

static bool supervisor_reads_params(uint32_t cmd)
{
	if (gs_is_fd_export_control(cmd))
		return true;  /* the fd is read and rewritten (exec_fdexport.c) */
	switch (cmd) {
	/* The process lists are filtered (exec_pids.c): any other size
	 * would leave the answer unread. */
	case NV2080_CTRL_CMD_GPU_GET_PIDS:
	case NV2080_CTRL_CMD_GPU_GET_PID_INFO:
	case NV2080_CTRL_CMD_FB_GET_INFO_V2:
	case NV2080_CTRL_CMD_FB_GET_INFO:
	case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE:
	case NVA06F_CTRL_CMD_GPFIFO_SCHEDULE:
	case NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS:
	case NV0000_CTRL_CMD_GPU_GET_PROBED_IDS:
	case NV0000_CTRL_CMD_GPU_GET_ID_INFO:
	case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2:
	case NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID:
	case NV0000_CTRL_CMD_GPUACCT_GET_ACCOUNTING_STATE:
	/* Zeroed for a sandbox that can hold no session (exec_pids.c). */
	case NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS:
	case NV2080_CTRL_GPU_GET_NVFBC_SW_SESSION_STATS:
	/* Read by --p2p-register answer, which answers them without the
	 * driver and so must make the driver's size check itself. */
	case NV503C_CTRL_CMD_REGISTER_VIDMEM:
	case NV503C_CTRL_CMD_UNREGISTER_VIDMEM:
		return true;
	default:
		return false;
	}
}

const struct rm_ctrl_info *gs_decode_control(const struct gs_rm_abi *abi, const struct nvos54 *top, bool via_xfer,
                                             struct gs_rm_call *out)
{
	call_begin(out, abi, NV_ESC_RM_CONTROL, via_xfer);
	out->h_client = top->h_client;
	out->h_object = top->h_object;
	out->cmd = top->cmd;
	out->finn_serialized = (top->flags & NVOS54_FLAGS_FINN_SERIALIZED) != 0;
	out->gss_legacy = (top->cmd & NV_CTRL_GSS_LEGACY_MASK) != 0;
	/* The ABI fact, looked up here like a class's. */
	out->unrelocatable = rm_ctrl_has_unrelocatable_pointers(abi, top->cmd);
	out->fd_export = gs_is_fd_export_control(top->cmd);
	out->has_params = top->params != 0;
	out->params_size = top->params_size;
	const struct rm_ctrl_info *ci = rm_ctrl_lookup(abi, top->cmd);
	out->ctrl_known = ci != NULL;
	out->params_size_wrong = ci && supervisor_reads_params(top->cmd) &&
	                         top->params_size != ci->params_size;
	return ci;
}

/* REGISTER_VIDMEM and UNREGISTER_VIDMEM: what --p2p-register answer's
 * verdict reads. Only a copy of the driver's exact size is decoded (the
 * verdict refused any other before the params were copied). */
static void decode_p2p_params(struct gs_rm_call *call, const void *params, uint32_t len)
{
	call->p2p_params = false;
	if (!params)
		return;
	if (call->cmd == NV503C_CTRL_CMD_REGISTER_VIDMEM &&
	    len == sizeof(struct nv503c_register_vidmem_params)) {
		struct nv503c_register_vidmem_params p;
		memcpy(&p, params, sizeof(p));
		call->p2p_memory = p.h_memory;
		call->p2p_address = p.address;
		call->p2p_size = p.size;
		call->p2p_offset = p.offset;
		call->p2p_params = true;
	} else if (call->cmd == NV503C_CTRL_CMD_UNREGISTER_VIDMEM &&
	           len == sizeof(struct nv503c_unregister_vidmem_params)) {
		struct nv503c_unregister_vidmem_params p;
		memcpy(&p, params, sizeof(p));
		call->p2p_memory = p.h_memory;
		call->p2p_params = true;
	}
}

/* GPFIFO_SCHEDULE takes the same params on a group (A06C) and on a
 * channel (A06F): 2 bytes on 535..570, 3 on 580+, enable first. */
void gs_decode_control_params(struct gs_rm_call *call, const void *params, uint32_t len)
{
	const bool schedule = call->cmd == NVA06C_CTRL_CMD_GPFIFO_SCHEDULE ||
	                      call->cmd == NVA06F_CTRL_CMD_GPFIFO_SCHEDULE;
	const size_t enable = offsetof(struct nva06c_gpfifo_schedule_params, enable);

	call->schedules = schedule && params && len > enable && ((const uint8_t *)params)[enable];
	decode_p2p_params(call, params, len);
}

void gs_decode_free(const struct gs_rm_abi *abi, const struct nvos00 *top, bool via_xfer,
                    struct gs_rm_call *out)
{
	call_begin(out, abi, NV_ESC_RM_FREE, via_xfer);
	out->h_client = top->h_root;
	out->h_parent = top->h_object_parent;
	out->h_object = top->h_object_old;
	out->frees_client = top->h_object_old == top->h_root;
}

void gs_decode_dup(const struct gs_rm_abi *abi, const struct nvos55 *top, bool via_xfer,
                   struct gs_rm_call *out)
{
	call_begin(out, abi, NV_ESC_RM_DUP_OBJECT, via_xfer);
	out->h_client = top->h_client;
	out->h_parent = top->h_parent;
	out->h_object = top->h_object;
	out->h_client_src = top->h_client_src;
	out->h_object_src = top->h_object_src;
}

void gs_decode_share(const struct gs_rm_abi *abi, const struct nvos57 *top, bool via_xfer,
                     struct gs_rm_call *out)
{
	call_begin(out, abi, NV_ESC_RM_SHARE, via_xfer);
	out->h_client = top->h_client;
	out->h_object = top->h_object;
	out->share_type = top->policy.type;
	out->share_action = top->policy.action;
}

void gs_decode_register_fd(const struct gs_rm_abi *abi, const struct nv_ioctl_register_fd *top,
                           bool via_xfer, struct gs_rm_call *out)
{
	call_begin(out, abi, NV_ESC_REGISTER_FD, via_xfer);
	out->ctl_fd = top->ctl_fd;
}

void gs_decode_escape(const struct gs_rm_abi *abi, uint32_t nr, uint32_t size, bool in_xfer,
                      struct gs_rm_call *out)
{
	const struct rm_escape *e = rm_escape_find(abi, nr);

	call_begin(out, abi, in_xfer ? NV_ESC_IOCTL_XFER_CMD : nr, in_xfer);
	out->inner_escape = nr;
	out->inner_size = size;
	out->inner_known = e != NULL;
	out->inner_action = e ? e->action : RM_ACT_REFUSE;
	out->inner_name = e ? e->name : NULL;
	/* XFER carries sizes past the 14-bit field, up to the driver's own
	 * bound; a direct escape's size fits the field by construction. */
	out->inner_size_ok = e && size <= NV_ABSOLUTE_MAX_IOCTL_SIZE && rm_escape_size_ok(e, size);
}

void gs_decode_alloc_object(const struct gs_rm_abi *abi, const struct nvos05 *top, bool via_xfer, struct gs_rm_call *out)
{
	const struct rm_class_info *ci = rm_class_lookup(abi, top->h_class);

	call_begin(out, abi, NV_ESC_RM_ALLOC_OBJECT, via_xfer);
	out->h_client = top->h_root;
	out->h_parent = top->h_object_parent;
	out->h_object = top->h_object_new;
	out->h_class = top->h_class;
	out->class_known = ci != NULL;
	out->creates_client = rm_class_is_client(top->h_class);
	out->kind = ci ? ci->kind : RM_CLASS_OTHER;
	/* Without params the driver takes the device instance from the class
	 * number: NV01_DEVICE_0 is instance 0 (deviceConstruct_IMPL,
	 * src/nvidia/src/kernel/gpu/device.c, 580.x). */
	if (out->kind == RM_CLASS_DEVICE)
		out->device_instance = top->h_class - NV01_DEVICE_0;
	/* No nested level: nothing else to copy. */
	out->params_copied = true;
	out->rights_copied = true;
}
