/* SPDX-License-Identifier: MIT */
/*
 * exec_engines.c - the video quotas (video.decoders, .encoders, .jpeg,
 * .ofa) count sessions, as their users count them (issue #29 item 2).
 *
 * What a session is, on the driver's side: libnvcuvid's cuvidCreateDecoder
 * makes a new RM client and, under it, one NVDEC object per NVDEC engine
 * of the GPU, each under a channel of its own (7 on an H200, 580.159.04:
 * tests/gpu/nvdec_check.sh, its RM log). Counting objects made that one
 * decoder 7, so `video.decoders = 2` refused the first decoder's third
 * object. Counted here: per (client, GPU) pair, ceil(objects / I), where I
 * is the number of engine instances of the kind the GPU has, asked of the
 * driver through our own client (own_rm.h, gs_own_rm_engines). A decoder
 * of libnvcuvid is 1.
 *
 * The guarantee: a sandbox capped at N sessions of a kind never holds more
 * than N x I engine objects of it on a GPU, whatever it stacks (the sum of
 * ceil(n / I) over the pairs is at most N, so the objects are at most
 * N x I), and I is a number of the GPU's, not the workload's. Each object
 * is an engine context the driver keeps (instance memory, a slot of the
 * engine's scheduling); N sessions of a library hold exactly that, one per
 * engine, and a workload cannot hold more by packing objects into one
 * client or one channel (docs/security/channels-and-clients.md, "Video
 * engine sessions"). Where the driver's answer is missing, I = 1: every
 * object a session of its own, the count before issue #29 (fail closed).
 */
#include "exec_int.h"
#include "own_rm.h"

/* The count's matcher: a class of the given engine, looked up in the
 * sandbox's driver tables. */
struct engine_of {
	const struct gs_rm_abi *rm_abi;
	enum gs_engine          engine;
};

static bool same_engine(uint32_t cls, const void *arg)
{
	const struct engine_of *want = arg;
	return gs_class_engine(want->rm_abi, cls) == want->engine;
}

/* What instances_on reads the sandbox's table through. */
struct engine_ctx {
	struct gs_session *sb;
	enum gs_engine     engine;
};

/* Asks the driver once for the GPU of minor gpu; a kind it names no
 * instance of, or a question it does not answer, keeps I = 1. */
static void ask_instances(struct gs_session *sb, int gpu)
{
	const struct rm_ctrl_info *ci = rm_ctrl_lookup(sb->rm_abi, NV2080_CTRL_CMD_GPU_GET_ENGINES_V2);
	uint32_t n[GS_ENGINE_N];

	sb->engines_asked |= 1ull << gpu;
	for (int e = 0; e < GS_ENGINE_N; e++)
		sb->engine_instances[gpu][e] = 1;
	if (!ci || !ci->params_size ||
	    gs_own_rm_engines(&sb->own, gpu, sb->gpu_map, sb->n_gpu_map, ci->params_size, n) != NV_OK)
		return;
	for (int e = 0; e < GS_ENGINE_N; e++)
		if (n[e] > 0)
			sb->engine_instances[gpu][e] = n[e];
}

static uint32_t instances_on(void *ctx, int gpu)
{
	const struct engine_ctx *x = ctx;
	struct gs_session *sb = x->sb;

	/* An object the ledger places on no GPU is a session of its own. */
	if (sb->test_engine_objects || gpu < 0 || (unsigned)gpu >= GS_MAX_GPUS || x->engine < 0 ||
	    x->engine >= GS_ENGINE_N)
		return 1;
	if (!(sb->engines_asked & (1ull << gpu)))
		ask_instances(sb, gpu);
	return sb->engine_instances[gpu][x->engine];
}

struct ledger_engine_count count_engine_sessions(struct call *c, enum gs_engine e, uint32_t client, int gpu)
{
	struct engine_of want = { c->sb->rm_abi, e };
	struct engine_ctx ctx = { c->sb, e };
	const struct ledger_engine_query q = {
		.match = same_engine, .match_arg = &want, .instances = instances_on, .ctx = &ctx,
		.client = client, .gpu = gpu,
	};

	return ledger_count_engine_sessions(&c->sb->ledger, &q);
}

void take_engine_usage(struct call *c, const struct gs_rm_call *rc, enum gs_engine e, struct gs_usage *u)
{
	/* The GPU the new object will be on: its parent's, as ledger_add
	 * will record it (none for a parent the ledger does not know). */
	int gpu = ledger_gpu_of(&c->sb->ledger, rc->h_client, rc->h_parent);
	struct engine_ctx ctx = { c->sb, e };
	struct ledger_engine_count n = count_engine_sessions(c, e, rc->h_client, gpu);
	uint32_t per_session = instances_on(&ctx, gpu);

	u->count[gs_quota_kind_of_engine(e)] = n.sessions;
	/* The client's objects on the GPU fill whole sessions (none, or I
	 * each): one more opens a new one, which the cap judges. Otherwise
	 * it joins the session the client holds, which adds nothing. */
	u->engine_joins_session = n.held % per_session != 0;
}
