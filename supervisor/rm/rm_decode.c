/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "nvuvm_abi.h"
#include "rm_decode.h"

#define N_NR 256u

bool rm_escape_nr_reserved(uint32_t nr)
{
	return (nr >= NV_ESC_RM_FIRST && nr <= NV_ESC_RM_LAST) ||
	       (nr >= NV_ESC_OS_FIRST && nr <= NV_ESC_OS_LAST);
}

/* Escapes worth a trap. Every number in NVIDIA's ranges that gpusandbox
 * does not know is trapped, and so are the REFUSE entries (numbers the
 * 580 driver does not handle): a newer driver may handle them, and the
 * policy refuses and audits what it has not examined rather than let it
 * reach the driver. The OS-level CONTINUE escapes are not trapped: they
 * never touch RM objects — except XFER, whose inner call must be decoded. */
static uint8_t trapped[N_NR];
static size_t n_trapped;

static bool worth_trapping(const struct rm_escape *e)
{
	if (e->action == RM_ACT_REFUSE)
		return true;
	/* OS-level escapes (0xC8..0xDA) never touch RM objects; only XFER can
	 * smuggle an RM call, REGISTER_FD can link files' clients and
	 * CARD_INFO lists the GPUs, so only those must be looked at. */
	if (e->nr >= NV_ESC_CARD_INFO && e->action == RM_ACT_CONTINUE)
		return false;
	/* RM CONTINUE escapes are not trapped: deciding CONTINUE needs no
	 * inspection, so a trap would be pure cost. */
	return e->action != RM_ACT_CONTINUE;
}

/* The filter matches the low byte of every ioctl request, so numbers in
 * NVIDIA's ranges are also hit by /dev/nvidia-uvm, whose commands are
 * plain integers. UVM_CREATE_EXTERNAL_RANGE (73 = 0x49) goes with every
 * cudaMalloc: trapping it as an unknown RM escape cost +5.7 us per 2 MiB
 * cuMemAlloc/cuMemFree pair on the H200 (A/B in docs/gpu-results,
 * 2026-11-21-h200-ab-uvm). No RM escape of the 580 drivers has that
 * number, and the 580 driver fails unknown escapes itself, so it is left
 * untrapped; the other UVM numbers in the range come once per context. */
static bool worth_trapping_unknown(uint32_t nr)
{
	return rm_escape_nr_reserved(nr) && nr != UVM_CREATE_EXTERNAL_RANGE;
}

/* Computed again on each call (once per filter built, at start-up), from
 * the tables of the running driver. */
const uint8_t *rm_trapped_escapes(const struct gs_rm_abi *abi, size_t *n)
{
	n_trapped = 0;
	for (uint32_t nr = 0; nr < N_NR; nr++) {
		const struct rm_escape *e = rm_escape_find(abi, nr);
		if (e ? worth_trapping(e) : worth_trapping_unknown(nr))
			trapped[n_trapped++] = (uint8_t)nr;
	}
	*n = n_trapped;
	return trapped;
}

bool rm_escape_size_ok(const struct rm_escape *e, uint32_t size)
{
	if (e->size == 0)
		return true;
	return size == e->size || (e->alt_size && size == e->alt_size);
}

int rm_alloc_view_from(const void *buf, uint32_t size, struct rm_alloc_view *v)
{
	memset(v, 0, sizeof(*v));
	if (size == sizeof(struct nvos64)) {
		const struct nvos64 *p = buf;
		v->is_nvos64 = true;
		v->h_root = p->h_root;
		v->h_parent = p->h_object_parent;
		v->h_new = p->h_object_new;
		v->h_class = p->h_class;
		v->p_params = p->p_alloc_parms;
		v->p_rights = p->p_rights_requested;
		v->params_size = p->params_size;
		v->flags = p->flags;
		v->status = p->status;
		return 0;
	}
	if (size == sizeof(struct nvos21)) {
		const struct nvos21 *p = buf;
		v->h_root = p->h_root;
		v->h_parent = p->h_object_parent;
		v->h_new = p->h_object_new;
		v->h_class = p->h_class;
		v->p_params = p->p_alloc_parms;
		v->params_size = p->params_size;
		v->status = p->status;
		return 0;
	}
	return -1;
}

size_t rm_alloc_status_offset(uint32_t size)
{
	return size == sizeof(struct nvos64) ? offsetof(struct nvos64, status)
	                                     : offsetof(struct nvos21, status);
}

enum rm_mem_place rm_mem_place_of(uint32_t flags, uint32_t attr, uint32_t attr2)
{
	/* Same order as the driver's VID_HEAP conversion: VIRTUAL first, then
	 * EGM, then the location field. */
	if (flags & NVOS32_ALLOC_FLAGS_VIRTUAL)
		return RM_MEM_VIRTUAL;
	if (attr2 & NVOS32_ATTR2_USE_EGM)
		return RM_MEM_EGM;
	if (NVOS32_ATTR_LOCATION(attr) == NVOS32_ATTR_LOCATION_VIDMEM)
		return RM_MEM_VIDMEM;
	return RM_MEM_SYSMEM;
}

bool rm_class_is_client(uint32_t cls)
{
	/* The driver turns all three into NV01_ROOT_CLIENT (rm-abi.md 2). */
	return cls == NV01_ROOT || cls == NV01_ROOT_NON_PRIV || cls == NV01_ROOT_CLIENT;
}

const char *rm_status_name(nv_status_t st)
{
	static const struct {
		nv_status_t st;
		const char *name;
	} names[] = {
		{ NV_OK, "NV_OK" },
		{ NV_ERR_BUFFER_TOO_SMALL, "NV_ERR_BUFFER_TOO_SMALL" },
		{ NV_ERR_INSUFFICIENT_RESOURCES, "NV_ERR_INSUFFICIENT_RESOURCES" },
		{ NV_ERR_INSUFFICIENT_PERMISSIONS, "NV_ERR_INSUFFICIENT_PERMISSIONS" },
		{ NV_ERR_INVALID_ARGUMENT, "NV_ERR_INVALID_ARGUMENT" },
		{ NV_ERR_INVALID_CLASS, "NV_ERR_INVALID_CLASS" },
		{ NV_ERR_INVALID_CLIENT, "NV_ERR_INVALID_CLIENT" },
		{ NV_ERR_INVALID_OBJECT_HANDLE, "NV_ERR_INVALID_OBJECT_HANDLE" },
		{ NV_ERR_INVALID_OBJECT_PARENT, "NV_ERR_INVALID_OBJECT_PARENT" },
		{ NV_ERR_INVALID_PARAM_STRUCT, "NV_ERR_INVALID_PARAM_STRUCT" },
		{ NV_ERR_INVALID_PARAMETER, "NV_ERR_INVALID_PARAMETER" },
		{ NV_ERR_INVALID_STATE, "NV_ERR_INVALID_STATE" },
		{ NV_ERR_NO_MEMORY, "NV_ERR_NO_MEMORY" },
		{ NV_ERR_NOT_SUPPORTED, "NV_ERR_NOT_SUPPORTED" },
		{ NV_ERR_OBJECT_NOT_FOUND, "NV_ERR_OBJECT_NOT_FOUND" },
		{ NV_ERR_GENERIC, "NV_ERR_GENERIC" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].st == st)
			return names[i].name;
	return NULL;
}
