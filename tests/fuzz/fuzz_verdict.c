/* SPDX-License-Identifier: MIT */
/*
 * fuzz_verdict.c - fuzz target for the verdict stage (supervisor/core/pipeline/verdict.c).
 *
 * The input is read field by field (zeros once it runs out): a call made
 * by the decoder from an RM_ALLOC's top-level struct and params, from an
 * RM_ALLOC_OBJECT's NVOS05, or from a VID_HEAP_CONTROL's NVOS32 (so the record is one the pipeline can make), then the usage snapshot, the limits and the
 * rules' groups. Besides not crashing, on any input the verdict must:
 * be a function of its inputs and leave them untouched; give a refusal a
 * reason and an RM status; allow or continue only what the allowlist
 * allows; continue only a first client on a control file, never through
 * XFER; never allow video memory past its quota, nor count past a cap.
 * Shape bit 6 makes the call an RM_CONTROL instead (an NVOS54 and three
 * bytes of params): its two verdicts must be pure, give a refusal a reason
 * and a status, and never let one more channel group be scheduled past
 * --active-channel-groups. Shape bit 12 makes it an escape number and size
 * (direct or in XFER), an RM_DUP_OBJECT and a REGISTER_FD: an escape goes
 * on only when the table knows it at that size and the supervisor can
 * perform it, a dup only from a live client of the sandbox, a
 * REGISTER_FD only on a file that is not a control file.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "ledger.h"
#include "verdict.h"
#include "nvrm/rm_abi.h"

/* The tests decode with the newest tables, as a run without a driver does. */
#define ABI gs_rm_abi_default()

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct cursor {
	const uint8_t *p;
	size_t         left;
};

static void take(struct cursor *c, void *out, size_t n)
{
	size_t k = c->left < n ? c->left : n;

	memset(out, 0, n);
	memcpy(out, c->p, k);
	c->p += k;
	c->left -= k;
}

static uint32_t take_u32(struct cursor *c)
{
	uint32_t v;
	take(c, &v, sizeof(v));
	return v;
}

static uint64_t take_u64(struct cursor *c)
{
	uint64_t v;
	take(c, &v, sizeof(v));
	return v;
}

/* Larger than any class's params in the table, so every class can be
 * decoded with its params copied. */
#define FUZZ_PARAMS_MAX 4096u
#define FLAG(bits, n) (((bits) >> (n)) & 1u)

static void make_call(struct cursor *cur, struct gs_rm_call *call)
{
	static uint8_t params[FUZZ_PARAMS_MAX];
	uint8_t top[sizeof(struct nvos64)];
	uint32_t shape = take_u32(cur);

	if (FLAG(shape, 5)) {
		/* An RM_ALLOC_OBJECT: a class and no params. */
		struct nvos05 ao;
		take(cur, &ao, sizeof(ao));
		gs_decode_alloc_object(ABI, &ao, FLAG(shape, 1), call);
		return;
	}
	if (FLAG(shape, 4)) {
		/* A VID_HEAP_CONTROL: its NVOS32 is the whole call. */
		struct nvos32 vh;
		take(cur, &vh, sizeof(vh));
		gs_decode_vid_heap(ABI, &vh, FLAG(shape, 1), call);
		return;
	}
	take(cur, top, sizeof(top));
	take(cur, params, sizeof(params));
	(void)gs_decode_alloc_top(ABI, top, FLAG(shape, 0) ? sizeof(struct nvos64) : sizeof(struct nvos21),
	                          FLAG(shape, 1), call);
	gs_decode_alloc_params(call, FLAG(shape, 2) ? NULL : params, sizeof(params), FLAG(shape, 3));
}

static void make_usage(struct cursor *cur, struct gs_usage *u)
{
	uint32_t bits = take_u32(cur);

	u->on_control_file = FLAG(bits, 0);
	u->file_known = FLAG(bits, 1);
	u->file_has_client = FLAG(bits, 2);
	u->client_bound = FLAG(bits, 3);
	u->parent_is_group = FLAG(bits, 4);
	u->engine_joins_session = FLAG(bits, 5);
	u->gpu = (int)(take_u32(cur) % (GS_MAX_GPUS + 2)) - 1; /* LEDGER_NO_GPU .. past the end */
	u->mem_used = take_u64(cur);
	for (unsigned k = 0; k < GS_QK_N; k++)
		u->count[k] = take_u32(cur);
}

static void make_limits(struct cursor *cur, struct gs_quota *q)
{
	gs_quota_init(q);
	q->mem_per_gpu = take_u64(cur);
	q->mem_gpu[0] = take_u64(cur);
	for (unsigned k = 0; k < GS_QK_N; k++)
		q->count[k] = take_u32(cur);
}

static void check_verdict(const struct gs_call_verdict *v, const struct gs_rules *r,
                          const struct gs_quota *q, const struct gs_usage *u,
                          const struct gs_rm_call *c)
{
	bool objects = v->verdict == GS_VERDICT_REFUSE || v->verdict == GS_VERDICT_DENY;

	if (objects && (!v->reason || v->status == NV_OK))
		abort();
	if (!objects && v->verdict != GS_VERDICT_ALLOW && v->verdict != GS_VERDICT_CONTINUE)
		abort();
	if (v->needs_reconcile && v->verdict != GS_VERDICT_DENY)
		abort();
	if (objects)
		return;
	bool vid_heap = c->escape == NV_ESC_RM_VID_HEAP_CONTROL;
	if (vid_heap && c->function != NVOS32_FUNCTION_ALLOC_SIZE &&
	    c->function != NVOS32_FUNCTION_FREE && c->function != NVOS32_FUNCTION_INFO &&
	    c->function != NVOS32_FUNCTION_GET_MEM_ALIGNMENT)
		abort();
	if (vid_heap && c->function != NVOS32_FUNCTION_ALLOC_SIZE)
		return; /* no class, nothing charged */
	if (!gs_rules_class(ABI, r, c->h_class).allowed || c->finn_serialized ||
	    !c->params_copied || (!c->creates_client && !c->rights_copied))
		abort();
	if (v->verdict == GS_VERDICT_CONTINUE &&
	    (!c->creates_client || c->via_xfer || !u->on_control_file || !u->file_known ||
	     u->file_has_client))
		abort();
	if (c->creates_client != (v->verdict == GS_VERDICT_CONTINUE))
		abort();
	if (c->escape == NV_ESC_RM_ALLOC_OBJECT &&
	    (c->creates_client || c->kind == RM_CLASS_VIDMEM || c->kind == RM_CLASS_PROCESS_BOUND))
		abort();
	if (c->kind == RM_CLASS_VIDMEM) {
		uint64_t quota = gs_quota_mem(q, u->gpu);
		if (u->gpu < 0 || !u->client_bound || v->charge < c->size ||
		    (quota != GS_QUOTA_UNLIMITED && (v->charge > quota || u->mem_used > quota - v->charge)))
			abort();
	}
	/* A video engine object that joins a session its client holds adds
	 * no session: allowed at the cap (exec_engines.c). */
	enum gs_engine e = c->kind == RM_CLASS_ENGINE ? gs_class_engine(ABI, c->h_class) : GS_ENGINE_NONE;
	bool joins = e != GS_ENGINE_NONE && u->engine_joins_session;
	if (v->resource && v->count >= v->limit && !joins)
		abort();
	/* A channel outside any group brings the group RM makes for it. */
	if (c->escape == NV_ESC_RM_ALLOC && c->kind == RM_CLASS_CHANNEL &&
	    (u->channels >= q->channels || (!u->parent_is_group && u->channel_groups >= q->channel_groups)))
		abort();
	/* A video engine object that opens a session only under its
	 * engine's cap. */
	if (e != GS_ENGINE_NONE && !joins && u->count[gs_quota_kind_of_engine(e)] >= q->engines[e])
		abort();
	/* A client only under --clients, where it is set. */
	if (c->creates_client && q->count[GS_QK_CLIENTS] != GS_COUNT_UNLIMITED &&
	    u->count[GS_QK_CLIENTS] >= q->count[GS_QK_CLIENTS])
		abort();
}

static void check_control_verdicts(struct cursor *cur)
{
	struct nvos54 top;
	uint8_t params[sizeof(struct nva06c_gpfifo_schedule_params)];
	struct gs_rm_call call, call_copy;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU }, u_copy;
	struct gs_rules rules;
	struct gs_quota q;

	take(cur, &top, sizeof(top));
	take(cur, params, sizeof(params));
	uint32_t bits = take_u32(cur);
	(void)gs_decode_control(ABI, &top, FLAG(bits, 0), &call);
	gs_decode_control_params(&call, FLAG(bits, 1) ? NULL : params, sizeof(params));
	u.client_seen = FLAG(bits, 2);
	u.target_is_group = FLAG(bits, 3);
	u.target_scheduled = FLAG(bits, 4);
	u.scheduled_groups = take_u32(cur);
	gs_quota_init(&q);
	q.active_channel_groups = take_u32(cur);
	gs_rules_default(&rules);
	rules.groups = take_u32(cur);
	memcpy(&call_copy, &call, sizeof(call));
	memcpy(&u_copy, &u, sizeof(u));

	struct gs_call_verdict first = gs_verdict_of_control(&rules, &u, &call);
	struct gs_call_verdict v = gs_verdict_of_control_params(&q, &u, &call);
	struct gs_call_verdict again = gs_verdict_of_control_params(&q, &u, &call);
	if (memcmp(&call, &call_copy, sizeof(call)) != 0 || memcmp(&u, &u_copy, sizeof(u)) != 0 ||
	    v.verdict != again.verdict || v.reason != again.reason ||
	    first.verdict != gs_verdict_of_control(&rules, &u, &call).verdict)
		abort();
	const struct gs_call_verdict *each[] = { &first, &v };
	for (unsigned i = 0; i < 2; i++) {
		bool objects = each[i]->verdict == GS_VERDICT_REFUSE || each[i]->verdict == GS_VERDICT_DENY;
		if (objects && (!each[i]->reason || each[i]->status == NV_OK))
			abort();
		if (!objects && each[i]->verdict != GS_VERDICT_ALLOW)
			abort();
	}
	/* Enabling a group that is not scheduled yet is allowed only under
	 * the limit; nothing but an enabling schedule is ever refused here. */
	bool new_group = call.schedules && u.target_is_group && !u.target_scheduled;
	if (v.verdict == GS_VERDICT_ALLOW && new_group && u.scheduled_groups >= q.active_channel_groups)
		abort();
	if (v.verdict != GS_VERDICT_ALLOW && !new_group)
		abort();
}

#define SHAPE_CONTROL_BIT 6
#define SHAPE_HANDLES_BIT 12

static void check_handle_verdicts(struct cursor *cur)
{
	struct gs_rm_call esc, dup, reg;
	struct nvos55 dp;
	struct nv_ioctl_register_fd rf;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU };
	uint32_t nr = take_u32(cur), size = take_u32(cur), bits = take_u32(cur);

	gs_decode_escape(ABI, nr, size, FLAG(bits, 0), &esc);
	take(cur, &dp, sizeof(dp));
	gs_decode_dup(ABI, &dp, FLAG(bits, 0), &dup);
	take(cur, &rf, sizeof(rf));
	gs_decode_register_fd(ABI, &rf, FLAG(bits, 0), &reg);
	u.src_client_ours = FLAG(bits, 1);
	u.src_client_alive = FLAG(bits, 2);
	u.on_control_file = FLAG(bits, 3);

	struct gs_call_verdict v = gs_verdict_of_escape(&esc);
	const struct rm_escape *e = rm_escape_find(ABI, nr);
	if (v.verdict == GS_VERDICT_ALLOW &&
	    (!e || e->action == RM_ACT_REFUSE || !esc.inner_size_ok ||
	     (esc.via_xfer && (e->action == RM_ACT_XFER || e->action == RM_ACT_CONTINUE))))
		abort();
	if (v.verdict != GS_VERDICT_ALLOW && (v.verdict != GS_VERDICT_REFUSE || v.errnum != EINVAL || !v.reason))
		abort();
	v = gs_verdict_of_dup(&u, &dup);
	if ((v.verdict == GS_VERDICT_ALLOW) != (u.src_client_ours && u.src_client_alive) ||
	    (v.verdict != GS_VERDICT_ALLOW && (v.status == NV_OK || !v.reason)))
		abort();
	v = gs_verdict_of_register_fd(&u, &reg);
	if ((v.verdict == GS_VERDICT_ALLOW) == u.on_control_file ||
	    (v.verdict != GS_VERDICT_ALLOW && (v.errnum != EINVAL || !v.reason)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= sizeof(uint32_t)) {
		uint32_t shape;
		memcpy(&shape, data, sizeof(shape));
		struct cursor rest = { data + sizeof(shape), size - sizeof(shape) };
		if (FLAG(shape, SHAPE_CONTROL_BIT)) {
			check_control_verdicts(&rest);
			return 0;
		}
		if (FLAG(shape, SHAPE_HANDLES_BIT)) {
			check_handle_verdicts(&rest);
			return 0;
		}
	}

	struct cursor cur = { data, size };
	struct gs_rm_call call, call_copy;
	struct gs_usage usage, usage_copy;
	struct gs_quota q;
	struct gs_rules rules;

	memset(&usage, 0, sizeof(usage));
	make_call(&cur, &call);
	make_usage(&cur, &usage);
	make_limits(&cur, &q);
	gs_rules_default(&rules);
	rules.groups = take_u32(&cur);
	memcpy(&call_copy, &call, sizeof(call));
	memcpy(&usage_copy, &usage, sizeof(usage));

	struct gs_call_verdict v = gs_verdict_of(&rules, &q, &usage, &call);
	struct gs_call_verdict again = gs_verdict_of(&rules, &q, &usage, &call);
	if (v.verdict != again.verdict || v.status != again.status || v.reason != again.reason ||
	    v.charge != again.charge || v.needs_reconcile != again.needs_reconcile ||
	    memcmp(&call, &call_copy, sizeof(call)) != 0 ||
	    memcmp(&usage, &usage_copy, sizeof(usage)) != 0)
		abort();
	check_verdict(&v, &rules, &q, &usage, &call);
	return 0;
}
