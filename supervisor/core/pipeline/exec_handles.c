/* SPDX-License-Identifier: MIT */
/*
 * exec_handles.c - the escapes that name handles or files rather than make
 * objects: RM_FREE, RM_DUP_OBJECT, RM_SHARE and REGISTER_FD, through the
 * stages of an allocation (docs/hacking.md): fetch their one level (and
 * check the notification), decode it (decode.c, pure), take what the
 * verdict reads of the ledger or of the file, the verdict (verdict.c,
 * pure), act from our copy, commit to the ledger. None of them has a
 * nested level: the driver reads only our copy of the top-level struct.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "exec_int.h"
#include "verdict.h"

static bool objects(const struct gs_call_verdict *v)
{
	return v->verdict == GS_VERDICT_REFUSE || v->verdict == GS_VERDICT_DENY;
}

/* A refusal shaped as the verdict says: the RM status in the struct, or
 * the errno the driver answers for this escape. Audited either way. */
static struct answer refuse_verdict(struct call *c, void *top, size_t status_off,
                                    const struct gs_call_verdict *v)
{
	if (!v->errnum)
		return refuse_with_status(c, top, status_off, v->status, v->verdict, v->reason);
	c->d.verdict = v->verdict;
	c->d.reason = v->reason;
	c->d.errnum = v->errnum;
	c->audit = true;
	return answer_errno(v->errnum);
}

/* ---- RM_FREE ------------------------------------------------------------- */

/* commit: the ledger releases what the driver released. The handle is the
 * one in our copy, so a workload that rewrites its struct changes nothing. */
static void commit_free(struct call *c, const struct gs_rm_call *rc,
                        uint64_t released[GS_MAX_GPUS])
{
	struct ledger *l = &c->sb->ledger;

	ledger_free(l, rc->h_client, rc->h_object, released);
	/* The file's client is gone: it may host a new one, and a client
	 * made later at its handle is not shared with ours (own_rm.h). */
	if (rc->frees_client) {
		gs_own_rm_forget_client(&c->sb->own, rc->h_client);
		int f = ledger_file_of(l, c->dup);
		if (f >= 0 && l->files[f].extra_clients)
			l->files[f].extra_clients--;
		else if (f >= 0)
			l->files[f].has_client = false;
	}
}

static struct answer act_free(struct call *c, struct nvos00 *top, const struct gs_rm_call *rc)
{
	uint64_t released[GS_MAX_GPUS] = { 0 };
	uint64_t before[GS_MAX_GPUS];

	memcpy(before, c->sb->ledger.used, sizeof(before));
	int rc_ioctl = exec_escape(c, NV_ESC_RM_FREE, sizeof(*top), top);
	if (rc_ioctl == 0 && top->status == NV_OK) {
		commit_free(c, rc, released);
		/* Memory whose last handle this was, that UVM still maps
		 * through a mapping we made: taken back now (uvm_maps.h). */
		(void)gs_uvm_maps_take_back_orphans(&c->sb->uvm, &c->sb->ledger, released);
	}
	/* Only what the driver changed goes back: usually nothing, the
	 * caller's status being NV_OK (0) already (mem_write_changed2), and
	 * then the answer's memory is not opened (answer_mem, issue #31). */
	const struct gs_mem_out out = {
		c->argp, top, gs_scratch_kept(&c->scratch->top_in, c->argp, sizeof(*top)), sizeof(*top),
	};
	if (mem_out_changed(&out, NULL) && answer_write_changed2(c, &out, NULL) < 0 &&
	    rc_ioctl == 0)
		rc_ioctl = -EFAULT;
	c->d.verdict = GS_VERDICT_ALLOW;
	c->d.has_status = true;
	c->d.status = top->status;
	note_release(c, released, before);
	return answer_value(rc_ioctl);
}

struct answer handle_free(struct call *c)
{
	struct nvos00 top;
	struct gs_rm_call rc;
	struct answer a;

	if (!fetch_trapped_top(c, &top, sizeof(top), &a))
		return a;
	gs_decode_free(c->sb->rm_abi, &top, c->via_xfer, &rc);
	c->d.h_client = rc.h_client;
	c->d.h_object = rc.h_object;
	struct gs_call_verdict v = gs_verdict_of_handle_call(&rc);
	if (objects(&v))
		return refuse_verdict(c, &top, offsetof(struct nvos00, status), &v);
	return act_free(c, &top, &rc);
}

/* ---- RM_DUP_OBJECT ------------------------------------------------------- */

#define DUP_STATUS_OFF offsetof(struct nvos55, status)

/* act + commit. The dup keeps the source's memory alive: the ledger counts
 * handles per allocation and releases the bytes with the last one. An
 * object the ledger cannot hold is undone. */
static struct answer act_dup(struct call *c, struct nvos55 *top, const struct gs_rm_call *rc)
{
	int rc_ioctl = exec_escape(c, NV_ESC_RM_DUP_OBJECT, sizeof(*top), top);

	if (rc_ioctl == 0 && top->status == NV_OK &&
	    (note_client(c, rc->h_client) < 0 ||
	     ledger_dup(&c->sb->ledger, rc->h_client, rc->h_parent, top->h_object, rc->h_client_src,
	                rc->h_object_src) < 0)) {
		undo_alloc(c, rc->h_client, rc->h_parent, top->h_object);
		return refuse_with_status(c, top, DUP_STATUS_OFF, NV_ERR_NO_MEMORY, GS_VERDICT_REFUSE,
		                          "supervisor out of memory");
	}
	return answer_executed(c, 0, NULL, 0, top, sizeof(*top), rc_ioctl, top->status);
}

struct answer handle_dup(struct call *c)
{
	struct nvos55 top;
	struct gs_rm_call rc;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU };
	struct answer a;

	if (!fetch_trapped_top(c, &top, sizeof(top), &a))
		return a;
	gs_decode_dup(c->sb->rm_abi, &top, c->via_xfer, &rc);
	c->d.h_client = rc.h_client;
	c->d.h_object = rc.h_object_src;
	u.src_client_ours = ledger_has(&c->sb->ledger, rc.h_client_src, rc.h_client_src);
	u.src_client_alive = ledger_client_file_alive(&c->sb->ledger, rc.h_client_src);
	u.src_is_engine = ledger_is_engine(&c->sb->ledger, rc.h_client_src, rc.h_object_src);
	u.objects = ledger_live_objects(&c->sb->ledger);
	struct gs_call_verdict v = gs_verdict_of_dup(&u, &rc);
	if (!objects(&v))
		v = gs_verdict_object_clause(v, &c->sb->quota, &u);
	if (objects(&v))
		return refuse_verdict(c, &top, DUP_STATUS_OFF, &v);
	return act_dup(c, &top, &rc);
}

/* ---- RM_SHARE ------------------------------------------------------------ */

/* A share policy lets clients elsewhere dup the object; what they import
 * is refused by their own sandbox (gs_verdict_of_dup), and a client
 * outside any sandbox could allocate the memory itself. Performed from
 * our copy; no ledger effect. */
struct answer handle_share(struct call *c)
{
	struct nvos57 top;
	struct gs_rm_call rc;
	struct answer a;

	/* The escape table admits only the driver's own size. */
	if (c->size != sizeof(top))
		return answer_errno(EINVAL);
	if (!fetch_trapped_top(c, &top, sizeof(top), &a))
		return a;
	gs_decode_share(c->sb->rm_abi, &top, c->via_xfer, &rc);
	c->d.h_client = rc.h_client;
	c->d.h_object = rc.h_object;
	struct gs_call_verdict v = gs_verdict_of_handle_call(&rc);
	if (objects(&v))
		return refuse_verdict(c, &top, offsetof(struct nvos57, status), &v);
	int rc_ioctl = exec_escape(c, NV_ESC_RM_SHARE, sizeof(top), &top);
	return answer_executed(c, 0, NULL, 0, &top, sizeof(top), rc_ioctl, top.status);
}

/* ---- REGISTER_FD --------------------------------------------------------- */

/* Both fds are resolved once, into our own table: the call's file (our
 * dup) and the control file it names (another dup, taken from the trapped
 * task and checked again after: dup_trapped_fd), so another thread's
 * dup2() cannot swap either after we looked. */
static struct answer act_register_fd(struct call *c, const struct gs_rm_call *rc)
{
	/* A number that does not name a control file is answered as the
	 * driver answers it (nv_get_file_private fails: NV_ERR_INVALID_
	 * ARGUMENT, so EINVAL; escape.c, nv.c, 580.95.05) without a dup: our
	 * close of a dup of a FUSE file the workload serves would wait for
	 * its server (task_fd_node_kind_cached). Only a swap after this look
	 * gets such a file dup'ed, and the driver refuses it then. */
	if (task_fd_node_kind_cached(c->tid, rc->ctl_fd) != GS_NODE_CTL) {
		c->d.verdict = GS_VERDICT_ALLOW;
		return answer_errno(EINVAL);
	}
	int ctl = dup_trapped_fd(c, rc->ctl_fd);

	if (ctl < 0)
		return errno == ESRCH ? answer_none() : answer_errno(EBADF);
	struct nv_ioctl_register_fd ours = { .ctl_fd = ctl };
	int rc_ioctl = exec_escape(c, NV_ESC_REGISTER_FD, sizeof(ours), &ours);
	close(ctl);
	c->d.verdict = GS_VERDICT_ALLOW;
	return answer_value(rc_ioctl);
}

struct answer handle_register_fd(struct call *c)
{
	struct nv_ioctl_register_fd top;
	struct gs_rm_call rc;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU };
	struct answer a;

	if (!fetch_trapped_top(c, &top, sizeof(top), &a))
		return a;
	gs_decode_register_fd(c->sb->rm_abi, &top, c->via_xfer, &rc);
	u.on_control_file = fd_is_control_file(c->dup);
	struct gs_call_verdict v = gs_verdict_of_register_fd(&u, &rc);
	if (objects(&v))
		return refuse_verdict(c, &top, 0, &v);
	return act_register_fd(c, &rc);
}
