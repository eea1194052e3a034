/* SPDX-License-Identifier: MIT */
/*
 * rm_tables.h - the RM ABI layer's lookups: what gpusandbox knows about each
 * RM class, control and escape on the running driver.
 *
 * The driver copies a class's nested alloc params with the size from its own
 * class table, never from the user's paramsSize (rm-abi.md 2.1), so the
 * supervisor must know that size to copy exactly what the driver would read.
 * Likewise some controls carry pointers inside their params that the driver
 * follows ("embedded" params); executing such a control from the supervisor
 * without relocating those pointers would make the driver read or write the
 * supervisor's own memory at a workload-chosen address.
 *
 * Every fact has one row: identity (number, name, kind, policy group,
 * engine, unrelocatable) in nvrm/classes.def, nvrm/controls.def and
 * nvrm/escapes.def, the same on every driver; what depends on the driver
 * version (parameter sizes, embedded pointers) in nvrm/v<branch>/. A
 * struct gs_rm_abi is the two joined for one driver version, chosen at
 * start-up (gs_rm_abi_select, nvrm/rm_abi.h), and every lookup takes it.
 */
#ifndef GPUSANDBOX_RM_TABLES_H
#define GPUSANDBOX_RM_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvrm/groups.h"
#include "nvrm/rm_abi.h"

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

/* One class on one driver version: its identity row joined with that
 * version's parameter row. */
struct rm_class_info {
	uint32_t           cls;
	const char        *name;
	uint32_t           params_size;  /* bytes the driver copies; 0 = none */
	bool               params_required; /* RS_REQUIRED: NULL params refused */
	enum rm_class_kind kind;
	uint8_t            group;        /* enum gs_group */
	uint8_t            also;         /* a second group, or GS_GROUP_NONE */
	int8_t             engine;       /* enum gs_engine */
	bool               known;        /* this version has its parameter row */
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
	uint8_t                group;       /* enum gs_group */
	uint8_t                also;        /* a second group, or GS_GROUP_NONE */
	const char            *unrelocatable; /* why, or NULL */
	bool                   known;       /* this version has its parameter row */
};

/* What the supervisor does with an escape, decided from its number alone. */
enum rm_esc_action {
	/* Performed by the supervisor from its own copy of every parameter
	 * level: the driver reads only bytes the workload cannot change. */
	RM_ACT_EXEC_ALLOC,
	RM_ACT_EXEC_ALLOC_OBJECT,
	RM_ACT_EXEC_FREE,
	RM_ACT_EXEC_CONTROL,
	RM_ACT_EXEC_DUP,
	RM_ACT_EXEC_VID_HEAP,
	RM_ACT_EXEC_FLAT,       /* flat struct, no pointers, no ledger effect */
	RM_ACT_EXEC_REGISTER_FD, /* fds resolved once, by the supervisor */
	RM_ACT_EXEC_CARD_INFO,  /* filtered for --gpus */
	/* Refused with an RM status in its struct (the way the driver fails),
	 * whatever its parameters say: EXPORT_TO_DMABUF_FD. */
	RM_ACT_REFUSE_STATUS,
	/* Let the kernel run it: the escape number is in a register and cannot
	 * change, and no variant of its struct allocates video memory or
	 * touches the ledger; or it must run in the workload's own context
	 * (mappings, fds). SECURITY.md lists each. */
	RM_ACT_CONTINUE,
	RM_ACT_XFER,            /* unwrap and decide on the inner escape */
	RM_ACT_REFUSE,          /* the driver does not handle it: -EINVAL */
};

struct rm_escape {
	uint8_t            nr;
	const char        *name;
	uint16_t           size;      /* exact top-level size the driver wants */
	uint16_t           alt_size;  /* second accepted size (NVOS21/64), or 0 */
	enum rm_esc_action action;
	bool               process_bound; /* must run in the workload's context */
};

/* Lookups are bsearch over tables sorted by key. rm_class_lookup and
 * rm_ctrl_lookup return NULL unless the row is known on this driver version
 * (gpusandbox can copy its parameters); the _row forms return the identity
 * row whatever the version says (for names and groups), NULL if none. */
const struct rm_class_info *rm_class_lookup(const struct gs_rm_abi *abi, uint32_t cls);
const struct rm_ctrl_info  *rm_ctrl_lookup(const struct gs_rm_abi *abi, uint32_t cmd);
const struct rm_class_info *rm_class_row(const struct gs_rm_abi *abi, uint32_t cls);
const struct rm_ctrl_info  *rm_ctrl_row(const struct gs_rm_abi *abi, uint32_t cmd);

/* True when the driver follows pointers inside this control's params that we
 * have no relocation entry for: such a control must never be executed by the
 * supervisor from its own address space. */
bool rm_ctrl_has_unrelocatable_pointers(const struct gs_rm_abi *abi, uint32_t cmd);

/* Looks up an escape by number; NULL if gpusandbox does not know it. */
const struct rm_escape *rm_escape_find(const struct gs_rm_abi *abi, uint32_t nr);
/* Name of an escape number, or NULL. */
const char *rm_escape_name(const struct gs_rm_abi *abi, uint32_t nr);

/* Walk the tables (every identity row, known on this version or not). */
size_t rm_class_table_size(const struct gs_rm_abi *abi);
const struct rm_class_info *rm_class_table_at(const struct gs_rm_abi *abi, size_t i);
size_t rm_ctrl_table_size(const struct gs_rm_abi *abi);
const struct rm_ctrl_info *rm_ctrl_table_at(const struct gs_rm_abi *abi, size_t i);

#endif
