/* SPDX-License-Identifier: MIT */
/*
 * call.h - the plain call record of the staged pipeline (executor.c):
 *
 *   fetch -> decode -> reconcile -> verdict -> act -> commit -> record
 *
 * A struct gs_rm_call is what the decoder (decode.c) made of the
 * supervisor's own copies of a trapped call: numbers and the driver facts
 * of its class, never a pointer into the workload's memory. The verdict
 * (verdict.c) reads it with the rules, the limits and a usage snapshot,
 * and nothing else, so both stages are pure and can be fuzzed and tested
 * by table rows without a driver, a task or privileges.
 */
#ifndef GPUSANDBOX_CALL_H
#define GPUSANDBOX_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "nvrm_abi.h"
#include "rm_tables.h"

/* An RM_ALLOC (NVOS21 or NVOS64), an RM_ALLOC_OBJECT (NVOS05), a
 * VID_HEAP_CONTROL (NVOS32) or an RM_CONTROL (NVOS54), as decoded from
 * our copies. A VID_HEAP_CONTROL
 * ALLOC_SIZE is recorded as the class allocation the driver turns it
 * into; a control's object is in h_object. */
struct gs_rm_abi;

/* The most handles one allocation makes the driver keep (a semaphore
 * surface: its semaphore and max-submitted memory). */
#define GS_KEPT_HANDLES 2u

struct gs_rm_call {
	/* The driver tables the call was decoded with: constant data, never
	 * workload memory. The verdict reads class and control facts there. */
	const struct gs_rm_abi *abi;
	uint32_t           escape;        /* NV_ESC_RM_* */
	uint32_t           function;      /* VID_HEAP_CONTROL: NVOS32_FUNCTION_* */
	/* RM_CONTROL: the command, and the driver facts about it. */
	uint32_t           cmd;
	bool               gss_legacy;    /* bit 15: the legacy GSS path */
	bool               unrelocatable; /* params hold pointers we cannot move */
	bool               ctrl_known;    /* a row on the running branch gives its layout */
	/* An OS_UNIX export or import control: its fd is the caller's, and
	 * the executor performs it with the fd relocated to its own dup
	 * (exec_fdexport.c), never by the generic path. */
	bool               fd_export;
	/* A control whose params the supervisor reads or rewrites, sent with a
	 * paramsSize that is not the running driver's size for it. */
	bool               params_size_wrong;
	bool               via_xfer;      /* came wrapped in IOCTL_XFER_CMD */
	bool               nvos64;
	bool               finn_serialized;
	nv_handle_t        h_client, h_parent, h_object;
	uint32_t           h_class;
	/* The class as the ABI tables know it (rm_class_lookup). */
	bool               class_known;
	bool               creates_client; /* NV01_ROOT*: runs in the workload */
	enum rm_class_kind kind;          /* RM_CLASS_OTHER when unknown */
	/* Nested levels: present in the call, and what we copy of them. */
	bool               has_params, has_rights;
	uint32_t           params_size;   /* bytes to copy: the class's size */
	/* From the params copy (decode_alloc_params). */
	bool               params_copied, rights_copied;
	bool               has_size;
	uint64_t           size;          /* memory classes: bytes asked for */
	uint32_t           device_instance; /* RM_CLASS_DEVICE: deviceId (0 default) */
	/* Handles of the caller's client whose objects the driver dups into
	 * its own client for as long as the new object lives (a semaphore
	 * surface's memory, a memory mapper's surface): kept charged by the
	 * ledger until then (ledger_keep; docs/security/driver-refs.md). */
	uint32_t           n_kept;
	nv_handle_t        kept[GS_KEPT_HANDLES];
	/* RM_CONTROL, from our copy of its params (gs_decode_control_params):
	 * a GPFIFO_SCHEDULE (of a group, or of a channel) that enables. */
	bool               schedules;
	/* RM_CONTROL REGISTER_VIDMEM or UNREGISTER_VIDMEM of the running
	 * driver's size, from our copy of its params: the memory it names
	 * and (REGISTER) the range. Read for --p2p-register answer, which
	 * answers only what the driver would accept (verdict.c). */
	bool               p2p_params;
	nv_handle_t        p2p_memory;
	uint64_t           p2p_address, p2p_size, p2p_offset;
	/* RM_FREE: the object freed is the client itself. */
	bool               frees_client;
	/* RM_DUP_OBJECT: the object duplicated (h_client, h_parent and
	 * h_object name the new handle). */
	nv_handle_t        h_client_src, h_object_src;
	/* RM_SHARE: the share policy added to h_object. */
	uint32_t           share_type, share_action;
	/* REGISTER_FD: the workload's number of the control file it names. */
	int32_t            ctl_fd;
	/* An escape as the ABI table knows it: the trapped one, or the one
	 * IOCTL_XFER_CMD carries (escape is then NV_ESC_IOCTL_XFER_CMD). */
	uint32_t           inner_escape, inner_size;
	bool               inner_known, inner_size_ok;
	enum rm_esc_action inner_action;
	const char        *inner_name;    /* the table's constant name, or NULL */
};

#endif
