/* SPDX-License-Identifier: MIT */
/*
 * scratch.c - allocating a worker's scratch (scratch.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvrm_abi.h"
#include "scratch.h"

int gs_scratch_init(struct gs_scratch *s, struct gs_error *err)
{
	struct seccomp_notif_sizes sizes;
	bool ok;

	memset(s, 0, sizeof(*s));
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return gs_fail(err, errno, "SECCOMP_GET_NOTIF_SIZES");
	s->req_size = sizes.seccomp_notif > sizeof(*s->req) ? sizes.seccomp_notif : sizeof(*s->req);
	s->resp_size = sizes.seccomp_notif_resp > sizeof(*s->resp) ? sizes.seccomp_notif_resp
	                                                           : sizeof(*s->resp);
	s->req = calloc(1, s->req_size);
	s->resp = calloc(1, s->resp_size);
	s->params = calloc(1, NV_RMAPI_MAX_PARAMS_SIZE);
	s->window.bytes = malloc(GS_SCRATCH_WINDOW_MAX);
	s->top_in.bytes = malloc(GS_SCRATCH_TOP_MAX);
	s->params_in.bytes = malloc(GS_SCRATCH_KEEP_MAX);
	ok = s->req && s->resp && s->params && s->window.bytes && s->top_in.bytes &&
	     s->params_in.bytes;
	for (unsigned i = 0; i < RM_EMBEDDED_MAX_PTRS; i++) {
		s->embedded[i] = malloc(NV_RMAPI_MAX_PARAMS_SIZE);
		ok = ok && s->embedded[i];
	}
	gs_mm_keep_init(&s->mms);
	if (ok)
		return 0;
	gs_scratch_fini(s);
	return gs_fail(err, ENOMEM, "allocating a worker's buffers");
}

uint8_t *gs_scratch_params(struct gs_scratch *s, size_t may_write)
{
	if (may_write > NV_RMAPI_MAX_PARAMS_SIZE)
		may_write = NV_RMAPI_MAX_PARAMS_SIZE;
	memset(s->params, 0, s->params_dirty);
	s->params_dirty = may_write;
	return s->params;
}

void gs_scratch_forget(struct gs_scratch *s)
{
	s->window.len = 0;
	s->top_in.len = 0;
	s->params_in.len = 0;
}

void gs_scratch_keep(struct gs_scratch_seen *seen, size_t max, uint64_t addr, const void *bytes,
                     size_t len)
{
	seen->len = 0;
	if (len == 0 || len > max)
		return;
	memcpy(seen->bytes, bytes, len);
	seen->addr = addr;
	seen->len = len;
}

const void *gs_scratch_kept(const struct gs_scratch_seen *seen, uint64_t addr, size_t len)
{
	return seen->len && seen->addr == addr && seen->len == len ? seen->bytes : NULL;
}

void gs_scratch_fini(struct gs_scratch *s)
{
	gs_dup_cache_detach(&s->dups);
	gs_mm_keep_fini(&s->mms);
	free(s->window.bytes);
	free(s->top_in.bytes);
	free(s->params_in.bytes);
	free(s->req);
	free(s->resp);
	free(s->params);
	for (unsigned i = 0; i < RM_EMBEDDED_MAX_PTRS; i++)
		free(s->embedded[i]);
	memset(s, 0, sizeof(*s));
}
