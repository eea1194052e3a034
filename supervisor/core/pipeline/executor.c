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
 * The dup is not kept past the answer unless the worker's dup cache keeps
 * it (dupcache.h): a held dup keeps the workload's clients, and their
 * memory, alive, so a kept one is used only when kcmp proves the number
 * still names it, and closed within a bound when unused (or before any
 * reconcile that must see closed files released).
 *
 * This file routes a notification (gs_execute_notification, route_ioctl),
 * records its one decision and sends the answer. The calls that allocate
 * or control go through stages (docs/hacking.md): fetch, decode
 * (decode.c, pure), reconcile, verdict (verdict.c, pure), record, act and
 * commit (exec_alloc.c, exec_control.c, exec_handles.c); the escape
 * itself, trapped or carried by XFER, has its verdict here first
 * (gs_verdict_of_escape).
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
#include "decode.h"
#include "rm_decode.h"
#include "rm_tables.h"
#include "session.h"
#include "exec_int.h"
#include "filter.h"
#include "exec_managed.h"
#include "executor.h"
#include "stack.h"
#include "gpusandbox.h"
#include "own_rm.h"
#include "rm_own.h"
#include "uvm_call.h"

/* ---- RM_ALLOC, RM_ALLOC_OBJECT, VID_HEAP_CONTROL: exec_alloc.c ----------- */
/* ---- RM_CONTROL: exec_control.c ------------------------------------------ */
/* ---- RM_FREE, RM_DUP_OBJECT, RM_SHARE, REGISTER_FD: exec_handles.c -------- */

/* ---- flat escapes ---------------------------------------------------------- */

/* An escape the table marks flat (a struct without pointers and without
 * effect on the ledger) other than RM_SHARE, which has its stages in
 * exec_handles.c: performed from our copy. None today. */
static struct answer handle_flat(struct call *c)
{
	uint8_t top[NV_ABSOLUTE_MAX_IOCTL_SIZE];
	struct answer a;

	if (c->size > sizeof(top))
		return answer_errno(EINVAL);
	if (!fetch_trapped_top(c, top, c->size, &a))
		return a;
	int rc = exec_escape(c, c->nr, c->size, top);
	if (answer_write(c, c->argp, top, c->size) < 0 && rc == 0)
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
	struct answer a;

	if (c->size != sizeof(top) || c->nr != NV_ESC_EXPORT_TO_DMABUF_FD)
		return answer_errno(EINVAL);
	/* NV_ACTUAL_DEVICE_ONLY: the control device gets -EINVAL. */
	if (fd_is_control_file(c->dup))
		return answer_errno(EINVAL);
	if (!fetch_trapped_top(c, &top, sizeof(top), &a))
		return a;
	c->d.h_client = top.h_client;
	return refuse_with_status(c, &top, offsetof(struct nv_ioctl_export_to_dma_buf_fd, status),
	                          NV_ERR_NOT_SUPPORTED, GS_VERDICT_REFUSE,
	                          "dma-buf export would keep memory past its charge");
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
	case RM_ACT_EXEC_FLAT:         return c->nr == NV_ESC_RM_SHARE ? handle_share(c) : handle_flat(c);
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

static bool objects(const struct gs_call_verdict *v)
{
	return v->verdict == GS_VERDICT_REFUSE || v->verdict == GS_VERDICT_DENY;
}

/* The escape's verdict (gs_verdict_of_escape), on the number and size as
 * trapped or as XFER carries them; a refusal is the driver's -EINVAL,
 * audited. NULL with *a when refused, else the escape's table row. */
static const struct rm_escape *judge_escape(struct call *c, uint32_t nr, uint32_t size, bool in_xfer,
                                            struct answer *a)
{
	struct gs_rm_call rc;

	gs_decode_escape(c->sb->rm_abi, nr, size, in_xfer, &rc);
	struct gs_call_verdict v = gs_verdict_of_escape(&rc);
	if (!objects(&v))
		return rm_escape_find(c->sb->rm_abi, nr);
	*a = refuse_escape(c, rc.inner_name ? rc.inner_name : "ESCAPE", v.reason);
	return NULL;
}

/* XFER carries the real escape number in memory, where the workload can
 * change it after we looked. So the inner call is always performed by us
 * (never continued): the driver would otherwise read a different escape.
 * fetch the header, decode and judge the escape it names, then that
 * escape's own stages, on the pointer and size in our copy. */
static struct answer handle_xfer(struct call *c)
{
	struct nv_ioctl_xfer x;
	const struct rm_escape *inner;
	struct answer a;

	if (mem_read(c->tid, c->argp, &x, sizeof(x)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c))
		return answer_none();
	c->d.call = "IOCTL_XFER_CMD";
	c->nr = x.cmd;
	inner = judge_escape(c, x.cmd, x.size, true, &a);
	if (!inner)
		return a;
	c->via_xfer = true;
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
	if (c->answered)
		fprintf(f, ", answered without the driver");
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

/* The dup this call performs through: one the worker keeps, when kcmp
 * says the task's fd number names its file now (no pidfd_getfd, no fstat:
 * a kept dup is a control file, checked when it was kept, and a file's
 * node never changes), else a fresh pidfd_getfd. Either way the file
 * behind the number at one instant, before the fetch stage's ID_VALID
 * proves the task was the trapped one all along. *driver: the file is the
 * driver's (a control file or a GPU node). A fresh dup of a control file
 * is kept after the call (finish_dup); a GPU node never is. The driver
 * grants a device allocation to a caller holding that GPU's node
 * (nv_is_gpu_accessible scans the calling thread's fd table: kernel-open/
 * nvidia/nv.c, 580.95.05); every device allocation we perform is made in
 * a private table (private_table.h), so a node kept in the shared one
 * would vouch for none of them, but it would be one more GPU node in the
 * table that other calls run in, for nothing: RM clients, and with them
 * the hot path, live on control files, and a control file is no GPU's
 * node. -1 with errno when the fd cannot be taken. */
static int dup_for_call(struct call *c, bool *driver)
{
	struct gs_dup_cache *dc = &c->scratch->dups;
	enum gs_node_kind kind;
	int fd = -1;

	c->dup_slot = -1;
	if (gs_dup_cache_attached(dc) && dc->owner == c->sb) {
		fd = gs_dup_cache_take(dc, c->tid, c->wfd, &c->dup_slot);
		c->dup_keep = *driver = fd >= 0;
		if (fd >= 0)
			return fd;
	}
	/* Counted before the look (issue #31): a caller alone with its table
	 * then has a look nobody can undo (continue_other_file). Not where a
	 * table may be shared beyond a thread group, nor with the quiesce
	 * off (its tests' baselines). */
	c->alone_at_look = !c->sb->tables_shared && !c->sb->quiesce_off && gs_task_alone(c->tid);
	/* No dup of a file that is not the driver's (-1, errno ENODEV). */
	fd = dup_workload_fd_kind(&c->sb->pidfds, c->tid, c->wfd,
	                          GS_NODE_BIT(GS_NODE_CTL) | GS_NODE_BIT(GS_NODE_GPU), &kind);
	*driver = kind == GS_NODE_CTL || kind == GS_NODE_GPU;
	c->dup_keep = kind == GS_NODE_CTL;
	return fd;
}

/* After the call, before the answer: the dup goes back to its slot when
 * it may be kept (the task still waits for our answer: a task that is gone
 * leaves nothing worth keeping), else it is closed and the slot freed. */
static void finish_dup(struct call *c, const struct answer *a)
{
	if (c->dup_borrowed) {
		c->dup = -1;
		c->dup_borrowed = false;
		return;
	}
	if (c->dup_slot >= 0 && c->dup >= 0 && c->dup_keep && a->kind != ANSWER_NONE) {
		gs_dup_cache_park(&c->scratch->dups, c->dup_slot, c->dup, c->tid, c->wfd);
	} else {
		if (c->dup >= 0)
			close(c->dup);
		if (c->dup_slot >= 0)
			gs_dup_cache_release(&c->scratch->dups, c->dup_slot);
	}
	c->dup = -1;
	c->dup_slot = -1;
}

/* Where the answer will be written, for a call that always writes one
 * (an allocation's outputs, a UVM map's status), taken before the first
 * read: the fetch stage's ID_VALID, after that read, proves it the
 * trapped task's (note_fetch_valid), so its write needs no check of its
 * own; a kept file is taken unlooked, and its one look after the reads
 * proves both (fetch_reads_proven, round 12). Every other call opens it
 * at its first write, if any (answer_mem, exec_common.c: issue #31).
 * False, with *a, when it cannot be: a task already gone needs no
 * answer; one we may not reach fails closed, as a dup we may not take
 * does. */
static bool open_answer_mem(struct call *c, struct answer *a)
{
	if (take_kept_mem_unlooked(c) || task_mem_open(c->tid, &c->mem) == 0)
		return true;
	*a = errno == ESRCH || errno == ENOENT ? answer_none() : answer_errno(EPERM);
	return false;
}

/* The escapes whose answer always carries bytes the driver wrote: an
 * allocation (offsets, limits, attributes, a handle RM chose) and the
 * card list. Their answer memory is opened early (open_answer_mem). */
static bool always_writes(const struct rm_escape *e)
{
	switch (e->action) {
	case RM_ACT_EXEC_ALLOC:
	case RM_ACT_EXEC_ALLOC_OBJECT:
	case RM_ACT_EXEC_VID_HEAP:
	case RM_ACT_EXEC_CARD_INFO:
		return true;
	default:
		return false;
	}
}

/* A trapped word on a file that is not the driver's: another device's
 * ioctl that shares the bytes, continued. But the kernel resolves the fd
 * number again when it runs the continued call, and the driver reads only
 * the word's number and size (nvidia_ioctl, kernel-open/nvidia/nv.c,
 * 580.95.05; UVM compares the whole word, as route_uvm's trap does): a
 * task sharing the caller's fd table that dup2()s a driver file onto the
 * number in between would have the driver run a call nobody judged
 * (tests/adv/continue_swap: 16 GiB held under --mem 1g). So the table is
 * held still for the CONTINUE, as for a continued client allocation, and
 * the number checked again to name the file we looked at; a table that
 * cannot be held refuses the call (EPERM), audited. */
static struct answer continue_other_file(struct call *c, unsigned judged, const char *name,
                                         bool *record)
{
	const char *why = NULL;

	/* Alone with its table at the look (dup_for_call): only a holder of
	 * the table can change what the number names, and there was none
	 * but the caller, trapped since; no thread can be added but by a
	 * thread of the group, nor a sharing process (tables_shared was
	 * unset: such a clone is trapped and sets it first). So the look
	 * stands, with no stop and no second look; ID_VALID proves the tid
	 * counted and looked at was the trapped task's (issue #31). */
	if (c->alone_at_look)
		return notif_still_valid(c) ? answer_continue() : answer_none();
	if (hold_judged_file(c, judged, NULL, &why))
		return answer_continue();
	*record = true;
	c->d.call = name;
	c->d.verdict = GS_VERDICT_REFUSE;
	c->d.reason = why;
	c->audit = true;
	return answer_errno(EPERM);
}

/* Our own copy of the UVM file the call's fd number names. A file we hold
 * for its mappings is found with one kcmp instead of a look, a dup from
 * the task and its close (issue #16; the fetch's ID_VALID confirms the
 * look by tid), and its space (*space, else -1) needs no second search.
 * A map uses the held fd itself (c->dup_borrowed: issue #31, no dup and
 * close a map): the space is closed only under the session lock
 * (gs_uvm_space_tidy, the take-back, the reap), which a map holds from
 * here to its answer, and after a tidy of its own the map uses the fd no
 * more. A registration keeps a dup of its own: it lets the lock go
 * around the driver's call (exec_leave_lock), when another worker could
 * close the space, and the number could name another file by its end.
 * Otherwise no dup of a file that is not UVM's (dup_workload_fd_kind
 * looks first, and parks a dup a swap after the look made of a file that
 * is not the driver's). *other when the number names another file (with
 * our dup of it only when that file is another of the driver's); -1 with
 * errno when it cannot be taken. */
static int uvm_file_for_call(struct call *c, uint32_t cmd, bool *other, int *space)
{
	const struct gs_uvm_maps *m = &c->sb->uvm;
	enum gs_node_kind kind;

	*other = false;
	*space = gs_uvm_space_held(m, c->sb->ledger.self, c->tid, c->wfd);
	if (*space >= 0 && cmd == UVM_MAP_EXTERNAL_ALLOCATION) {
		c->dup_borrowed = true;
		return m->spaces[*space].fd;
	}
	if (*space >= 0)
		return fcntl(m->spaces[*space].fd, F_DUPFD_CLOEXEC, 0);
	int fd = dup_workload_fd_kind(&c->sb->pidfds, c->tid, c->wfd, GS_NODE_BIT(GS_NODE_UVM), &kind);
	/* Minor 0 only: nvidia-uvm-tools shares the major, not these calls. */
	if (fd < 0 ? errno == ENODEV : kind != GS_NODE_UVM || !fd_is_uvm(c->sb->uvm_major, fd))
		*other = true;
	return fd;
}

/* UVM's external-mapping calls (plain integers, the whole word compared):
 * performed by us on the UVM device itself; the same number on any other
 * file is that file's business, continued with the fd table held
 * (continue_other_file). The call's own dup of the UVM file is closed
 * after it: only the mapping records keep one (uvm_maps.h), for the take
 * back, since a dup keeps the VA space, and what it maps, alive. */
static struct answer route_uvm(struct call *c, uint32_t cmd, bool *record)
{
	struct answer a;
	bool other;
	int space;

	c->dup = uvm_file_for_call(c, cmd, &other, &space);
	if (other)
		return continue_other_file(c, GS_NODE_BIT(GS_NODE_UVM), "UVM command on another file", record);
	if (c->dup < 0)
		return answer_errno(errno == EBADF ? EBADF : EPERM);
	/* A map always writes its status back; the other two write only
	 * when they refuse (answer_mem opens it then). */
	if (cmd == UVM_MAP_EXTERNAL_ALLOCATION && !open_answer_mem(c, &a))
		return a;
	*record = true;
	return handle_uvm(c, cmd, space);
}

/* Routes an ioctl notification to its handler. Sets *record when the
 * answer is a decision to count, audit and trace; calls that are not RM
 * escapes (or not on an NVIDIA file) are answered without a record. */
static struct answer route_ioctl(struct call *c,
                                 const struct seccomp_data *data, bool *record)
{
	const struct rm_escape *e;
	uint32_t cmd;
	bool driver;

	*record = false;
	c->wfd = (int)data->args[0];
	cmd = (uint32_t)data->args[1]; /* the kernel's cmd is an unsigned int */
	c->argp = c->abi->ptr32 ? (data->args[2] & PTR32_MASK) : data->args[2];
	c->nr = NV_IOC_NR(cmd);
	c->size = NV_IOC_SIZE(cmd);
	if (gs_uvm_cmd_trapped(cmd)) {
		c->uvm = true;
		return route_uvm(c, cmd, record);
	}
	e = rm_escape_find(c->sb->rm_abi, c->nr);
	/* A word with no size bits is not an RM escape: UVM's commands are
	 * plain integers (33, 42, 74, ...) and some share a trapped low byte;
	 * the RM driver itself rejects a size-0 escape. */
	if ((e && e->action == RM_ACT_CONTINUE) || (!e && !rm_escape_nr_reserved(c->nr)) ||
	    c->size == 0)
		return answer_continue();
	/* --p2p-register answer: a P2P registration control the ledger
	 * proves the driver would accept is answered without it, so without
	 * a dup of the workload's fd (exec_control.c). Nor, usually, with
	 * the answer memory open: the caller's status was NV_OK already. */
	struct answer a;
	if (e && e->action == RM_ACT_EXEC_CONTROL && answers_p2p_registration(c, &a)) {
		c->d.call = e->name;
		*record = true;
		return a;
	}
	c->dup = dup_for_call(c, &driver);
	/* Another device's ioctl that merely shares the low byte (no dup was
	 * taken when the look through /proc said so). One whose size the
	 * driver does not take for this escape needs no hold: the driver
	 * would reject it whatever file the number names by then, and the
	 * size is in a register the workload cannot change (rm-abi.md 1.2).
	 * So other devices' ioctls (a DRM driver's, from nr 0x40; a tty's
	 * TCGETS2) pay no stop unless their size matches. */
	if (!driver && (c->dup >= 0 || errno == ENODEV)) {
		if (e && !rm_escape_size_ok(e, c->size))
			return answer_continue();
		return continue_other_file(c, GS_NODE_BIT(GS_NODE_CTL) | GS_NODE_BIT(GS_NODE_GPU),
		                           "RM escape on another file", record);
	}
	/* EBADF: the fd is not open, as the kernel would have said.
	 * Anything else (no right to the task): fail closed. */
	if (c->dup < 0)
		return answer_errno(errno == EBADF ? EBADF : EPERM);
	*record = true;
	/* An escape we do not know, the driver does not handle, or of a size
	 * it does not take: refused and audited (gs_verdict_of_escape). */
	if (!judge_escape(c, c->nr, c->size, false, &a))
		return a;
	if (always_writes(e) && !open_answer_mem(c, &a))
		return a;
	return e->action == RM_ACT_XFER ? handle_xfer(c) : dispatch(c, e);
}

/* A refusal's call stack, read when the audit log writes the refusal
 * (not for the repeats it folds). The thread is still blocked in its
 * notification: the answer is sent after the record. Read by tid, so
 * checked after: a task killed meanwhile may have left its tid to
 * another process, whose stack is none of the log's business (issue #17
 * item 13). */
static void fill_stack(void *ctx, struct gs_stack *out)
{
	const struct call *c = ctx;

	gs_stack_read(c->tid, out);
	if (!notif_still_valid(c)) {
		out->n = 0;
		out->truncated = false;
		out->error = "the thread was gone before its stack was read";
	}
}

/* record: the verdict counted, the decision audited and traced. */
static void record_decision(struct gs_session *sb, struct call *c, const struct answer *a)
{
	count_verdict(sb, c, a);
	if (a->kind != ANSWER_CONTINUE)
		gs_refusals_note(&sb->refusals, &c->d);
	if (c->audit && sb->audit) {
		c->d.tid = c->tid;
		if (sb->stacks && gs_outcome_is_refusal(gs_decision_outcome(&c->d))) {
			c->d.stack_fill = fill_stack;
			c->d.stack_ctx = c;
		}
		if (gs_audit_decision(sb->audit, &c->d) < 0)
			sb->audit_failed = true;
	}
	if (sb->trace)
		trace_call(c, a);
}

/* Answers the trapped task (nothing to answer for ANSWER_NONE: the task
 * is gone). Returns false when the answer could not be delivered. */
/* GPUSANDBOX_PROFILE: the call's handling up to its answer (prof_answer,
 * just before SEND: with synchronous wake-up the answer runs the
 * workload on this CPU before SEND returns), then what follows it
 * (prof_after). Split by gs_driver_ns into the driver's time and ours. */
/* The thread CPU clock is read only where the part after the answer
 * begins, which alone reports it: a read at the receipt would be one
 * more system call inside the part before it. */
static void prof_stamp(struct call *c, bool cpu)
{
	if (cpu)
		c->prof_cpu0 = gs_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	c->prof_t0 = gs_monotonic_ns();
	c->prof_drv0[0] = gs_driver_ns[0];
	c->prof_drv0[1] = gs_driver_ns[1];
}

/* The profile's row for c's kind: found by a linear search (profiling
 * only), made when new, the last row once every other is taken. */
static struct gs_call_prof *prof_row(struct gs_session *sb, const struct call *c)
{
	const uint8_t nr = (uint8_t)c->nr;
	const uint32_t what = c->d.has_class ? c->d.cls : c->d.has_control ? c->d.control : 0;

	for (unsigned i = 0; i < GS_PROF_KINDS; i++) {
		struct gs_call_prof *p = &sb->prof[i];
		if (!p->used)
			*p = (struct gs_call_prof){ .used = true, .uvm = c->uvm, .nr = nr, .what = what };
		if (p->uvm == c->uvm && p->nr == nr && p->what == what)
			return p;
	}
	return &sb->prof[GS_PROF_KINDS];
}

static void prof_answer(struct gs_session *sb, struct call *c)
{
	struct gs_call_prof *p = prof_row(sb, c);

	p->n++;
	p->ns += gs_monotonic_ns() - c->prof_t0;
	p->driver_ns += gs_driver_ns[0] - c->prof_drv0[0];
	p->own_ns += gs_driver_ns[1] - c->prof_drv0[1];
	p->lock_ns += c->scratch->lock_wait_ns;
	c->scratch->lock_wait_ns = 0;
	prof_stamp(c, true);
}

static void prof_after(struct gs_session *sb, const struct call *c)
{
	struct gs_call_prof *p = prof_row(sb, c);

	p->after_ns += gs_monotonic_ns() - c->prof_t0;
	p->after_cpu_ns += gs_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c->prof_cpu0;
	p->after_own_ns += gs_driver_ns[0] + gs_driver_ns[1] - c->prof_drv0[0] - c->prof_drv0[1];
}

static bool send_answer(struct gs_session *sb, struct call *c, const struct answer *a)
{
	if (a->kind == ANSWER_NONE || a->kind == ANSWER_DONE)
		return true;
	struct seccomp_notif_resp *resp = c->scratch->resp;

	resp->id = c->scratch->req->id;
	resp->flags = a->kind == ANSWER_CONTINUE ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
	resp->val = a->kind == ANSWER_CONTINUE ? 0 : a->val;
	resp->error = a->kind == ANSWER_CONTINUE ? 0 : -a->error;
	if (sb->profile)
		prof_answer(sb, c);
	if (c->scratch->before_answer)
		c->scratch->before_answer(c->scratch->flight_ctx);
	/* ENOENT: the task died, or a signal interrupted its wait (without
	 * WAIT_KILLABLE_RECV) and the kernel dropped the notification. */
	return ioctl(c->scratch->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0 || errno != ENOENT;
}

bool gs_execute_undo_resumed(struct gs_session *sb, struct gs_scratch *scratch,
                             const struct gs_resumed_alloc *r)
{
	struct call c = { .sb = sb, .scratch = scratch, .tid = r->tid, .wfd = r->wfd, .dup = -1,
	                  .mem = GS_TASK_MEM_CLOSED,
	                  .dup_slot = -1,
	                  .audit = true };
	struct answer a = answer_value(0);
	bool undone;

	c.d.gpu = LEDGER_NO_GPU;
	c.made.set = true;
	c.made.client = r->client;
	c.made.parent = r->parent;
	c.made.object = r->object;
	undone = undo_resumed_alloc(&c);
	if (c.dup >= 0)
		close(c.dup);
	if (undone)
		record_decision(sb, &c, &a);
	return undone;
}

/* follow_shared_tables (filter.h): a clone that makes a process sharing
 * its creator's fd table. From now on any quiesce of this sandbox walks
 * every process for the caller's sharers; set under the session lock,
 * before the clone runs, so no quiesce can miss the new process. */
static struct answer note_shared_table(struct call *c, const struct seccomp_data *data, bool *record)
{
	if (!GS_FILTER_CLONE_SHARES_FILES(data->args[0]))
		return answer_continue();
	c->sb->tables_shared = true;
	/* A quiesce lets its worker go once the continued caller is on its
	 * way (gs_quiesce_hand_off), so this may be a sharer the quiesce
	 * found held in this very trap: its clone would make a task that
	 * shares the caller's table and was never stopped, while the caller
	 * is still inside the kernel. It waits for every quiesce of the
	 * sandbox to have let its tasks go; one that does not within the
	 * caller's bound fails the clone (fail closed, as fork fails). */
	if (c->sb->test_clone_no_wait ||
	    gs_inflight_wait_none(c->sb->quiesces_live, GS_QUIESCE_CALLER_MS + GS_QUIESCE_STOP_MS))
		return answer_continue();
	*record = true;
	c->audit = true;
	c->d.call = "clone";
	c->d.verdict = GS_VERDICT_REFUSE;
	c->d.reason = "an fd table of the sandbox is held for a continued call";
	return answer_errno(EAGAIN);
}

void gs_execute_notification(struct gs_session *sb, struct gs_scratch *scratch)
{
	const struct seccomp_data *data = &scratch->req->data;
	struct call c = { .sb = sb, .scratch = scratch, .tid = (pid_t)scratch->req->pid, .dup = -1,
	                  .mem = GS_TASK_MEM_CLOSED,
	                  .dup_slot = -1 };
	struct answer a;
	bool record = true;

	c.d.gpu = LEDGER_NO_GPU;
	if (sb->profile)
		prof_stamp(&c, false);
	gs_scratch_forget(scratch);
	/* A continued call of this task's, handed off, is over. */
	if (!sb->test_no_caller_back)
		gs_quiesce_caller_back(&sb->handoffs, c.tid);
	c.abi = abi_of(data);
	if (c.abi && sb->quota.managed == GS_MANAGED_DENY && gs_abi_is_mmap(c.abi, (uint32_t)data->nr)) {
		/* managed = deny traps mmap calls shaped like a UVM mapping. */
		a = handle_uvm_mmap(&c, data);
	} else if (c.abi && c.abi->clone_nr >= 0 && data->nr == c.abi->clone_nr) {
		record = false;
		a = note_shared_table(&c, data, &record);
	} else if (!c.abi || data->nr != c.abi->ioctl_nr) {
		/* Otherwise the filter traps only ioctl; anything else here
		 * is a filter bug, and a bug must not let a call through. */
		a = answer_errno(ENOSYS);
		record = false;
	} else {
		a = route_ioctl(&c, data, &record);
	}
	if (record && a.kind != ANSWER_NONE)
		record_decision(sb, &c, &a);
	/* Our reference to the workload's file is dropped, or kept in the
	 * worker's dup cache, before the task runs again. */
	finish_dup(&c, &a);
	/* From here this task's call is answered: no longer held (quiesce). */
	atomic_store(&scratch->trapped_tid, 0);
	bool sent = send_answer(sb, &c, &a);
	/* A held fd table is let go once a continued caller has left its
	 * ioctl (or at once when nothing was continued). */
	bool continued = sent && a.kind == ANSWER_CONTINUE;
	if (!continued || sb->test_quiesce_wait || !gs_quiesce_hand_off(&sb->handoffs, c.quiesce))
		gs_quiesce_end(c.quiesce, continued);
	/* A performed allocation whose answer is lost would stay made and
	 * charged, unknown to the task, which may retry it: undone. */
	if (!sent && c.made.set && undo_abandoned_alloc(&c)) {
		a = answer_value(0);
		record_decision(sb, &c, &a);
	}
	/* A UVM map's dup of the memory in our own client, needed only
	 * until the map returned, and the share that allowed it: freed and
	 * revoked after the answer, off the workload's path (issue #16;
	 * own_rm.h says why the share must not stay). */
	gs_own_rm_drop_temp(&sb->own);
	if (c.dup >= 0)
		close(c.dup);
	answer_mem_done(&c);
	if (sb->profile && sent && a.kind != ANSWER_NONE && a.kind != ANSWER_DONE)
		prof_after(sb, &c);
}
