/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "rm_decode.h"

/*
 * The escape table. Sizes are the exact top-level struct sizes the driver
 * checks (rm-abi.md 1.2). Each CONTINUE entry is one the workload can only
 * rewrite into another call of the same escape (the number is in a
 * register), and where no call of that escape allocates video memory or
 * changes the object tree the ledger relies on.
 */
static const struct rm_escape escapes[] = {
	/* NVOS02: device fd; class 0x40 here gives no video memory to a caller
	 * without CAP_SYS_ADMIN (the workload has none); mappings are bound
	 * to the calling process. */
	{ NV_ESC_RM_ALLOC_MEMORY, "RM_ALLOC_MEMORY", 56, 0, RM_ACT_CONTINUE, true },
	{ NV_ESC_RM_ALLOC_OBJECT, "RM_ALLOC_OBJECT", 20, 0, RM_ACT_EXEC_ALLOC_OBJECT, false },
	{ NV_ESC_RM_FREE, "RM_FREE", 16, 0, RM_ACT_EXEC_FREE, false },
	{ NV_ESC_RM_CONTROL, "RM_CONTROL", 32, 0, RM_ACT_EXEC_CONTROL, false },
	{ NV_ESC_RM_ALLOC, "RM_ALLOC", 32, 48, RM_ACT_EXEC_ALLOC, false },
	/* Not handled by the 580 driver: refuse rather than pass unexamined. */
	{ NV_ESC_RM_CONFIG_GET, "RM_CONFIG_GET", 0, 0, RM_ACT_REFUSE, false },
	{ NV_ESC_RM_CONFIG_SET, "RM_CONFIG_SET", 0, 0, RM_ACT_REFUSE, false },
	{ NV_ESC_RM_DUP_OBJECT, "RM_DUP_OBJECT", 28, 0, RM_ACT_EXEC_DUP, false },
	{ NV_ESC_RM_SHARE, "RM_SHARE", 24, 0, RM_ACT_EXEC_FLAT, false },
	{ NV_ESC_RM_CONFIG_GET_EX, "RM_CONFIG_GET_EX", 0, 0, RM_ACT_REFUSE, false },
	{ NV_ESC_RM_CONFIG_SET_EX, "RM_CONFIG_SET_EX", 0, 0, RM_ACT_REFUSE, false },
	/* I2C, IDLE_CHANNELS, ACCESS_REGISTRY and GET_EVENT_DATA carry
	 * pointers the driver follows; none of them allocates. */
	{ NV_ESC_RM_I2C_ACCESS, "RM_I2C_ACCESS", 32, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_RM_IDLE_CHANNELS, "RM_IDLE_CHANNELS", 56, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_RM_VID_HEAP_CONTROL, "RM_VID_HEAP_CONTROL", 184, 0, RM_ACT_EXEC_VID_HEAP, false },
	{ NV_ESC_RM_ACCESS_REGISTRY, "RM_ACCESS_REGISTRY", 72, 0, RM_ACT_CONTINUE, false },
	/* CPU mappings: RM checks the client's ProcID against the caller. */
	{ NV_ESC_RM_MAP_MEMORY, "RM_MAP_MEMORY", 56, 0, RM_ACT_CONTINUE, true },
	{ NV_ESC_RM_UNMAP_MEMORY, "RM_UNMAP_MEMORY", 32, 0, RM_ACT_CONTINUE, true },
	{ NV_ESC_RM_GET_EVENT_DATA, "RM_GET_EVENT_DATA", 0, 0, RM_ACT_CONTINUE, true },
	/* Context DMA and GPU VA mappings: no physical video memory. */
	{ NV_ESC_RM_ALLOC_CONTEXT_DMA2, "RM_ALLOC_CONTEXT_DMA2", 56, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_RM_ADD_VBLANK_CALLBACK, "RM_ADD_VBLANK_CALLBACK", 0, 0, RM_ACT_REFUSE, false },
	{ NV_ESC_RM_MAP_MEMORY_DMA, "RM_MAP_MEMORY_DMA", 64, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_RM_UNMAP_MEMORY_DMA, "RM_UNMAP_MEMORY_DMA", 48, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_RM_BIND_CONTEXT_DMA, "RM_BIND_CONTEXT_DMA", 16, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_RM_EXPORT_OBJECT_TO_FD, "RM_EXPORT_OBJECT_TO_FD", 0, 0, RM_ACT_REFUSE, false },
	{ NV_ESC_RM_IMPORT_OBJECT_FROM_FD, "RM_IMPORT_OBJECT_FROM_FD", 0, 0, RM_ACT_REFUSE, false },
	{ NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO, "RM_UPDATE_DEVICE_MAPPING_INFO", 40, 0, RM_ACT_CONTINUE, true },
	/* Needs CAP_SYS_ADMIN, which the workload does not hold. */
	{ NV_ESC_RM_LOCKLESS_DIAGNOSTIC, "RM_LOCKLESS_DIAGNOSTIC", 0, 0, RM_ACT_CONTINUE, false },
	/* OS-level escapes: driver and GPU information, fds, events. None
	 * creates RM objects. Sizes vary (CARD_INFO, ATTACH_GPUS_TO_FD), so
	 * size 0 means "any". */
	/* Lists every GPU: performed by us so --gpus can hide some. */
	{ NV_ESC_CARD_INFO, "CARD_INFO", 0, 0, RM_ACT_EXEC_CARD_INFO, false },
	/* Links a file to a control file's clients. Performed by us: a control
	 * file must not borrow another one's clients (see the one-client-per-
	 * file rule in executor.c), and both fds must be resolved only once. */
	{ NV_ESC_REGISTER_FD, "REGISTER_FD", 4, 0, RM_ACT_EXEC_REGISTER_FD, false },
	{ NV_ESC_ALLOC_OS_EVENT, "ALLOC_OS_EVENT", 0, 0, RM_ACT_CONTINUE, true },
	{ NV_ESC_FREE_OS_EVENT, "FREE_OS_EVENT", 0, 0, RM_ACT_CONTINUE, true },
	{ NV_ESC_STATUS_CODE, "STATUS_CODE", 0, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_CHECK_VERSION_STR, "CHECK_VERSION_STR", 0, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_IOCTL_XFER_CMD, "IOCTL_XFER_CMD", 16, 0, RM_ACT_XFER, false },
	{ NV_ESC_ATTACH_GPUS_TO_FD, "ATTACH_GPUS_TO_FD", 0, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_QUERY_DEVICE_INTR, "QUERY_DEVICE_INTR", 0, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_SYS_PARAMS, "SYS_PARAMS", 0, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_NUMA_INFO, "NUMA_INFO", 0, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_SET_NUMA_STATUS, "SET_NUMA_STATUS", 0, 0, RM_ACT_CONTINUE, false },
	{ NV_ESC_EXPORT_TO_DMABUF_FD, "EXPORT_TO_DMABUF_FD", 0, 0, RM_ACT_CONTINUE, true },
	{ NV_ESC_WAIT_OPEN_COMPLETE, "WAIT_OPEN_COMPLETE", 0, 0, RM_ACT_CONTINUE, false },
};

#define N_ESCAPES (sizeof(escapes) / sizeof(escapes[0]))

/* Where NVIDIA numbers its escapes (rm-abi.md 1.2): the RM escapes
 * 0x27..0x5F, and the OS-level ones from NV_IOCTL_BASE (200) on, with room
 * for the ones a newer driver adds (595 ends at 218). */
#define NV_ESC_RM_FIRST 0x27u
#define NV_ESC_RM_LAST 0x5fu
#define NV_ESC_OS_FIRST NV_ESC_CARD_INFO
#define NV_ESC_OS_LAST 0xdfu
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
#define UVM_CREATE_EXTERNAL_RANGE_NR 0x49u

static bool worth_trapping_unknown(uint32_t nr)
{
	return rm_escape_nr_reserved(nr) && nr != UVM_CREATE_EXTERNAL_RANGE_NR;
}

const uint8_t *rm_trapped_escapes(size_t *n)
{
	if (!n_trapped) {
		for (uint32_t nr = 0; nr < N_NR; nr++) {
			const struct rm_escape *e = rm_escape_find(nr);
			if (e ? worth_trapping(e) : worth_trapping_unknown(nr))
				trapped[n_trapped++] = (uint8_t)nr;
		}
	}
	*n = n_trapped;
	return trapped;
}

const struct rm_escape *rm_escape_find(uint32_t nr)
{
	for (size_t i = 0; i < N_ESCAPES; i++)
		if (escapes[i].nr == nr)
			return &escapes[i];
	return NULL;
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
		{ NV_ERR_INSUFFICIENT_RESOURCES, "NV_ERR_INSUFFICIENT_RESOURCES" },
		{ NV_ERR_INSUFFICIENT_PERMISSIONS, "NV_ERR_INSUFFICIENT_PERMISSIONS" },
		{ NV_ERR_INVALID_ARGUMENT, "NV_ERR_INVALID_ARGUMENT" },
		{ NV_ERR_INVALID_CLASS, "NV_ERR_INVALID_CLASS" },
		{ NV_ERR_INVALID_CLIENT, "NV_ERR_INVALID_CLIENT" },
		{ NV_ERR_INVALID_OBJECT_HANDLE, "NV_ERR_INVALID_OBJECT_HANDLE" },
		{ NV_ERR_INVALID_OBJECT_PARENT, "NV_ERR_INVALID_OBJECT_PARENT" },
		{ NV_ERR_INVALID_PARAM_STRUCT, "NV_ERR_INVALID_PARAM_STRUCT" },
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

const char *rm_escape_name(uint32_t nr)
{
	const struct rm_escape *e = rm_escape_find(nr);
	return e ? e->name : NULL;
}
