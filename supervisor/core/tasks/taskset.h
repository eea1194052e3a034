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

/* /proc/PID/cgroup of a container's init, whole (one line per hierarchy
 * on hybrid hosts). */
#define GS_TASKSET_CGROUP_MAX 4096

struct gs_taskset {
	const struct gs_taskset_ops *ops;
	pid_t                        root;  /* process tree: the subreaper at its top */
	/* cgroup: the container's cgroup memberships, as its init had them */
	char                         cgroup[GS_TASKSET_CGROUP_MAX];
};

/* The descendants of root, which must be a child subreaper (it inherits
 * every orphan of the tree, so a member's parent chain always ends at it).
 * root itself is not a member. */
void gs_taskset_process_tree(struct gs_taskset *ts, pid_t root);

/* The tasks whose cgroup memberships are exactly those of process init
 * (a container's, for the agent: the runtime puts every process of the
 * container, the exec'd ones too, in the container's cgroup, and the agent
 * has no process tree of its own to ask). Returns -1 if init's cannot be
 * read. A task the container moves to a child cgroup (it would need a
 * writable cgroupfs) is no longer a member: asking errs towards "not ours". */
int gs_taskset_cgroup(struct gs_taskset *ts, pid_t init);

/* The state letter and the parent of pid, from /proc/PID/stat (the
 * fields after the command name, which may itself hold ')' and spaces).
 * False if it cannot be read (the task is gone, or /proc unreadable). */
bool gs_proc_state(pid_t pid, char *state, pid_t *ppid);

/* The value of the line of /proc/TID/status that begins with key (say
 * "TracerPid:"), its blanks skipped, into val (at most len bytes, with
 * its NUL). False if the file cannot be read or has no such line. */
bool gs_proc_status_field(pid_t tid, const char *key, char *val, size_t len);

static inline bool gs_taskset_contains(const struct gs_taskset *ts, pid_t pid)
{
	return ts->ops && ts->ops->contains(ts, pid);
}

#endif
