/* SPDX-License-Identifier: MIT */
/*
 * taskset.h - which tasks belong to a sandbox, behind one interface.
 *
 * The command line launches the workload itself, so its tasks are the
 * supervisor's descendants (the process-tree backend). A container's tasks
 * are those of its cgroup; that backend comes with the agent. Callers ask
 * only gs_taskset_contains and never assume how the set is known.
 */
#ifndef GPUSANDBOX_TASKSET_H
#define GPUSANDBOX_TASKSET_H

#include <stdbool.h>
#include <sys/types.h>

struct gs_taskset;

struct gs_taskset_ops {
	/* Does process pid belong to the set? False when it cannot be told
	 * (the task is gone, /proc is unreadable). */
	bool (*contains)(const struct gs_taskset *ts, pid_t pid);
};

struct gs_taskset {
	const struct gs_taskset_ops *ops;
	pid_t                        root;  /* process tree: the subreaper at its top */
};

/* The descendants of root, which must be a child subreaper (it inherits
 * every orphan of the tree, so a member's parent chain always ends at it).
 * root itself is not a member. */
void gs_taskset_process_tree(struct gs_taskset *ts, pid_t root);

static inline bool gs_taskset_contains(const struct gs_taskset *ts, pid_t pid)
{
	return ts->ops && ts->ops->contains(ts, pid);
}

#endif
