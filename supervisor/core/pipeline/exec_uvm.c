/* SPDX-License-Identifier: MIT */
/*
 * exec_uvm.c - UVM's external-mapping calls, performed by the supervisor
 * from its own copy (issue #17 item 9; SECURITY.md, "Memory that outlives
 * its handle").
 *
 * UVM_MAP_EXTERNAL_ALLOCATION dups the RM memory it maps into UVM's own
 * client and keeps it until the mapping goes, so the workload's RM_FREE
 * of its handle frees the handle, not the memory: on an H100 a workload
 * under --mem 2g held 4.6 GiB that way while the call was continued. A
 * continued call is read by the driver after we looked, so what it maps
 * is whatever the workload's memory says by then. Performed from our copy,
 * the mapping is the one we judged, and the ledger pins the memory it maps
 * (uvm_maps.h) until the mapping is gone. UVM takes the VA space from the
 * file, never from current->mm (uvm_map_external.c, 580.95.05), so our
 * dup of the workload's UVM file reaches its VA space; but it dups the
 * memory as the calling process, so the map names a dup of the memory in
 * our own client, made after the workload's client shared the memory with
 * that client alone (own_rm.h says why, and where that was measured).
 * Unmaps and frees run in the workload: uvm_maps.h says why that is
 * enough (a mapping whose memory's last handle went is taken back).
 *
 * UVM_REGISTER_CHANNEL cannot be made from our process (RM dups the
 * channel's group as the caller, uvm_maps.h says why that fails): it is
 * continued, with the caller held until it has left the ioctl, on a UVM
 * file we then hold, and what it may have registered is unregistered
 * before the ledger lets a channel's count go. Under --uvm-map as-user
 * it is made from our copy as the workload's uid (register_as_user).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec_int.h"
#include "own_rm.h"
#include "quiesce.h"
#include "rm_own.h"
#include "uvm_call.h"
#include "uvm_maps.h"

/* Performs our copy of the map, rewritten to name (client, memory) with
 * ctl at rmCtrlFd and rmStatus preset (a status the driver leaves is not
 * NV_OK): as uid for --uvm-map as-user (gs_driver_ioctl_as), else as we
 * are (GS_OWN_NO_UID). The driver's status, or NV_ERR_OPERATING_SYSTEM
 * when the ioctl itself failed (or uid could not be taken). */
static nv_status_t perform_map_of(struct call *c, const struct gs_uvm_layout *lay, uint8_t *params, int ctl,
                                  nv_handle_t client, nv_handle_t memory, uid_t uid)
{
	uint8_t *tail_at = params + UVM_MAP_EXTERNAL_TAIL_OFF(lay->max_gpus);
	const unsigned long cmd = UVM_MAP_EXTERNAL_ALLOCATION;
	struct uvm_map_external_tail tail;
	nv_status_t st;

	memcpy(&tail, tail_at, sizeof(tail));
	tail.rm_ctrl_fd = ctl;
	tail.h_client = client;
	tail.h_memory = memory;
	tail.rm_status = NV_ERR_GENERIC;
	memcpy(tail_at, &tail, sizeof(tail));
	if ((uid == GS_OWN_NO_UID ? gs_driver_ioctl(c->dup, cmd, params, false)
	                          : gs_driver_ioctl_as(c->dup, cmd, params, uid)) < 0)
		return NV_ERR_OPERATING_SYSTEM;
	memcpy(&st, params + gs_uvm_map_status_offset(lay), sizeof(st));
	return st;
}

/* The answer: the status in the workload's struct, ioctl() 0, as UVM
 * answers. Only rmStatus goes back: every other field is an input the
 * driver leaves as it was, and our copy of the map names our own client. */
static struct answer answer_uvm(struct call *c, uint32_t status_off, nv_status_t st,
                                enum gs_verdict v, const char *why)
{
	if (answer_write(c, c->argp + status_off, &st, sizeof(st)) < 0)
		return answer_errno(EFAULT);
	c->d.verdict = v;
	c->d.has_status = true;
	c->d.status = st;
	c->d.reason = why;
	if (v != GS_VERDICT_ALLOW || st != NV_OK)
		c->audit = true;
	return answer_value(0);
}

/* Is ctl, our dup of the caller's rmCtrlFd, the client's own control file
 * (kcmp against its release watch)? The tests' baselines of uvm_ctlfd
 * (GPUSANDBOX_TEST_UVM_CTLFD, session.h) skip the check, or trust the look
 * at the caller's fd number that handle_map made before the dup, as a
 * check made on another look at the fd table than the file used would. */
static bool ctl_is_client_file(const struct call *c, nv_handle_t h_client, int ctl)
{
	if (c->sb->uvm_ctlfd_test != GS_UVM_CTLFD_CHECKED)
		return true;
	return ledger_fd_is_client_file(&c->sb->ledger, h_client, ctl) == 1;
}

/* The caller's rmCtrlFd as the map knows it: fd, our dup of it (-1:
 * none), or, when the client is shared already and no dup is needed
 * (issue #31), looked_on_fd: the task's number named the client's own
 * control file when looked at by tid (handle_map). */
struct map_ctl {
	int  fd;
	bool looked_on_fd;
};

/* What the ledger says of the map's client and memory, and of ctl, our
 * dup of the caller's rmCtrlFd (reconcile: the client's file, by kcmp
 * against its watch). Issue #31: one kcmp where there were two. When ctl
 * is found to be the client's watched file, the client's file is alive:
 * that kcmp (KCMP_EPOLL_TFD) answers 0 only when it finds the watch's
 * epoll item, which the kernel removes when the file is released
 * (eventpoll_release in __fput), and our dup holds the file open besides;
 * so the separate liveness kcmp (ledger_client_file_alive) would only say
 * yes again. It is asked only when ctl is not the client's file (or there
 * is no ctl), and the baselines of uvm_ctlfd, which skip the file check,
 * ask it as before. */
static void take_uvm_facts(struct call *c, const struct gs_uvm_call *u, const struct map_ctl *m,
                           struct gs_uvm_facts *f, struct ledger_facts *mem)
{
	struct ledger *l = &c->sb->ledger;
	const bool checked = c->sb->uvm_ctlfd_test == GS_UVM_CTLFD_CHECKED;

	memset(f, 0, sizeof(*f));
	if (ledger_has(l, u->h_client, u->h_client)) {
		const bool on_fd = m->fd >= 0 ? ctl_is_client_file(c, u->h_client, m->fd) : m->looked_on_fd;
		f->client_ours = (checked && on_fd) || ledger_client_file_alive(l, u->h_client);
		f->client_on_fd = f->client_ours && on_fd;
	}
	f->memory_known = ledger_object_facts(l, u->h_client, u->h_memory, mem);
	f->memory_mappable = f->memory_known &&
	                     (mem->kind == RM_CLASS_VIDMEM || mem->kind == RM_CLASS_SYSMEM);
}

static int ctl_from_kept_dup(struct call *c, int rm_ctrl_fd);

/* ctl_from_kept_dup: the task is gone (no answer). */
#define CTL_TASK_GONE (-2)

/* Our dup of the caller's rmCtrlFd, taken for a share only when the map
 * came without one (its client was shared already, handle_map): the kept
 * dup, or the look by tid and a fresh dup, as handle_map takes it; then
 * the verdict's own check that it is the client's control file (kcmp
 * against the client's watch). -1 when there is none such. */
static int ctl_for_share(struct call *c, nv_handle_t h_client, int rm_ctrl_fd)
{
	const struct ledger *l = &c->sb->ledger;
	int ctl = ctl_from_kept_dup(c, rm_ctrl_fd);

	if (ctl == CTL_TASK_GONE)
		return -1;
	if (ctl < 0 && ledger_task_fd_is_client_file(l, h_client, c->tid, rm_ctrl_fd) == 1)
		ctl = dup_trapped_fd(c, rm_ctrl_fd);
	if (ctl >= 0 && !ctl_is_client_file(c, h_client, ctl)) {
		close(ctl);
		return -1;
	}
	return ctl;
}

/* Our dup of the workload's memory at GS_OWN_TEMP_DUP, made possible by a
 * share (own_rm.h): the client's, made once per client (issue #31) and
 * found in force by the dup itself; shared again and tried once more when
 * the dup is refused (the workload replaced its client's list, with
 * SET_INHERITED_SHARE_POLICY or an RM_SHARE of its client, or freed the
 * client and made another at its handle); and, when even that is refused
 * (an ancestor's or the memory's own list was edited: the memory no
 * longer inherits the client's), the memory's own share, revoked after
 * the answer as before. Each share goes through ctl, our dup of the
 * caller's rmCtrlFd proven the client's own control file, taken here if
 * handle_map had none; the per-memory share takes ctl over (set to -1). */
static nv_status_t dup_for_map(struct call *c, const struct gs_uvm_call *u, struct map_ctl *m, int gpu)
{
	struct gs_own_rm *o = &c->sb->own;
	const bool per_client = gs_own_rm_shares_clients(o) && !gs_own_rm_no_inherit(o, u->h_client);
	nv_status_t st = NV_ERR_INSUFFICIENT_PERMISSIONS;

	if (per_client && gs_own_rm_client_shared(o, u->h_client)) {
		st = gs_own_rm_dup_shared(o, gpu, u->h_client, u->h_memory);
		if (st != NV_ERR_INSUFFICIENT_PERMISSIONS || o->test_no_reshare)
			return st;
		gs_own_rm_forget_client(o, u->h_client);
	}
	if (m->fd < 0 && (m->fd = ctl_for_share(c, u->h_client, u->rm_ctrl_fd)) < 0)
		return st;
	if (per_client && gs_own_rm_share_client(o, m->fd, u->h_client) == NV_OK) {
		st = gs_own_rm_dup_shared(o, gpu, u->h_client, u->h_memory);
		if (st != NV_ERR_INSUFFICIENT_PERMISSIONS)
			return st;
		/* Shared this instant and still refused: this client's memory
		 * does not inherit its list, so its maps go per memory. */
		gs_own_rm_note_no_inherit(o, u->h_client);
		if (c->sb->trace)
			fprintf(c->sb->trace, "[gpusandbox] UVM map: client 0x%x's memory does not inherit its "
			        "client's share: shared per memory from now on\n", u->h_client);
	}
	st = gs_own_rm_dup_temp(o, gpu, m->fd, u->h_client, u->h_memory);
	m->fd = -1;
	return st;
}

/* The loop both calls made as the workload's uid run (map_as_user,
 * register_as_user): the workload's client shared by token unless a share
 * is recorded (through *ctl, our dup of the caller's rmCtrlFd proven the
 * client's own control file: the caller's, else taken here by
 * ctl_for_share and left in *ctl for the caller to close), then the call
 * (perform, given *ctl); a refusal for want of rights under a recorded
 * share (the workload may have replaced its client's list since) drops
 * the record and runs the loop once more, sharing afresh. The call's
 * status, or NV_ERR_INSUFFICIENT_PERMISSIONS when no share could be
 * made. */
typedef nv_status_t (*as_user_call_fn)(struct call *c, const void *what, int ctl);

static nv_status_t as_user_with_token(struct call *c, nv_handle_t h_client, int rm_ctrl_fd, int *ctl,
                                      as_user_call_fn perform, const void *what)
{
	struct gs_own_rm *o = &c->sb->own;
	nv_status_t st = NV_ERR_INSUFFICIENT_PERMISSIONS;

	for (int attempt = 0; attempt < 2; attempt++) {
		const bool recorded = gs_own_rm_token_shared(o, h_client);
		if (!recorded) {
			if (*ctl < 0 && (*ctl = ctl_for_share(c, h_client, rm_ctrl_fd)) < 0)
				return NV_ERR_INSUFFICIENT_PERMISSIONS;
			if (gs_own_rm_share_token(o, *ctl, h_client) != NV_OK)
				return NV_ERR_INSUFFICIENT_PERMISSIONS;
		}
		st = perform(c, what, *ctl);
		if (st != NV_ERR_INSUFFICIENT_PERMISSIONS || !recorded)
			return st;
		gs_own_rm_forget_token(o, h_client);
	}
	return st;
}

/* What map_as_user performs: the workload's own handles in our copy. */
struct map_as_user_call {
	const struct gs_uvm_call   *u;
	const struct gs_uvm_layout *lay;
	uint8_t                    *params;
};

static nv_status_t perform_map_as_user(struct call *c, const void *what, int ctl)
{
	const struct map_as_user_call *m = what;

	return perform_map_of(c, m->lay, m->params, ctl, m->u->h_client, m->u->h_memory, c->sb->own.map_uid);
}

/* --uvm-map as-user: the map as the workload makes it, naming its own
 * client and memory, made by this worker with the workload's euid for the
 * ioctl's length (gs_driver_ioctl_as), after the client was shared by
 * token (gs_own_rm_share_token: UVM's dup then passes as it does for the
 * workload's own thread). What is mapped is what the verdict judged, as
 * through our dup: our copy names the handles, and no call of the sandbox
 * can free or replace them meanwhile (they are trapped and wait for the
 * session lock we hold; a client whose file is closed is gone, and a
 * client made at its handle by another process is refused by its token,
 * whose uid is the sandbox's alone). rmCtrlFd is not read by the map
 * (uvm_map_external.c keeps it unused in every branch 535-595): it names
 * our dup of the caller's control file where we hold one, else -1.
 * NV_ERR_INSUFFICIENT_PERMISSIONS when the driver refused the dup (the
 * memory's own list was edited, the workload replaced its client's, or
 * its token is not this uid's): the caller maps through our own client
 * then. A record of a share the workload has since replaced is shared
 * again once (as_user_with_token). */
static nv_status_t map_as_user(struct call *c, const struct gs_uvm_call *u, struct map_ctl *m,
                               const struct gs_uvm_layout *lay, uint8_t *params)
{
	const struct map_as_user_call what = { .u = u, .lay = lay, .params = params };

	return as_user_with_token(c, u->h_client, u->rm_ctrl_fd, &m->fd, perform_map_as_user, &what);
}

/* The map through our own client: we dup the workload's memory under our
 * device on its GPU (dup_for_map: the workload's client shares it with our
 * client alone), UVM maps our dup, and once the answer is sent our dup goes
 * (UVM holds its own; a per-memory share is revoked then too: own_rm.h).
 * params is our copy, rewritten to name our client. */
static nv_status_t map_through_own(struct call *c, const struct gs_uvm_call *u, struct map_ctl *m,
                                   const struct gs_uvm_layout *lay, uint8_t *params, int gpu)
{
	struct gs_own_rm *o = &c->sb->own;
	nv_status_t st;

	if (gs_own_rm_maps_as_user(o) && (st = map_as_user(c, u, m, lay, params)) != NV_ERR_INSUFFICIENT_PERMISSIONS)
		return st;
	st = gs_own_rm_device(o, gpu, c->sb->gpu_map, c->sb->n_gpu_map);
	if (st != NV_OK)
		return st;
	st = dup_for_map(c, u, m, gpu);
	if (st != NV_OK)
		return st;
	return perform_map_of(c, lay, params, o->ctl_fd, o->client, GS_OWN_TEMP_DUP, GS_OWN_NO_UID);
}

/* Takes a mapping back that could not be recorded (no memory for the
 * record): unmapped on each GPU it was made on, so that nothing maps
 * memory the ledger does not pin. */
static void unmap_unrecorded(struct call *c, const struct gs_uvm_call *u)
{
	for (uint32_t i = 0; i < u->n_gpus; i++)
		(void)gs_uvm_unmap(c->dup, u->gpus[i].gpu_uuid, u->base, u->last);
}

/* The calling process, remembered by the space: when every process that
 * mapped through a UVM file has exited, what they mapped is taken back
 * (uvm_maps.h). A leader's tid is its tgid (pidfd_open takes only
 * leaders without PIDFD_THREAD); another thread's is read from /proc. The
 * tid is checked again after: it may have been reused meanwhile.
 *
 * A leader the space knows, whose pidfd shows it alive (poll), needs no
 * ID_VALID of its own (issue #31): the fetch's proof (fetch_map: an
 * ID_VALID, or the kept answer file's look) found the trapped task at
 * this tid, and the pidfd's process held the tid as
 * its pid from before that until the poll, since a pid goes to no other
 * task while its process lives (a leader that exits first stays a zombie
 * holding it). So every look by tid made in between (the rmCtrlFd's,
 * take_uvm_facts) was at that process's leader: the trapped task, or,
 * once another of its threads exec'd (which kills the trapped task and
 * ends its notification), the thread that took the leader's pid in the
 * same process, whose fd table the look then read: what it found holds
 * for the process, which could ask for the same map itself. A map made
 * after the task lost its notification is recorded and pinned as any,
 * and its lost answer changes nothing. */
static int note_mapper(struct call *c, uint32_t space)
{
	pid_t tgid = c->tid;

	if (gs_uvm_space_knows_leader(&c->sb->uvm, space, c->tid))
		return 0;
	int pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);

	if (pidfd < 0) {
		char comm[2];
		tgid = 0;
		gs_read_task(c->tid, &tgid, comm, sizeof(comm));
		pidfd = tgid > 0 ? (int)syscall(SYS_pidfd_open, tgid, 0) : -1;
	}
	if (pidfd < 0)
		return -1;
	if (!notif_still_valid(c)) {
		close(pidfd);
		return -1;
	}
	return gs_uvm_space_note_mapper(&c->sb->uvm, space, tgid, pidfd);
}

/* commit: on each GPU, the mapping replaced what it overlapped, and pins
 * the memory it maps. False when a record could not be made (the caller
 * then takes the mapping back). */
static bool commit_map(struct call *c, const struct gs_uvm_call *u, int space,
                       uint64_t released[GS_MAX_GPUS])
{
	struct ledger *l = &c->sb->ledger;
	bool ok = true;

	for (uint32_t i = 0; i < u->n_gpus; i++) {
		const uint8_t *uuid = u->gpus[i].gpu_uuid;
		if (gs_uvm_maps_cut(&c->sb->uvm, l, (uint32_t)space, uuid, u->base, u->last, released) < 0)
			ok = false;
		uint32_t pin = ledger_pin(l, u->h_client, u->h_memory);
		if (pin != LEDGER_NO_PIN &&
		    gs_uvm_maps_add(&c->sb->uvm, l, (uint32_t)space, uuid, u->base, u->last, pin, released) < 0)
			ok = false;
	}
	return ok;
}

/* A pin on the memory for the driver's map, taken before it and dropped
 * once the mapping's own pins are (commit_map), or the map failed. It is
 * journalled, so an agent killed while the driver maps leaves its
 * successor a pin to rebuild (a resumed pin: the memory stays charged
 * until the container ends) rather than a mapping nothing charges: the
 * commit never ran, and a task that gave its call up meanwhile (a signal)
 * is not asked again (tests/agent/run.sh uvmkill-runc). LEDGER_NO_PIN
 * when the ledger does not hold the memory, or for
 * GPUSANDBOX_TEST_NO_PIN_IN_FLIGHT (the baseline of that case; read by
 * gs_session_init). */
static uint32_t pin_in_flight(struct call *c, const struct gs_uvm_call *u)
{
	if (c->sb->uvm.test_no_pin_in_flight)
		return LEDGER_NO_PIN;
	return ledger_pin(&c->sb->ledger, u->h_client, u->h_memory);
}

/* The GPU (minor) our dup of the memory hangs under: the memory's own,
 * or for memory the ledger names no GPU for (RM_ALLOC_MEMORY's system
 * memory) the driver's first. */
static int dup_gpu(const struct call *c, int mem_gpu)
{
	if (mem_gpu >= 0)
		return mem_gpu;
	return c->sb->n_gpu_map ? (int)c->sb->gpu_map[0].minor : 0;
}

static struct answer map_judged(struct call *c, const struct gs_uvm_call *u, struct map_ctl *ctl,
                                const struct gs_uvm_layout *lay, uint8_t *params, int held)
{
	uint32_t status_off = gs_uvm_map_status_offset(lay);
	struct gs_uvm_facts f;
	struct ledger_facts mem = { .gpu = LEDGER_NO_GPU };

	take_uvm_facts(c, u, ctl, &f, &mem);
	struct gs_call_verdict v = gs_verdict_of_uvm(u, &f);
	c->d.gpu = mem.gpu;
	if (v.verdict != GS_VERDICT_ALLOW)
		return answer_uvm(c, status_off, v.status, v.verdict, v.reason);
	int space = held >= 0 ? held : gs_uvm_space_of(&c->sb->uvm, &c->sb->ledger, c->dup);
	if (space < 0 || note_mapper(c, (uint32_t)space) < 0) {
		if (space >= 0)
			gs_uvm_space_tidy(&c->sb->uvm, (uint32_t)space);
		return notif_still_valid(c) ? answer_uvm(c, status_off, NV_ERR_OPERATING_SYSTEM, GS_VERDICT_REFUSE,
		                                         "the mapping could not be followed")
		                            : answer_none();
	}
	uint32_t in_flight = pin_in_flight(c, u);
	nv_status_t st = map_through_own(c, u, ctl, lay, params, dup_gpu(c, mem.gpu));
	uint64_t released[GS_MAX_GPUS] = { 0 }, before[GS_MAX_GPUS];
	if (st != NV_OK) {
		ledger_unpin(&c->sb->ledger, in_flight, released);
		gs_uvm_space_tidy(&c->sb->uvm, (uint32_t)space);
		return answer_uvm(c, status_off, st, GS_VERDICT_ALLOW, NULL);
	}
	memcpy(before, c->sb->ledger.used, sizeof(before));
	bool recorded = commit_map(c, u, space, released);
	/* The mapping's own pins are taken (or it is taken back below). */
	ledger_unpin(&c->sb->ledger, in_flight, released);
	if (!recorded) {
		unmap_unrecorded(c, u);
		(void)gs_uvm_maps_cut(&c->sb->uvm, &c->sb->ledger, (uint32_t)space, NULL, u->base, u->last,
		                      released);
		gs_uvm_space_tidy(&c->sb->uvm, (uint32_t)space);
		note_release(c, released, before);
		return answer_uvm(c, status_off, NV_ERR_NO_MEMORY, GS_VERDICT_REFUSE,
		                  "the mapping could not be recorded");
	}
	note_release(c, released, before);
	return answer_uvm(c, status_off, NV_OK, GS_VERDICT_ALLOW, NULL);
}

/* The caller's rmCtrlFd from the worker's dup cache (issue #31): CUDA
 * names in its maps the control file it makes its RM calls on, which the
 * worker keeps (dupcache.h). One kcmp (KCMP_FILE, gs_dup_cache_take)
 * proves that the task's number names the kept file at that instant,
 * exactly what a fresh pidfd_getfd would have taken, and the ID_VALID
 * after it proves the tid was the trapped task's then; the kept file is a
 * control file (checked when it was kept, and a file's node never
 * changes), so nothing of the workload's that could be a FUSE file is
 * dup'ed. That replaces the look by tid, pidfd_getfd and its fstat. Our
 * copy is a dup of the kept dup, because the share takes ownership of
 * ctl (gs_own_rm_dup_temp) and the kept one goes back to its slot. Which
 * client's file it is, the verdict's kcmp against the client's watch
 * still says (take_uvm_facts), as for a fresh dup. -1 on a miss (the
 * caller dups as before), CTL_TASK_GONE when the ID_VALID fails. The
 * uvm_ctlfd baselines take the old path. */
static int ctl_from_kept_dup(struct call *c, int rm_ctrl_fd)
{
	struct gs_dup_cache *dc = &c->scratch->dups;
	int slot, kept, ctl;

	if (c->sb->uvm_ctlfd_test != GS_UVM_CTLFD_CHECKED || !gs_dup_cache_attached(dc) ||
	    dc->owner != c->sb)
		return -1;
	kept = gs_dup_cache_take(dc, c->tid, rm_ctrl_fd, &slot);
	if (kept < 0) {
		if (slot >= 0)
			gs_dup_cache_release(dc, slot);
		return -1;
	}
	ctl = fcntl(kept, F_DUPFD_CLOEXEC, 0);
	gs_dup_cache_park(dc, slot, kept, c->tid, rm_ctrl_fd);
	if (ctl >= 0 && !notif_still_valid(c)) {
		close(ctl);
		return CTL_TASK_GONE;
	}
	return ctl;
}

/* No dup of rmCtrlFd when the map's client is shared already (issue #31):
 * the dup of the memory goes through our own file and the share in force,
 * so the caller's file is needed only for the verdict's question, "does
 * the caller hold the client's own control file at rmCtrlFd?", which is
 * the question UVM asks natively (it takes the file behind the number
 * once, when the call is made). One look by tid answers it (kcmp of the
 * task's number against the client's release watch) and an ID_VALID
 * after it (note_mapper's, or for a leader the space knows, its pidfd
 * found alive after the fetch's) proves the tid the trapped task's at the look; a number
 * swapped after the look changes nothing that is used. A dup of the
 * memory refused then (the share no longer in force) takes the dup
 * (ctl_for_share) and shares again. Not for the uvm_ctlfd baselines,
 * which look at a dup as before. */
static bool shared_needs_no_dup(const struct call *c, const struct gs_uvm_call *u)
{
	const struct gs_own_rm *o = &c->sb->own;

	if (c->sb->uvm_ctlfd_test != GS_UVM_CTLFD_CHECKED)
		return false;
	if (gs_own_rm_maps_as_user(o))
		return gs_own_rm_token_shared(o, u->h_client);
	return gs_own_rm_shares_clients(o) && gs_own_rm_client_shared(o, u->h_client);
}

/* The caller's rmCtrlFd is dup'ed once, and both the verdict and the
 * share are of that file: a number swapped after the dup changes
 * neither. The dup's own ID_VALID proves it the trapped task's. Before
 * it, one look at the caller's fd table by tid (kcmp against the client's
 * release watch, no dup): a number that names another file is not dup'ed
 * at all, for closing our dup of a FUSE file the workload serves would
 * wait for its server's FLUSH (tests/adv/uvm_ctlfd fuse). Only a swap
 * that lands between that look and the dup gets a file of the
 * workload's dup'ed, and that dup is parked, not closed (workload.h),
 * and the map refused. */
static struct answer handle_map(struct call *c, const struct gs_uvm_call *u,
                                const struct gs_uvm_layout *lay, uint8_t *params, int held)
{
	const struct ledger *l = &c->sb->ledger;
	struct map_ctl ctl = { .fd = -1 };

	if (shared_needs_no_dup(c, u)) {
		/* The look is proven the trapped task's by the ID_VALID that
		 * note_mapper makes before anything is performed (map_judged):
		 * that task is alive after the look, so the tid named it at
		 * the look. A refusal decided on a look of another task is
		 * answered to none (the answer's write and SEND check the
		 * notification too). Issue #31: one ID_VALID fewer a map. */
		ctl.looked_on_fd = ledger_task_fd_is_client_file(l, u->h_client, c->tid, u->rm_ctrl_fd) == 1;
	} else if ((ctl.fd = ctl_from_kept_dup(c, u->rm_ctrl_fd)) == CTL_TASK_GONE) {
		return answer_none();
	} else if (ctl.fd >= 0) {
		/* The verdict's kcmp (take_uvm_facts) proves it the client's. */
	} else if (c->sb->uvm_ctlfd_test == GS_UVM_CTLFD_UNCHECKED ||
	    ledger_task_fd_is_client_file(l, u->h_client, c->tid, u->rm_ctrl_fd) == 1) {
		test_look_delay();
		ctl.fd = dup_trapped_fd(c, u->rm_ctrl_fd);
		if (ctl.fd < 0 && errno == ESRCH)
			return answer_none();
	}
	struct answer a = map_judged(c, u, &ctl, lay, params, held);
	if (ctl.fd >= 0)
		close(ctl.fd);
	return a;
}

/* UVM_ALLOC_DEVICE_P2P dups the memory behind a range of P2P pages and
 * keeps it until the range is freed, as a map does; nothing CUDA needs
 * for compute uses it (it backs third-party PCI peers: GPUDirect RDMA
 * through P2PDMA), so it is refused, as a driver without P2P pages
 * answers (NV_ERR_NOT_SUPPORTED when device_p2p_initialised is unset,
 * uvm_va_range_device_p2p.c), whatever its struct says. */
static struct answer refuse_device_p2p(struct call *c)
{
	c->d.call = "UVM_ALLOC_DEVICE_P2P";
	c->size = sizeof(struct uvm_alloc_device_p2p_params);
	/* The task may be gone already: no answer then (the answer's
	 * memory is opened and checked at the write, answer_mem). */
	if (!notif_still_valid(c))
		return answer_none();
	return answer_uvm(c, offsetof(struct uvm_alloc_device_p2p_params, rm_status),
	                  NV_ERR_NOT_SUPPORTED, GS_VERDICT_REFUSE,
	                  "P2P pages would keep memory past its charge");
}

/* Our copy of a registration (what), made on our dup of its UVM file as
 * the workload's uid (gs_driver_ioctl_as) with rmStatus preset (a status
 * the driver leaves is not NV_OK); ctl is not passed: UVM never reads the
 * registration's rmCtrlFd (register_as_user). The driver takes about a
 * millisecond, so the session lock is let go around it where the runner
 * can hand the listener over (the command line's; the agent keeps it),
 * as for a slow control (exec_escape): the call uses only the worker's
 * dup and our copy, and is counted in flight meanwhile (uvm_maps.h), as
 * a continued registration is until its caller has left the ioctl, so
 * that no listed channel handle is taken for unregistered while it may
 * still land. The driver's status, or NV_ERR_OPERATING_SYSTEM when the
 * ioctl itself failed. */
static nv_status_t perform_register_as_user(struct call *c, const void *what, int ctl)
{
	struct gs_session *sb = c->sb;
	struct uvm_register_channel_params ours = *(const struct uvm_register_channel_params *)what;

	(void)ctl;
	ours.rm_ctrl_fd = -1;
	ours.rm_status = NV_ERR_GENERIC;
	gs_inflight_begin(sb->uvm.registers);
	const bool off_lock = exec_leave_lock(c);
	const int rc = gs_driver_ioctl_as(c->dup, UVM_REGISTER_CHANNEL, &ours, sb->own.map_uid);
	exec_retake_lock(c, off_lock);
	gs_inflight_end(sb->uvm.registers);
	return rc < 0 ? NV_ERR_OPERATING_SYSTEM : ours.rm_status;
}

/* --uvm-map as-user: the registration made by this worker with the
 * workload's euid, from our copy, on our dup of the UVM file, naming the
 * workload's own client and channel, once the client is shared by token
 * as for a map (map_as_user): RM dups the channel's group into UVM's
 * client as the calling thread, whose token the share lets in
 * (nvGpuOpsRetainChannel, nv_gpu_ops.c; cliresShareCallback,
 * client_resource.c, 580.95.05). Nothing of the workload's is read after
 * our copy: the file is ours (the space, a registrant before the call),
 * the pair is our copy's, and UVM never reads rmCtrlFd
 * (uvm_user_channel.c, "Bug 1624521", 535 to 595). So no fd table need
 * be held still and the caller is not seized: no quiesce. False when not
 * made (the mode off, a client that is not the sandbox's, no share to be
 * had, or the driver refused it for want of rights even after a fresh
 * share): the caller continues it then, as without the mode, and the
 * driver judges it with the caller's own rights. */
static bool register_as_user(struct call *c, const struct uvm_register_channel_params *p,
                             const struct gs_uvm_channel_call *u, struct answer *a)
{
	const uint32_t status_off = offsetof(struct uvm_register_channel_params, rm_status);
	struct gs_own_rm *o = &c->sb->own;
	const struct ledger *l = &c->sb->ledger;

	if (!gs_own_rm_maps_as_user(o) || !ledger_has(l, u->h_client, u->h_client) ||
	    !ledger_client_file_alive(l, u->h_client))
		return false;
	int ctl = -1;
	const nv_status_t st = as_user_with_token(c, u->h_client, u->rm_ctrl_fd, &ctl, perform_register_as_user, p);
	if (ctl >= 0)
		close(ctl);
	if (st == NV_ERR_INSUFFICIENT_PERMISSIONS)
		return false;
	c->sb->uvm.n_registers_made++;
	*a = answer_uvm(c, status_off, st, GS_VERDICT_ALLOW, NULL);
	return true;
}

/* UVM_REGISTER_CHANNEL, continued (uvm_maps.h): the UVM file becomes a
 * registrant space we hold, the caller's fd table is held still and the
 * caller seized until it has left the ioctl, so the registration can
 * land only in that file, and is counted in flight until then. The pair
 * it names is read for the record alone: any task sharing the page may
 * rewrite it after our read, and nothing is decided on it. A call that
 * cannot be followed so is refused, as UVM refuses one it cannot serve. */
static struct answer handle_register_channel(struct call *c, int held)
{
	const uint32_t status_off = offsetof(struct uvm_register_channel_params, rm_status);
	struct uvm_register_channel_params p;
	struct gs_uvm_channel_call u;
	struct gs_session *sb = c->sb;
	const char *why = NULL;
	struct answer made;

	c->d.call = "UVM_REGISTER_CHANNEL";
	c->size = sizeof(p);
	const bool decoded = fetch_top_bytes(c, &p, sizeof(p)) == 0 &&
	                     gs_decode_uvm_register_channel(&p, sizeof(p), &u) == 0;
	if (decoded) {
		c->d.h_client = u.h_client;
		c->d.h_object = u.h_channel;
	}
	if (!notif_still_valid(c))
		return answer_none();
	int space = held >= 0 ? held : gs_uvm_space_of(&sb->uvm, &sb->ledger, c->dup);
	if (space < 0 || note_mapper(c, (uint32_t)space) < 0 ||
	    gs_uvm_space_note_registrant(&sb->uvm, &sb->ledger, (uint32_t)space) < 0) {
		if (space >= 0)
			gs_uvm_space_tidy(&sb->uvm, (uint32_t)space);
		return notif_still_valid(c) ? answer_uvm(c, status_off, NV_ERR_OPERATING_SYSTEM, GS_VERDICT_REFUSE,
		                                         "the registration could not be followed")
		                            : answer_none();
	}
	if (decoded && register_as_user(c, &p, &u, &made))
		return made;
	if (!hold_judged_file(c, GS_NODE_BIT(GS_NODE_UVM), sb->uvm.registers, &why))
		return answer_uvm(c, status_off, NV_ERR_INSUFFICIENT_PERMISSIONS, GS_VERDICT_REFUSE, why);
	c->d.verdict = GS_VERDICT_ALLOW;
	return answer_continue();
}

/* GPU entries read with the map's head and tail: a map names one entry
 * per GPU it maps on, and most name one. */
#define MAP_ENTRIES_FIRST 4u

/* fetch: the bytes of the map UVM reads (its head, the GPU entries its
 * count names, its tail) into params, the rest zeroed (issue #16: the
 * struct is 9 KiB on 570+, and a one-GPU map uses 84 bytes of it). One
 * read takes the head, the first entries and the tail; a second, only for
 * a map on more GPUs, the other entries its count names (a count the
 * decode refuses reads none). The ID_VALID after both proves them the
 * trapped task's. What is performed is this copy, so a map whose unused
 * entries lie in unmapped memory is performed where the driver, which
 * copies the whole struct, would answer EFAULT: nothing is read from
 * those bytes either way. */
static bool fetch_map(struct call *c, const struct gs_uvm_layout *lay, uint8_t *params,
                      struct answer *a)
{
	const size_t entry = sizeof(struct uvm_gpu_mapping_attrs);
	const size_t head = sizeof(struct uvm_map_external_head);
	const size_t tail_off = UVM_MAP_EXTERNAL_TAIL_OFF(lay->max_gpus);
	const uint32_t first = lay->max_gpus < MAP_ENTRIES_FIRST ? lay->max_gpus : MAP_ENTRIES_FIRST;
	const struct gs_mem_part parts[] = {
		{ 0, head + first * entry },
		{ tail_off, sizeof(struct uvm_map_external_tail) },
	};
	struct uvm_map_external_tail tail;
	bool ok;

	memset(params, 0, c->size);
	ok = mem_read_parts(c->tid, c->argp, params, parts, sizeof(parts) / sizeof(parts[0])) == 0;
	if (ok) {
		memcpy(&tail, params + tail_off, sizeof(tail));
		if (tail.gpu_count > first && tail.gpu_count <= lay->max_gpus) {
			const struct gs_mem_part rest = { head + first * entry,
			                                  (size_t)(tail.gpu_count - first) * entry };
			ok = mem_read_parts(c->tid, c->argp, params, &rest, 1) == 0;
		}
	}
	if (!ok) {
		*a = answer_errno(EFAULT);
		return false;
	}
	if (!fetch_reads_proven(c)) {
		*a = answer_none();
		return false;
	}
	return true;
}

struct answer handle_uvm(struct call *c, uint32_t cmd, int space)
{
	struct gs_uvm_layout lay;
	struct gs_uvm_call u;
	struct answer a;
	uint8_t *params = c->scratch->params;

	if (cmd == UVM_ALLOC_DEVICE_P2P)
		return refuse_device_p2p(c);
	if (cmd == UVM_REGISTER_CHANNEL)
		return handle_register_channel(c, space);
	c->d.call = "UVM_MAP_EXTERNAL_ALLOCATION";
	/* A branch without checked UVM facts: its struct's size is unknown,
	 * so the status cannot even be written. Fail closed. */
	if (!gs_uvm_layout_of(c->sb->rm_abi, &lay)) {
		c->d.verdict = GS_VERDICT_REFUSE;
		c->d.reason = "no checked UVM layout for this driver branch";
		c->audit = true;
		return answer_errno(EINVAL);
	}
	c->size = gs_uvm_map_size(&lay);
	if (!fetch_map(c, &lay, params, &a))
		return a;
	(void)gs_decode_uvm_map(&lay, params, c->size, &u);
	c->d.h_client = u.h_client;
	c->d.h_object = u.h_memory;
	return handle_map(c, &u, &lay, params, space);
}
