/* SPDX-License-Identifier: MIT */
/*
 * exec_engines.c - the video quotas (video.decoders, .encoders, .jpeg,
 * .ofa) count sessions, as their users count them (issue #29 item 2).
 *
 * What a session is, on the driver's side, measured per library:
 *  - libnvcuvid's cuvidCreateDecoder makes a new RM client and, under it,
 *    one NVDEC object per NVDEC engine of the GPU, each under a channel of
 *    its own (7 on an H200, 580.159.04: tests/gpu/nvdec_check.sh, its RM
 *    log). A decoder is one client's objects, one per engine.
 *  - nvJPEG's hardware backend (CUDA 13, 580.159.04:
 *    tests/gpu/nvjpg_quota.sh, its trace) holds two clients per decoder
 *    in use, each with one NVJPG object per NVJPG engine: every engine
 *    twice. Its clients after the first are mostly made on control files
 *    it has open already (second clients, exec_inject.c), not always the
 *    same decoder's. nvjpegCreateEx also probes once with a client of one
 *    object per engine that it frees at once.
 * Counting objects made one decoder 7 (or 14), so `video.decoders = 2`
 * refused the first decoder's third object. Counted here: per group,
 * ceil(objects / (C x I)), where I is the number of engine instances of
 * the kind the GPU has, asked of the driver through our own client
 * (own_rm.h, gs_own_rm_engines), C the contexts a session of the kind
 * holds on each engine (session_shape below), and a group one client's
 * objects on a GPU, or, for NVJPG, whose two clients make one decoder,
 * every object of the kind on the GPU. A decoder of libnvcuvid, or of
 * nvJPEG, is 1.
 *
 * The guarantee: a sandbox capped at N sessions of a kind never holds more
 * than N x C x I engine objects of it on a GPU, whatever it stacks (the
 * sum of ceil(n / (C x I)) over the groups is at most N, so the objects
 * are at most N x C x I, for any grouping), and I is a number of the
 * GPU's, C one of ours, neither the workload's. Each object is an engine
 * context the driver keeps (instance memory, a slot of the engine's
 * scheduling); N sessions of a library hold exactly that, and a workload
 * cannot hold more by packing objects into one client or one channel
 * (docs/security/channels-and-clients.md, "Video engine sessions").
 * Where the driver's answer is missing, a session is one object (fail
 * closed: every object a session of its own, whatever C).
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

/* How a session of each kind sits on the driver (the header above):
 * contexts it holds on each engine instance, and whether its objects are
 * one client's or spread over several (then the GPU's objects of the kind
 * are counted together). NVENC and OFA: not measured (no H200 has them),
 * taken as NVDEC's. */
static const struct session_shape {
	uint32_t contexts_per_engine;
	bool     spans_clients;
} session_shape[GS_ENGINE_N] = {
	[GS_ENGINE_NVDEC] = { 1, false },
	[GS_ENGINE_NVENC] = { 1, false },
	[GS_ENGINE_NVJPG] = { 2, true },
	[GS_ENGINE_OFA]   = { 1, false },
};

/* What objects_per_session reads the sandbox's table through. */
struct engine_ctx {
	struct gs_session *sb;
	enum gs_engine     engine;
};

/* Asks the driver once for the GPU of minor gpu; a kind it names no
 * instance of, or a question it does not answer, keeps 0: unknown. */
static void ask_instances(struct gs_session *sb, int gpu)
{
	const struct rm_ctrl_info *ci = rm_ctrl_lookup(sb->rm_abi, NV2080_CTRL_CMD_GPU_GET_ENGINES_V2);
	uint32_t n[GS_ENGINE_N];

	sb->engines_asked |= 1ull << gpu;
	for (int e = 0; e < GS_ENGINE_N; e++)
		sb->engine_instances[gpu][e] = 0;
	if (!ci || !ci->params_size ||
	    gs_own_rm_engines(&sb->own, gpu, sb->gpu_map, sb->n_gpu_map, ci->params_size, n) != NV_OK)
		return;
	for (int e = 0; e < GS_ENGINE_N; e++)
		sb->engine_instances[gpu][e] = n[e];
}

/* The objects one session of the kind holds on the GPU: C x I. */
static uint32_t objects_per_session(void *ctx, int gpu)
{
	const struct engine_ctx *x = ctx;
	struct gs_session *sb = x->sb;

	/* An object the ledger places on no GPU is a session of its own. */
	if (sb->test_engine_objects || gpu < 0 || (unsigned)gpu >= GS_MAX_GPUS || x->engine < 0 ||
	    x->engine >= GS_ENGINE_N)
		return 1;
	if (!(sb->engines_asked & (1ull << gpu)))
		ask_instances(sb, gpu);
	/* Without the driver's answer, a session is one object. */
	if (sb->engine_instances[gpu][x->engine] == 0)
		return 1;
	return session_shape[x->engine].contexts_per_engine * sb->engine_instances[gpu][x->engine];
}

struct ledger_engine_count count_engine_sessions(struct call *c, enum gs_engine e, uint32_t client, int gpu)
{
	struct engine_of want = { c->sb->rm_abi, e };
	struct engine_ctx ctx = { c->sb, e };
	const struct ledger_engine_query q = {
		.match = same_engine, .match_arg = &want, .per_session = objects_per_session, .ctx = &ctx,
		.by_gpu = e >= 0 && e < GS_ENGINE_N && session_shape[e].spans_clients,
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
	uint32_t per_session = objects_per_session(&ctx, gpu);

	u->count[gs_quota_kind_of_engine(e)] = n.sessions;
	/* The group's objects on the GPU fill whole sessions (none, or C x I
	 * each): one more opens a new one, which the cap judges. Otherwise
	 * it joins the session the group holds, which adds nothing. */
	u->engine_joins_session = n.held % per_session != 0;
}
