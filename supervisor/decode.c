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
static uint32_t params_to_copy(const struct gs_rm_call *c, const struct rm_class_info *ci)
{
	if (!ci || !c->has_params || c->creates_client || ci->kind == RM_CLASS_PROCESS_BOUND)
		return 0;
	return ci->params_size;
}

int gs_decode_alloc_top(const void *top, uint32_t top_size, bool via_xfer,
                        struct gs_rm_call *out)
{
	struct rm_alloc_view v;
	const struct rm_class_info *ci;

	memset(out, 0, sizeof(*out));
	if (rm_alloc_view_from(top, top_size, &v) < 0)
		return -1;
	ci = rm_class_lookup(v.h_class);
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
	default:
		break;
	}
}
