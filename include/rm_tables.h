/* SPDX-License-Identifier: MIT */
/*
 * rm_tables.h - table-driven facts about RM classes and controls.
 *
 * The driver copies a class's nested alloc params with the size from its own
 * class table, never from the user's paramsSize (rm-abi.md 2.1), so the
 * supervisor must know that size to copy exactly what the driver would read.
 * Likewise some controls carry pointers inside their params that the driver
 * follows ("embedded" params); executing such a control from the supervisor
 * without relocating those pointers would make the driver read or write the
 * supervisor's own memory at a workload-chosen address.
 */
#ifndef GPUSANDBOX_RM_TABLES_H
#define GPUSANDBOX_RM_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a class means to the ledger. */
enum rm_class_kind {
	RM_CLASS_OTHER = 0,
	RM_CLASS_CLIENT,      /* NV01_ROOT*: must run in the workload (ProcID) */
	RM_CLASS_DEVICE,      /* NV01_DEVICE_0: carries deviceId */
	RM_CLASS_SUBDEVICE,   /* NV20_SUBDEVICE_0 */
	RM_CLASS_VIDMEM,      /* physical video memory: charged to the quota */
	RM_CLASS_SYSMEM,      /* system memory: never charged */
	RM_CLASS_VIRTUAL,     /* VA reservation: never charged */
	RM_CLASS_CHANNEL_GROUP,
	RM_CLASS_CHANNEL,
	RM_CLASS_EVENT,
	/* A video engine object (NVDEC, NVENC, NVJPG, OFA): counted against
	 * the policy's video.* caps while it lives. */
	RM_CLASS_ENGINE,
	/* The driver resolves something in the CALLING process (pins its
	 * pages, maps into it, reads a capability fd from its table): never
	 * performed by the supervisor, and not continued either, since the
	 * class in a trapped RM_ALLOC can still change. */
	RM_CLASS_PROCESS_BOUND,
};

struct rm_class_info {
	uint32_t           cls;
	const char        *name;
	uint32_t           params_size;  /* bytes the driver copies; 0 = none */
	bool               params_required; /* RS_REQUIRED: NULL params refused */
	enum rm_class_kind kind;
};

/* One pointer inside a control's params that the driver follows. */
struct rm_embedded_ptr {
	uint16_t ptr_offset;    /* offset of the NvP64 in the params */
	uint16_t count_offset;  /* offset of the u32 element count, or
	                           RM_EMBEDDED_FIXED_COUNT if fixed */
	uint32_t elem_size;     /* bytes per element */
	uint32_t max_count;     /* bound the driver enforces (or we do) */
	uint32_t fixed_count;   /* used when count_offset is fixed */
};
#define RM_EMBEDDED_FIXED_COUNT 0xffffu
#define RM_EMBEDDED_MAX_PTRS 3

struct rm_ctrl_info {
	uint32_t               cmd;
	const char            *name;
	uint32_t               params_size; /* 0 = unknown/variable */
	unsigned               n_embedded;
	struct rm_embedded_ptr embedded[RM_EMBEDDED_MAX_PTRS];
};

/* Lookups are bsearch over tables sorted by key; NULL when unknown. */
const struct rm_class_info *rm_class_lookup(uint32_t cls);
const struct rm_ctrl_info  *rm_ctrl_lookup(uint32_t cmd);

/* True when the driver follows pointers inside this control's params that we
 * have no relocation entry for: such a control must never be executed by the
 * supervisor from its own address space. */
bool rm_ctrl_has_unrelocatable_pointers(uint32_t cmd);

/* Name of an escape number, or NULL (rm_decode.c owns the escape table). */
const char *rm_escape_name(uint32_t nr);

/* For tests: walk the tables. */
size_t rm_class_table_size(void);
const struct rm_class_info *rm_class_table_at(size_t i);
size_t rm_ctrl_table_size(void);
const struct rm_ctrl_info *rm_ctrl_table_at(size_t i);

#endif
