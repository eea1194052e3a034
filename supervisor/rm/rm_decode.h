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
#include "rm_tables.h"

/* Escape numbers the filter traps (low byte of the request word). */
const uint8_t *rm_trapped_escapes(const struct gs_rm_abi *abi, size_t *n);

/* True for numbers in the ranges NVIDIA assigns escapes from. One of
 * those that rm_escape_find() does not know is refused, never passed. */
bool rm_escape_nr_reserved(uint32_t nr);

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
