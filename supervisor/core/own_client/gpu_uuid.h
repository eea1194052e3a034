/* SPDX-License-Identifier: MIT */
#ifndef GPUSANDBOX_GPU_UUID_H
#define GPUSANDBOX_GPU_UUID_H

#include "gs_error.h"
#include "quota.h"

/* Adds the GPUs named by UUID in q->uuids to q->visible, asking the driver
 * through the supervisor's own client. Fails if a UUID matches no GPU. */
int gs_resolve_gpu_uuids(struct gs_quota *q, struct gs_error *err);

#endif
