/* SPDX-License-Identifier: MIT */
/*
 * executor.c - decides and answers one trapped ioctl.
 *
 * The rule that shapes this file (design.md 2): no decision rests on bytes
 * the workload can still change. The workload's thread is blocked in the
 * trap, but its other threads (and other processes sharing the memory) are
 * not. So for every call that matters the supervisor:
 *   1. copies every parameter level into its own memory;
 *   2. decides on those copies;
 *   3. performs the ioctl itself, on its own copies, through a pidfd_getfd
 *      dup of the workload's fd (RM binds a client to the open file, not to
 *      a pid: rm-abi.md 6.2), so the driver reads only our bytes;
 *   4. copies the results back and answers with the ioctl's return value.
 * The dup is closed before the answer: a held dup would keep the workload's
 * clients, and their memory, alive.
 *
 * This file routes a notification (gs_execute_notification, route_ioctl),
 * records its one decision and sends the answer. The calls that allocate
 * or control go through stages (docs/hacking.md): fetch, decode
 * (decode.c, pure), reconcile, verdict (verdict.c, pure), record, act and
 * commit (exec_alloc.c, exec_control.c). The small escapes below still do
 * their steps in one handler each.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "quota.h"
#include "rm_decode.h"
#include "rm_tables.h"
#include "session.h"
#include "exec_int.h"
#include "exec_managed.h"
#include "executor.h"
#include "gpusandbox.h"

/* ---- RM_ALLOC: exec_alloc.c, through the staged pipeline ------------------ */

/* ---- RM_ALLOC_OBJECT: exec_alloc.c, through the staged pipeline ----------- */

/* ---- RM_FREE ------------------------------------------------------------- */

static struct answer handle_free(struct call *c)
{
	struct nvos00 top;
	uint64_t released[GS_MAX_GPUS] = { 0 };
	uint64_t before[GS_MAX_GPUS];

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c))
		return answer_none();
	c->d.h_client = top.h_root;
	c->d.h_object = top.h_object_old;
	memcpy(before, c->sb->ledger.used, sizeof(before));
	/* We free exactly the handle in our copy, so the ledger releases what
	 * the driver released even if the workload rewrites the struct. */
	int rc = exec_escape(c, NV_ESC_RM_FREE, sizeof(top), &top);
	if (rc == 0 && top.status == NV_OK) {
		ledger_free(&c->sb->ledger, top.h_root, top.h_object_old, released);
		/* The file's client is gone: it may host a new one. */
		if (top.h_object_old == top.h_root) {
			int f = ledger_file_of(&c->sb->ledger, c->dup);
			if (f >= 0)
				c->sb->ledger.files[f].has_client = false;
		}
	}
	if (mem_write(c->tid, c->argp, &top, sizeof(top)) < 0 && rc == 0)
		rc = -EFAULT;
	c->d.verdict = GS_VERDICT_ALLOW;
	c->d.has_status = true;
	c->d.status = top.status;
	note_release(c, released, before);
	return answer_value(rc);
}

/* ---- RM_DUP_OBJECT ------------------------------------------------------- */

static struct answer handle_dup(struct call *c)
{
	struct nvos55 top;

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c))
		return answer_none();
	c->d.h_client = top.h_client;
	c->d.h_object = top.h_object_src;
	/* An object of a client outside the sandbox (another sandbox shared
	 * it with RM_SHARE) was never charged here, and its owner's sandbox
	 * credits it back when the owner frees its handle: the dup would
	 * hold memory no sandbox counts. Refused the way RM refuses a dup
	 * its share policy does not allow. A client of ours whose file is
	 * gone is dead in the driver, and its handle may already name a
	 * foreign client: refused too. */
	if (!ledger_has(&c->sb->ledger, top.h_client_src, top.h_client_src) ||
	    !ledger_client_file_alive(&c->sb->ledger, top.h_client_src))
		return refuse_with_status(c, &top, offsetof(struct nvos55, status),
		                          NV_ERR_INSUFFICIENT_PERMISSIONS, GS_VERDICT_REFUSE,
		                          "import of an object from a client outside the sandbox");
	int rc = exec_escape(c, NV_ESC_RM_DUP_OBJECT, sizeof(top), &top);
	/* The dup keeps the source's memory alive: the ledger counts handles
	 * per allocation and releases the bytes with the last one. */
	if (rc == 0 && top.status == NV_OK &&
	    (note_client(c, top.h_client) < 0 || ledger_dup(&c->sb->ledger, top.h_client, top.h_parent, top.h_object, top.h_client_src,
	               top.h_object_src) < 0)) {
		undo_alloc(c, top.h_client, top.h_parent, top.h_object);
		return refuse_with_status(c, &top, offsetof(struct nvos55, status), NV_ERR_NO_MEMORY,
		                          GS_VERDICT_REFUSE, "supervisor out of memory");
	}
	return answer_executed(c, 0, NULL, 0, &top, sizeof(top), rc, top.status);
}

/* ---- RM_VID_HEAP_CONTROL: exec_alloc.c, through the staged pipeline ------ */

/* ---- flat escapes (RM_SHARE) --------------------------------------------- */

static struct answer handle_flat(struct call *c)
{
	uint8_t top[NV_ABSOLUTE_MAX_IOCTL_SIZE];

	if (c->size > sizeof(top))
		return answer_errno(EINVAL);
	if (mem_read(c->tid, c->argp, top, c->size) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c))
		return answer_none();
	int rc = exec_escape(c, c->nr, c->size, top);
	if (mem_write(c->tid, c->argp, top, c->size) < 0 && rc == 0)
		rc = -EFAULT;
	c->d.verdict = GS_VERDICT_ALLOW;
	return answer_value(rc);
}

/* ---- EXPORT_TO_DMABUF_FD ------------------------------------------------- */

/* A dma-buf dups the exported memory into the driver's own client and
 * keeps it until the dma-buf file's last reference is gone; the
 * workload's RM_FREE would then credit a charge back while the GPU keeps
 * the memory (4.5 GiB held under --mem 2g on an H100). The supervisor
 * cannot see when a dma-buf file dies, so the export is refused, whatever
 * the struct says, the way a driver without dma-buf fails: the RM status
 * in the struct, ioctl() == 0 (nv.c: size and device checks first, then
 * params->status = nv_dma_buf_export(...)). */
static struct answer handle_refuse_status(struct call *c)
{
	struct nv_ioctl_export_to_dma_buf_fd top;

	if (c->size != sizeof(top) || c->nr != NV_ESC_EXPORT_TO_DMABUF_FD)
		return answer_errno(EINVAL);
	/* NV_ACTUAL_DEVICE_ONLY: the control device gets -EINVAL. */
	if (fd_is_control_file(c->dup))
		return answer_errno(EINVAL);
	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c))
		return answer_none();
	c->d.h_client = top.h_client;
	return refuse_with_status(c, &top, offsetof(struct nv_ioctl_export_to_dma_buf_fd, status),
	                          NV_ERR_NOT_SUPPORTED, GS_VERDICT_REFUSE,
	                          "dma-buf export would keep memory past its charge");
}

/* ---- REGISTER_FD ---------------------------------------------------------- */

/* Both fds are resolved once, into our own table: the call's file (our
 * dup) and the control file it names (another dup), so another thread's
 * dup2() cannot swap either after we looked. A control file may not be
 * linked to another: it would then reach that file's clients. */
static struct answer handle_register_fd(struct call *c)
{
	struct nv_ioctl_register_fd top;
	int ctl;

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c))
		return answer_none();
	c->d.call = "REGISTER_FD";
	if (fd_is_control_file(c->dup)) {
		c->d.verdict = GS_VERDICT_REFUSE;
		c->d.reason = "a control file may not be linked to another";
		c->d.errnum = EINVAL;
		c->audit = true;
		return answer_errno(EINVAL);
	}
	ctl = dup_workload_fd(&c->sb->pidfds, c->tid, top.ctl_fd);
	if (ctl < 0)
		return answer_errno(EBADF);
	struct nv_ioctl_register_fd ours = { .ctl_fd = ctl };
	int rc = exec_escape(c, NV_ESC_REGISTER_FD, sizeof(ours), &ours);
	close(ctl);
	c->d.verdict = GS_VERDICT_ALLOW;
	return answer_value(rc);
}

/* ---- dispatch ------------------------------------------------------------ */

static struct answer dispatch(struct call *c, const struct rm_escape *e)
{
	c->d.call = e->name;
	switch (e->action) {
	case RM_ACT_EXEC_ALLOC:        return handle_alloc(c);
	case RM_ACT_EXEC_ALLOC_OBJECT: return handle_alloc_object(c);
	case RM_ACT_EXEC_FREE:         return handle_free(c);
	case RM_ACT_EXEC_CONTROL:      return handle_control(c);
	case RM_ACT_EXEC_DUP:          return handle_dup(c);
	case RM_ACT_EXEC_VID_HEAP:     return handle_vid_heap(c);
	case RM_ACT_EXEC_FLAT:         return handle_flat(c);
	case RM_ACT_EXEC_REGISTER_FD:  return handle_register_fd(c);
	case RM_ACT_EXEC_CARD_INFO:    return handle_card_info(c);
	case RM_ACT_REFUSE_STATUS:     return handle_refuse_status(c);
	case RM_ACT_CONTINUE:
	case RM_ACT_XFER:
	case RM_ACT_REFUSE:
		break;
	}
	return answer_errno(EINVAL);
}

/* XFER carries the real escape number in memory, where the workload can
 * change it after we looked. So the inner call is always performed by us
 * (never continued): the driver would otherwise read a different escape. */
static struct answer handle_xfer(struct call *c)
{
	struct nv_ioctl_xfer x;
	const struct rm_escape *inner;

	if (mem_read(c->tid, c->argp, &x, sizeof(x)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c))
		return answer_none();
	inner = rm_escape_find(c->sb->rm_abi, x.cmd);
	c->d.call = "IOCTL_XFER_CMD";
	c->nr = x.cmd;
	/* The driver itself rejects these shapes with -EINVAL. */
	if (!inner || inner->action == RM_ACT_REFUSE)
		return refuse_escape(c, inner ? inner->name : "ESCAPE",
		                     inner ? "escape the driver does not handle"
		                           : "escape unknown to gpusandbox");
	if (x.size > NV_ABSOLUTE_MAX_IOCTL_SIZE || !rm_escape_size_ok(inner, x.size) ||
	    inner->action == RM_ACT_XFER)
		return answer_errno(EINVAL);
	if (inner->action == RM_ACT_CONTINUE)
		return refuse_escape(c, inner->name,
		                     "escape cannot be performed by the supervisor and XFER cannot be continued");
	c->via_xfer = true;
	c->nr = x.cmd;
	c->size = x.size;
	c->argp = x.ptr;
	return dispatch(c, inner);
}

static void trace_call(const struct call *c, const struct answer *a)
{
	FILE *f = c->sb->trace;
	const char *sname = c->d.has_status ? rm_status_name(c->d.status) : NULL;

	/* Arguments are separated as strace does: ", " between, none first. */
	const char *sep = "";

	fprintf(f, "[gpusandbox %d] %s%s(", (int)c->tid, c->via_xfer ? "XFER:" : "", c->d.call);
	if (c->d.h_client) {
		fprintf(f, "hClient=0x%x", c->d.h_client);
		sep = ", ";
	}
	if (c->d.h_object) {
		fprintf(f, "%shObject=0x%x", sep, c->d.h_object);
		sep = ", ";
	}
	if (c->d.has_class) {
		const struct rm_class_info *ci = rm_class_lookup(c->sb->rm_abi, c->d.cls);
		fprintf(f, "%sclass=0x%x%s%s", sep, c->d.cls, ci && ci->name ? " " : "",
		        ci && ci->name ? ci->name : "");
		sep = ", ";
	}
	if (c->d.has_control) {
		const struct rm_ctrl_info *ci = rm_ctrl_lookup(c->sb->rm_abi, c->d.control);
		fprintf(f, "%scmd=0x%x%s%s", sep, c->d.control, ci && ci->name ? " " : "",
		        ci && ci->name ? ci->name : "");
		sep = ", ";
	}
	if (c->d.has_size)
		fprintf(f, "%ssize=%llu", sep, (unsigned long long)c->d.size);
	fprintf(f, ")");
	if (a->kind == ANSWER_CONTINUE)
		fprintf(f, " = ? [continue]");
	else if (a->error)
		fprintf(f, " = -1 %s", strerrorname_np(a->error));
	else if (c->d.has_status)
		fprintf(f, " = 0 %s%s0x%x", sname ? sname : "", sname ? " " : "", c->d.status);
	else
		fprintf(f, " = 0");
	fprintf(f, " [%s", gs_verdict_name(c->d.verdict));
	if (c->d.has_usage && c->d.resource) {
		/* A count (channels, engines): plain numbers, no GPU. */
		fprintf(f, ", %s %llu/", c->d.resource, (unsigned long long)c->d.usage_after);
		if (gs_decision_unlimited(&c->d))
			fprintf(f, "-");
		else
			fprintf(f, "%llu", (unsigned long long)c->d.quota);
	} else if (c->d.has_usage) {
		char u[32], q[32];
		fprintf(f, ", gpu%d %s/%s", c->d.gpu, gs_format_size(c->d.usage_after, u, sizeof(u)),
		        gs_format_size(c->d.quota, q, sizeof(q)));
	}
	if (c->d.reason)
		fprintf(f, ": %s", c->d.reason);
	fprintf(f, "]\n");
}

static void count_verdict(struct gs_session *sb, const struct call *c, const struct answer *a)
{
	switch (a->kind == ANSWER_CONTINUE ? GS_VERDICT_CONTINUE : c->d.verdict) {
	case GS_VERDICT_DENY: sb->counts[GS_COUNT_DENIED]++; break;
	case GS_VERDICT_REFUSE: sb->counts[GS_COUNT_REFUSED]++; break;
	case GS_VERDICT_CONTINUE: sb->counts[GS_COUNT_CONTINUED]++; break;
	default: sb->counts[GS_COUNT_ALLOWED]++; break;
	}
}

static const struct gs_abi *abi_of(const struct seccomp_data *data)
{
	const struct gs_abi *abi = gs_abi_find(data->arch);

#if defined(__x86_64__)
	/* x32 shares the x86_64 audit arch; its numbers carry the x32 bit. */
	if (abi && data->arch == gs_abi_at(0)->audit_arch && (data->nr & __X32_SYSCALL_BIT)) {
		for (unsigned i = 0; i < gs_abi_count(); i++) {
			const struct gs_abi *x = gs_abi_at(i);
			if (x->ioctl_nr == data->nr || gs_abi_is_mmap(x, (uint32_t)data->nr))
				return x;
		}
		return NULL;
	}
#endif
	return abi;
}

/* Routes an ioctl notification to its handler. Sets *record when the
 * answer is a decision to count, audit and trace; calls that are not RM
 * escapes (or not on an NVIDIA file) are answered without a record. */
static struct answer route_ioctl(struct gs_session *sb, struct call *c,
                                 const struct seccomp_data *data, bool *record)
{
	const struct rm_escape *e;
	uint32_t cmd;

	*record = false;
	c->wfd = (int)data->args[0];
	cmd = (uint32_t)data->args[1]; /* the kernel's cmd is an unsigned int */
	c->argp = c->abi->ptr32 ? (data->args[2] & PTR32_MASK) : data->args[2];
	c->nr = NV_IOC_NR(cmd);
	c->size = NV_IOC_SIZE(cmd);
	e = rm_escape_find(c->sb->rm_abi, c->nr);
	/* A word with no size bits is not an RM escape: UVM's commands are
	 * plain integers (33, 42, 74, ...) and some share a trapped low byte;
	 * the RM driver itself rejects a size-0 escape. */
	if ((e && e->action == RM_ACT_CONTINUE) || (!e && !rm_escape_nr_reserved(c->nr)) ||
	    c->size == 0)
		return answer_continue();
	c->dup = dup_workload_fd(&sb->pidfds, c->tid, c->wfd);
	/* EBADF: the fd is not open, as the kernel would have said.
	 * Anything else (no right to the task): fail closed. */
	if (c->dup < 0)
		return answer_errno(errno == EBADF ? EBADF : EPERM);
	/* Another device's ioctl that merely shares the low byte. */
	if (!fd_is_nvidia_like(c->dup))
		return answer_continue();
	*record = true;
	/* An escape number we do not know, or one the 580 driver does not
	 * handle, is refused and audited: a newer driver may act on it, and
	 * nothing examined it. */
	if (!e || e->action == RM_ACT_REFUSE)
		return refuse_escape(c, e ? e->name : "ESCAPE",
		                     e ? "escape the driver does not handle"
		                       : "escape unknown to gpusandbox");
	/* An escape we cannot decode (a size the driver does not take for
	 * it) is refused, as the driver would refuse it, never continued. */
	if (!rm_escape_size_ok(e, c->size))
		return refuse_escape(c, e->name, "escape with a size the driver does not accept");
	return e->action == RM_ACT_XFER ? handle_xfer(c) : dispatch(c, e);
}

/* record: the verdict counted, the decision audited and traced. */
static void record_decision(struct gs_session *sb, struct call *c, const struct answer *a)
{
	count_verdict(sb, c, a);
	if (a->kind != ANSWER_CONTINUE)
		gs_refusals_note(&sb->refusals, &c->d);
	if (c->audit && sb->audit) {
		c->d.tid = c->tid;
		if (gs_audit_decision(sb->audit, &c->d) < 0)
			sb->audit_failed = true;
	}
	if (sb->trace)
		trace_call(c, a);
}

/* Answers the trapped task (nothing to answer for ANSWER_NONE: the task
 * is gone). Returns false when the answer could not be delivered. */
static bool send_answer(struct gs_session *sb, const struct call *c, const struct answer *a,
                        uint64_t t0)
{
	if (a->kind == ANSWER_NONE)
		return true;
	struct seccomp_notif_resp *resp = c->scratch->resp;

	resp->id = c->scratch->req->id;
	resp->flags = a->kind == ANSWER_CONTINUE ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
	resp->val = a->kind == ANSWER_CONTINUE ? 0 : a->val;
	resp->error = a->kind == ANSWER_CONTINUE ? 0 : -a->error;
	/* Stop the clock before answering: with synchronous wake-up the
	 * answer runs the workload on this CPU before SEND returns. */
	if (sb->profile) {
		sb->prof_ns[c->nr & 0xff] += gs_monotonic_ns() - t0;
		sb->prof_n[c->nr & 0xff]++;
	}
	/* ENOENT: the task died, or a signal interrupted its wait (without
	 * WAIT_KILLABLE_RECV) and the kernel dropped the notification. */
	return ioctl(c->scratch->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0 || errno != ENOENT;
}

void gs_execute_notification(struct gs_session *sb, struct gs_scratch *scratch)
{
	uint64_t t0 = sb->profile ? gs_monotonic_ns() : 0;
	const struct seccomp_data *data = &scratch->req->data;
	struct call c = { .sb = sb, .scratch = scratch, .tid = (pid_t)scratch->req->pid, .dup = -1 };
	struct answer a;
	bool record = true;

	c.d.gpu = LEDGER_NO_GPU;
	c.abi = abi_of(data);
	if (c.abi && sb->quota.managed == GS_MANAGED_DENY && gs_abi_is_mmap(c.abi, (uint32_t)data->nr)) {
		/* managed = deny traps mmap calls shaped like a UVM mapping. */
		a = handle_uvm_mmap(&c, data);
	} else if (!c.abi || data->nr != c.abi->ioctl_nr) {
		/* Otherwise the filter traps only ioctl; anything else here
		 * is a filter bug, and a bug must not let a call through. */
		a = answer_errno(ENOSYS);
		record = false;
	} else {
		a = route_ioctl(sb, &c, data, &record);
	}
	if (record && a.kind != ANSWER_NONE)
		record_decision(sb, &c, &a);
	/* Drop our reference to the workload's file before it runs again. */
	if (c.dup >= 0)
		close(c.dup);
	c.dup = -1;
	/* A performed allocation whose answer is lost would stay made and
	 * charged, unknown to the task, which may retry it: undone. */
	if (!send_answer(sb, &c, &a, t0) && c.made.set && undo_abandoned_alloc(&c)) {
		a = answer_value(0);
		record_decision(sb, &c, &a);
	}
	if (c.dup >= 0)
		close(c.dup);
}
