/* SPDX-License-Identifier: MIT */
/*
 * scratch.h - a worker's working memory: the notification it is handling
 * and the answer, and the executor's copies for one call.
 */
#ifndef GPUSANDBOX_SCRATCH_H
#define GPUSANDBOX_SCRATCH_H

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#include "gs_error.h"
#include "rm_tables.h"

/* The executor's working memory for one call: our copies of the nested
 * params and of the lists they point to (NV_RMAPI_MAX_PARAMS_SIZE each,
 * about 4 MiB in all). It belongs to whoever runs calls (a worker), not to
 * a sandbox: a worker runs one call at a time, whichever sandbox it is
 * for, and nothing in it outlives the call. */
struct gs_scratch {
	/* The notification being handled and its answer, sized by the
	 * running kernel (it may know bigger structs than our headers). */
	struct seccomp_notif      *req;
	struct seccomp_notif_resp *resp;
	size_t                     req_size, resp_size;
	/* The listener the notification came from, and where its answer
	 * goes: a sandbox of the agent has one per process the runtime
	 * started (the container's init, each exec), a worker per listener. */
	int                        listener;
	uint8_t *params;
	uint8_t *embedded[RM_EMBEDDED_MAX_PTRS];
};

int  gs_scratch_init(struct gs_scratch *s, struct gs_error *err);
void gs_scratch_fini(struct gs_scratch *s);

#endif
