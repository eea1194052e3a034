/* SPDX-License-Identifier: MIT */
/*
 * mm_keep.h - the answer memory of the tasks a worker answered last, kept
 * open between their calls (issue #31).
 *
 * A call that writes its answer back opens /proc/TID/mem (workload.h) and
 * proves the file the trapped task's with an ID_VALID made after the open;
 * the open and its close were 2.4 us of a 2 MiB cuMemAlloc/cuMemFree pair's
 * 4.4 us of /proc/TID/mem work on the H200 (perf, 2026-12-02), paid twice
 * a pair. A worker keeps the proven file of the last GS_MM_KEEP_SLOTS tasks
 * with a pidfd of the task itself (PIDFD_THREAD), opened before the same
 * ID_VALID, and gives the file to the task's next call while that pidfd
 * says the task has not exited.
 *
 * Why a kept file may be written:
 *  - where it writes: the file holds the address space it was opened on
 *    (workload.h), proven the trapped task's then. Every task that uses
 *    an address space is a task of the sandbox (only a task using it can
 *    make another that does, and the sandbox's tasks keep its filter), so
 *    whatever becomes of tids and tasks, a kept file writes into the
 *    sandbox's own memory or nowhere (an address space with no task left
 *    takes no write: the kernel's mem_rw answers 0 bytes);
 *  - whose call it answers: a task that has not exited still holds its
 *    tid (a live tid names one task), so the trapped task at that tid is
 *    the kept one, and its address space is the kept file's unless it
 *    has exec'd since. After an exec the old one takes no write (0 bytes:
 *    every thread of the group left it) and the caller opens afresh
 *    (exec_common.c, answer_write). The one case a kept file writes into
 *    the wrong address space is an exec by a task whose old one lives on
 *    in another process (a vfork child that made an answered call before
 *    its exec): that writes into the sandbox's own memory, and the
 *    caller's answer is lost; only a workload that makes RM calls between
 *    vfork and exec meets it.
 * A task gone, or a pidfd the kernel will not give (before Linux 6.9),
 * falls back to the open per call. A call whose reads by tid come after
 * its take looks once, after them (gs_mm_keep_take_unlooked, then
 * gs_mm_keep_look): the same argument then proves those reads the
 * trapped task's (docs/security/per-call-cost.md section 15).
 *
 * Marks: a fact a caller learned of a task (the agent: its bounding set
 * lacks CAP_SYS_ADMIN) kept on the task's slot, with or without a file,
 * and true while the slot's pidfd says its task has not exited. One look
 * at that pidfd per notification (gs_mm_keep_marks) then serves both the
 * marks and the take of the file (issue #31: the agent looked at two
 * pidfds of the same task per call). Why a mark may be added to a slot
 * found alive for this notification although it was learned through
 * another pidfd of tid (gs_mm_keep_mark): the slot's task was alive at
 * that look, after the notification was received, so it is the trapped
 * task; the task the mark was learned of was alive after the mark was
 * learned, so it held tid then. If the slot's task is still alive at a
 * later look, it was alive then too, and both held tid at one instant:
 * they are one task (a live tid names one task). If it is not, the slot
 * goes with its marks.
 */
#ifndef GPUSANDBOX_MM_KEEP_H
#define GPUSANDBOX_MM_KEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "workload.h"

#define GS_MM_KEEP_SLOTS 8u

/* The agent's mark: the task's bounding set lacks CAP_SYS_ADMIN. */
#define GS_MM_KEEP_NO_SYS_ADMIN 1u

struct gs_mm_keep {
	bool on;                    /* set by gs_mm_keep_init */
	/* The sandbox whose tasks these are (a worker of the agent may serve
	 * another later); the keep is emptied when it changes. */
	const void *owner;
	struct {
		pid_t    tid;       /* 0: slot free */
		int      pidfd;
		int      memfd;     /* -1: marks alone */
		uint32_t marks;
		uint64_t used;      /* the call count at its last use */
	} slot[GS_MM_KEEP_SLOTS];
	uint64_t calls;
	/* The notification whose task's slot was found alive by
	 * gs_mm_keep_marks, or made by gs_mm_keep_mark (proven_tid 0:
	 * none; no task has tid 0). */
	pid_t    proven_tid;
	uint64_t proven_id;
};

/* An empty keep (all fds -1). A keep never initialised (on unset) keeps
 * nothing: take finds nothing, put closes. */
void gs_mm_keep_init(struct gs_mm_keep *k);
/* Closes every kept file. */
void gs_mm_keep_fini(struct gs_mm_keep *k);
/* The kept file of tid into *m (m->kept set: not closed by the call),
 * while its task has not exited (looked at once per notification id:
 * not again after gs_mm_keep_marks found it alive for id); false (m
 * untouched) otherwise, a slot of an exited task emptied. */
bool gs_mm_keep_take(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id, struct gs_task_mem *m);
/* The kept file of tid into *m, its task not looked at (round 12): for
 * a call whose reads by tid come next, so that one look after them
 * (gs_mm_keep_look) proves both the file and the reads (mm_keep.h's
 * argument, and docs/security/per-call-cost.md section 15). *looked:
 * the slot was found alive for notification id already (gs_mm_keep_
 * marks), before those reads. False (m untouched) when tid has no file. */
bool gs_mm_keep_take_unlooked(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id,
                              struct gs_task_mem *m, bool *looked);
/* The look for a file taken unlooked: true when tid's slot holds m's
 * file and its task has not exited (the slot then proven for id); else
 * false, the slot of an exited task emptied and *m left closed (its fd
 * was the slot's). */
bool gs_mm_keep_look(struct gs_mm_keep *k, pid_t tid, uint64_t id, struct gs_task_mem *m);
/* A file opened by task_mem_open for tid, proven since by an ID_VALID,
 * kept for the task's next calls (the least recently used slot is
 * emptied when none is free); *m is left closed. A slot of tid found
 * alive for this notification id keeps its pidfd and marks and takes the
 * file. A file without its pidfd is closed instead. */
void gs_mm_keep_put(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id, struct gs_task_mem *m);
/* The marks of tid's slot, its pidfd looked at once for notification id
 * (which the take of the same tid and id then spares): 0 when there is
 * no slot, or its task has exited (the slot emptied). */
uint32_t gs_mm_keep_marks(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id);
/* Adds marks learned of tid through pidfd, a pidfd of tid opened after
 * notification id was received and before the marks were learned, and
 * found alive after (taken over: kept or closed), to tid's slot found
 * alive for id, else to a new slot of its own, with no file, which a file
 * put for the same id joins: the ID_VALID that proved that file proves
 * the trapped task alive since the pidfd was opened, so the pidfd is the
 * trapped task's. */
void gs_mm_keep_mark(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id, int pidfd,
                     uint32_t marks);
/* Empties tid's slot: its file took no write (the task exec'd). */
void gs_mm_keep_forget(struct gs_mm_keep *k, pid_t tid);

#endif
