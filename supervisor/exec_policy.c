/* SPDX-License-Identifier: MIT */
/*
 * exec_policy.c - the policy's verdicts at the executor's decision points:
 * the class and control allowlists (and what --learn adds to them), the
 * video engine caps, and escapes gpusandbox does not know. Each refusal is
 * shaped like the driver's own answer and audited.
 *
 * Every decision here is taken on the supervisor's copy of the call (the
 * class and the command were read once, before anything else), and the
 * supervisor then performs the call from that same copy, so a thread that
 * rewrites the workload's struct meanwhile changes nothing.
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

/* Records the group in the decision and refuses what is not allowed. */
static bool refuse_unless(struct call *c, void *top, size_t st_off, bool is_control, uint32_t key,
                          struct gs_rule_verdict v, struct answer *a)
{
	c->d.group = v.group;
	if (v.allowed || policy_learns(c, is_control, key))
		return false;
	*a = refuse_with_status(c, top, st_off, v.status, GS_VERDICT_REFUSE, v.reason);
	return true;
}

bool policy_refuses_class(struct call *c, void *top, size_t st_off, uint32_t cls,
                          struct answer *a)
{
	return refuse_unless(c, top, st_off, false, cls, gs_rules_class(c->sb->rules, cls), a);
}

static bool same_engine(uint32_t cls, const void *arg)
{
	return gs_class_engine(cls) == *(const enum gs_engine *)arg;
}

bool engine_quota_refuses(struct call *c, void *top, size_t st_off, uint32_t cls,
                          struct answer *a)
{
	struct gs_sandbox *sb = c->sb;
	enum gs_engine e = gs_class_engine(cls);
	uint32_t live, limit;

	if (e == GS_ENGINE_NONE)
		return false;
	limit = sb->quota.engines[e];
	live = ledger_count_engines(&sb->ledger, same_engine, &e);
	/* Objects of a closed file are gone in the driver: count them out
	 * before refusing, as for channels. */
	if (live >= limit) {
		gs_sandbox_reconcile(sb);
		live = ledger_count_engines(&sb->ledger, same_engine, &e);
	}
	note_count(c, gs_engine_resource(e), live, live, limit);
	if (live < limit)
		return false;
	/* What the driver answers when every instance of an engine is taken. */
	*a = refuse_with_status(c, top, st_off, NV_ERR_INSUFFICIENT_RESOURCES, GS_VERDICT_DENY,
	                        "video engine quota exceeded");
	return true;
}

void engine_note_after(struct call *c, uint32_t cls)
{
	enum gs_engine e = gs_class_engine(cls);

	if (e != GS_ENGINE_NONE)
		c->d.usage_after = ledger_count_engines(&c->sb->ledger, same_engine, &e);
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
