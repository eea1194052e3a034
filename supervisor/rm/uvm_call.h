/* SPDX-License-Identifier: MIT */
/*
 * uvm_call.h - UVM_MAP_EXTERNAL_ALLOCATION as the decode stage makes it
 * (issue #17 item 9): the supervisor performs it from its own copy, so
 * that it knows every mapping that keeps RM memory alive (SECURITY.md,
 * "Memory that outlives its handle"). Pure: plain numbers read from our
 * copy of the parameters, and the branch's layout.
 */
#ifndef GPUSANDBOX_UVM_CALL_H
#define GPUSANDBOX_UVM_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "nvrm_abi.h"
#include "nvuvm_abi.h"

struct gs_rm_abi;

/* How the running branch lays the map out (abi-drift.md). */
struct gs_uvm_layout {
	uint32_t max_gpus;         /* entries in MAP_EXTERNAL's per-GPU array */
	bool     unregister_short; /* UNREGISTER_CHANNEL without its GPU (590 on) */
};

/* The layout of abi's branch; false for a branch without checked UVM
 * facts (its maps are then refused, failing closed). */
bool gs_uvm_layout_of(const struct gs_rm_abi *abi, struct gs_uvm_layout *out);

/* Is the ioctl request word one of the UVM calls the supervisor traps:
 * the map, which it performs, the channel registration, which it
 * continues with the caller held, and ALLOC_DEVICE_P2P, which it
 * refuses?
 * UVM's commands are plain integers: the whole 32-bit word is compared. */
bool gs_uvm_cmd_trapped(uint32_t cmd);

/* The map's parameter struct on this layout, and where its rmStatus is. */
uint32_t gs_uvm_map_size(const struct gs_uvm_layout *lay);
uint32_t gs_uvm_map_status_offset(const struct gs_uvm_layout *lay);

/* A decoded map. gpus points into the caller's copy of the parameters
 * (never the workload's memory), n_gpus entries long. */
struct gs_uvm_call {
	uint64_t    base, length;
	uint64_t    last;           /* base + length - 1, when range_ok */
	bool        range_ok;       /* 4 KiB aligned, non-empty, no wrap (UVM's own check) */
	uint64_t    offset;
	uint32_t    n_gpus;
	bool        gpu_count_ok;   /* 1..max_gpus */
	const struct uvm_gpu_mapping_attrs *gpus;
	int32_t     rm_ctrl_fd;
	nv_handle_t h_client, h_memory;
};

/* Decodes the map's parameters (len bytes of our copy, at least
 * gs_uvm_map_size). 0, or -1 when len is short. */
int gs_decode_uvm_map(const struct gs_uvm_layout *lay, const void *params, uint32_t len,
                      struct gs_uvm_call *out);

/* UVM_REGISTER_CHANNEL as decoded from our copy: for the record only
 * (the call is continued, and what it names decides nothing: uvm_maps.h). */
struct gs_uvm_channel_call {
	uint8_t     gpu_uuid[UVM_UUID_BYTES];
	int32_t     rm_ctrl_fd;
	nv_handle_t h_client;
	nv_handle_t h_channel;
	uint64_t    base, length;
};
/* -1 when len is short of the struct. Pure. */
int gs_decode_uvm_register_channel(const void *params, uint32_t len, struct gs_uvm_channel_call *out);

#endif
