/* SPDX-License-Identifier: MIT */
/*
 * verdict.c - the verdict stage (verdict.h). One clause per rule, in the
 * order the executor has always applied them, each with its reason: the
 * first clause that objects decides. Pure: the same inputs give the same
 * verdict, which is what lets tests/unit/test_verdict.c state it by rows.
 */
#include <errno.h>

#include "verdict.h"

uint64_t gs_round_up(uint64_t v, uint64_t to)
{
	return v > UINT64_MAX - (to - 1) ? UINT64_MAX : (v + to - 1) / to * to;
}

bool gs_over_quota(uint64_t q, uint64_t used, uint64_t bytes)
{
	if (q == GS_QUOTA_UNLIMITED)
		return false;
	return !(bytes <= q && used <= q - bytes);
}

static struct gs_call_verdict objection(struct gs_call_verdict v, enum gs_verdict kind,
                                        nv_status_t st, const char *why)
{
	v.verdict = kind;
	v.status = st;
	v.reason = why;
	return v;
}

static bool objects(const struct gs_call_verdict *v)
{
	return v->verdict == GS_VERDICT_REFUSE || v->verdict == GS_VERDICT_DENY;
}

/* The class a call names, against the policy's allowlist. */
static struct gs_call_verdict allowlist_clause(struct gs_call_verdict v,
                                               const struct gs_rules *rules,
                                               const struct gs_rm_call *call)
{
	struct gs_rule_verdict rv = gs_rules_class(call->abi, rules, call->h_class);

	v.group = rv.group;
	if (rv.allowed)
		return v;
	v.by_allowlist = true;
	return objection(v, GS_VERDICT_REFUSE, rv.status, rv.reason);
}

/* VID_HEAP_CONTROL: ALLOC_SIZE is judged as the class the driver turns it
 * into; FREE and the two queries are harmless. The other functions use
 * union layouts we do not decode, or pin the caller's pages
 * (ALLOC_OS_DESCRIPTOR), which cannot run from the supervisor nor be
 * continued safely. */
static struct gs_call_verdict vid_heap_clauses(struct gs_call_verdict v,
                                               const struct gs_rules *rules,
                                               const struct gs_rm_call *call)
{
	switch (call->function) {
	case NVOS32_FUNCTION_ALLOC_SIZE:
		return allowlist_clause(v, rules, call);
	case NVOS32_FUNCTION_FREE:
	case NVOS32_FUNCTION_INFO:
	case NVOS32_FUNCTION_GET_MEM_ALIGNMENT:
		return v;
	default:
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "VID_HEAP_CONTROL function not supported by gpusandbox");
	}
}

/* RM_ALLOC_OBJECT: the legacy path takes no params, so neither a client
 * (it would be the supervisor's) nor video memory (no size to charge) nor
 * a process-bound class may be made through it. */
static struct gs_call_verdict alloc_object_clauses(struct gs_call_verdict v,
                                                   const struct gs_rules *rules,
                                                   const struct gs_rm_call *call)
{
	v = allowlist_clause(v, rules, call);
	if (objects(&v))
		return v;
	if (call->creates_client || call->kind == RM_CLASS_VIDMEM ||
	    call->kind == RM_CLASS_PROCESS_BOUND)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_CLASS,
		                 "class not allowed through RM_ALLOC_OBJECT");
	return v;
}

struct gs_call_verdict gs_verdict_of_call(const struct gs_rules *rules,
                                          const struct gs_rm_call *call)
{
	struct gs_call_verdict v = { .verdict = GS_VERDICT_ALLOW, .status = NV_OK };

	/* No tables, no facts about the class: fail closed. */
	if (!call->abi)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "call decoded without the driver's RM tables");
	if (call->escape == NV_ESC_RM_VID_HEAP_CONTROL)
		return vid_heap_clauses(v, rules, call);
	if (call->escape == NV_ESC_RM_ALLOC_OBJECT)
		return alloc_object_clauses(v, rules, call);

	/* Serialized params are an opaque second format the decoder cannot
	 * check; refuse rather than let the driver read what we did not. */
	if (call->finn_serialized)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "FINN-serialized alloc params are not allowed");
	v = allowlist_clause(v, rules, call);
	if (objects(&v))
		return v;
	/* A client made by the supervisor would carry the supervisor's pid,
	 * and UVM would then refuse the workload's use of it (rm-abi.md 6.2).
	 * It must run in the workload: the one RM_ALLOC we continue;
	 * SECURITY.md explains what that leaves open. Through XFER the inner
	 * escape number sits in memory, so it cannot be continued at all. */
	if (call->creates_client) {
		v = objection(v, GS_VERDICT_CONTINUE, NV_OK,
		              "client allocation runs in the workload's context");
		if (call->via_xfer)
			return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
			                 "client allocation through XFER cannot be continued safely");
		return v;
	}
	/* Performed by us, these would act on the supervisor: pin its pages,
	 * follow pointers into its memory, read fds from its table. */
	if (call->kind == RM_CLASS_PROCESS_BOUND)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "class bound to the calling process");
	if (!call->class_known && call->has_params)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_CLASS,
		                 "class unknown to gpusandbox: its params cannot be copied");
	if (call->params_size > NV_RMAPI_MAX_PARAMS_SIZE)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
		                 "class params larger than the driver allows");
	return v;
}

/* What the kernel copies after our answer to a continued client may be
 * rewritten into another RM_ALLOC. It can only succeed under a client that
 * lives on this same control file (RM's strict client validation). So a
 * client is continued only on a control file that has none, live or being
 * created: then a rewritten call has no client to allocate under. CUDA
 * opens a control file per client, so it never meets this rule. */
static struct gs_call_verdict client_clauses(struct gs_call_verdict v, const struct gs_usage *u)
{
	if (!u->on_control_file)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "client allocation outside the control file");
	/* The driver's answer when a client's handle space is exhausted
	 * (clientGenResourceHandle_IMPL, resserv rs_client.c, 580.95.05):
	 * a program sees a failed allocation it can handle. */
	if (u->files_full)
		return objection(v, GS_VERDICT_DENY, NV_ERR_INSUFFICIENT_RESOURCES,
		                 "control file limit reached (policy key files)");
	if (!u->file_known)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "cannot identify the open file (kcmp, epoll)");
	/* A second one: the rewritten call could succeed under the first, so
	 * its struct must be one no writer can reach, a page of ours the
	 * caller is made to use (exec_inject.c). */
	if (u->file_has_client && u->may_inject) {
		v.inject = true;
		return v;
	}
	if (u->file_has_client)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "one client per open control file: open /dev/nvidiactl again");
	return v;
}

/* Video memory must be attributable to a GPU to be charged, and fit. */
static struct gs_call_verdict vidmem_clauses(struct gs_call_verdict v, const struct gs_quota *q,
                                             const struct gs_usage *u,
                                             const struct gs_rm_call *call)
{
	/* The driver requires these params; without them there is no size
	 * to charge, so refuse rather than guess. */
	if (!call->has_size)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
		                 "video memory allocation without params");
	if (!u->client_bound)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NO_MEMORY, "supervisor out of memory");
	/* A parent the sandbox never saw created is refused. */
	if (u->gpu < 0 || (unsigned)u->gpu >= GS_MAX_GPUS)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_OBJECT_PARENT,
		                 "video memory under a parent that is not a known device");
	v.charge = gs_round_up(call->size, VIDMEM_GRANULE);
	if (gs_over_quota(gs_quota_mem(q, u->gpu), u->mem_used, v.charge)) {
		/* A client whose file was closed really gave its memory back. */
		v.needs_reconcile = true;
		return objection(v, GS_VERDICT_DENY, NV_ERR_NO_MEMORY, "video memory quota exceeded");
	}
	return v;
}

/* A count against its cap: channels and groups come from a finite
 * hardware pool, video engines from a few instances. The driver's own
 * answer when the pool is empty is INSUFFICIENT_RESOURCES. */
static struct gs_call_verdict count_clause(struct gs_call_verdict v,
                                           const struct gs_quota_kind_row *row, uint32_t live,
                                           uint32_t limit, bool adds_one)
{
	v.resource = row->resource;
	v.count = live;
	v.limit = limit;
	if (!adds_one || live < limit)
		return v;
	/* Objects of a closed file are gone in the driver: count them out
	 * before refusing. */
	v.needs_reconcile = true;
	return objection(v, GS_VERDICT_DENY, NV_ERR_INSUFFICIENT_RESOURCES, row->refusal);
}

bool gs_kind_counted(const struct gs_quota *limits, enum gs_quota_kind k)
{
	return !(gs_quota_kind_row(k)->flags & GS_QK_COUNT_IF_CAPPED) ||
	       limits->count[k] != GS_COUNT_UNLIMITED;
}

struct gs_count_events gs_call_count_events(const struct gs_rm_call *call, const struct gs_usage *usage)
{
	struct gs_count_events ev = { 0, GS_ENGINE_NONE };

	if (call->creates_client) {
		ev.events = GS_COUNT_ON_CLIENT;
	} else if (call->schedules) {
		/* Scheduling a group that is scheduled already adds none; a
		 * channel inside a group is scheduled with it. */
		if (usage->target_is_group && !usage->target_scheduled)
			ev.events = GS_COUNT_ON_SCHEDULE;
	} else if (call->kind == RM_CLASS_CHANNEL) {
		/* Outside a channel group the channel brings the group RM
		 * makes for it (kernel_channel.c). */
		ev.events = usage->parent_is_group ? GS_COUNT_ON_GROUPED_CHANNEL : GS_COUNT_ON_LONE_CHANNEL;
	} else if (call->kind == RM_CLASS_CHANNEL_GROUP) {
		ev.events = GS_COUNT_ON_GROUP;
	} else if (call->kind == RM_CLASS_ENGINE) {
		ev.engine = gs_class_engine(call->abi, call->h_class);
		ev.events = ev.engine == GS_ENGINE_NONE ? 0 : GS_COUNT_ON_ENGINE;
	}
	return ev;
}

bool gs_kind_counts_on(enum gs_quota_kind k, struct gs_count_events ev)
{
	const struct gs_quota_kind_row *row = gs_quota_kind_row(k);

	return (row->counts_on & ev.events) && row->engine == ev.engine;
}

/* Every kind the call counts against, in the table's order: the first
 * names the decision's resource, and the first that is full refuses. A
 * kind counted only under a cap is left out while it has none. */
static struct gs_call_verdict count_clauses(struct gs_call_verdict v, const struct gs_quota *limits,
                                            const struct gs_usage *usage,
                                            const struct gs_rm_call *call)
{
	struct gs_count_events ev = gs_call_count_events(call, usage);
	struct gs_call_verdict named = v;

	for (int k = 0; k < GS_QK_N; k++) {
		if (!gs_kind_counts_on((enum gs_quota_kind)k, ev) ||
		    !gs_kind_counted(limits, (enum gs_quota_kind)k))
			continue;
		/* A video engine object that joins a session its group
		 * (its client, or for NVJPG its GPU) holds adds no session
		 * (exec_engines.c). */
		bool adds = !(ev.events & GS_COUNT_ON_ENGINE) || !usage->engine_joins_session;
		struct gs_call_verdict w = count_clause(v, gs_quota_kind_row((enum gs_quota_kind)k),
		                                        usage->count[k], limits->count[k], adds);
		if (objects(&w))
			return w;
		if (!named.resource)
			named = w;
	}
	return named;
}

/* The sandbox's bound on the RM objects it holds (policy key objects):
 * each costs the supervisor an entry, and the agent's memory is every
 * container's. Refused as the driver refuses an exhausted handle space
 * (clientGenResourceHandle_IMPL, resserv rs_client.c, 580.95.05). */
struct gs_call_verdict gs_verdict_object_clause(struct gs_call_verdict v, const struct gs_quota *limits,
                                               const struct gs_usage *usage)
{
	if (usage->objects < limits->objects)
		return v;
	return objection(v, GS_VERDICT_DENY, NV_ERR_INSUFFICIENT_RESOURCES,
	                 "object limit reached (policy key objects)");
}

/* Does the call make an RM object? RM_ALLOC and RM_ALLOC_OBJECT do; a
 * VID_HEAP_CONTROL does when it allocates video memory. */
static bool makes_object(const struct gs_rm_call *call)
{
	return call->escape != NV_ESC_RM_VID_HEAP_CONTROL || call->kind == RM_CLASS_VIDMEM;
}

struct gs_call_verdict gs_verdict_of(const struct gs_rules *rules, const struct gs_quota *limits,
                                     const struct gs_usage *usage, const struct gs_rm_call *call)
{
	struct gs_call_verdict v = gs_verdict_of_call(rules, call);

	if (objects(&v))
		return v;
	if (makes_object(call)) {
		v = gs_verdict_object_clause(v, limits, usage);
		if (objects(&v))
			return v;
	}
	if (call->escape == NV_ESC_RM_VID_HEAP_CONTROL)
		return call->kind == RM_CLASS_VIDMEM ? vidmem_clauses(v, limits, usage, call) : v;
	if (call->escape == NV_ESC_RM_ALLOC_OBJECT)
		return call->kind == RM_CLASS_ENGINE ? count_clauses(v, limits, usage, call) : v;
	if (call->creates_client) {
		v = client_clauses(v, usage);
		return objects(&v) ? v : count_clauses(v, limits, usage, call);
	}
	if (!call->params_copied)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
		                 "alloc params are not readable");
	if (!call->rights_copied)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
		                 "access rights are not readable");
	switch (call->kind) {
	case RM_CLASS_VIDMEM:
		return vidmem_clauses(v, limits, usage, call);
	default:
		/* Channels, groups, engines: their quota kinds' counts. */
		return count_clauses(v, limits, usage, call);
	}
}

/* --active-channel-groups: enabling one more group past the limit is
 * refused like an exhausted runlist. Scheduling a group that is scheduled
 * already adds none; a channel inside a group is scheduled with it. */
struct gs_call_verdict gs_verdict_of_control_params(const struct gs_quota *limits,
                                                    const struct gs_usage *usage,
                                                    const struct gs_rm_call *call)
{
	struct gs_call_verdict v = { .verdict = GS_VERDICT_ALLOW, .status = NV_OK };

	if (!call->schedules)
		return v;
	return count_clauses(v, limits, usage, call);
}

/* The range checks of thirdpartyp2pCtrlCmdRegisterVidmem_IMPL
 * (src/nvidia/src/kernel/gpu/bus/third_party_p2p_ctrl.c, 580.95.05), once
 * the memory is known to be video memory of the client: would the driver
 * register this range? Non-empty; size, address and offset 64 KiB
 * aligned; no overflow; inside the allocation. */
static bool p2p_range_registrable(const struct gs_rm_call *call, uint64_t memory_bytes)
{
	const uint64_t align = NV503C_P2P_PAGE_64K - 1;

	return call->p2p_size != 0 &&
	       !(call->p2p_size & align) && !(call->p2p_address & align) && !(call->p2p_offset & align) &&
	       call->p2p_address + call->p2p_size >= call->p2p_address &&
	       call->p2p_size + call->p2p_offset >= call->p2p_size &&
	       memory_bytes >= call->p2p_offset + call->p2p_size;
}

struct gs_call_verdict gs_verdict_of_p2p_answer(const struct gs_usage *usage,
                                                const struct gs_rm_call *call)
{
	struct gs_call_verdict v = { .verdict = GS_VERDICT_ALLOW, .status = NV_OK };
	const bool reg = call->cmd == NV503C_CTRL_CMD_REGISTER_VIDMEM;

	if (!reg && call->cmd != NV503C_CTRL_CMD_UNREGISTER_VIDMEM)
		return v;
	/* What the driver checks first (the client is the caller file's, the
	 * object exports the control, the memory is the client's video
	 * memory) is proven from the ledger or left to the driver: a call the
	 * supervisor cannot prove is performed, and the driver's own error
	 * is the answer. */
	if (!call->p2p_params || !usage->p2p_object || !usage->p2p_client_on_file ||
	    !usage->p2p_memory_vidmem)
		return v;
	/* A range the driver refuses: performed, so that its own status
	 * (and nothing registered) is what the workload sees. */
	if (reg && !p2p_range_registrable(call, usage->p2p_memory_bytes))
		return v;
	/* UNREGISTER: the driver answers NV_ERR_OBJECT_NOT_FOUND for memory
	 * never registered; nothing is registered under answer, so that is
	 * not knowable here: NV_OK for any video memory of the client. */
	v.answered = true;
	return v;
}

struct gs_call_verdict gs_verdict_of_escape(const struct gs_rm_call *call)
{
	struct gs_call_verdict v = { .verdict = GS_VERDICT_ALLOW, .status = NV_OK };

	v.errnum = EINVAL;
	if (!call->abi)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "call decoded without the driver's RM tables");
	/* An escape we do not know, or one the running driver does not
	 * handle: a newer driver may act on it, and nothing examined it. */
	if (!call->inner_known)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "escape unknown to gpusandbox");
	if (call->inner_action == RM_ACT_REFUSE)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "escape the driver does not handle");
	/* What we cannot decode is refused as the driver refuses it, never
	 * passed on. */
	if (!call->inner_size_ok)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
		                 "escape with a size the driver does not accept");
	if (call->via_xfer && call->inner_action == RM_ACT_XFER)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
		                 "XFER inside XFER, which the driver refuses");
	if (call->via_xfer && call->inner_action == RM_ACT_CONTINUE)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "escape cannot be performed by the supervisor and XFER cannot be continued");
	v.errnum = 0;
	return v;
}

/* No tables, no facts: fail closed, as every verdict does. */
static struct gs_call_verdict tables_clause(const struct gs_rm_call *call)
{
	struct gs_call_verdict v = { .verdict = GS_VERDICT_ALLOW, .status = NV_OK };

	if (!call->abi)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "call decoded without the driver's RM tables");
	return v;
}

struct gs_call_verdict gs_verdict_of_handle_call(const struct gs_rm_call *call)
{
	return tables_clause(call);
}

/* An object of a client outside the sandbox (another sandbox shared it
 * with RM_SHARE) was never charged here, and its owner's sandbox credits
 * it back when the owner frees its handle: the dup would hold memory no
 * sandbox counts. Refused the way RM refuses a dup its share policy does
 * not allow. A client of ours whose file is gone is dead in the driver,
 * and its handle may already name a foreign client: refused too. */
struct gs_call_verdict gs_verdict_of_dup(const struct gs_usage *usage, const struct gs_rm_call *call)
{
	struct gs_call_verdict v = tables_clause(call);

	if (objects(&v))
		return v;
	if (!usage->src_client_ours || !usage->src_client_alive)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS,
		                 "import of an object from a client outside the sandbox");
	/* The video caps count sessions per group of objects (exec_engines.c),
	 * which holds only while an engine object never changes client without a
	 * verdict: a dup that outlived its freed original would move it
	 * (ledger.c, hand_over). The driver refuses these dups anyway (a
	 * ChannelDescendant keeps RsResource's resCanCopy, false:
	 * serverCopyResource, rs_server.c, 580.95.05), with this status. */
	if (usage->src_is_engine)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
		                 "a video engine object cannot be duplicated");
	return v;
}

/* Linked, the control file would reach that other file's clients. The
 * driver's answer to a link it refuses is -EINVAL (nv.c). */
struct gs_call_verdict gs_verdict_of_register_fd(const struct gs_usage *usage,
                                                 const struct gs_rm_call *call)
{
	struct gs_call_verdict v = tables_clause(call);

	/* REGISTER_FD has no status field: every refusal is an errno. */
	if (objects(&v)) {
		v.errnum = EINVAL;
		return v;
	}
	if (!usage->on_control_file)
		return v;
	v.errnum = EINVAL;
	return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
	                 "a control file may not be linked to another");
}

struct gs_call_verdict gs_verdict_of_fd_export(const struct gs_fd_export_facts *f, const struct gs_rm_call *call)
{
	struct gs_call_verdict v = { .verdict = GS_VERDICT_ALLOW };

	/* nv_get_file_private fails on anything else (os.c): the driver's
	 * answer, given without a dup of a file that is not the driver's. */
	if (!f->fd_is_control)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_PARAMETER,
		                 "export fd is not a control file");
	switch (call->cmd) {
	case NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD:
		/* Our pins would sit beside another sandbox's record of the
		 * same slots, whose importers would take ours for theirs. */
		if (f->file_set_up && !f->file_ours)
			return objection(v, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS,
			                 "export into an export file made outside this sandbox");
		/* Only a pin keeps the charge past the handles: anything the
		 * ledger cannot pin (hardware, memory not charged here) would
		 * outlive its account. */
		if (!f->objects_charged)
			return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
			                 "export of an object that is not video memory charged to this sandbox");
		return v;
	case NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD:
		if ((!f->file_ours || !f->slots_ours) && !f->foreign_test && !f->foreign_charged)
			return objection(v, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS,
			                 "import from an export file made outside this sandbox");
		return v;
	default:
		/* CREATE_EXPORT_OBJECT_FD sets up an empty file (the driver
		 * refuses one set up already); GET_EXPORT_OBJECT_INFO reads. */
		return v;
	}
}

/* The memory a mapping names must be the caller's to map: a client of
 * this sandbox on a control file the caller holds at rmCtrlFd (where RM
 * wants the client's own process, this wants its file, as RM's strict
 * client validation does for RM calls). A client the sandbox does not
 * have is answered as RM answers a dup its share policy refuses. An
 * object the ledger holds must be memory; one it does not hold charges
 * nothing (every allocation that can make video memory for the workload
 * is performed, and recorded, by us: what is left is RM_ALLOC_MEMORY's
 * system memory, SECURITY.md "Executed, refused, continued"), and the
 * driver judges it. */
struct gs_call_verdict gs_verdict_of_uvm(const struct gs_uvm_call *u, const struct gs_uvm_facts *f)
{
	struct gs_call_verdict v = { .verdict = GS_VERDICT_ALLOW, .status = NV_OK };

	if (!u->range_ok)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ADDRESS,
		                 "the range is not 4 KiB aligned and non-empty");
	if (!u->gpu_count_ok)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT, "no GPU, or too many");
	if (!f->client_ours)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS,
		                 "the client is not one of this sandbox's");
	if (!f->client_on_fd)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS,
		                 "the caller does not hold the client's control file at rmCtrlFd");
	if (f->memory_known && !f->memory_mappable)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_OBJECT_HANDLE,
		                 "the object is not memory");
	return v;
}

/* Without --gpus every GPU is the workload's; with it, unknown GPUs are
 * hidden: fail closed. */
bool gs_gpu_id_visible(const struct gs_quota *limits, const struct gs_gpu_entry *map, unsigned n,
                       uint32_t gpu_id)
{
	if (!limits->visible_set)
		return true;
	for (unsigned i = 0; i < n; i++)
		if (map[i].gpu_id == gpu_id)
			return gs_gpu_visible(limits, map[i].minor);
	return false;
}

bool gs_card_visible(const struct gs_quota *limits, const struct nv_card_info *card)
{
	return !card->valid || gs_gpu_visible(limits, card->minor_number);
}

void gs_filter_gpu_ids(const struct gs_quota *limits, const struct gs_gpu_entry *map, unsigned n,
                       uint32_t ids[NV0000_CTRL_GPU_MAX_IDS], uint32_t *flags)
{
	unsigned out = 0;

	for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++) {
		if (ids[i] == NV0000_CTRL_GPU_INVALID_ID || !gs_gpu_id_visible(limits, map, n, ids[i]))
			continue;
		ids[out] = ids[i];
		if (flags)
			flags[out] = flags[i];
		out++;
	}
	for (unsigned i = out; i < NV0000_CTRL_GPU_MAX_IDS; i++) {
		ids[i] = NV0000_CTRL_GPU_INVALID_ID;
		if (flags)
			flags[i] = 0;
	}
}

/* The clauses of an RM_CONTROL that need no ledger. */
static struct gs_call_verdict control_call_clauses(const struct gs_rules *rules,
                                                   const struct gs_rm_call *call)
{
	struct gs_call_verdict v = { .verdict = GS_VERDICT_ALLOW, .status = NV_OK };

	if (!call->abi)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "call decoded without the driver's RM tables");
	if (call->finn_serialized)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "FINN-serialized control params are not allowed");
	/* FIFO_DISABLE_CHANNELS names channels by (client, handle) pairs of
	 * any client, so a workload could stop another tenant's channels (a
	 * dead client's handle may already be someone else's), or turn its
	 * own back on against --sm. CUDA never sends it; it is gpusandbox's,
	 * whatever a policy file allows. */
	if (call->cmd == NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS,
		                 "FIFO_DISABLE_CHANNELS is reserved to the supervisor");
	struct gs_rule_verdict rv = gs_rules_control(call->abi, rules, call->cmd);
	v.group = rv.group;
	if (!rv.allowed) {
		v.by_allowlist = true;
		return objection(v, GS_VERDICT_REFUSE, rv.status, rv.reason);
	}
	return v;
}

struct gs_call_verdict gs_verdict_of_control(const struct gs_rules *rules,
                                             const struct gs_usage *usage,
                                             const struct gs_rm_call *call)
{
	struct gs_call_verdict v = control_call_clauses(rules, call);

	if (objects(&v))
		return v;
	/* Bit 15 selects the legacy GSS path: opaque bytes forwarded without
	 * the CPU-side client check (rm-abi.md 2.1). Only the commands the
	 * policy allows get here (by default the ones CUDA needs), and only on
	 * a client the driver has already accepted from this sandbox's own
	 * file, so the missing check cannot be used to reach another
	 * process's client. */
	if (call->gss_legacy && !usage->client_seen)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_CLIENT,
		                 "legacy control on a client not seen in this sandbox");
	/* The driver asks for an administrator only of these, judging the
	 * caller: the supervisor, not the workload. Never, whatever a policy
	 * says. */
	if (call->gss_legacy && (call->cmd & NV_CTRL_GSS_LEGACY_ADMIN) == NV_CTRL_GSS_LEGACY_ADMIN)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS,
		                 "administrator-only legacy control");
	/* Without a row on the running branch gpusandbox does not know where
	 * the params hold pointers; run flat, the driver would follow them
	 * into the supervisor's memory. An explicit allow.control cannot make
	 * that safe (issue #11). The bit-15 legacy path forwards opaque bytes
	 * to GSP, which follows no pointer, so it may run. */
	if (!call->ctrl_known && !call->gss_legacy && call->has_params && call->params_size)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "control unknown on this driver branch: its params cannot be checked");
	/* A control whose pointers we cannot relocate would make the driver
	 * read or write the supervisor's memory at a workload-chosen address. */
	if (call->unrelocatable)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_NOT_SUPPORTED,
		                 "control with pointers gpusandbox cannot relocate");
	if (call->params_size > NV_RMAPI_MAX_PARAMS_SIZE)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT,
		                 "control params larger than the driver allows");
	/* Refused, never run with the supervisor's work skipped: the status
	 * is the driver's own for a wrong paramsSize (rs_resource.c). */
	if (call->params_size_wrong)
		return objection(v, GS_VERDICT_REFUSE, NV_ERR_INVALID_PARAM_STRUCT,
		                 "control params of another size than the running driver's");
	return v;
}
