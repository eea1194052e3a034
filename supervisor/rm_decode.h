/* SPDX-License-Identifier: MIT */
/*
 * rm_decode.h - table-driven decoding of NVIDIA escapes (strace-style):
 * dispatch on the escape number, then on the class or control command.
 * Everything here is a pure function of bytes already copied into the
 * supervisor, so it can be unit-tested without privileges.
 */
#ifndef GPUSANDBOX_RM_DECODE_H
#define GPUSANDBOX_RM_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvrm_abi.h"

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

/* Escape numbers the filter traps (low byte of the request word). */
const uint8_t *rm_trapped_escapes(size_t *n);

/* True for numbers in the ranges NVIDIA assigns escapes from. One of
 * those that rm_escape_find() does not know is refused, never passed. */
bool rm_escape_nr_reserved(uint32_t nr);

/* Looks up an escape by number; NULL if gpusandbox does not know it. */
const struct rm_escape *rm_escape_find(uint32_t nr);

/* True when size is one the driver accepts for this escape. A call with any
 * other size is rejected by the driver itself (rm-abi.md 1.2), and the size
 * sits in a register the workload cannot change after the trap. */
bool rm_escape_size_ok(const struct rm_escape *e, uint32_t size);

/* The unified view of an RM_ALLOC, whichever of NVOS21/NVOS64 it came as. */
struct rm_alloc_view {
	bool        is_nvos64;
	nv_handle_t h_root, h_parent, h_new;
	uint32_t    h_class;
	uint64_t    p_params;
	uint64_t    p_rights;
	uint32_t    params_size;
	uint32_t    flags;
	nv_status_t status;
};

/* Reads an RM_ALLOC top-level buffer (32 or 48 bytes). */
int rm_alloc_view_from(const void *buf, uint32_t size, struct rm_alloc_view *v);
/* Offset of the status and pointer fields in either form. */
size_t rm_alloc_status_offset(uint32_t size);

/* Classifies memory by the attributes the driver decides on
 * (rm-abi.md 2, NVOS32 conversion): VIRTUAL flag, EGM, location. */
enum rm_mem_place { RM_MEM_VIDMEM, RM_MEM_SYSMEM, RM_MEM_VIRTUAL, RM_MEM_EGM };
enum rm_mem_place rm_mem_place_of(uint32_t flags, uint32_t attr, uint32_t attr2);

/* True for RM_ALLOC classes that create a client (continued, not executed). */
bool rm_class_is_client(uint32_t cls);

/* Names for statuses we print; NULL when unknown. */
const char *rm_status_name(nv_status_t st);

#endif
