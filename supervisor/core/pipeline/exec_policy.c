/* SPDX-License-Identifier: MIT */
/*
 * exec_policy.c - what the executor does around the policy's verdicts
 * (verdict.c decides them): --learn admitting what the allowlist alone
 * refused, the live count of a quota kind (its row says how to count
 * it), and the answer to an escape gpusandbox does not know. Each refusal is shaped
 * like the driver's own answer and audited.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "exec_int.h"
#include "groups.h"
#include "learn.h"

/* --learn: the allowlist refused what the call needs. Learn it, when it
 * is something gpusandbox knows, and let the call go on to every other
 * check; otherwise it stays refused. The record says that only learning
 * let it through. */
bool policy_learns(struct call *c, bool is_control, uint32_t key)
{
	struct gs_learn_origin from = { .call = c->d.call, .via_xfer = c->via_xfer };
	pid_t tgid;

	if (!c->sb->learn)
		return false;
	gs_read_task(c->tid, &tgid, from.comm, sizeof(from.comm));
	from.pid = tgid;
	if (!gs_learn_add(c->sb->learn, is_control, key, &from))
		return false;
	c->d.verdict = GS_VERDICT_ALLOW;
	c->d.reason = GS_LEARN_REASON;
	c->audit = true;
	return true;
}

uint32_t count_of_kind(struct call *c, enum gs_quota_kind k)
{
	const struct gs_quota_kind_row *row = gs_quota_kind_row(k);
	struct ledger *l = &c->sb->ledger;

	switch (row->counted_by) {
	case GS_COUNTED_BY_LEDGER:
		return l->count[k];
	case GS_COUNTED_ENGINE_SESSIONS:
		return count_engine_sessions(c, row->engine, 0, LEDGER_NO_GPU).sessions;
	case GS_COUNTED_CLIENT_FILES:
		return ledger_client_files(l);
	}
	return UINT32_MAX; /* not reached: every source is a case (-Wswitch) */
}

void take_counts(struct call *c, const struct gs_rm_call *rc, struct gs_usage *u)
{
	struct gs_count_events ev = gs_call_count_events(rc, u);

	for (int k = 0; k < GS_QK_N; k++) {
		const struct gs_quota_kind_row *row = gs_quota_kind_row((enum gs_quota_kind)k);
		if (!gs_kind_counts_on((enum gs_quota_kind)k, ev) ||
		    !gs_kind_counted(&c->sb->quota, (enum gs_quota_kind)k))
			continue;
		/* A video engine object: the sessions, and whether it opens
		 * one (exec_engines.c). */
		if (row->counted_by == GS_COUNTED_ENGINE_SESSIONS)
			take_engine_usage(c, rc, row->engine, u);
		else
			u->count[k] = count_of_kind(c, (enum gs_quota_kind)k);
	}
}

struct answer refuse_escape(struct call *c, const char *name, const char *why)
{
	c->d.call = name;
	c->d.has_escape = true;
	c->d.escape = (uint8_t)c->nr;
	c->d.verdict = GS_VERDICT_REFUSE;
	c->d.reason = why;
	c->d.errnum = EINVAL;
	c->audit = true;
	/* The driver's answer to an escape number it does not handle. */
	return answer_errno(EINVAL);
}
