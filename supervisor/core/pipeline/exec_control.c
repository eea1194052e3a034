/* SPDX-License-Identifier: MIT */
/*
 * exec_control.c - RM_CONTROL, performed by the supervisor from its own
 * copy of the params and of every list they point to, then what the
 * workload is told (the memory report) and what is recorded (channel-group
 * scheduling).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "exec_int.h"
#include "quota.h"

/* ---- RM_CONTROL ---------------------------------------------------------- */

struct relocation {
	uint64_t orig;   /* the workload's pointer */
	size_t   bytes;  /* how much we copied */
};

static int read_u32_at(const uint8_t *buf, size_t len, size_t off, uint32_t *v)
{
	if (off + sizeof(*v) > len)
		return -1;
	memcpy(v, buf + off, sizeof(*v));
	return 0;
}

/* Copies the lists a control's params point to into our buffers and points
 * our copy of the params at them. Returns an RM status. */
static nv_status_t relocate_embedded(struct call *c, const struct rm_ctrl_info *ci,
                                     uint32_t psize, struct relocation rel[RM_EMBEDDED_MAX_PTRS])
{
	uint8_t *p = c->scratch->params;

	for (unsigned i = 0; ci && i < ci->n_embedded && i < RM_EMBEDDED_MAX_PTRS; i++) {
		const struct rm_embedded_ptr *e = &ci->embedded[i];
		uint64_t ptr;
		uint32_t count;

		rel[i].orig = 0;
		rel[i].bytes = 0;
		if ((size_t)e->ptr_offset + sizeof(ptr) > psize)
			return NV_ERR_INVALID_ARGUMENT;
		memcpy(&ptr, p + e->ptr_offset, sizeof(ptr));
		if (e->count_offset == RM_EMBEDDED_FIXED_COUNT)
			count = e->fixed_count;
		else if (read_u32_at(p, psize, e->count_offset, &count) < 0)
			return NV_ERR_INVALID_ARGUMENT;
		if (!ptr || !count)
			continue;
		/* Bound by the driver's own limit and our buffer. */
		if ((e->max_count && count > e->max_count) ||
		    (uint64_t)count * e->elem_size > NV_RMAPI_MAX_PARAMS_SIZE)
			return NV_ERR_INVALID_ARGUMENT;
		rel[i].orig = ptr;
		rel[i].bytes = (size_t)count * e->elem_size;
		/* Read by tid after the fetch's ID_VALID: checked again, as
		 * fetch_nested checks its reads (issue #17 item 13). */
		if (mem_read(c->tid, ptr, c->scratch->embedded[i], rel[i].bytes) < 0 ||
		    !notif_still_valid(c))
			return NV_ERR_INVALID_ARGUMENT;
		uint64_t ours = (uintptr_t)c->scratch->embedded[i];
		memcpy(p + e->ptr_offset, &ours, sizeof(ours));
	}
	return NV_OK;
}

static void restore_embedded(struct call *c, const struct rm_ctrl_info *ci,
                             const struct relocation rel[RM_EMBEDDED_MAX_PTRS], bool copy_out)
{
	for (unsigned i = 0; ci && i < ci->n_embedded && i < RM_EMBEDDED_MAX_PTRS; i++) {
		if (!rel[i].orig)
			continue;
		memcpy(c->scratch->params + ci->embedded[i].ptr_offset, &rel[i].orig, sizeof(rel[i].orig));
		if (copy_out)
			(void)answer_write(c, rel[i].orig, c->scratch->embedded[i], rel[i].bytes);
	}
}

/* ---- what the workload is told about memory ------------------------------ */

#define KIB 1024u

/* Rewrites the FB report so the workload sees a card the size of its
 * quota: sizes become min(real, quota), free becomes min(real free,
 * quota - used). CUDA reads TOTAL_RAM_SIZE at init and HEAP_FREE,
 * HEAP_SIZE for cudaMemGetInfo; nvidia-smi reads the same (design.md 1.7). */
static void virtualize_fb_list(const struct call *c, struct nv2080_fb_info_entry *list, uint32_t n,
                               int gpu)
{
	uint64_t quota = gs_quota_mem(&c->sb->quota, gpu);
	uint64_t used = gpu >= 0 ? ledger_used(&c->sb->ledger, gpu) : 0;
	uint32_t quota_kib, free_kib;

	if (quota == GS_QUOTA_UNLIMITED)
		return;
	quota_kib = quota / KIB > UINT32_MAX ? UINT32_MAX : (uint32_t)(quota / KIB);
	free_kib = used >= quota ? 0 : (uint32_t)((quota - used) / KIB > UINT32_MAX ? UINT32_MAX
	                                                                             : (quota - used) / KIB);
	for (uint32_t i = 0; i < n && i < NV2080_CTRL_FB_INFO_MAX_LIST_SIZE; i++) {
		switch (list[i].index) {
		case NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_MAPPABLE_HEAP_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_USABLE_RAM_SIZE:
			if (list[i].data > quota_kib)
				list[i].data = quota_kib;
			break;
		case NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE:
			if (list[i].data > free_kib)
				list[i].data = free_kib;
			break;
		default:
			break;
		}
	}
}

/* After the driver answered a control, and before anything goes back to
 * the workload: adjust the memory report, and record channel-group
 * scheduling. Works on our copies only. */
static void after_control(struct call *c, struct nvos54 *top, uint32_t psize)
{
	struct gs_session *sb = c->sb;

	visibility_after_control(c, top, psize);
	switch (top->cmd) {
	case NV2080_CTRL_CMD_FB_GET_INFO_V2:
		/* psize is the running driver's size (the verdict refused any
		 * other): its list holds (psize - 4) / 8 entries, 54..57 on
		 * 535..570, 128 on 580+. */
		if (psize >= offsetof(struct nv2080_fb_get_info_v2_params, list)) {
			struct nv2080_fb_get_info_v2_params *p = (void *)c->scratch->params;
			uint32_t cap = (psize - offsetof(struct nv2080_fb_get_info_v2_params, list)) /
			               sizeof(p->list[0]);
			virtualize_fb_list(c, p->list, p->list_size < cap ? p->list_size : cap,
			                   ledger_gpu_of(&sb->ledger, top->h_client, top->h_object));
		}
		break;
	case NV2080_CTRL_CMD_FB_GET_INFO:
		/* The list was relocated into embedded[0] (its v580/controls.def row). */
		if (psize >= sizeof(struct nv2080_fb_get_info_v1_params)) {
			const struct nv2080_fb_get_info_v1_params *p = (const void *)c->scratch->params;
			virtualize_fb_list(c, (struct nv2080_fb_info_entry *)(void *)c->scratch->embedded[0],
			                   p->list_size,
			                   ledger_gpu_of(&sb->ledger, top->h_client, top->h_object));
		}
		break;
	case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE:
	case NVA06F_CTRL_CMD_GPFIFO_SCHEDULE:
		/* 2 bytes on 535..570, 3 on 580+: enable is the first either way. */
		if (psize >= sizeof(((struct nva06c_gpfifo_schedule_params *)0)->enable)) {
			const struct nva06c_gpfifo_schedule_params *p = (const void *)c->scratch->params;
			const enum gs_quota_kind k = GS_QK_ACTIVE_CHANNEL_GROUPS;
			uint32_t before = sb->ledger.count[k];
			ledger_set_scheduled(&sb->ledger, top->h_client, top->h_object, p->enable != 0);
			note_count(c, gs_quota_kind_row(k)->resource, before, sb->ledger.count[k],
			           sb->quota.count[k]);
		}
		break;
	default:
		break;
	}
}

/* Controls after which a channel may be runnable again. */
static bool may_resume_channels(uint32_t cmd)
{
	return cmd == NVA06C_CTRL_CMD_GPFIFO_SCHEDULE || cmd == NVA06C_CTRL_CMD_BIND ||
	       cmd == NVA06F_CTRL_CMD_GPFIFO_SCHEDULE || cmd == NVA06F_CTRL_CMD_RESTART_RUNLIST;
}

/* One RM_CONTROL in flight through the stages. */
struct control_flight {
	struct nvos54              top;       /* our copy */
	struct gs_rm_call          call;
	const struct rm_ctrl_info *ci;        /* its row in the ABI table */
	struct relocation          rel[RM_EMBEDDED_MAX_PTRS];
	uint64_t                   user_params; /* the workload's pointer */
	uint32_t                   psize;     /* bytes of params we copied */
	struct gs_usage            usage;     /* the snapshot the params' verdict read */
};

#define CTRL_STATUS_OFF offsetof(struct nvos54, status)

static struct answer refuse_control(struct call *c, struct control_flight *f, nv_status_t st,
                                    enum gs_verdict v, const char *why)
{
	return refuse_with_status(c, &f->top, CTRL_STATUS_OFF, st, v, why);
}

/* fetch + decode: the top-level struct, proof the task is still the
 * trapped one, and the call record. */
static bool fetch_control(struct call *c, struct control_flight *f, struct answer *a)
{
	/* Read before the dup (answers_p2p_registration): the ID_VALID now,
	 * after the dup, proves both were of the trapped task. */
	if (c->early_top_read) {
		f->top = c->early_top;
		if (!notif_still_valid(c)) {
			*a = answer_none();
			return false;
		}
	} else if (!fetch_trapped_top(c, &f->top, sizeof(f->top), a)) {
		return false;
	}
	f->ci = gs_decode_control(c->sb->rm_abi, &f->top, c->via_xfer, &f->call);
	c->d.has_control = true;
	c->d.control = f->call.cmd;
	c->d.h_client = f->call.h_client;
	c->d.h_object = f->call.h_object;
	return true;
}

/* verdict (verdict.c) on the call, before anything else is copied.
 * --learn admits what the allowlist alone refused, then the verdict is
 * taken again on the grown allowlist. */
static bool judge_control(struct call *c, struct control_flight *f, struct answer *a)
{
	const struct gs_rm_call *rc = &f->call;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU };
	struct gs_call_verdict v;

	u.client_seen = rc->gss_legacy && ledger_has(&c->sb->ledger, rc->h_client, rc->h_client);
	v = gs_verdict_of_control(c->sb->rules, &u, rc);
	if (v.by_allowlist && policy_learns(c, true, rc->cmd))
		v = gs_verdict_of_control(c->sb->rules, &u, rc);
	c->d.group = v.group;
	if (v.verdict != GS_VERDICT_REFUSE && v.verdict != GS_VERDICT_DENY)
		return true;
	*a = refuse_control(c, f, v.status, v.verdict, v.reason);
	return false;
}

/* fetch, second level: the params and the lists they point to, into our
 * buffers, with our copy of the params pointed at our copies of the lists.
 * What cannot be read is refused as the driver refuses it. */
static bool fetch_control_params(struct call *c, struct control_flight *f, struct answer *a)
{
	f->user_params = f->top.params;
	f->psize = f->user_params ? f->top.params_size : 0;
	/* The verdict refused larger params; the buffer's bound is checked
	 * here too, where it is written. */
	/* The driver copies exactly paramsSize in and out of a control. */
	uint8_t *params = gs_scratch_params(c->scratch, f->psize);
	if (f->psize > NV_RMAPI_MAX_PARAMS_SIZE ||
	    fetch_nested(c, f->user_params, params, f->psize) < 0) {
		*a = refuse_control(c, f, NV_ERR_INVALID_ARGUMENT, GS_VERDICT_REFUSE,
		                    "control params are not readable");
		return false;
	}
	keep_params(c, f->user_params, params, f->psize);
	nv_status_t rst = relocate_embedded(c, f->ci, f->psize, f->rel);
	if (rst == NV_OK)
		return true;
	restore_embedded(c, f->ci, f->rel, false);
	*a = refuse_control(c, f, rst, GS_VERDICT_REFUSE,
	                    "embedded control list is not readable or too large");
	return false;
}

/* The ledger snapshot the params' verdict reads: for a GPFIFO_SCHEDULE
 * that enables, whether its object is a group of the hardware's (a channel
 * group; a channel only when it is outside any group), whether that is
 * scheduled already, and how many groups are. */
static void take_schedule_usage(struct call *c, struct control_flight *f)
{
	struct ledger *l = &c->sb->ledger;
	const struct gs_rm_call *rc = &f->call;
	struct gs_usage *u = &f->usage;

	*u = (struct gs_usage){ .gpu = LEDGER_NO_GPU };
	if (!rc->schedules)
		return;
	u->target_is_group = rc->cmd == NVA06C_CTRL_CMD_GPFIFO_SCHEDULE ||
	                     ledger_is_lone_channel(l, rc->h_client, rc->h_object);
	u->target_scheduled = u->target_is_group && ledger_is_scheduled(l, rc->h_client, rc->h_object);
	take_counts(c, rc, u);
}

/* decode + reconcile + verdict on the params we copied
 * (--active-channel-groups), taken again once after releasing closed
 * files when that could lift a refusal; recorded; false with *a when it
 * refuses. */
static bool passes_params_verdict(struct call *c, struct control_flight *f, struct answer *a)
{
	struct gs_call_verdict v;

	gs_decode_control_params(&f->call, c->scratch->params, f->psize);
	take_schedule_usage(c, f);
	v = gs_verdict_of_control_params(&c->sb->quota, &f->usage, &f->call);
	if (v.needs_reconcile) {
		gs_session_reconcile(c->sb);
		take_schedule_usage(c, f);
		v = gs_verdict_of_control_params(&c->sb->quota, &f->usage, &f->call);
	}
	if (v.verdict != GS_VERDICT_REFUSE && v.verdict != GS_VERDICT_DENY)
		return true;
	if (v.resource)
		note_count(c, v.resource, (uint32_t)v.count, (uint32_t)v.count, (uint32_t)v.limit);
	restore_embedded(c, f->ci, f->rel, false);
	*a = refuse_control(c, f, v.status, v.verdict, v.reason);
	return false;
}

/* act + commit: performed from our copies; then what the workload is told
 * and what is recorded (after_control), and the sandbox's event for --sm. */
static struct answer perform_control(struct call *c, struct control_flight *f)
{
	struct nvos54 *top = &f->top;

	top->params = f->psize ? (uintptr_t)c->scratch->params : 0;
	/* Off the lock if slow: not a control whose limit is checked before
	 * the call and counted after it (GPFIFO_SCHEDULE), nor one after
	 * which --sm must learn before anything else runs that channels
	 * may have resumed (may_resume_channels holds both). */
	if (!may_resume_channels(top->cmd))
		c->off_lock_key = top->cmd;
	/* Another tenant's processes are neither named nor asked about. */
	struct gs_pid_rewrite rw;
	bool pids = gs_pids_rewrites(top->cmd);
	if (pids)
		gs_pids_before(c, top->cmd, c->scratch->params, f->psize, &rw);
	bool resume = may_resume_channels(top->cmd);
	if (resume)
		gs_session_emit_resume_call(c->sb, true);
	int rc = exec_escape(c, NV_ESC_RM_CONTROL, sizeof(*top), top);
	c->off_lock_key = 0;
	if (pids)
		gs_pids_after(c, top->cmd, c->scratch->params, f->psize, &rw);
	if (rc == 0 && top->status == NV_OK) {
		gs_session_stats_after(c, top->cmd, c->scratch->params, f->psize);
		note_client(c, top->h_client);
		after_control(c, top, f->psize);
		/* --sm: the workload must not get its channels back in an off
		 * phase by scheduling them again. */
		if (resume)
			gs_session_emit_channels_may_resume(
				c->sb, ledger_gpu_of(&c->sb->ledger, top->h_client, top->h_object));
	}
	if (resume)
		gs_session_emit_resume_call(c->sb, false);
	top->params = f->user_params;
	restore_embedded(c, f->ci, f->rel, true);
	/* Our buffer holds whatever the driver copied out (or the inputs it
	 * left alone), so writing it back mirrors the driver either way. */
	return answer_executed(c, f->user_params, c->scratch->params, f->psize, top, sizeof(*top), rc,
	                       top->status);
}

/* A control after which channels may run again (may_resume_channels) is
 * taken only on an object the ledger places on a GPU: a channel or a
 * channel group the sandbox made. What this leaves out is the channel
 * group RM makes for a lone channel, under a handle the driver never
 * tells (exec_alloc.c channel_placed): scheduling it turns the lone
 * channel back on in an off phase, on no GPU --sm could follow with its
 * own disable, and outside the ledger's count of scheduled groups
 * (--active-channel-groups). CUDA never names it; the workload schedules
 * a lone channel through the channel itself (counted). Refused as the
 * driver refuses a handle it does not hold. */
static bool resumes_placed_object(struct call *c, struct control_flight *f, struct answer *a)
{
	if (!may_resume_channels(f->top.cmd) || c->sb->test_resume_any_object)
		return true;
	int gpu = ledger_gpu_of(&c->sb->ledger, f->top.h_client, f->top.h_object);
	if (gpu >= 0 && (unsigned)gpu < GS_MAX_GPUS)
		return true;
	restore_embedded(c, f->ci, f->rel, false);
	*a = refuse_control(c, f, NV_ERR_INVALID_OBJECT_HANDLE, GS_VERDICT_REFUSE,
	                    "scheduling an object the sandbox did not make (such as RM's own channel "
	                    "group of a lone channel): --sm could not follow it");
	return false;
}

struct answer handle_control(struct call *c)
{
	struct control_flight f = { .rel = { { 0, 0 } } };
	struct gs_session *sb = c->sb;
	struct answer a;

	if (!fetch_control(c, &f, &a) || !judge_control(c, &f, &a) || !fetch_control_params(c, &f, &a))
		return a;
	/* The caller's fd in the params: never by the generic path, which
	 * would make the driver resolve it in our table. */
	if (f.call.fd_export)
		return handle_fd_export(c, &f.top, f.user_params, c->scratch->params, f.psize);
	if (!passes_params_verdict(c, &f, &a) || !resumes_placed_object(c, &f, &a))
		return a;
	/* --sm: scheduling a group that is scheduled already changes nothing
	 * for a program, but the driver would turn the group's channels back
	 * on in an off phase. Answered as done, without the driver. */
	if (f.usage.target_scheduled && gs_session_channels_observed(sb)) {
		restore_embedded(c, f.ci, f.rel, false);
		f.top.status = NV_OK;
		return answer_executed(c, f.user_params, c->scratch->params, f.psize, &f.top, sizeof(f.top), 0,
		                       NV_OK);
	}
	return perform_control(c, &f);
}

/* ---- --p2p-register answer ----------------------------------------------- */

/*
 * CUDA registers every cuMemAlloc'd range with its NV50_THIRD_PARTY_P2P
 * object (REGISTER_VIDMEM) and unregisters it before the free: two of the
 * four trapped calls of a cuMemAlloc + cuMemFree pair. Registration only
 * makes the memory reachable by third-party P2P (nvidia_p2p_get_pages:
 * GPUDirect RDMA, P2P tokens); it charges and counts nothing. Under
 * p2p-register = answer the supervisor answers them NV_OK itself when its
 * ledger proves what the driver would check (verdict.c,
 * gs_verdict_of_p2p_answer), and the driver never sees them. Not
 * REGISTER_VA_SPACE: once per context, not per allocation, so nothing is
 * saved, and a VA space the driver never registered would make the P2P
 * object's later calls fail in ways that are not ours to predict.
 */

static bool is_p2p_registration(uint32_t cmd)
{
	return cmd == NV503C_CTRL_CMD_REGISTER_VIDMEM || cmd == NV503C_CTRL_CMD_UNREGISTER_VIDMEM;
}

/* Is the trapped task's fd c->wfd the open file client h_client lives
 * on? RM accepts a control only on its client's own file; kcmp
 * (KCMP_EPOLL_TFD) compares the task's fd with the file of the client's
 * release watch, without a dup and without holding anything. Cannot tell
 * (no watch: a client the agent resumed) is no. */
static bool client_on_trapped_fd(const struct call *c, nv_handle_t h_client)
{
	return ledger_task_fd_is_client_file(&c->sb->ledger, h_client, c->tid, c->wfd) == 1;
}

/* The ledger's facts gs_verdict_of_p2p_answer reads; the kcmp last, and
 * only when the rest holds. */
static void take_p2p_usage(const struct call *c, const struct gs_rm_call *rc, struct gs_usage *u)
{
	const struct ledger *l = &c->sb->ledger;
	struct ledger_facts obj, mem;

	*u = (struct gs_usage){ .gpu = LEDGER_NO_GPU };
	u->p2p_object = ledger_object_facts(l, rc->h_client, rc->h_object, &obj) &&
	                obj.cls == NV50_THIRD_PARTY_P2P;
	u->p2p_memory_vidmem = u->p2p_object && rc->p2p_params &&
	                       ledger_object_facts(l, rc->h_client, rc->p2p_memory, &mem) &&
	                       mem.kind == RM_CLASS_VIDMEM && mem.gpu == obj.gpu;
	u->p2p_memory_bytes = u->p2p_memory_vidmem ? mem.bytes : 0;
	u->p2p_client_on_file = u->p2p_memory_vidmem && client_on_trapped_fd(c, rc->h_client);
}

/* fetch + decode + verdict of a registration control, as handle_control
 * takes them, without the dup and without side effects: whatever would
 * refuse it (the policy, the size, unreadable params) or is not proven
 * makes it take the usual path, which judges it again and records it. */
static bool p2p_answerable(struct call *c, struct control_flight *f, uint8_t *params)
{
	struct gs_session *sb = c->sb;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU };
	struct gs_call_verdict v;

	f->ci = gs_decode_control(sb->rm_abi, &f->top, false, &f->call);
	v = gs_verdict_of_control(sb->rules, &u, &f->call);
	c->d.group = v.group;
	/* Flags are the driver's to judge (CUDA sends none). */
	if (v.verdict != GS_VERDICT_ALLOW || f->top.flags != 0 || !f->call.has_params ||
	    f->top.params_size > sizeof(struct nv503c_register_vidmem_params))
		return false;
	f->user_params = f->top.params;
	f->psize = f->top.params_size;
	if (fetch_nested(c, f->user_params, params, f->psize) < 0)
		return false;
	gs_decode_control_params(&f->call, params, f->psize);
	if (gs_verdict_of_control_params(&sb->quota, &u, &f->call).verdict != GS_VERDICT_ALLOW)
		return false;
	take_p2p_usage(c, &f->call, &u);
	/* No reason is recorded: an allowed call without one is not audited
	 * at the default level, and the saving is the point. The start
	 * record names the policy. */
	return gs_verdict_of_p2p_answer(&u, &f->call).answered;
}

bool answers_p2p_registration(struct call *c, struct answer *a)
{
	struct control_flight f = { .rel = { { 0, 0 } } };
	uint8_t params[sizeof(struct nv503c_register_vidmem_params)];
	struct gs_rm_call escape;

	if (c->sb->quota.p2p_register != GS_P2P_REGISTER_ANSWER || c->size != sizeof(f.top))
		return false;
	/* The escape's own verdict, as route_ioctl takes it after the dup. */
	gs_decode_escape(c->sb->rm_abi, c->nr, c->size, false, &escape);
	if (gs_verdict_of_escape(&escape).verdict != GS_VERDICT_ALLOW ||
	    fetch_top_bytes(c, &f.top, sizeof(f.top)) < 0)
		return false;
	c->early_top = f.top;
	c->early_top_read = true;
	if (!is_p2p_registration(f.top.cmd))
		return false;
	if (!p2p_answerable(c, &f, params)) {
		c->d.group = NULL;
		return false;
	}
	/* The reads and the kcmp were of the trapped task (its tid may have
	 * been reused since the receive): nothing is answered otherwise. */
	if (!notif_still_valid(c)) {
		*a = answer_none();
		return true;
	}
	c->d.has_control = true;
	c->d.control = f.call.cmd;
	c->d.h_client = f.call.h_client;
	c->d.h_object = f.call.h_object;
	/* What the driver writes for a registration that succeeds: the
	 * status (params are inputs, copied back unchanged). Only changed
	 * bytes go back: usually none, the caller's status being 0. */
	keep_params(c, f.user_params, params, f.psize);
	f.top.status = NV_OK;
	c->answered = true;
	*a = answer_executed(c, f.user_params, params, f.psize, &f.top, sizeof(f.top), 0, NV_OK);
	return true;
}
