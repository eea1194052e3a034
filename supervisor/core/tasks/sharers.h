/* SPDX-License-Identifier: MIT */
/*
 * sharers.h - the search for the tasks that share a trapped task's fd
 * table (kcmp KCMP_FILES), for the quiesce (quiesce.h, which includes
 * this for its callers).
 */
#ifndef GPUSANDBOX_SHARERS_H
#define GPUSANDBOX_SHARERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "taskset.h"

/* What the searches for an fd table's sharers looked at (issue #32):
 * the tasks compared (kcmp) by each search, so that a test can tell that
 * a container's search compared none of another's tasks. Relaxed
 * counters: figures, never decisions. */
struct gs_walk_stats {
	_Atomic uint64_t walks;     /* searches beyond the caller's own threads */
	_Atomic uint64_t tasks;     /* tasks compared by them, in all */
	_Atomic uint64_t most;      /* the most one search compared */
	_Atomic uint64_t unbounded; /* searches of every task of the host */
};

/* On this thread's later searches, a task that shares the caller's
 * address space (kcmp KCMP_VM: a thread, a vfork child, a CLONE_VM
 * process) counts as a sharer too: the injection of a second client
 * (inject.h) needs every writer of the caller's memory stopped. */
void gs_sharers_vm(bool on);

/* Adds the threads of process pid that share tid's table to out (from
 * index n, at most max); the new count, or -1 with errno. A process that
 * went away meanwhile has none. */
int gs_sharers_in_process(pid_t tid, pid_t pid, const struct gs_taskset *tasks, pid_t *out, int max,
                          int n);

/* Is tid the only thread of its group? One statx of /proc/TID/task
 * where its link count was seen to count threads (sharers.c), else
 * false. Only a "yes" is meaningful: it holds while tid is trapped. */
bool gs_task_alone(pid_t tid);
/* Asks, once per process, whether the kernel counts a thread group's
 * threads in its task directory's link count (a fork and a thread):
 * called by the session at its start, so that the workload's first call
 * does not wait for it (it took about 0.4 ms of a CUDA program's first
 * CARD_INFO on the H200); gs_task_alone asks it otherwise. */
void gs_sharers_init(void);

/* Every task other than tid that shares its table, into out (at most
 * max): the taskset's cgroup subtree alone where that is proven whole,
 * else every process of the host (gs_fd_sharers). stats may be NULL. */
int gs_sharers_search(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max,
                      struct gs_walk_stats *stats);

#endif
