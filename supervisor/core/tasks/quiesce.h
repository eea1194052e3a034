/* SPDX-License-Identifier: MIT */
/*
 * quiesce.h - holding a trapped task's fd table still across a CONTINUE.
 *
 * A continued call is run by the kernel after our answer, and the kernel
 * resolves its fd NUMBER again then: any other task that shares the
 * caller's fd table (a thread, a CLONE_FILES process of another tgid) can
 * dup2 another file onto the number in between. For the one call whose
 * safety rests on the file behind the number (a continued client
 * allocation: SECURITY.md, "Client allocation is continued"), every such
 * task is stopped first (ptrace), the file is checked, the call continued,
 * and the sharers are let go only once the caller has left the ioctl, so
 * past the kernel's fdget.
 *
 * The ptrace work is done by a short-lived thread of its own: when a
 * thread that traces tasks exits, the kernel detaches every one of them,
 * whatever state they are in (a tracee that never stopped cannot be
 * detached by PTRACE_DETACH), with their pending signals kept.
 */
#ifndef GPUSANDBOX_QUIESCE_H
#define GPUSANDBOX_QUIESCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "inject.h"
#include "sharers.h"
#include "taskset.h"

/* Tasks sharing one fd table, at most (more: fail closed). */
#define GS_QUIESCE_MAX_SHARERS 4096
/* How long the sharers may take to stop, and the caller to leave its
 * continued ioctl, before the call is refused or the worker goes on. */
#define GS_QUIESCE_STOP_MS 2000
#define GS_QUIESCE_CALLER_MS 5000

/* Is tid's trapped call received by another worker and not yet answered?
 * Such a task is in the kernel's seccomp wait (killable: it cannot be
 * interrupted), and its answer needs the session lock the caller of
 * gs_quiesce_begin holds, so it cannot touch the fd table meanwhile; once
 * answered it stops before it returns to user space (the interrupt is
 * pending). NULL: no other worker shares this listener. */
typedef bool (*gs_task_held_fn)(void *ctx, pid_t tid);

/* Continued calls whose caller may still be inside the kernel: counted
 * from gs_quiesce_begin until the caller has left its ioctl, which the
 * worker stops waiting for after GS_QUIESCE_CALLER_MS (the tracing
 * thread goes on waiting, and counts it out then). A UVM channel
 * registration's outcome is known only once it has returned
 * (uvm_maps.h). Reference counted: a tracing thread may outlive the
 * sandbox that began it. */
struct gs_inflight;
struct gs_inflight *gs_inflight_new(void);      /* one reference; NULL: no memory */
void     gs_inflight_put(struct gs_inflight *f); /* NULL: nothing */
unsigned gs_inflight_count(const struct gs_inflight *f);
/* Counts one call in (taking a reference) and out (dropping it). NULL:
 * nothing. */
void     gs_inflight_begin(struct gs_inflight *f);
void     gs_inflight_end(struct gs_inflight *f);
/* Waits, polling, until f counts none or ms have passed; true when none
 * is left. NULL counts none. */
bool     gs_inflight_wait_none(const struct gs_inflight *f, unsigned ms);

struct gs_quiesce_who {
	const struct gs_taskset *tasks; /* the sandbox's: a task of it we cannot compare fails closed */
	gs_task_held_fn          held;
	void                    *held_ctx;
	/* Seize the caller even when no task shares its fd table, so as to
	 * know when it has left the ioctl, and count it in track (may be
	 * NULL) meanwhile. */
	bool                     seize_lone;
	struct gs_inflight      *track;
	/* May a task of another thread group share the caller's fd table?
	 * Only a clone with CLONE_FILES and without CLONE_THREAD makes one;
	 * false when the sandbox's filter follows those and none came
	 * (filter.h): then the caller's own thread group is all there is to
	 * stop, and no walk of every process is made. */
	bool                     others_may_share;
	/* Counts every quiesce of the sandbox from its begin until its tasks
	 * are let go (may be NULL): what must not run while a continued
	 * caller is inside the kernel waits for it (a clone that makes a
	 * new sharer, executor.c). */
	struct gs_inflight      *live;
	/* The searches' figures (may be NULL). */
	struct gs_walk_stats    *stats;
	/* The caller's call will be made by the caller itself from a page of
	 * ours (gs_quiesce_inject_*): every task that shares its address
	 * space (kcmp KCMP_VM) is stopped too, every process is walked (a
	 * CLONE_VM clone is not followed by the filter), and the caller is
	 * seized even when alone. marks: the sandbox's injections in flight. */
	bool                     inject;
	struct gs_inject_marks  *marks;
};

/* Every task other than tid that shares tid's fd table, by kcmp(KCMP_FILES)
 * over the tasks of the taskset's cgroup subtree where that is bounded
 * (gs_fd_sharers_counted), else over every task in /proc (sharers.c). Up
 * to max into out; returns how many there
 * are, or -1 with errno when it cannot be told (no kcmp, a task of the
 * sandbox that cannot be compared, more than max). */
int gs_fd_sharers(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max);
/* The same, adding what it compared to stats (may be NULL). With a
 * taskset whose walk is bounded (gs_taskset_bound_walk), only the tasks
 * of its cgroup subtree are compared, when the subtree's count proves the
 * listing whole (quiesce.c, walk_bounded); else every task, as above. */
int gs_fd_sharers_counted(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max,
                          struct gs_walk_stats *stats);


struct gs_quiesce;

/* Stops every task that shares caller's fd table (repeating until no new
 * one appears: a task not yet stopped may clone another) and seizes the
 * caller. Returns 0 with *q (NULL when the caller shares its table with
 * no task and who->seize_lone is not set: nothing to hold, the common
 * case), or -1 with *why when a sharer, or the caller, cannot be stopped
 * (already traced, not permitted, too slow). */
int gs_quiesce_begin(pid_t caller, const struct gs_quiesce_who *who, struct gs_quiesce **q,
                     const char **why);

/* After the answer: when it was a CONTINUE the kernel took, waits (bounded)
 * until the caller has left the ioctl, then lets every task go. q NULL:
 * nothing. */
void gs_quiesce_end(struct gs_quiesce *q, bool continued);

/* Injection (inject.h), after a gs_quiesce_begin with who->inject.
 * arm: the tracing thread interrupts the caller, which waits for its
 * answer (killable only: the filter's WAIT_KILLABLE_RECV); the worker
 * must then answer it -ERESTARTNOINTR (or end the quiesce:
 * gs_quiesce_end(q, false)). run: the caller's stop is awaited and the
 * call injected from plan (read back into it); the caller stays stopped,
 * and every sharer with it. finish: the caller's registers given back
 * with its ioctl returning ret (DONE, FAILED), or as they were
 * (UNTOUCHED: the kernel restarts the call), or the caller killed (LOST);
 * every task let go, q freed. */
void gs_quiesce_inject_arm(struct gs_quiesce *q);
enum gs_inject_outcome gs_quiesce_inject_run(struct gs_quiesce *q, struct gs_inject_plan *plan,
                                             struct gs_inject_out *out);
void gs_quiesce_inject_finish(struct gs_quiesce *q, long ret);

/* Quiesces handed off by their worker (below), kept until their threads
 * are done. Used under the sandbox's lock. */
#define GS_QUIESCE_HANDOFF_MAX 64
struct gs_quiesce_handoffs {
	struct gs_quiesce *q[GS_QUIESCE_HANDOFF_MAX];
	unsigned           n;
};

/* After a CONTINUE the kernel took, without waiting: the tracing thread
 * keeps every sharer stopped until the caller has left its ioctl, lets
 * them go and counts them out of track and live; h keeps q until then.
 * So the worker's session lock is not held across the driver's time of a
 * continued call (issue #16: a UVM channel registration takes about 1 ms,
 * 20 per CUDA context). false (nothing done) when h is full: then
 * gs_quiesce_end. q NULL: nothing, true. */
bool gs_quiesce_hand_off(struct gs_quiesce_handoffs *h, struct gs_quiesce *q);

/* tid trapped again, before its call is handled: a quiesce of h whose
 * caller it is has its caller out of the continued ioctl (a task makes one
 * system call at a time) and may not see it stop (it waits in the trap,
 * where an interrupt need not stop it). Each such quiesce lets its tasks
 * go now and is freed, so that the new call can seize them; finished ones
 * are freed too. */
void gs_quiesce_caller_back(struct gs_quiesce_handoffs *h, pid_t tid);

/* At the sandbox's end: those whose caller is still in the kernel free
 * themselves once it is out. */
void gs_quiesce_handoffs_fini(struct gs_quiesce_handoffs *h);

/* Where the quiesces' time went (GPUSANDBOX_PROFILE): one line to f, none
 * when no client allocation was quiesced. */
void gs_quiesce_print_profile(FILE *f);

#endif
