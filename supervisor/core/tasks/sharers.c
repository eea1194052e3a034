/* SPDX-License-Identifier: MIT */
/*
 * sharers.c - which tasks share a trapped task's fd table (sharers.h),
 * by kcmp(KCMP_FILES) against each task a search looks at.
 *
 * Two searches. The agent's containers have a taskset whose cgroup
 * subtree can be listed (taskset_cgroup.c): only its tasks are compared,
 * so that what one container runs (8000 idle threads, say) costs no other
 * container's client allocation anything (issue #32), and no lock is
 * shared with any other container's search. Every other caller, and a
 * container whose listing cannot be proven whole, walks every process of
 * the host (/proc), leaving out those of our own PID namespace where the
 * caller is not in it (host_pids.h), under host_pids' process-wide lock.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_pids.h"
#include "proc_dir.h"
#include "sharers.h"
#include "test_switch.h"

#define PROC_PATH_MAX 64
/* Remembered processes found gone after a walk, looked at per batch. */
#define GS_HOST_PIDS_SETTLE_BATCH 64
/* A bounded search whose listing the count does not confirm (a task
 * forked or reaped meanwhile) is made again this many times in all,
 * then the host is walked instead. */
#define BOUNDED_TRIES 3
#define LISTED_INITIAL 256u
#define UNVETTED 2

/* Tasks compared by the search under way on this thread (each search
 * runs on one thread: the worker's, or the tracing thread's). */
static _Thread_local uint64_t compared;
/* The search under way on this thread counts a task that shares the
 * caller's address space (kcmp KCMP_VM) as a sharer too (gs_sharers_vm). */
static _Thread_local bool with_vm;

void gs_sharers_vm(bool on)
{
	with_vm = on;
}

/* kcmp's answer for "does other share tid's table (or, with_vm, its
 * address space)": 0 when it does, as kcmp answers equality. */
static long kcmp_sharer(pid_t tid, pid_t other)
{
	long r = syscall(SYS_kcmp, tid, other, KCMP_FILES, 0, 0);

	if (r > 0 && with_vm) {
		long v = syscall(SYS_kcmp, tid, other, KCMP_VM, 0, 0);
		if (v == 0 || v < 0)
			return v;
	}
	return r;
}

/* GPUSANDBOX_TEST_QUIESCE_FULL_WALK (read once): every process is walked,
 * for tests/bench/quiescebench's before-and-after. */
static bool getenv_test_full_walk(void)
{
	static atomic_int full = -1;

	if (atomic_load(&full) < 0)
		atomic_store(&full, gs_test_switch("GPUSANDBOX_TEST_QUIESCE_FULL_WALK") != NULL);
	return atomic_load(&full) == 1;
}


static pid_t parse_pid(const char *s)
{
	long v = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > INT32_MAX / 10)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return (pid_t)v;
}

/* 1: other shares tid's fd table; 0: not (or gone); -1: cannot tell. A
 * task we may not compare cannot be a sandbox's (they run under the
 * supervisor's uid or user namespace, or under the agent's root, with no
 * way to gain privilege: no_new_privs); one that is fails closed. */
static int shares_files(pid_t tid, pid_t tgid, pid_t other, const struct gs_taskset *tasks)
{
	compared++;
	long r = kcmp_sharer(tid, other);

	if (r == 0)
		return 1;
	if (r > 0 || errno == ESRCH)
		return 0;
	if (errno == EPERM && !gs_taskset_contains(tasks, tgid))
		return 0;
	return -1;
}

/* /proc/PID/task's link count is 2 plus its thread group's live threads
 * (proc_task_getattr adds get_nr_threads, fs/proc/base.c, since 2.6.x):
 * one statx tells "tid is alone in its thread group" where a listing
 * costs five system calls (issue #31: a continued call's look at the
 * caller's threads). Taken only after it was seen to hold here, once per
 * process, by a forked child at two counts: alone (2 + 1), then with a
 * second thread (2 + 2). Anything else, or a kernel that counts
 * otherwise: the listing, always. */
#define TASK_DIR_NLINK_BASE 2
#define CHILD_COUNTS_OK 0
#define CHILD_COUNTS_NO 1

static long task_dir_nlink(const char *path)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_NLINK, &sx) < 0 ||
	    !(sx.stx_mask & STATX_NLINK))
		return -1;
	return (long)sx.stx_nlink;
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* The forked child: its own counts, alone and with one more thread. */
static _Noreturn void count_own_threads(void)
{
	pthread_t t;

	if (task_dir_nlink("/proc/self/task") != TASK_DIR_NLINK_BASE + 1 ||
	    pthread_create(&t, NULL, idle_thread, NULL) != 0)
		_exit(CHILD_COUNTS_NO);
	_exit(task_dir_nlink("/proc/self/task") == TASK_DIR_NLINK_BASE + 2 ? CHILD_COUNTS_OK
	                                                                   : CHILD_COUNTS_NO);
}

static bool nlink_counts;
static pthread_once_t nlink_once = PTHREAD_ONCE_INIT;

static void check_nlink_counts(void)
{
	int st;
	pid_t p = fork();

	if (p < 0)
		return;
	if (p == 0)
		count_own_threads();
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return;
	nlink_counts = WIFEXITED(st) && WEXITSTATUS(st) == CHILD_COUNTS_OK;
}

void gs_sharers_init(void)
{
	pthread_once(&nlink_once, check_nlink_counts);
}

/* Is tid alone in its thread group? Only a "yes" is used: it holds while
 * tid is trapped, since only a thread of the group can add one, and the
 * caller's ID_VALID after the look proves tid was the trapped task. */
bool gs_task_alone(pid_t tid)
{
	struct statx sx;

	gs_sharers_init();
	if (!nlink_counts)
		return false;
	return gs_task_statx(tid, "task", STATX_NLINK, &sx) == 0 && (sx.stx_mask & STATX_NLINK) &&
	       sx.stx_nlink == TASK_DIR_NLINK_BASE + 1;
}

int gs_sharers_in_process(pid_t tid, pid_t pid, const struct gs_taskset *tasks, pid_t *out, int max,
                          int n)
{
	char path[PROC_PATH_MAX];
	struct dirent *e;
	DIR *d;
	int err = 0;

	/* Its own process: none beside it when it is its only thread. */
	if (pid == tid && gs_task_alone(tid))
		return n;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return n;
	while (n >= 0 && (e = readdir(d))) {
		pid_t t = parse_pid(e->d_name);
		int r = t > 0 && t != tid ? shares_files(tid, pid, t, tasks) : 0;
		if (r < 0 || (r > 0 && n >= max)) {
			err = r < 0 ? errno : E2BIG;
			n = -1;
		} else if (r > 0) {
			out[n++] = t;
		}
	}
	closedir(d);
	if (n < 0)
		errno = err;
	return n;
}

/* Can a process of our own PID namespace be left out of the walk? Only a
 * task cloned with CLONE_FILES from a task that holds the caller's fd
 * table shares it: an exec makes a table its own (begin_new_exec unshares
 * it), so every holder descends by such clones from the task that made
 * the table, inside the sandbox. A clone puts the child in its parent's
 * PID namespace or one below it, and a task's own PID namespace never
 * changes; so when the caller is not in our namespace (the command
 * line's sandbox always; a container unless it shares the host's), no
 * holder of its table is in ours, where the host's processes are: one
 * readlink of /proc/PID/ns/pid, or the pid cache (host_pids.h), replaces
 * the walk of that process's threads (a kcmp each). When the caller is in
 * ours, or a namespace cannot be read, every process is walked, as before. */
static bool skip_our_namespace(pid_t tid, unsigned long long *ours)
{
	unsigned long long callers;

	if (getenv_test_full_walk())
		return false;
	return gs_pid_ns_of(0, ours) && gs_pid_ns_of(tid, &callers) && *ours != callers;
}

/* Looks at pid: left out when skip allows, else its threads compared. */
static int look_at(pid_t tid, pid_t pid, bool skip, unsigned long long ours,
                   const struct gs_taskset *tasks, pid_t *out, int max, int n)
{
	if (skip && gs_host_pids_ours(pid, ours))
		return n;
	return gs_sharers_in_process(tid, pid, tasks, out, max, n);
}

/* After a walk that skipped remembered processes: any of them that has
 * exited since may have left its pid to another process during the walk,
 * which is looked at now. Repeated until none did. */
static int settle_skipped(pid_t tid, unsigned long long ours, const struct gs_taskset *tasks,
                          pid_t *out, int max, int n)
{
	pid_t gone[GS_HOST_PIDS_SETTLE_BATCH];
	int k;

	while (n >= 0 && (k = gs_host_pids_settle(gone, GS_HOST_PIDS_SETTLE_BATCH)) != 0) {
		if (k < 0) { /* more than a batch: each will be asked again */
			k = GS_HOST_PIDS_SETTLE_BATCH;
		}
		for (int i = 0; i < k && n >= 0; i++)
			n = look_at(tid, gone[i], true, ours, tasks, out, max, n);
	}
	return n;
}

/* Every process of the host, as before issue #32. */
static int walk_host(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max)
{
	struct dirent *e;
	unsigned long long ours = 0;
	DIR *d;
	int n = 0, err = 0;

	/* kcmp must work at all: without it nothing can be told. */
	if (syscall(SYS_kcmp, tid, tid, KCMP_FILES, 0, 0) != 0)
		return -1;
	bool skip = skip_our_namespace(tid, &ours);
	d = opendir("/proc");
	if (!d)
		return -1;
	gs_host_pids_begin();
	while (n >= 0 && (e = readdir(d))) {
		pid_t pid = parse_pid(e->d_name);
		if (pid > 0)
			n = look_at(tid, pid, skip, ours, tasks, out, max, n);
	}
	err = errno;
	if (skip && n >= 0) {
		n = settle_skipped(tid, ours, tasks, out, max, n);
		err = errno;
	}
	gs_host_pids_end();
	closedir(d);
	if (n < 0)
		errno = err;
	return n;
}


/* ---- the container's own tasks ------------------------------------------------ */

/* One bounded search: the tids its listing named, and what it found. */
struct listing {
	pid_t                    caller;
	const struct gs_taskset *tasks;
	pid_t                   *tid;   /* every tid listed, duplicates too */
	size_t                   n, cap;
	pid_t                   *out;
	int                      max, found;
	bool                     vetting;  /* ask walk_may_leave of each */
	bool                     unvetted; /* one may leave: walk the host */
};

static int note_listed(void *ctx, pid_t t)
{
	struct listing *l = ctx;

	if (t <= 0)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : LISTED_INITIAL;
		pid_t *grown = realloc(l->tid, cap * sizeof(*grown));
		if (!grown) {
			errno = ENOMEM;
			return -1;
		}
		l->tid = grown;
		l->cap = cap;
	}
	l->tid[l->n++] = t;
	/* A task that could move another out of the subtree (the agent:
	 * one holding CAP_SYS_ADMIN) makes the listing prove nothing. */
	if (l->vetting && l->tasks->walk_may_leave(t)) {
		l->unvetted = true;
		return 1;
	}
	if (t == l->caller)
		return 0;
	/* Every listed task is the container's: one we may not compare
	 * fails closed (the host walk then meets it again). */
	compared++;
	long r = kcmp_sharer(l->caller, t);
	if (r < 0 && errno != ESRCH)
		return -1;
	if (r == 0) {
		if (l->found >= l->max) {
			errno = E2BIG;
			return -1;
		}
		l->out[l->found++] = t;
	}
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Sorts and drops duplicates (a task moved between two cgroups of the
 * subtree while they were listed is named twice); the count left. */
static size_t distinct(pid_t *v, size_t n)
{
	size_t m = 0;

	qsort(v, n, sizeof(*v), cmp_pid);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

/* Is the listing whole? It is when, after it, every tid it named still
 * names a task (kcmp finds it: a zombie too, until reaped) and their
 * number is the subtree's count (pids.current) read before that check.
 * Why that suffices: a task T of the subtree missed by the listing (a
 * container that can write its own cgroupfs may move T between its
 * cgroups while they are listed) is counted, and so is every listed tid
 * still there, since no task leaves the subtree (taskset_cgroup.c) and
 * a tid cannot name another task within one search (the kernel hands
 * out pids in a cycle of pid_max: millions of forks before a reuse). So
 * the count would be one more than the listing. A fork or a reap meanwhile
 * makes them differ too: the search is made again. */
static bool listing_whole(const struct listing *l, size_t listed)
{
	uint64_t counted;

	if (!gs_taskset_walked_count(l->tasks, &counted) || counted != listed)
		return false;
	for (size_t i = 0; i < listed; i++)
		if (syscall(SYS_kcmp, l->tid[i], l->tid[i], KCMP_FILES, 0, 0) != 0)
			return false;
	return true;
}

/* 1: found (n in *n); 0: the listing was not whole; UNVETTED: a task may
 * leave the subtree (no retry); -1 with errno. */
static int walk_subtree(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max, int *n)
{
	struct listing l = { .caller = tid, .tasks = tasks, .out = out, .max = max };
	l.vetting = tasks->walk_may_leave && !atomic_load(&tasks->walk_vetted);
	int rc = gs_taskset_for_each_walked(tasks, note_listed, &l);
	int err = errno;

	if (l.unvetted) {
		rc = UNVETTED;
	} else if (rc == 0) {
		/* A sharer named twice is one. */
		l.found = (int)distinct(out, (size_t)l.found);
		rc = listing_whole(&l, distinct(l.tid, l.n)) ? 1 : 0;
		*n = l.found;
		/* The walk_vetted store is ordered after every ask: the
		 * searches of a sandbox run one at a time (its lock). */
		if (rc == 1 && l.vetting)
			atomic_store(&((struct gs_taskset *)tasks)->walk_vetted, true);
	} else {
		rc = -1;
	}
	free(l.tid);
	errno = err;
	return rc;
}

/* The bounded search, tried a few times; 0 when no listing was proven
 * whole (the host is walked instead). */
static int walk_bounded(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max, int *n)
{
	int rc = 0;

	for (int i = 0; i < BOUNDED_TRIES && rc == 0; i++)
		rc = walk_subtree(tid, tasks, out, max, n);
	return rc == UNVETTED ? 0 : rc;
}

static void note_stats(struct gs_walk_stats *st, bool unbounded)
{
	uint64_t most;

	if (!st)
		return;
	atomic_fetch_add_explicit(&st->walks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->tasks, compared, memory_order_relaxed);
	if (unbounded)
		atomic_fetch_add_explicit(&st->unbounded, 1, memory_order_relaxed);
	most = atomic_load_explicit(&st->most, memory_order_relaxed);
	while (compared > most &&
	       !atomic_compare_exchange_weak_explicit(&st->most, &most, compared, memory_order_relaxed,
	                                              memory_order_relaxed))
		;
}

int gs_sharers_search(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max,
                      struct gs_walk_stats *stats)
{
	int n = 0, rc = 0, err;

	compared = 0;
	/* kcmp must work at all: without it nothing can be told. */
	if (syscall(SYS_kcmp, tid, tid, KCMP_FILES, 0, 0) != 0)
		return -1;
	if (tasks && tasks->walk_bounded && !getenv_test_full_walk())
		rc = walk_bounded(tid, tasks, out, max, &n);
	/* More sharers than max is an answer; a listing that failed (its
	 * cgroup going away, too deep) is not: the host is walked. */
	if (rc < 0 && errno != E2BIG)
		rc = 0;
	if (rc == 0) {
		compared = 0;
		n = walk_host(tid, tasks, out, max);
	}
	err = errno;
	note_stats(stats, rc == 0);
	errno = err;
	return rc < 0 ? -1 : n;
}
