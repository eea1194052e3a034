/* SPDX-License-Identifier: MIT */
/*
 * exec_alloc.c - RM_ALLOC, RM_ALLOC_OBJECT and VID_HEAP_CONTROL through the
 * staged pipeline:
 *
 *   fetch the top-level struct (and check the notification is still the
 *   trapped task's) -> decode it (decode.c) -> a first verdict on the call
 *   alone -> fetch and decode the params -> reconcile the ledger for what
 *   the verdict reads -> the verdict (verdict.c, pure) -> record it -> act:
 *   perform from our copies, post-check, restore -> commit to the ledger.
 *
 * Every decision is taken on the supervisor's copies (executor.c states
 * the rule), and the call is then performed from those same copies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kcmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "decode.h"
#include "exec_int.h"
#include "verdict.h"

/* The audit reason of a device allocation refused because no private fd
 * table could be made for it (private_table.h): never made in the shared one. */
#define PRIVATE_TABLE_FAILED "no private fd table for the device allocation"

_Static_assert(sizeof(struct nvos32) >= sizeof(struct nvos64) &&
               sizeof(struct nvos32) >= sizeof(struct nvos05), "one buffer holds any");

/* One RM_ALLOC or VID_HEAP_CONTROL in flight through the stages. */
struct alloc_flight {
	union {                        /* our copy of the top-level struct */
		uint8_t       bytes[sizeof(struct nvos32)];
		struct nvos64 os64;
		struct nvos32 os32;
		struct nvos05 os05;
	} top;
	size_t               st_off;   /* the status field in top */
	struct rm_alloc_view addr;     /* the workload's pointers, restored after */
	uint32_t             rights;   /* our copy of the access rights */
	struct gs_rm_call    call;
	struct gs_usage      usage;
	int                  file;     /* the ledger's index of the open file */
};

/* Writes the pointer fields of an RM_ALLOC top-level buffer. */
static void alloc_set_ptrs(void *top, uint32_t size, uint64_t params, uint64_t rights)
{
	if (size == sizeof(struct nvos64)) {
		struct nvos64 *p = top;
		p->p_alloc_parms = params;
		p->p_rights_requested = rights;
	} else {
		((struct nvos21 *)top)->p_alloc_parms = params;
	}
}

/* The handle of the object the driver made. */
static nv_handle_t new_handle(const struct call *c, const struct alloc_flight *f)
{
	if (f->call.escape == NV_ESC_RM_VID_HEAP_CONTROL)
		return f->top.os32.data.alloc_size.h_memory;
	return c->size == sizeof(struct nvos64) ? f->top.os64.h_object_new
	                                        : ((const struct nvos21 *)f->top.bytes)->h_object_new;
}

/* What the driver granted, to be charged: it may round the request up. */
static uint64_t granted_bytes(const struct call *c, const struct alloc_flight *f)
{
	uint64_t bytes;

	if (f->call.escape == NV_ESC_RM_VID_HEAP_CONTROL)
		return f->top.os32.data.alloc_size.size;
	memcpy(&bytes, c->scratch->params + offsetof(struct nv_memory_allocation_params, size),
	       sizeof(bytes));
	return bytes;
}

static bool objects(const struct gs_call_verdict *v)
{
	return v->verdict == GS_VERDICT_REFUSE || v->verdict == GS_VERDICT_DENY;
}

static struct answer refuse(struct call *c, struct alloc_flight *f, const struct gs_call_verdict *v)
{
	return refuse_with_status(c, f->top.bytes, f->st_off, v->status, v->verdict, v->reason);
}

/* fetch: the top-level struct, then proof that the task we read it from
 * is still the trapped one. False with *a when the call ends here. */
static bool fetch_top(struct call *c, struct alloc_flight *f, struct answer *a)
{
	return fetch_trapped_top(c, f->top.bytes, c->size, a);
}

/* fetch + decode, first level. False with *a when the call ends here. */
static bool fetch_alloc_top(struct call *c, struct alloc_flight *f, struct answer *a)
{
	if (!fetch_top(c, f, a))
		return false;
	f->st_off = rm_alloc_status_offset(c->size);
	(void)rm_alloc_view_from(f->top.bytes, c->size, &f->addr);
	(void)gs_decode_alloc_top(c->sb->rm_abi, f->top.bytes, c->size, c->via_xfer, &f->call);
	c->d.has_class = true;
	c->d.cls = f->call.h_class;
	c->d.h_client = f->call.h_client;
	c->d.h_object = f->call.h_object;
	return true;
}

/* fetch + decode, second level: the params (the class's size, into our
 * buffer) and the access rights. What cannot be read, the verdict refuses. */
static void fetch_alloc_params(struct call *c, struct alloc_flight *f)
{
	uint32_t psize = f->call.params_size;
	/* The first verdict refused larger params; the buffer's bound is
	 * checked here too, where it is written. */
	uint8_t *params = gs_scratch_params(c->scratch, psize > GS_ALLOC_PARAMS_DRIVER_BOUND
	                                                        ? psize : GS_ALLOC_PARAMS_DRIVER_BOUND);
	bool params_ok = psize <= NV_RMAPI_MAX_PARAMS_SIZE &&
	                 fetch_nested(c, f->addr.p_params, params, psize) == 0;
	bool rights_ok = f->call.has_rights &&
	                 fetch_nested(c, f->addr.p_rights, &f->rights, NV_RS_ACCESS_MASK_SIZE) == 0;

	if (params_ok)
		keep_params(c, f->addr.p_params, params, psize);

	gs_decode_alloc_params(&f->call, params_ok ? c->scratch->params : NULL, params_ok ? psize : 0,
	                       rights_ok);
}

/* The usage snapshot the verdict reads, from the ledger as it is now. */
static void take_usage(struct call *c, struct alloc_flight *f)
{
	struct ledger *l = &c->sb->ledger;
	struct gs_usage *u = &f->usage;
	const struct gs_rm_call *rc = &f->call;

	if (rc->creates_client && u->on_control_file) {
		f->file = ledger_file_of(l, c->dup);
		u->files_full = f->file == LEDGER_FILES_FULL;
		u->file_known = f->file >= 0;
		/* After an agent restart the files' index is new: a file may
		 * hold a client rebuilt from the journal (then it keeps that). */
		if (u->file_known && !l->files[f->file].has_client &&
		    ledger_file_may_hold_resumed_client(l, c->dup))
			l->files[f->file].has_client = true;
		u->file_has_client = u->file_known && l->files[f->file].has_client;
		u->may_inject = u->file_has_client && inject_possible(c);
	}
	u->gpu = rc->kind == RM_CLASS_VIDMEM ? ledger_gpu_of(l, rc->h_client, rc->h_parent)
	                                     : LEDGER_NO_GPU;
	u->mem_used = ledger_used(l, u->gpu);
	u->objects = ledger_live_objects(l);
	u->parent_is_group = rc->kind == RM_CLASS_CHANNEL &&
	                     ledger_is_channel_group(l, rc->h_client, rc->h_parent);
	take_counts(c, rc, u);
}

/* reconcile + verdict. The ledger is brought up to date with the driver
 * where this call's verdict depends on it: a client is continued only on
 * a control file the ledger knows to have none, and video memory is
 * charged to a client bound to this file (bind_client_for_charge reaps a
 * stale entry whose handle the driver gave to a new client). A quota
 * refusal is reconsidered once after releasing the clients of closed
 * files: a workload that closed its fd really got its resources back. */
static struct gs_call_verdict judge_alloc(struct call *c, struct alloc_flight *f)
{
	struct gs_session *sb = c->sb;
	const struct gs_rm_call *rc = &f->call;
	struct gs_call_verdict v;

	if (rc->creates_client && !rc->via_xfer) {
		f->usage.on_control_file = fd_is_control_file(c->dup);
		/* Tidying only: no clause of a client's verdict reads the
		 * charges, so a bounded share keeps a new client's cost flat
		 * in the number of live clients (issue #16). */
		if (f->usage.on_control_file)
			gs_session_reconcile_some(sb);
	} else if (rc->kind == RM_CLASS_VIDMEM && rc->has_size && rc->params_copied &&
	           rc->rights_copied) {
		f->usage.client_bound = bind_client_for_charge(c, rc->h_client) == 0;
	}
	take_usage(c, f);
	v = gs_verdict_of(sb->rules, &sb->quota, &f->usage, rc);
	if (!v.needs_reconcile)
		return v;
	gs_session_reconcile(sb);
	take_usage(c, f);
	return gs_verdict_of(sb->rules, &sb->quota, &f->usage, rc);
}

/* record: what the decision says before the call is acted on. */
static void record_alloc_verdict(struct call *c, const struct alloc_flight *f,
                                 const struct gs_call_verdict *v)
{
	const struct gs_rm_call *rc = &f->call;

	if (v->verdict == GS_VERDICT_CONTINUE) {
		c->d.verdict = GS_VERDICT_CONTINUE;
		c->d.reason = v->reason;
		c->audit = true;
	}
	if (v->resource)
		note_count(c, v->resource, (uint32_t)v->count, (uint32_t)v->count, (uint32_t)v->limit);
	if (rc->kind == RM_CLASS_VIDMEM && f->usage.client_bound) {
		c->d.has_size = true;
		c->d.size = rc->size;
		c->d.gpu = f->usage.gpu;
		c->audit = true;
		if (v->verdict == GS_VERDICT_DENY)
			note_usage(c, f->usage.gpu, f->usage.mem_used);
	}
}

/* act: the call performed from our copies. The driver allows an
 * NV01_DEVICE_0 only to a holder of the GPU's node, so a device is made in
 * a private fd table with the workload's own nodes borrowed
 * (private_table.h); other per-GPU objects may want the same proof, and
 * are retried that way only when the driver asks for it, to keep the
 * common path cheap. */
static enum gs_private_outcome perform_alloc(struct call *c, struct alloc_flight *f,
                                             nv_status_t *st, int *rc)
{
	enum gs_private_outcome o = GS_PRIVATE_PERFORMED;
	const nv_status_t ok = NV_OK;

	if (f->call.kind == RM_CLASS_DEVICE)
		o = exec_escape_private(c, NV_ESC_RM_ALLOC, c->size, f->top.bytes, false, rc);
	else
		*rc = exec_escape(c, NV_ESC_RM_ALLOC, c->size, f->top.bytes);
	memcpy(st, f->top.bytes + f->st_off, sizeof(*st));
	if (o != GS_PRIVATE_PERFORMED || *rc != 0 || *st != NV_ERR_INSUFFICIENT_PERMISSIONS ||
	    f->call.kind != RM_CLASS_SUBDEVICE)
		return o;
	memcpy(f->top.bytes + f->st_off, &ok, sizeof(ok));
	o = exec_escape_private(c, NV_ESC_RM_ALLOC, c->size, f->top.bytes, true, rc);
	if (o == GS_PRIVATE_NO_NODES) {
		/* No node to prove anything with: the driver's first answer. */
		memcpy(f->top.bytes + f->st_off, st, sizeof(*st));
		*rc = 0;
		return GS_PRIVATE_PERFORMED;
	}
	memcpy(st, f->top.bytes + f->st_off, sizeof(*st));
	return o;
}

/* Undoes an object the driver made but the sandbox cannot keep, and
 * answers as the driver fails. */
static struct answer undo_and_refuse(struct call *c, struct alloc_flight *f, nv_handle_t h_new,
                                     nv_status_t st, enum gs_verdict v, const char *why)
{
	undo_alloc(c, f->call.h_client, f->call.h_parent, h_new);
	if (f->call.escape == NV_ESC_RM_ALLOC)
		alloc_set_ptrs(f->top.bytes, c->size, f->addr.p_params, f->addr.p_rights);
	return refuse_with_status(c, f->top.bytes, f->st_off, st, v, why);
}

/* commit: post-check what the driver granted, then the ledger entry.
 * Returns false with *a when the object had to be undone. */
static bool commit_alloc(struct call *c, struct alloc_flight *f, uint64_t charge,
                         uint64_t before, struct answer *a)
{
	struct gs_session *sb = c->sb;
	const struct gs_rm_call *rc = &f->call;
	nv_handle_t h_new = new_handle(c, f);
	/* A device is keyed by its GPU's minor (nvidia-smi's index), which the
	 * driver tells for the instance it was made on: RM numbers instances
	 * in attach order, not by minor. */
	int gpu = rc->kind == RM_CLASS_DEVICE ? gpu_minor_of_instance(c, rc->h_client, rc->device_instance)
	                                      : f->usage.gpu;
	uint64_t bytes = 0;

	c->d.h_object = h_new;
	note_client(c, rc->h_client);
	if (rc->kind == RM_CLASS_VIDMEM) {
		/* Charge what the driver granted, not what was asked. */
		bytes = granted_bytes(c, f);
		if (bytes < rc->size)
			bytes = charge;
		if (over_quota_reconciled(sb, f->usage.gpu, bytes)) {
			note_usage(c, f->usage.gpu, before);
			*a = undo_and_refuse(c, f, h_new, NV_ERR_NO_MEMORY, GS_VERDICT_DENY,
			                     "video memory quota exceeded (driver rounding)");
			return false;
		}
	}
	if (ledger_add(&sb->ledger, rc->h_client, rc->h_parent, h_new, rc->kind, rc->h_class, gpu,
	               bytes) < 0) {
		/* Without a ledger entry the charge would be lost: undo. */
		*a = undo_and_refuse(c, f, h_new, NV_ERR_NO_MEMORY, GS_VERDICT_REFUSE,
		                     "supervisor out of memory");
		return false;
	}
	/* What the driver dup'ed into its own client for this object stays
	 * charged while it lives (ledger.h, ledger_keep): read from our copy
	 * of the params, which is what the driver was given. */
	if (rc->n_kept && !sb->test_no_keep &&
	    ledger_keep(&sb->ledger, rc->h_client, h_new, rc->kept, rc->n_kept) < 0) {
		ledger_free(&sb->ledger, rc->h_client, h_new, NULL);
		*a = undo_and_refuse(c, f, h_new, NV_ERR_NO_MEMORY, GS_VERDICT_REFUSE,
		                     "supervisor out of memory");
		return false;
	}
	c->made.set = true;
	c->made.client = rc->h_client;
	c->made.parent = rc->h_parent;
	c->made.object = h_new;
	if (rc->kind == RM_CLASS_VIDMEM) {
		c->d.size = bytes;
		note_usage(c, f->usage.gpu, before);
	} else if (c->d.resource) {
		/* The kind the record names (channels, groups, an engine). */
		int k = gs_quota_kind_by_resource(c->d.resource);
		if (k >= 0)
			c->d.usage_after = count_of_kind(c, (enum gs_quota_kind)k);
	}
	return true;
}

/* Frees the object c->made names through c->dup (the task's own file, taken
 * again by the caller), releases its charge, and makes the call's record
 * that RM_FREE, saying why. false when the driver would not free it: the
 * charge then stays, the safe side. */
static bool free_made_object(struct call *c, const char *why)
{
	struct nvos00 f = { .h_root = c->made.client, .h_object_parent = c->made.parent,
	                    .h_object_old = c->made.object, .status = NV_ERR_GENERIC };
	uint64_t released[GS_MAX_GPUS] = { 0 }, before[GS_MAX_GPUS];

	memcpy(before, c->sb->ledger.used, sizeof(before));
	if (exec_escape(c, NV_ESC_RM_FREE, sizeof(f), &f) != 0 || f.status != NV_OK)
		return false;
	ledger_free(&c->sb->ledger, c->made.client, c->made.object, released);
	c->d.call = "RM_FREE";
	c->d.verdict = GS_VERDICT_ALLOW;
	c->d.has_class = false;
	c->d.has_size = false;
	c->d.has_status = true;
	c->d.status = f.status;
	c->d.h_client = c->made.client;
	c->d.h_object = c->made.object;
	c->d.reason = why;
	note_release(c, released, before);
	return true;
}

bool undo_abandoned_alloc(struct call *c)
{
	/* The task is alive (a signal, not death, abandons a wait we answer
	 * late; a dead task's file release frees the object anyway). Its fd
	 * is taken again: ours was closed before answering. Freed only
	 * through the file the client lives on (the ledger's release watch,
	 * kcmp): another file could hold a client and object of the same
	 * handles, and freeing those would release our charge while the
	 * object stays. Anything else leaves the charge: the safe side. */
	c->dup = dup_workload_fd(&c->sb->pidfds, c->tid, c->wfd);
	if (c->dup < 0 || !ledger_client_on_file(&c->sb->ledger, c->made.client, c->dup))
		return false;
	return free_made_object(c, "the task abandoned the call (a signal) after it was performed: "
	                           "the object it never received is freed");
}

bool undo_resumed_alloc(struct call *c)
{
	/* No release watch survives the agent, so the file is not checked by
	 * kcmp here: RM's strict client validation makes an RM_FREE of the
	 * client's object succeed only on the file the client lives on, and
	 * client handles are unique in RM while the client lives. A task
	 * that is gone leaves its file's release to free the object. */
	c->dup = dup_workload_fd(&c->sb->pidfds, c->tid, c->wfd);
	if (c->dup < 0)
		return false;
	return free_made_object(c, "the agent restarted while it performed this allocation: the "
	                           "object is freed (and the call performed again if the task still "
	                           "waits)");
}

/* act + commit for an allowed call. */
static struct answer act_alloc(struct call *c, struct alloc_flight *f, uint64_t charge)
{
	struct gs_session *sb = c->sb;
	const struct gs_rm_call *rc = &f->call;
	uint32_t out_psize = 0;
	uint64_t before = ledger_used(&sb->ledger, f->usage.gpu);
	nv_status_t st;
	struct answer a;

	/* --gpus: nothing may be created on a hidden GPU, and every object on
	 * a GPU hangs under an NV01_DEVICE_0. Asking the driver which GPU the
	 * instance is makes this a probe of the act stage, not a verdict. */
	if (rc->kind == RM_CLASS_DEVICE && sb->quota.visible_set &&
	    !gpu_instance_visible(c, rc->h_client, rc->device_instance))
		return refuse_with_status(c, f->top.bytes, f->st_off, NV_ERR_INVALID_ARGUMENT,
		                          GS_VERDICT_REFUSE, "GPU not visible in this sandbox");
	/* Our copy now points at our buffers; the driver never sees the
	 * workload's pointers. */
	alloc_set_ptrs(f->top.bytes, c->size, rc->params_size ? (uintptr_t)c->scratch->params : 0,
	               f->addr.p_rights ? (uintptr_t)&f->rights : 0);
	if (c->scratch->before_alloc) {
		const struct gs_alloc_note note = {
			.client = rc->h_client, .parent = rc->h_parent, .object = rc->h_object,
			.preexisting = ledger_has(&sb->ledger, rc->h_client, rc->h_object),
			.top = f->top.bytes, .top_len = c->size,
		};
		c->scratch->before_alloc(c->scratch->flight_ctx, &note);
	}
	int rc_ioctl;
	enum gs_private_outcome o = perform_alloc(c, f, &st, &rc_ioctl);
	if (o == GS_PRIVATE_TASK_GONE)
		return answer_none(); /* the trapped task is gone */
	if (o == GS_PRIVATE_FAILED) {
		/* Never in the shared table instead: fail closed. */
		alloc_set_ptrs(f->top.bytes, c->size, f->addr.p_params, f->addr.p_rights);
		return refuse_with_status(c, f->top.bytes, f->st_off, NV_ERR_INSUFFICIENT_RESOURCES,
		                          GS_VERDICT_REFUSE, PRIVATE_TABLE_FAILED);
	}
	if (rc_ioctl == 0 && st == NV_OK) {
		if (!commit_alloc(c, f, charge, before, &a))
			return a;
		/* The driver copies nested params out only on success. */
		out_psize = rc->params_size;
	} else if (rc->kind == RM_CLASS_VIDMEM) {
		note_usage(c, f->usage.gpu, before);
	}
	alloc_set_ptrs(f->top.bytes, c->size, f->addr.p_params, f->addr.p_rights);
	return answer_executed(c, f->addr.p_params, c->scratch->params, out_psize, f->top.bytes, c->size,
	                       rc_ioctl, st);
}

/* A client runs in the workload's context: commit that this control file
 * now has one (being created), and let the kernel perform it. */
static struct answer continue_client(struct call *c, struct alloc_flight *f)
{
	const char *why = NULL;

	if (!hold_judged_file(c, 0, NULL, &why))
		return refuse_with_status(c, f->top.bytes, f->st_off, NV_ERR_NOT_SUPPORTED,
		                          GS_VERDICT_REFUSE, why);
	c->sb->ledger.files[f->file].has_client = true;
	/* RM's utilization samples name the process that created the client
	 * (--sm attributes GPU time by it). */
	gs_session_note_creator(c->sb, c->tid);
	return answer_continue();
}

/* GPUSANDBOX_TEST_SECOND_CLIENT_CONTINUE: a second client continued from
 * the workload's own struct, as a first one is (the baseline of tests/adv
 * client_flip:second: a rewritten struct is then allocated under the
 * first client, uncharged). Never for use. */
static struct answer continue_second_client(struct call *c, struct alloc_flight *f)
{
	const char *why = NULL;

	if (!hold_judged_file(c, 0, NULL, &why))
		return refuse_with_status(c, f->top.bytes, f->st_off, NV_ERR_NOT_SUPPORTED,
		                          GS_VERDICT_REFUSE, why);
	c->sb->ledger.files[f->file].extra_clients++;
	return answer_continue();
}

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

/* Adds a pointer field of the page's struct, set to page + to. */
static void plan_ptr(struct gs_inject_plan *p, size_t at, size_t to)
{
	p->ptr_at[p->nptr] = (uint32_t)at;
	p->ptr_to[p->nptr] = (uint32_t)to;
	p->nptr++;
}

/* The page: our copy of the struct at 0, our copies of the params and
 * the rights after it, its pointers to them; what the driver reads is
 * all ours (act_alloc's rule). false when it does not fit. */
static bool plan_client(struct call *c, const struct alloc_flight *f, struct gs_inject_plan *p)
{
	const struct gs_rm_call *rc = &f->call;
	const bool params = rc->params_size && f->addr.p_params;
	const size_t params_at = ALIGN8(c->size);
	const size_t rights_at = ALIGN8(params_at + (params ? rc->params_size : 0));

	memset(p, 0, sizeof(*p));
	p->fd = c->wfd;
	p->cmd = (unsigned long)c->scratch->req->data.args[1];
	p->argp = c->argp;
	p->len = rights_at + (f->addr.p_rights ? NV_RS_ACCESS_MASK_SIZE : 0);
	if (p->len > GS_INJECT_PAGE)
		return false;
	memcpy(p->image, f->top.bytes, c->size);
	alloc_set_ptrs(p->image, c->size, 0, 0);
	if (params) {
		memcpy(p->image + params_at, c->scratch->params, rc->params_size);
		plan_ptr(p, c->size == sizeof(struct nvos64) ? offsetof(struct nvos64, p_alloc_parms)
		                                             : offsetof(struct nvos21, p_alloc_parms),
		         params_at);
	}
	if (f->addr.p_rights) {
		memcpy(p->image + rights_at, &f->rights, NV_RS_ACCESS_MASK_SIZE);
		plan_ptr(p, offsetof(struct nvos64, p_rights_requested), rights_at);
	}
	return true;
}

/* The driver's answer to the injected ioctl, written into the workload's
 * own struct (and params, which the driver copies out on success) while
 * the caller is stopped; the original ioctl's return. */
static long give_client_answer(struct call *c, struct alloc_flight *f, const struct inject_flight *fl)
{
	const nv_status_t refused = NV_ERR_NOT_SUPPORTED;
	const struct gs_rm_call *rc = &f->call;
	nv_status_t st;

	if (fl->outcome == GS_INJECT_FAILED)
		return inject_write(c, c->argp + f->st_off, &refused, sizeof(refused)) < 0 ? -EFAULT : 0;
	if (fl->outcome != GS_INJECT_DONE || fl->out.ioctl_ret != 0)
		return fl->out.ioctl_ret;
	memcpy(f->top.bytes, fl->plan.image, c->size);
	alloc_set_ptrs(f->top.bytes, c->size, f->addr.p_params, f->addr.p_rights);
	memcpy(&st, f->top.bytes + f->st_off, sizeof(st));
	c->d.has_status = true;
	c->d.status = st;
	if (st == NV_OK) {
		c->d.h_object = new_handle(c, f);
		gs_session_note_creator(c->sb, c->tid);
		if (rc->params_size && f->addr.p_params &&
		    inject_write(c, f->addr.p_params, fl->plan.image + ALIGN8(c->size), rc->params_size) < 0)
			return -EFAULT;
	}
	return inject_write(c, c->argp, f->top.bytes, c->size) < 0 ? -EFAULT : 0;
}

/* A second client on a control file that has one: made by the caller
 * itself, from a page of ours (exec_inject.c). The file counts it from
 * before the call, as a continued first client: live or being created. */
static struct answer inject_client(struct call *c, struct alloc_flight *f)
{
	const struct gs_rm_call *rc = &f->call;
	struct inject_flight fl;
	const char *why = NULL;

	if (c->sb->test_second_client_continue)
		return continue_second_client(c, f);
	if ((rc->params_size && f->addr.p_params && !rc->params_copied) ||
	    (f->addr.p_rights && !rc->rights_copied) || !plan_client(c, f, &fl.plan))
		return refuse_with_status(c, f->top.bytes, f->st_off, NV_ERR_INVALID_ARGUMENT,
		                          GS_VERDICT_REFUSE, "a second client's params cannot be copied");
	if (!inject_hold(c, &why))
		return refuse_with_status(c, f->top.bytes, f->st_off, NV_ERR_NOT_SUPPORTED,
		                          GS_VERDICT_REFUSE, why);
	c->sb->ledger.files[f->file].extra_clients++;
	if (!inject_run(c, &fl))
		return answer_none();
	return inject_end(c, &fl, give_client_answer(c, f, &fl));
}

/* The verdict on the call alone. --learn admits what the allowlist alone
 * refused; the verdict is then taken again on the grown allowlist. */
static struct gs_call_verdict first_verdict(struct call *c, const struct alloc_flight *f)
{
	struct gs_call_verdict v = gs_verdict_of_call(c->sb->rules, &f->call);

	if (v.by_allowlist && policy_learns(c, false, f->call.h_class))
		v = gs_verdict_of_call(c->sb->rules, &f->call);
	c->d.group = v.group;
	return v;
}

/* The first verdict, on the call alone: a refusal here is answered before
 * anything more of the workload's memory is read. */
static bool passes_first(struct call *c, struct alloc_flight *f, struct answer *a)
{
	struct gs_call_verdict v = first_verdict(c, f);

	if (objects(&v)) {
		*a = refuse(c, f, &v);
		return false;
	}
	return true;
}

/* reconcile + the whole verdict, recorded once; false with *a when it
 * refuses. */
static bool passes_judged(struct call *c, struct alloc_flight *f, struct gs_call_verdict *v,
                          struct answer *a)
{
	*v = judge_alloc(c, f);
	record_alloc_verdict(c, f, v);
	if (objects(v)) {
		*a = refuse(c, f, v);
		return false;
	}
	return true;
}

/* A hardware channel is made only where the ledger places it on a GPU:
 * under a device, or a channel group the sandbox made (or a dup of
 * either). Only such a channel can --sm switch (ledger_list_channels
 * lists the channels of a GPU), and the sandbox must be able to switch
 * every channel it lets run.
 *
 * The parent this leaves out is the channel group RM makes for a lone
 * channel (kchannelConstruct_IMPL, src/nvidia/src/kernel/gpu/fifo/
 * kernel_channel.c, open-gpu-kernel-modules 580.95.05): it lives in the
 * workload's client under a handle RM generates (0xcaf00000 upward,
 * clientGenResourceHandle_IMPL, so guessable), which the driver zeroes
 * in the params before they go back (hPhysChannelGroup, at cleanup): no
 * answer of the driver's names it, so the ledger never holds it. The
 * driver takes it as the parent of a second channel (the TSG branch
 * checks no bAllocatedByRm), and that channel would run in every off
 * phase: 1.0 of the GPU under --sm 25 (tests/sm/escape.sh). CUDA never
 * names that group; refusing is what the driver answers for a parent that
 * is not there, so a program sees an ordinary error. */
static bool channel_placed(struct call *c, struct alloc_flight *f, struct answer *a)
{
	const struct gs_rm_call *rc = &f->call;

	if (rc->kind != RM_CLASS_CHANNEL || c->sb->test_channel_any_parent)
		return true;
	int gpu = ledger_gpu_of(&c->sb->ledger, rc->h_client, rc->h_parent);
	if (gpu >= 0 && (unsigned)gpu < GS_MAX_GPUS)
		return true;
	*a = refuse_with_status(c, f->top.bytes, f->st_off, NV_ERR_INVALID_OBJECT_PARENT,
	                        GS_VERDICT_REFUSE,
	                        "a channel under a parent the sandbox did not make (such as RM's "
	                        "own channel group of a lone channel): --sm could not switch it");
	return false;
}

/* p2p-register = none. CUDA makes one NV50_THIRD_PARTY_P2P object per
 * context and then registers every cuMemAlloc'd range with it and
 * unregisters it before the free: two of the five trapped calls of a
 * cuMemAlloc + cuMemFree pair. Answered NV_ERR_NOT_SUPPORTED, as a driver
 * without the class would, CUDA goes on without it and makes no
 * registration controls at all; PyTorch, CuPy and JAX ran so on the H200
 * (docs/gpu-results/2026-12-02-h200-round4). The object charges and counts
 * nothing, and no call reaches the driver, so nothing of the workload's
 * can change what happens: the status is written into its struct and the
 * call ends. What is lost is third-party P2P for the sandbox's memory
 * (nvidia_p2p_get_pages: GPUDirect RDMA, P2P tokens), as under answer. */
static bool p2p_object_wanted(struct call *c, struct alloc_flight *f, struct answer *a)
{
	if (f->call.h_class != NV50_THIRD_PARTY_P2P || c->sb->quota.p2p_register != GS_P2P_REGISTER_NONE)
		return true;
	c->answered = true;
	c->d.answered = true;
	*a = refuse_with_status(c, f->top.bytes, f->st_off, NV_ERR_NOT_SUPPORTED, GS_VERDICT_ALLOW,
	                        "p2p-register none: no third-party P2P object, as a driver without it");
	return false;
}

struct answer handle_alloc(struct call *c)
{
	struct alloc_flight f = { .file = -1 };
	struct gs_call_verdict v;
	struct answer a;

	if (!fetch_alloc_top(c, &f, &a) || !passes_first(c, &f, &a) || !p2p_object_wanted(c, &f, &a))
		return a;
	fetch_alloc_params(c, &f);
	if (!passes_judged(c, &f, &v, &a) || !channel_placed(c, &f, &a))
		return a;
	if (v.verdict == GS_VERDICT_CONTINUE)
		return v.inject ? inject_client(c, &f) : continue_client(c, &f);
	return act_alloc(c, &f, v.charge);
}

/* act + commit for a VID_HEAP_CONTROL the verdict allowed. The ledger
 * changes by what our own copy did, so a thread that rewrites the
 * workload's struct meanwhile changes nothing. */
static struct answer act_vid_heap(struct call *c, struct alloc_flight *f, uint64_t charge)
{
	struct gs_session *sb = c->sb;
	struct nvos32 *top = &f->top.os32;
	uint64_t released[GS_MAX_GPUS] = { 0 }, before_all[GS_MAX_GPUS];
	uint64_t before = ledger_used(&sb->ledger, f->usage.gpu);
	struct answer a;

	memcpy(before_all, sb->ledger.used, sizeof(before_all));
	int rc = exec_escape(c, NV_ESC_RM_VID_HEAP_CONTROL, sizeof(*top), top);
	if (rc == 0 && top->status == NV_OK) {
		if (top->function == NVOS32_FUNCTION_ALLOC_SIZE) {
			if (!commit_alloc(c, f, charge, before, &a))
				return a;
		} else {
			(void)note_client(c, top->h_root);
		}
		if (top->function == NVOS32_FUNCTION_FREE) {
			c->d.h_object = top->data.free.h_memory;
			ledger_free(&sb->ledger, top->h_root, top->data.free.h_memory, released);
			note_release(c, released, before_all);
		}
	}
	return answer_executed(c, 0, NULL, 0, top, sizeof(*top), rc, top->status);
}

struct answer handle_vid_heap(struct call *c)
{
	struct alloc_flight f = { .file = -1, .st_off = offsetof(struct nvos32, status) };
	struct gs_call_verdict v;
	struct answer a;

	if (!fetch_top(c, &f, &a))
		return a;
	gs_decode_vid_heap(c->sb->rm_abi, &f.top.os32, c->via_xfer, &f.call);
	c->d.h_client = f.call.h_client;
	if (f.call.function == NVOS32_FUNCTION_ALLOC_SIZE) {
		c->d.has_class = true;
		c->d.cls = f.call.h_class;
		c->d.has_size = true;
		c->d.size = f.call.size;
	}
	if (!passes_first(c, &f, &a) || !passes_judged(c, &f, &v, &a))
		return a;
	return act_vid_heap(c, &f, v.charge);
}

/* RM_ALLOC_OBJECT (legacy, no params): act + commit. A device made this
 * way is the GPU of the instance its class names (decode.c): it gets the
 * --gpus probe, the workload's own GPU nodes and the ledger key of an
 * RM_ALLOC's device (issue #17 item 13: it skipped all three). */
static struct answer act_alloc_object(struct call *c, struct alloc_flight *f)
{
	struct nvos05 *top = &f->top.os05;
	const struct gs_rm_call *rc = &f->call;
	const bool device = rc->kind == RM_CLASS_DEVICE;
	enum gs_private_outcome o = GS_PRIVATE_PERFORMED;
	int gpu = LEDGER_NO_GPU, rc_ioctl;

	if (device && c->sb->quota.visible_set &&
	    !gpu_instance_visible(c, rc->h_client, rc->device_instance))
		return refuse_with_status(c, top, f->st_off, NV_ERR_INVALID_ARGUMENT, GS_VERDICT_REFUSE,
		                          "GPU not visible in this sandbox");
	if (device)
		o = exec_escape_private(c, NV_ESC_RM_ALLOC_OBJECT, sizeof(*top), top, false, &rc_ioctl);
	else
		rc_ioctl = exec_escape(c, NV_ESC_RM_ALLOC_OBJECT, sizeof(*top), top);
	if (o == GS_PRIVATE_TASK_GONE)
		return answer_none(); /* the trapped task is gone */
	if (o == GS_PRIVATE_FAILED)
		return refuse_with_status(c, top, f->st_off, NV_ERR_INSUFFICIENT_RESOURCES,
		                          GS_VERDICT_REFUSE, PRIVATE_TABLE_FAILED);
	bool made = rc_ioctl == 0 && top->status == NV_OK;
	if (made && device)
		gpu = gpu_minor_of_instance(c, rc->h_client, rc->device_instance);
	/* The handle the driver made (it picks one when asked for 0). */
	if (made && note_client(c, top->h_root) == 0)
		(void)ledger_add(&c->sb->ledger, rc->h_client, rc->h_parent, top->h_object_new, rc->kind,
		                 rc->h_class, gpu, 0);
	return answer_executed(c, 0, NULL, 0, top, sizeof(*top), rc_ioctl, top->status);
}

struct answer handle_alloc_object(struct call *c)
{
	struct alloc_flight f = { .file = -1, .st_off = offsetof(struct nvos05, status) };
	struct gs_call_verdict v;
	struct answer a;

	if (!fetch_top(c, &f, &a))
		return a;
	gs_decode_alloc_object(c->sb->rm_abi, &f.top.os05, c->via_xfer, &f.call);
	c->d.has_class = true;
	c->d.cls = f.call.h_class;
	c->d.h_client = f.call.h_client;
	if (!passes_first(c, &f, &a) || !passes_judged(c, &f, &v, &a))
		return a;
	return act_alloc_object(c, &f);
}
