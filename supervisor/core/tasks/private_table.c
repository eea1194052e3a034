/* SPDX-License-Identifier: MIT */
/*
 * private_table.c - device allocations made in a private fd table
 * (private_table.h says why).
 *
 * One call: the worker queues it for the spawner and waits until it is
 * done; the spawner creates a detached helper thread (it never waits
 * for one, so nothing a workload does can hold it up); the helper
 * unshares its table, takes in what the call needs, borrows the trapped
 * task's GPU nodes, checks the notification, makes the ioctl, closes its
 * whole table and marks the call done. Cost: one thread and one table
 * copy (of the spawner's empty one) per device allocation, a few per CUDA
 * process (tests/bench/privtablebench prints it).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gs_error.h"
#include "private_table.h"
#include "workload.h"
#include "test_switch.h"

#define FD_DIR_BUF 32
/* What a helper takes in besides the borrowed nodes: our own pidfd, the
 * call's dup, the listener, the task's pidfd. */
#define CALL_FDS 4
#define TAKEN_MAX (MAX_BORROWED_GPU_FDS + CALL_FDS)

struct job {
	struct gs_private_call  *call;
	enum gs_private_outcome  outcome;
	bool                     done;     /* under sp.lock */
	struct job              *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t  wake;      /* a job queued */
	pthread_cond_t  finished;  /* a job done */
	struct job     *head, *tail;
	pid_t           pid;       /* the process the spawner serves (0: none) */
	int             start_err; /* the spawner's own unshare: -1 until it tried */
	bool            shared;    /* the test switch: no private table */
} sp = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
      .finished = PTHREAD_COND_INITIALIZER };

/* The fds a call took, closed by number at its end (in the shared table's
 * test mode they are all that may be closed). */
struct taken {
	int      fd[TAKEN_MAX];
	unsigned n;
};

static int take(struct taken *t, int fd)
{
	if (fd >= 0 && t->n < TAKEN_MAX)
		t->fd[t->n++] = fd;
	else if (fd >= 0)
		close(fd), fd = -1;
	return fd;
}

static int getfd(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

/* The trapped task's /dev/nvidia<N> fds, dup'd into the calling thread's
 * table (the helper's own) through a pidfd of its own: the session's pidfd
 * cache stores numbers of the shared table and is never touched here. */
static unsigned borrow_nodes(int task, pid_t tid, struct taken *t)
{
	char dir[FD_DIR_BUF];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)tid);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < MAX_BORROWED_GPU_FDS) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		int wfd = atoi(de->d_name);
		if (task_fd_is_gpu_node(tid, wfd) && take(t, getfd(task, wfd)) >= 0)
			n++;
	}
	closedir(d);
	return n;
}

/* The call in the calling thread's table. In a helper the shared table's
 * numbers mean nothing: the dup and the listener are taken in from our
 * own process (pidfd_getfd of our own thread group needs no privilege);
 * in the shared-table test mode they are used as they are. */
static enum gs_private_outcome make_call(struct gs_private_call *pc, bool shared, struct taken *t)
{
	int dup = pc->dup, listener = pc->listener;

	if (!shared) {
		int self = take(t, pidfd_of_task(getpid()));
		dup = take(t, self < 0 ? -1 : getfd(self, pc->dup));
		listener = take(t, self < 0 ? -1 : getfd(self, pc->listener));
		if (dup < 0 || listener < 0) {
			pc->err = errno;
			return GS_PRIVATE_FAILED;
		}
	}
	int task = take(t, pidfd_of_task(pc->tid));
	pc->nodes = task < 0 ? 0 : borrow_nodes(task, pc->tid, t);
	/* After the borrow: still valid means the trapped task was alive all
	 * along, so the tid (and the pidfd opened by it) named that task
	 * (SECURITY.md, "The trapped task, reached again"). */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &pc->notif_id) != 0)
		return GS_PRIVATE_TASK_GONE;
	if (pc->only_with_nodes && pc->nodes == 0)
		return GS_PRIVATE_NO_NODES;
	pc->rc = ioctl(dup, pc->request, pc->arg) < 0 ? -errno : 0;
	return GS_PRIVATE_PERFORMED;
}

/* The job is the worker's (on its stack): not touched after this. */
static void finish(struct job *j, enum gs_private_outcome outcome)
{
	pthread_mutex_lock(&sp.lock);
	j->outcome = outcome;
	j->done = true;
	pthread_cond_broadcast(&sp.finished);
	pthread_mutex_unlock(&sp.lock);
}

static void close_taken(struct taken *t)
{
	for (unsigned i = 0; i < t->n; i++)
		close(t->fd[i]);
	t->n = 0;
}

/* A helper: its own copy of the spawner's (empty) table, emptied again
 * (nothing may have been in it, but nothing the call did not take may be
 * there when the driver looks), the call, then every fd closed before
 * the worker goes on: no borrowed node outlives the call. */
static void *helper(void *arg)
{
	struct job *j = arg;
	enum gs_private_outcome outcome = GS_PRIVATE_FAILED;
	struct taken t = { .n = 0 };

	if (unshare(CLONE_FILES) < 0 || syscall(SYS_close_range, 0, ~0u, 0) < 0) {
		j->call->err = errno;
	} else {
		outcome = make_call(j->call, false, &t);
		syscall(SYS_close_range, 0, ~0u, 0);
	}
	finish(j, outcome);
	return NULL;
}

/* The spawner: an emptied table of its own, then one detached helper per
 * queued call. It inherits the starter's blocked signals (all of them) and
 * capabilities (those left after the drop). */
static void *spawner(void *arg)
{
	pthread_attr_t attr;

	(void)arg;
	int err = unshare(CLONE_FILES) < 0 || syscall(SYS_close_range, 0, ~0u, 0) < 0 ? errno : 0;
	pthread_mutex_lock(&sp.lock);
	sp.start_err = err;
	pthread_cond_broadcast(&sp.finished);
	if (err) {
		pthread_mutex_unlock(&sp.lock);
		return NULL;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		while (!sp.head)
			pthread_cond_wait(&sp.wake, &sp.lock);
		struct job *j = sp.head;
		sp.head = j->next;
		if (!sp.head)
			sp.tail = NULL;
		pthread_mutex_unlock(&sp.lock);
		pthread_t h;
		int rc = pthread_create(&h, &attr, helper, j);
		if (rc) {
			j->call->err = rc;
			finish(j, GS_PRIVATE_FAILED);
		}
		pthread_mutex_lock(&sp.lock);
	}
	return NULL;
}

int gs_private_table_start(struct gs_error *err)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int rc = 0;

	pthread_mutex_lock(&sp.lock);
	if (sp.pid != getpid()) {
		sp.shared = gs_test_switch("GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC") != NULL;
		sp.head = sp.tail = NULL; /* a forked child's copy of a queue */
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		sp.start_err = -1;
		rc = pthread_create(&t, &attr, spawner, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
		/* Served only once the spawner's own table is empty. */
		while (rc == 0 && sp.start_err < 0)
			pthread_cond_wait(&sp.finished, &sp.lock);
		if (rc == 0)
			rc = sp.start_err;
		if (rc == 0)
			sp.pid = getpid();
	}
	pthread_mutex_unlock(&sp.lock);
	return rc ? gs_fail(err, rc, "starting the device allocations' spawner thread") : 0;
}

enum gs_private_outcome gs_private_table_call(struct gs_private_call *pc)
{
	struct job j = { .call = pc, .outcome = GS_PRIVATE_FAILED, .next = NULL };

	pc->rc = 0;
	pc->nodes = 0;
	pc->err = 0;
	pthread_mutex_lock(&sp.lock);
	if (sp.pid != getpid()) {
		/* Never started in this process: fail closed. */
		pthread_mutex_unlock(&sp.lock);
		pc->err = ESRCH;
		return GS_PRIVATE_FAILED;
	}
	if (sp.shared) {
		pthread_mutex_unlock(&sp.lock);
		struct taken t = { .n = 0 };
		j.outcome = make_call(pc, true, &t);
		close_taken(&t);
		return j.outcome;
	}
	if (sp.tail)
		sp.tail->next = &j;
	else
		sp.head = &j;
	sp.tail = &j;
	pthread_cond_signal(&sp.wake);
	while (!j.done)
		pthread_cond_wait(&sp.finished, &sp.lock);
	pthread_mutex_unlock(&sp.lock);
	return j.outcome;
}
