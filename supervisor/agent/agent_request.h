/* SPDX-License-Identifier: MIT */
/*
 * agent_request.h - a container's own request for its quota: the OCI
 * annotations gpusandbox.io/mem and gpusandbox.io/sm, which the CRI runtime
 * copies from the pod's annotations into the container's config and the
 * runtime passes on in the state the agent receives (state.annotations).
 *
 * The node's policy is the bound: a request may only lower a limit (choose
 * a quota within what the node allows), never raise it. Who may write the
 * annotation is the pod's author, so nothing more is ever granted on its
 * word; that it matches what the scheduler accounted (HAMi's
 * nvidia.com/gpumem, nvidia.com/gpucores) is admission's to check
 * (deploy/quota-policy.yaml). A request that cannot be read, or asks for
 * more than the node allows, is refused and the container killed: running
 * it under the node's default would give it another quota than the one
 * scheduled (fail closed, said in the agent's log).
 */
#ifndef GPUSANDBOX_AGENT_REQUEST_H
#define GPUSANDBOX_AGENT_REQUEST_H

#include "gs_error.h"
#include "quota.h"

#define GS_REQUEST_MEM_KEY "gpusandbox.io/mem"
#define GS_REQUEST_SM_KEY "gpusandbox.io/sm"
/* "16383m", "100%": a longer value is no size or percentage we read. */
#define GS_REQUEST_VALUE_MAX 32
#define GS_REQUEST_KEY_MAX 64

struct gs_agent_request {
	char mem[GS_REQUEST_VALUE_MAX];   /* "" when absent */
	char sm[GS_REQUEST_VALUE_MAX];
	/* The first request annotation that is not a string of fewer than
	 * GS_REQUEST_VALUE_MAX bytes ("" when none): the container is refused. */
	char bad[GS_REQUEST_KEY_MAX];
};

/* Applies r to the node's quota q (the container's policy): the memory
 * request becomes every visible GPU's quota, the sm request the compute
 * share. Returns 0 (q changed, or untouched when r asks nothing), or -1
 * with err saying which annotation and why (q untouched). */
int gs_agent_apply_request(struct gs_quota *q, const struct gs_agent_request *r, struct gs_error *err);

/* True when r asks for anything (the log says the quota came from it). */
static inline bool gs_agent_request_any(const struct gs_agent_request *r)
{
	return r->mem[0] || r->sm[0] || r->bad[0];
}

#endif
