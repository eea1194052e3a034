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

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
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

/* A cgroupfs directory path, and the name of the file in it that lists
 * its threads ("cgroup.threads" on v2, "tasks" on v1). */
#define GS_TASKSET_DIR_MAX 4096
#define GS_TASKSET_LIST_NAME_MAX 16

struct gs_taskset {
	const struct gs_taskset_ops *ops;
	pid_t                        root;  /* process tree: the subreaper at its top */
	/* cgroup: the container's cgroup memberships, as its init had them */
	char                         cgroup[GS_TASKSET_CGROUP_MAX];
	/* cgroup: a search for the sharers of an fd table may look at the
	 * tasks of walk_dir's subtree alone (gs_taskset_bound_walk), not at
	 * every task of the host. */
	bool                         walk_bounded;
	char                         walk_dir[GS_TASKSET_DIR_MAX];
	char                         walk_list[GS_TASKSET_LIST_NAME_MAX];
	/* May task tid move a task out of walk_dir's subtree (the agent:
	 * CAP_SYS_ADMIN in its bounding set)? Asked of every listed task by
	 * a bounded search until one search finds none (walk_vetted); a
	 * search that meets one walks the host instead. NULL: never. */
	bool                       (*walk_may_leave)(pid_t tid);
	/* Every task was asked, and none may: until a new process joins
	 * (an exec: gs_taskset_walk_joined). */
	atomic_bool                  walk_vetted;
};

/* A process joined the set from outside its tree (an exec): its tasks
 * are asked walk_may_leave again. */
static inline void gs_taskset_walk_joined(struct gs_taskset *ts)
{
	atomic_store(&ts->walk_vetted, false);
}

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

/* The cgroup backend's walk bound (taskset_cgroup.c; the reasoning is
 * there and in docs/security/tenants.md): finds the cgroupfs directory of
 * the container's cgroup in one hierarchy this process has mounted whole,
 * and sets walk_bounded. -1 (the walk stays unbounded) when there is none,
 * or the container's cgroup is a hierarchy's root. The caller decides
 * whether the container's tasks can leave that subtree (they cannot
 * without a writable cgroupfs of a cgroup namespace above it). */
int gs_taskset_bound_walk(struct gs_taskset *ts);

/* Calls fn(ctx, tid) for every thread of walk_dir's subtree, until fn
 * returns non-zero (that value is returned). -1 with errno when the
 * subtree cannot be listed whole: the caller fails closed. */
typedef int (*gs_task_fn)(void *ctx, pid_t tid);
int gs_taskset_for_each_walked(const struct gs_taskset *ts, gs_task_fn fn, void *ctx);

/* How many tasks walk_dir's subtree holds now, as the pids controller
 * counts them (pids.current: every task from its fork until it is
 * reaped, in the cgroup or any below it). False when it cannot be read. */
bool gs_taskset_walked_count(const struct gs_taskset *ts, uint64_t *n);

/* The state letter and the parent of pid, from /proc/PID/stat (the
 * fields after the command name, which may itself hold ')' and spaces).
 * False if it cannot be read (the task is gone, or /proc unreadable). */
bool gs_proc_state(pid_t pid, char *state, pid_t *ppid);

/* The value of the line of /proc/TID/status that begins with key (say
 * "TracerPid:"), its blanks skipped, into val (at most len bytes, with
 * its NUL). False if the file cannot be read or has no such line. */
bool gs_proc_status_field(pid_t tid, const char *key, char *val, size_t len);
/* The real and effective uids of tid as this process's user namespace
 * sees them (the first two fields of status's Uid line). False if they
 * cannot be read. */
bool gs_proc_uids(pid_t tid, uid_t *real, uid_t *effective);

static inline bool gs_taskset_contains(const struct gs_taskset *ts, pid_t pid)
{
	return ts->ops && ts->ops->contains(ts, pid);
}

#endif
