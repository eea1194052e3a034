/* SPDX-License-Identifier: MIT */
/*
 * decode.h - the decode stage: from the supervisor's copies of a trapped
 * call to a struct gs_rm_call. Pure: no memory of the workload, no ledger,
 * no clock. The ABI lookups (rm_class_lookup) are made here and nowhere
 * else in the pipeline, so the driver's facts enter it in one place.
 */
#ifndef GPUSANDBOX_DECODE_H
#define GPUSANDBOX_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "call.h"

/* The first level: the top-level struct of an RM_ALLOC (top_size is 32 or
 * 48, already checked against the escape table). Says in out->params_size
 * how many bytes of params to copy next (0: none). Returns -1 for a size
 * that is neither form, else 0. */
int gs_decode_alloc_top(const struct gs_rm_abi *abi, const void *top, uint32_t top_size, bool via_xfer,
                        struct gs_rm_call *out);

/* The second level: our copy of the params (len bytes, NULL when none
 * could be copied) and whether the access rights could be copied. */
void gs_decode_alloc_params(struct gs_rm_call *call, const void *params, uint32_t len,
                            bool rights_copied);

/* An RM_ALLOC_OBJECT's NVOS05 (legacy: a class and no params). */
void gs_decode_alloc_object(const struct gs_rm_abi *abi, const struct nvos05 *top, bool via_xfer, struct gs_rm_call *out);

/* An RM_CONTROL's NVOS54. out->params_size is what the call declares
 * (the executor copies it only when has_params and the verdict allows).
 * Returns the control's row in the ABI table (its embedded lists), or
 * NULL when gpusandbox does not know it. */
/* The OS_UNIX export and import controls the executor performs with the
 * caller's fd relocated (CREATE_EXPORT_OBJECT_FD, EXPORT_OBJECTS_TO_FD,
 * IMPORT_OBJECTS_FROM_FD, GET_EXPORT_OBJECT_INFO). */
bool gs_is_fd_export_control(uint32_t cmd);
const struct rm_ctrl_info *gs_decode_control(const struct gs_rm_abi *abi, const struct nvos54 *top, bool via_xfer,
                                             struct gs_rm_call *out);

/* An RM_CONTROL's params, our copy (len bytes, NULL when none): what the
 * verdict reads of them. */
void gs_decode_control_params(struct gs_rm_call *call, const void *params, uint32_t len);

/* A VID_HEAP_CONTROL's NVOS32 (the only level: it has no pointers). */
void gs_decode_vid_heap(const struct gs_rm_abi *abi, const struct nvos32 *top, bool via_xfer, struct gs_rm_call *out);

/* The small escapes, one level each (no pointers to follow). */
void gs_decode_free(const struct gs_rm_abi *abi, const struct nvos00 *top, bool via_xfer,
                    struct gs_rm_call *out);
void gs_decode_dup(const struct gs_rm_abi *abi, const struct nvos55 *top, bool via_xfer,
                   struct gs_rm_call *out);
void gs_decode_share(const struct gs_rm_abi *abi, const struct nvos57 *top, bool via_xfer,
                     struct gs_rm_call *out);
void gs_decode_register_fd(const struct gs_rm_abi *abi, const struct nv_ioctl_register_fd *top,
                           bool via_xfer, struct gs_rm_call *out);

/* An escape number and size as trapped (escape is nr), or as an
 * IOCTL_XFER_CMD's header names them (escape is NV_ESC_IOCTL_XFER_CMD,
 * via_xfer set): the table's facts about it, for gs_verdict_of_escape. */
void gs_decode_escape(const struct gs_rm_abi *abi, uint32_t nr, uint32_t size, bool in_xfer,
                      struct gs_rm_call *out);

#endif
