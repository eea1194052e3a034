/* SPDX-License-Identifier: MIT */
/*
 * exec_policy.c - what the executor does around the policy's verdicts
 * (verdict.c decides them): --learn admitting what the allowlist alone
 * refused, the engine count after an accepted engine object, and the
 * answer to an escape gpusandbox does not know. Each refusal is shaped
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

bool same_engine(uint32_t cls, const void *arg)
{
	const struct engine_of *want = arg;
	return gs_class_engine(want->rm_abi, cls) == want->engine;
}

void engine_note_after(struct call *c, uint32_t cls)
{
	enum gs_engine e = gs_class_engine(c->sb->rm_abi, cls);
	struct engine_of want = { c->sb->rm_abi, e };

	if (e != GS_ENGINE_NONE)
		c->d.usage_after = ledger_count_engines(&c->sb->ledger, same_engine, &want);
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
