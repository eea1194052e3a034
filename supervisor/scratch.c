/* SPDX-License-Identifier: MIT */
/*
 * scratch.c - allocating a worker's scratch (scratch.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nvrm_abi.h"
#include "scratch.h"

int gs_scratch_init(struct gs_scratch *s, struct gs_error *err)
{
	bool ok;

	memset(s, 0, sizeof(*s));
	s->params = malloc(NV_RMAPI_MAX_PARAMS_SIZE);
	ok = s->params != NULL;
	for (unsigned i = 0; i < RM_EMBEDDED_MAX_PTRS; i++) {
		s->embedded[i] = malloc(NV_RMAPI_MAX_PARAMS_SIZE);
		ok = ok && s->embedded[i];
	}
	if (ok)
		return 0;
	gs_scratch_fini(s);
	return gs_fail(err, ENOMEM, "allocating the executor's scratch buffers");
}

void gs_scratch_fini(struct gs_scratch *s)
{
	free(s->params);
	for (unsigned i = 0; i < RM_EMBEDDED_MAX_PTRS; i++)
		free(s->embedded[i]);
	memset(s, 0, sizeof(*s));
}
