/* SPDX-License-Identifier: MIT */
/*
 * exec_common.c - the executor's shared helpers: the workload's memory and
 * fds, performing a call through our dup, and answering the way the
 * driver does. See executor.c for the rule they serve.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <stdatomic.h>
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
#include "gpusandbox.h"
#include "quota.h"
#include "rm_decode.h"
#include "rm_own.h"
#include "rm_tables.h"
#include "session.h"
#include "test_switch.h"
#include "exec_int.h"
#include "private_table.h"

/* ---- the notification --------------------------------------------------- */

/* The trapped task might have died and its tid been reused between the
 * receive and our reads; the kernel's ID_VALID check proves the memory we
 * read belonged to the task that is still waiting for our answer. */
bool notif_still_valid(const struct call *c)
{
	return ioctl(c->scratch->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &c->scratch->req->id) == 0;
}

/* ---- the answer's memory ------------------------------------------------- */

static bool prove_unlooked_kept_mem(struct call *c);

/* Answers are written through the trapped task's /proc/TID/mem, never by
 * tid (workload.h, docs/security/task-identity.md). Issue #31: the file
 * is opened only when a write is due, so that a control or a free whose
 * answer changes no byte (the caller's status was NV_OK already) and a
 * call continued on another device's file open and close nothing. A call
 * that always writes (an allocation, a UVM map) opens it before its
 * fetch's ID_VALID instead (note_fetch_valid), which spares the second
 * ID_VALID below; a kept file, taken then unlooked, is looked at once by
 * the fetch or here (fetch_reads_proven).
 *
 * Why the late open is sound: the task has been blocked in its seccomp
 * notification since the receive, and the kernel drops the notification
 * (ID_VALID fails) once the task is killed, before its tid can be given to
 * any other task (the waiter removes it on its way out of the syscall,
 * before it exits; an exec by another thread takes the leader's tid only
 * once the leader is dead). So an ID_VALID made after the open that finds
 * the notification still pending proves the task was alive from the
 * trap through the open, so the tid named it then (live tids are unique):
 * the file holds the trapped task's address space, and keeps holding it
 * whatever becomes of the tid (a write after the task's death fails). A
 * check that fails closes the file unwritten: it may be another
 * process's, one that got the tid (tests/unit/test_tid_reuse, "late
 * open"). */
struct gs_task_mem *answer_mem(struct call *c)
{
	if (prove_unlooked_kept_mem(c))
		return &c->mem;
	if (c->mem.fd < 0) {
		c->mem_proven = false;
		if (take_kept_mem(c))
			return &c->mem;
		if (task_mem_open(c->tid, &c->mem) < 0)
			return &c->mem;
	}
	if (!c->mem_proven) {
		if (!notif_still_valid(c)) {
			task_mem_close(&c->mem);
			return &c->mem;
		}
		c->mem_proven = true;
	}
	return &c->mem;
}

/* A kept file needs no ID_VALID of its own: where it writes and whose
 * call it answers is mm_keep.h's argument (its task has not exited, so it
 * is the trapped one). */
bool take_kept_mem(struct call *c)
{
	if (!c->scratch || !gs_mm_keep_take(&c->scratch->mms, c->sb, c->tid, c->scratch->req->id, &c->mem))
		return false;
	c->mem_proven = true;
	return true;
}

/* The same, its task looked at later, once (prove_unlooked_kept_mem): by the
 * fetch after its reads, or by the first write, whichever comes first.
 * Until then the file is not written. */
bool take_kept_mem_unlooked(struct call *c)
{
	bool looked = false;

	if (!c->scratch ||
	    !gs_mm_keep_take_unlooked(&c->scratch->mms, c->sb, c->tid, c->scratch->req->id, &c->mem, &looked))
		return false;
	c->mem_proven = looked;
	return true;
}

/* True when c holds a kept file taken unlooked and its one look proves
 * it: its task not exited is the trapped one (mm_keep.h). Exited: the
 * file is let go (the slot emptied), and the caller proves what it has
 * by ID_VALID instead. False too when there is no such file. */
static bool prove_unlooked_kept_mem(struct call *c)
{
	if (!c->mem.kept || c->mem_proven ||
	    !gs_mm_keep_look(&c->scratch->mms, c->tid, c->scratch->req->id, &c->mem))
		return false;
	c->mem_proven = true;
	return true;
}

/* A kept file that took no write is let go and the task's memory opened
 * afresh (answer_mem proves it): the task exec'd since it was kept. */
static bool reopen_if_kept(struct call *c)
{
	if (!c->mem.kept || c->sb->test_mm_keep_no_reopen)
		return false;
	gs_mm_keep_forget(&c->scratch->mms, c->tid);
	task_mem_close(&c->mem);
	c->mem_proven = false;
	return true;
}

int answer_write(struct call *c, uint64_t addr, const void *buf, size_t len)
{
	int rc = mem_write(answer_mem(c), addr, buf, len);

	if (rc < 0 && reopen_if_kept(c))
		rc = answer_write(c, addr, buf, len);
	return rc;
}

int answer_write_changed2(struct call *c, const struct gs_mem_out *a, const struct gs_mem_out *b)
{
	int rc = mem_write_changed2(answer_mem(c), a, b);

	if (rc < 0 && reopen_if_kept(c))
		rc = answer_write_changed2(c, a, b);
	return rc;
}

void answer_mem_done(struct call *c)
{
	if (c->mem_proven && !c->mem.kept && c->scratch)
		gs_mm_keep_put(&c->scratch->mms, c->sb, c->tid, c->scratch->req->id, &c->mem);
	task_mem_close(&c->mem);
}

void note_fetch_valid(struct call *c)
{
	if (c->mem.fd >= 0)
		c->mem_proven = true;
}

/* Issue #31, round 12: a call that took its kept answer memory unlooked
 * (open_answer_mem) proves its reads by the one look at that file's
 * pidfd, made after them, instead of an ID_VALID
 * (docs/security/per-call-cost.md section 15): the slot's task was
 * proven to hold the tid when the slot was made, before this
 * notification; not exited now, it held the tid from then until now, so
 * it is the trapped task (a live tid names one task), and every look by
 * tid since the receive (the dup cache's kcmp, the reads) reached it.
 * The one exception is mm_keep.h's: a leader's tid taken over by another
 * thread's exec, which kills the trapped task; the reads then saw the
 * same process after its exec, which could make the same call itself,
 * and the kept file takes no write (the fresh open's ID_VALID fails). A
 * slot whose task exited, a slot already looked at before the reads
 * (gs_mm_keep_marks), or no kept file: ID_VALID, as before. */
bool fetch_reads_proven(struct call *c)
{
	if (prove_unlooked_kept_mem(c))
		return true;
	if (!notif_still_valid(c))
		return false;
	note_fetch_valid(c);
	return true;
}

/* ---- reaching the trapped task again ------------------------------------- */

/* A second reach into the trapped task by its tid, after the one
 * ID_VALID of the fetch stage (issue #17 item 13): the task may have been
 * killed meanwhile and its tid given to another process, and
 * dup_workload_fd opens a fresh pidfd when the cached one's task is gone,
 * which would then name that other process. So the notification is checked
 * again after the step: still valid means the trapped task was alive all
 * along, so the tid named it (live tids are unique). Not valid: whatever
 * was taken is dropped, and the call ends without an answer. */
int dup_trapped_fd(struct call *c, int wfd)
{
	/* The uvm_ctlfd baselines take any file, as before the checks. */
	int fd = c->sb->uvm_ctlfd_test != GS_UVM_CTLFD_CHECKED ? dup_workload_fd_any(&c->sb->pidfds, c->tid, wfd)
	                                                       : dup_workload_fd(&c->sb->pidfds, c->tid, wfd);

	if (fd >= 0 && !notif_still_valid(c)) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}

/* ---- holding the fd table still for a continued call ---------------------- */

/* The verdict judged the file behind the fd number when the call trapped;
 * the kernel resolves the number again after our CONTINUE, and any task
 * sharing the caller's fd table (a thread, a CLONE_FILES process, which
 * the caller's own tgid need not include) could dup2 a control file that
 * has a client onto it in between: a flipped class would then be
 * allocated under that client, never charged (issue #17 item 2); or a
 * driver file onto the number of a call on another file, which the driver
 * would then run unjudged (route_ioctl's continue_other_file). So every
 * such task is stopped until the caller has left the ioctl (quiesce.c),
 * and the file behind the number is checked again once they are: the
 * same file as the one judged (kcmp KCMP_FILE with our dup), and the task
 * still the trapped one. A sharer that cannot be stopped fails closed.
 * With track, the caller is seized even when nothing shares its table,
 * and counted there until it has left the ioctl (quiesce.h). */
/* GPUSANDBOX_TEST_LOOK_DELAY_US (read once): the step that follows a
 * look at the caller's fd table (the continue of a call whose file was
 * judged, hold_judged_file; the dup of a map's rmCtrlFd, handle_map)
 * comes this long after it, so that a task flipping the fd number
 * meanwhile does so often, not only when the scheduler happens to run it
 * in a window of microseconds (on a loaded machine it did not once in 48
 * rounds: tests/adv uvm_channel:swap's baseline; nor in 10000:
 * uvm_ctlfd park's). With the quiesce on, the sharers stay stopped
 * through the delay. Never for use. */
static unsigned test_look_delay_us(void)
{
	static atomic_int us = -1;

	if (atomic_load(&us) < 0) {
		const char *v = gs_test_switch("GPUSANDBOX_TEST_LOOK_DELAY_US");
		atomic_store(&us, v ? atoi(v) : 0);
	}
	return (unsigned)atomic_load(&us);
}

void test_look_delay(void)
{
	unsigned us = test_look_delay_us();

	if (us)
		(void)usleep(us);
}

bool hold_judged_file(struct call *c, unsigned judged, struct gs_inflight *track, const char **why)
{
	struct gs_session *sb = c->sb;
	/* An injection walks every process: a CLONE_VM clone is not followed
	 * by the filter (tables_shared covers CLONE_FILES only). */
	const struct gs_quiesce_who who = { &sb->tasks, sb->task_held, sb->receiver_ctx,
	                                    track != NULL || c->inject, track,
	                                    sb->tables_shared || c->inject, sb->quiesces_live,
	                                    &sb->walk_stats, c->inject, &sb->inject_marks };

	if (sb->quiesce_off && c->inject) {
		*why = "no injection without the quiesce";
		return false;
	}
	if (sb->quiesce_off) {
		test_look_delay();
		return true;
	}
	if (gs_quiesce_begin(c->tid, &who, &c->quiesce, why) < 0)
		return false;
	/* With our dup: the same open file. Without (the look was made
	 * through /proc, so that no FUSE file of the workload's is dup'ed
	 * and flushed): a file still of no kind in judged. */
	bool same = c->dup >= 0 ? syscall(SYS_kcmp, getpid(), c->tid, KCMP_FILE, c->dup, c->wfd) == 0
	                        : !(judged & GS_NODE_BIT(task_fd_node_kind_cached(c->tid, c->wfd)));
	if (!same || !notif_still_valid(c)) {
		gs_quiesce_end(c->quiesce, false);
		c->quiesce = NULL;
		*why = "the fd names another file than the one judged";
		return false;
	}
	test_look_delay();
	return true;
}

/* ---- reading the workload ------------------------------------------------ */

/* The top-level struct, read with the rest of its page into the worker's
 * window, then copied to top: the one read of a call that decides on it,
 * which fetch_reads_proven (an ID_VALID or a kept file's look, called
 * next by every fetch) proves was made of the trapped task. */
int fetch_top_bytes(struct call *c, void *top, size_t len)
{
	struct gs_scratch *s = c->scratch;
	ssize_t got = -1;

	if (len <= GS_SCRATCH_TOP_MAX)
		got = mem_read_window(c->tid, c->argp, len, s->window.bytes, GS_SCRATCH_WINDOW_MAX,
		                      GS_SCRATCH_PAGE);
	if (got < 0) {
		if (mem_read(c->tid, c->argp, top, len) < 0)
			return -1;
	} else {
		memcpy(top, s->window.bytes, len);
		s->window.addr = c->argp;
		s->window.len = (size_t)got;
	}
	gs_scratch_keep(&s->top_in, GS_SCRATCH_TOP_MAX, c->argp, top, len);
	return 0;
}

bool fetch_trapped_top(struct call *c, void *top, size_t len, struct answer *a)
{
	if (fetch_top_bytes(c, top, len) < 0) {
		*a = answer_errno(EFAULT);
		return false;
	}
	if (!fetch_reads_proven(c)) {
		*a = answer_none();
		return false;
	}
	return true;
}

/* A second level (params, rights): from the window when it lies inside,
 * else one exact read. Either way a copy made during this call, before
 * the verdict that reads it; the bytes in the window were read before
 * this call's fetch proof, which covers them too. An exact read comes
 * after that proof, so it is checked again: the tid may name another process
 * by now (issue #17 item 13), and nothing read from one may be used. */
int fetch_nested(struct call *c, uint64_t addr, void *buf, size_t len)
{
	const struct gs_scratch_seen *w = &c->scratch->window;

	if (len == 0)
		return 0;
	if (w->len && addr >= w->addr && addr - w->addr <= w->len && len <= w->len - (addr - w->addr))
		memcpy(buf, w->bytes + (addr - w->addr), len);
	else if (mem_read(c->tid, addr, buf, len) < 0 || !notif_still_valid(c))
		return -1;
	return 0;
}

/* The params as read, so that answer_executed writes back only what the
 * driver changed. */
void keep_params(struct call *c, uint64_t addr, const void *params, size_t len)
{
	gs_scratch_keep(&c->scratch->params_in, GS_SCRATCH_KEEP_MAX, addr, params, len);
}

/* ---- issuing calls ourselves --------------------------------------------- */

/* The request word and argument for an escape on our dup: a canonical word
 * (the driver ignores direction and type bits, and FUSE stand-ins need
 * them right). Parameter blocks too big for the 14-bit size field go
 * through XFER, described by *x. */
static unsigned long escape_request(uint32_t nr, uint32_t size, void *buf, struct nv_ioctl_xfer *x,
                                    void **arg)
{
	if (size <= NV_IOC_MAX_DIRECT_SIZE) {
		*arg = buf;
		return NV_IOC_WORD(nr, size);
	}
	*x = (struct nv_ioctl_xfer){ .cmd = nr, .size = size, .ptr = (uintptr_t)buf };
	*arg = x;
	return NV_IOC_WORD(NV_ESC_IOCTL_XFER_CMD, sizeof(*x));
}

static int escape_ioctl(const struct call *c, uint32_t nr, uint32_t size, void *buf)
{
	struct nv_ioctl_xfer x;
	void *arg;
	unsigned long req = escape_request(nr, size, buf, &x, &arg);

	return gs_driver_ioctl(c->dup, req, arg, false) < 0 ? -errno : 0;
}

/* A device allocation (or the retry of one the driver refused for want of
 * a GPU node) made in a private fd table holding only our dup of the
 * call's fd and the trapped task's own GPU nodes (private_table.h): no
 * node another thread of ours holds can vouch for it. The session lock
 * stays held: the helper reads no workload memory, so nothing the
 * workload does can stretch it beyond the driver's own time. */
enum gs_private_outcome exec_escape_private(const struct call *c, uint32_t nr, uint32_t size,
                                            void *buf, bool only_with_nodes, int *rc)
{
	struct nv_ioctl_xfer x;
	struct gs_private_call pc = { .tid = c->tid, .listener = c->scratch->listener,
	                              .notif_id = c->scratch->req->id, .dup = c->dup,
	                              .only_with_nodes = only_with_nodes };

	pc.request = escape_request(nr, size, buf, &x, &pc.arg);
	enum gs_private_outcome o = gs_private_table_call(&pc);
	*rc = pc.rc;
	return o;
}

/* A driver call at or above this (the command's moving average) is slow:
 * the session lock is dropped around it and another worker takes the
 * listener. GSP-backed controls take hundreds of us; the 2 MiB loop's
 * controls take a few, and handing the listener over for them would
 * break the pairing SYNC_WAKE_UP gives the fast path. */
#define GS_SLOW_DRIVER_US 100u
/* The average moves by 1/8 of each new sample, and a sample counts for at
 * most 4 times the threshold: a command is slow after about three slow
 * calls in a row, and one hiccup (a preempted fast call) does not make it
 * slow. */
#define GS_DRIVER_TIME_SHIFT 3u
#define GS_DRIVER_SAMPLE_MAX_US (4u * GS_SLOW_DRIVER_US)

static struct gs_driver_time *driver_time_of(struct gs_session *sb, uint32_t key)
{
	uint32_t h = key * 0x9e3779b1u; /* Fibonacci hashing */
	struct gs_driver_time *t = &sb->driver_time[h >> 24 & (GS_DRIVER_TIME_SLOTS - 1)];

	if (t->key != key)
		*t = (struct gs_driver_time){ .key = key, .ewma_us = 0 };
	return t;
}

/* The lock let go and taken again around a driver call (exec_int.h). */
bool exec_leave_lock(const struct call *c)
{
	struct gs_session *sb = c->sb;

	if (!sb->release_receiver)
		return false;
	sb->release_receiver(sb->receiver_ctx, c->scratch);
	pthread_mutex_unlock(&sb->lock);
	return true;
}

void exec_retake_lock(const struct call *c, bool left)
{
	if (!left)
		return;
	uint64_t t0 = c->sb->profile ? gs_monotonic_ns() : 0;
	pthread_mutex_lock(&c->sb->lock);
	if (c->sb->profile && c->scratch)
		c->scratch->lock_wait_ns += gs_monotonic_ns() - t0;
}

/* Performs an escape (escape_ioctl). For a call the handler marked
 * (off_lock_key) whose command was slow before, the session lock is
 * dropped around the driver call and the listener handed to another
 * worker, so that one process's slow call does not hold up the others
 * (issue #16). Safe because nothing the call uses meanwhile is shared:
 * the dup, our copies of the struct, params and lists are the worker's
 * (its scratch and this call), no decision is taken while the lock is
 * out, and what follows the call (the ledger's update, the audit) runs
 * with the lock held again. The first slow calls of a command run under
 * the lock; they teach the average. */
int exec_escape(const struct call *c, uint32_t nr, uint32_t size, void *buf)
{
	struct gs_session *sb = c->sb;

	if (!c->off_lock_key || !sb->release_receiver)
		return escape_ioctl(c, nr, size, buf);
	struct gs_driver_time *t = driver_time_of(sb, c->off_lock_key);
	uint64_t t0 = gs_monotonic_ns();
	const bool off_lock = t->ewma_us >= GS_SLOW_DRIVER_US && exec_leave_lock(c);
	int rc = escape_ioctl(c, nr, size, buf);

	exec_retake_lock(c, off_lock);
	/* The slot may have gone to another command meanwhile: look again. */
	t = driver_time_of(sb, c->off_lock_key);
	uint64_t us64 = (gs_monotonic_ns() - t0) / 1000u;
	uint32_t us = us64 < GS_DRIVER_SAMPLE_MAX_US ? (uint32_t)us64 : GS_DRIVER_SAMPLE_MAX_US;
	t->ewma_us = t->ewma_us - (t->ewma_us >> GS_DRIVER_TIME_SHIFT) + (us >> GS_DRIVER_TIME_SHIFT);
	return rc;
}

/* Frees an object we just created when the driver granted more than the
 * quota allows (rounding beyond our pre-check). */
void undo_alloc(const struct call *c, nv_handle_t client, nv_handle_t parent, nv_handle_t obj)
{
	struct nvos00 f = { .h_root = client, .h_object_parent = parent, .h_object_old = obj };
	(void)exec_escape(c, NV_ESC_RM_FREE, sizeof(f), &f);
}

/* Records the client after the driver accepted a call on it through this
 * file: with RM's default strict validation that proves the client lives
 * on this open file, which the ledger then watches for release. */
/* The creator of a client is credited with its memory when its file
 * closes (gs_session_reconcile); read once per client, from /proc. */
static void note_client_owner(const struct call *c, nv_handle_t h_client)
{
	struct ledger_owner owner;

	if (ledger_client_owner(&c->sb->ledger, h_client))
		return;
	gs_read_task(c->tid, &owner.pid, owner.comm, sizeof(owner.comm));
	ledger_set_client_owner(&c->sb->ledger, h_client, &owner);
}

int note_client(const struct call *c, nv_handle_t h_client)
{
	if (ledger_note_client(&c->sb->ledger, h_client, c->dup) < 0)
		return -1;
	note_client_owner(c, h_client);
	/* The driver accepted the client through this file: remember how to
	 * reach the file again (the compute-share thread pins it). */
	ledger_set_route(&c->sb->ledger, h_client, c->tid, c->wfd);
	return 0;
}

/* Before charging video memory under a client: bind the ledger's entry to
 * this open file, reaping a stale entry left by a dead file whose handle
 * the driver has since given to a new client (ledger_bind_client). */
int bind_client_for_charge(struct call *c, nv_handle_t h_client)
{
	uint64_t released[GS_MAX_GPUS] = { 0 };
	uint64_t before[GS_MAX_GPUS];
	struct ledger *l = &c->sb->ledger;
	/* The dup is a control file kept in the worker's cache (dup_for_call),
	 * which stays that one open file from this call's take to the next
	 * take that hits (dupcache.h). */
	const bool kept = c->scratch && c->dup_slot >= 0 && c->dup_keep;
	int rc;

	memcpy(before, l->used, sizeof(before));
	/* One kcmp says both whether the entry is this file's client and
	 * whether to route through it (issue #16: it was asked twice). Not
	 * again for a kept file the ledger bound this client to, while no
	 * client entry changed since (issue #31: the loop's allocations on
	 * one file ask it once). */
	if (kept && gs_dup_cache_fact_is(&c->scratch->dups, c->dup_slot, h_client, ledger_client_epoch(l))) {
		rc = 1;
	} else {
		rc = ledger_bind_client(l, h_client, c->dup, released);
		if (rc == 1 && kept)
			gs_dup_cache_fact_set(&c->scratch->dups, c->dup_slot, h_client, ledger_client_epoch(l));
	}
	if (rc == 1) {
		ledger_set_route(&c->sb->ledger, h_client, c->tid, c->wfd);
		note_client_owner(c, h_client);
	}
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (released[g] && c->sb->trace)
			fprintf(c->sb->trace, "[gpusandbox] released %llu bytes on gpu%u: stale client 0x%x\n",
			        (unsigned long long)released[g], g, h_client);
	return rc < 0 ? -1 : 0;
}

/* ---- answering ----------------------------------------------------------- */

struct answer answer_value(int rc)
{
	struct answer a = { ANSWER_VALUE, 0, 0 };
	if (rc < 0)
		a.error = -rc;
	return a;
}

struct answer answer_errno(int e)
{
	struct answer a = { ANSWER_VALUE, 0, e };
	return a;
}

struct answer answer_continue(void)
{
	struct answer a = { ANSWER_CONTINUE, 0, 0 };
	return a;
}

struct answer answer_none(void)
{
	struct answer a = { ANSWER_NONE, 0, 0 };
	return a;
}

struct answer answer_done(void)
{
	struct answer a = { ANSWER_DONE, 0, 0 };
	return a;
}

/* Refuses the call the way the driver fails: the RM status in the struct
 * and a return value of 0, so CUDA sees an ordinary RM error. The top-level
 * struct is written back whole (the driver copies it out even on error). */
struct answer refuse_with_status(struct call *c, void *top, size_t status_off,
                                        nv_status_t st, enum gs_verdict v, const char *why)
{
	memcpy((uint8_t *)top + status_off, &st, sizeof(st));
	if (answer_write(c, c->argp, top, c->size) < 0)
		return answer_errno(EFAULT);
	c->d.verdict = v;
	c->d.has_status = true;
	c->d.status = st;
	c->d.reason = why;
	c->audit = true;
	return answer_value(0);
}

/* The driver copies the top-level struct (and, on success, the nested
 * params) back whatever happened; the answer mirrors that. */
struct answer answer_executed(struct call *c, uint64_t nested_addr, const void *nested,
                                     size_t nested_len, const void *top, size_t top_len, int rc,
                                     nv_status_t st)
{
	/* Only what differs from our reads goes back: the driver's copy-out
	 * of unchanged bytes would leave them as they are. */
	const struct gs_mem_out out_nested = {
		nested_addr, nested, gs_scratch_kept(&c->scratch->params_in, nested_addr, nested_len),
		nested_len,
	};
	const struct gs_mem_out out_top = {
		c->argp, top, gs_scratch_kept(&c->scratch->top_in, c->argp, top_len), top_len,
	};
	/* Nothing changed, nothing written: the answer's memory is not even
	 * opened (answer_mem). */
	if (mem_out_changed(&out_nested, &out_top) &&
	    answer_write_changed2(c, &out_nested, &out_top) < 0 && rc == 0)
		rc = -EFAULT;
	c->d.verdict = GS_VERDICT_ALLOW;
	c->d.has_status = true;
	c->d.status = st;
	if (rc < 0)
		c->d.errnum = -rc;
	return answer_value(rc);
}

/* ---- quota --------------------------------------------------------------- */

/* Before saying yes, release clients whose file was closed: a workload
 * that closed its fd really got its memory back from the driver. The
 * predicate itself (gs_over_quota) is pure; the reconcile is here, once. */
bool over_quota_reconciled(struct gs_session *sb, int gpu, uint64_t bytes)
{
	uint64_t q = gs_quota_mem(&sb->quota, gpu);

	if (!gs_over_quota(q, ledger_used(&sb->ledger, gpu), bytes))
		return false;
	gs_session_reconcile(sb);
	return gs_over_quota(q, ledger_used(&sb->ledger, gpu), bytes);
}

void note_usage(struct call *c, int gpu, uint64_t before)
{
	c->d.gpu = gpu;
	c->d.has_usage = true;
	c->d.usage_before = before;
	c->d.usage_after = ledger_used(&c->sb->ledger, gpu);
	c->d.quota = gs_quota_mem(&c->sb->quota, gpu);
}

/* Counted resources (channels, channel groups) in the decision record. */
void note_count(struct call *c, const char *resource, uint32_t before, uint32_t after,
                       uint32_t limit)
{
	c->d.resource = resource;
	c->d.has_usage = true;
	c->d.usage_before = before;
	c->d.usage_after = after;
	c->d.quota = limit;
	c->audit = true;
}

/* Released bytes in the decision record. */
void note_release(struct call *c, const uint64_t released[GS_MAX_GPUS],
                         const uint64_t before[GS_MAX_GPUS])
{
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		if (!released[g])
			continue;
		c->d.has_size = true;
		c->d.size = released[g];
		note_usage(c, (int)g, before[g]);
		c->audit = true;
		return; /* one record per call; objects sit under one GPU */
	}
}
