/* SPDX-License-Identifier: MIT */
/*
 * agent_request.c - a container's quota request (agent_request.h), checked
 * against the node's policy.
 */
#include <errno.h>
#include <stdio.h>

#include "agent_request.h"

#define WHY_MAX 256
#define SIZE_TEXT 32

/* The node's memory limit on GPU minor g as text ("unlimited" when none). */
static const char *limit_text(uint64_t limit, char *buf, unsigned len)
{
	return limit == GS_QUOTA_UNLIMITED ? "unlimited" : gs_format_size(limit, buf, len);
}

/* mem: a size as --mem reads it, at most the node's limit on every GPU the
 * container may see. The node's per-GPU entries (gpu.N.mem) are then
 * dropped: the request is at most each of them, so one value holds. */
static int apply_mem(struct gs_quota *q, const char *text, struct gs_error *err)
{
	char why[WHY_MAX], have[SIZE_TEXT], limit[SIZE_TEXT];
	uint64_t v;

	if (gs_parse_mem_quota(text, &v, why, sizeof(why)) < 0)
		return gs_fail(err, EINVAL, "annotation " GS_REQUEST_MEM_KEY ": %s", why);
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		uint64_t node = gs_quota_mem(q, (int)g);
		if (!gs_gpu_visible(q, g) || node == GS_QUOTA_UNLIMITED || v <= node)
			continue;
		return gs_fail(err, EDQUOT, "annotation " GS_REQUEST_MEM_KEY " asks for %s on GPU %u, above "
		               "the node policy's %s: a request may only lower the node's limit",
		               gs_format_size(v, have, sizeof(have)), g,
		               limit_text(node, limit, sizeof(limit)));
	}
	q->mem_per_gpu = v;
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		q->mem_gpu[g] = GS_MEM_GPU_UNSET;
	return 0;
}

/* sm: a percentage as --sm reads it, at most the node's share (100 when the
 * node sets none: no cap). */
static int apply_sm(struct gs_quota *q, const char *text, struct gs_error *err)
{
	uint32_t v;

	if (gs_parse_percent(text, &v) < 0)
		return gs_fail(err, EINVAL, "annotation " GS_REQUEST_SM_KEY ": invalid share '%s' (1 to 100, "
		               "e.g. 50)", text);
	if (v > q->sm_percent)
		return gs_fail(err, EDQUOT, "annotation " GS_REQUEST_SM_KEY " asks for %u%%, above the node "
		               "policy's sm = %u: a request may only lower the node's share", v, q->sm_percent);
	q->sm_percent = v;
	return 0;
}

int gs_agent_apply_request(struct gs_quota *q, const struct gs_agent_request *r, struct gs_error *err)
{
	struct gs_quota copy = *q;

	if (r->bad[0])
		return gs_fail(err, EINVAL, "annotation %s is not a string of at most %d bytes", r->bad,
		               GS_REQUEST_VALUE_MAX - 1);
	if (r->mem[0] && apply_mem(&copy, r->mem, err) < 0)
		return -1;
	if (r->sm[0] && apply_sm(&copy, r->sm, err) < 0)
		return -1;
	*q = copy;
	return 0;
}
