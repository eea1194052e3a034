/* SPDX-License-Identifier: MIT */
/*
 * The quiesce's walk remembers the processes of our own PID namespace
 * (host_pids.h) and leaves them out of later walks; a remembered pid that
 * is given to a sandbox task must still be looked at (issue #16).
 *
 * A caller runs in a PID namespace of its own, as a sandbox's task does.
 * Host process H (ours) is remembered by a first walk, then killed and
 * reaped, and its pid given to a new task of the caller's namespace that
 * shares the caller's fd table (clone3 with set_tid for both levels, as
 * root may: the test plays a pid-cycling attacker deterministically). The
 * cache alone still says the pid is ours (the baseline: a walk that
 * trusted it would leave the sharer out); gs_fd_sharers finds the sharer,
 * because a remembered process is confirmed alive after the walk. And a
 * remembered process that ends is forgotten by the next walk. Needs
 * root; says SKIP where clone3's set_tid is not available.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "host_pids.h"
#include "quiesce.h"
#include "taskset.h"

#define STACK_BYTES (64 * 1024)
#define MAX_FOUND 8
#define NS_PID 100 /* the sharer's pid inside the caller's namespace */
#define EXIT_SKIP 125 /* run-tests.sh: cannot run here */

struct request {
	int   cmd_r, reply_w;
};

static int sleeper(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

/* A CLONE_FILES child of ours with pid NS_PID here and host_pid in the
 * parent namespace; its host pid, or -errno. */
static pid_t clone_sharer_at(pid_t host_pid)
{
	pid_t set_tid[2] = { NS_PID, host_pid };
	struct clone_args a = { .flags = CLONE_FILES, .exit_signal = SIGCHLD,
		                .set_tid = (uintptr_t)set_tid, .set_tid_size = 2 };
	long r = syscall(SYS_clone3, &a, sizeof(a));

	if (r == 0) {
		sleeper(NULL);
		_exit(0);
	}
	return r < 0 ? -errno : host_pid;
}

/* The caller: waits for a host pid on cmd_r, makes the sharer there and
 * answers its pid (or -errno). */
static int caller_main(void *arg)
{
	const struct request *rq = arg;
	pid_t want;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(rq->cmd_r, &want, sizeof(want)) != sizeof(want))
		_exit(1);
	pid_t got = clone_sharer_at(want);
	(void)!write(rq->reply_w, &got, sizeof(got));
	for (;;)
		pause();
	return 0;
}

static bool remembered(pid_t pid)
{
	gs_host_pids_begin();
	bool r = gs_host_pids_known(pid);
	gs_host_pids_end();
	return r;
}

int main(void)
{
	int cmd[2], reply[2];
	pid_t found[MAX_FOUND];
	struct gs_taskset tasks;

	if (geteuid() != 0) {
		printf("SKIP: needs root (clone3 set_tid)\n");
		return EXIT_SKIP;
	}
	if (pipe(cmd) < 0 || pipe(reply) < 0)
		return 1;
	pid_t host = fork();
	if (host == 0)
		return sleeper(NULL);
	struct request rq = { .cmd_r = cmd[0], .reply_w = reply[1] };
	char *stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t caller = clone(caller_main, stack + STACK_BYTES, CLONE_NEWPID | SIGCHLD, &rq);
	CHECK(host > 0 && caller > 0);
	gs_taskset_process_tree(&tasks, getpid());

	/* First walk: no sharer yet; the host process is remembered. */
	CHECK(gs_fd_sharers(caller, &tasks, found, MAX_FOUND) == 0);
	CHECK(remembered(host));
	CHECK(!remembered(caller)); /* not ours: never remembered */

	/* The host process goes; its pid comes back as the caller's sharer. */
	kill(host, SIGKILL);
	CHECK(waitpid(host, NULL, 0) == host);
	pid_t got;
	if (write(cmd[1], &host, sizeof(host)) != sizeof(host) ||
	    read(reply[0], &got, sizeof(got)) != sizeof(got))
		return 1;
	if (got == -ENOSYS || got == -EINVAL || got == -EPERM || got == -EEXIST) {
		printf("SKIP: clone3 set_tid not available here (%s)\n", strerror(-got));
		kill(caller, SIGKILL);
		return EXIT_SKIP;
	}
	CHECK(got == host);
	gs_taskset_process_tree(&tasks, getpid());

	/* The baseline: the cache by itself still names the pid as ours. */
	CHECK(remembered(host));
	/* The walk finds the sharer all the same, and forgets the stale entry. */
	int n = gs_fd_sharers(caller, &tasks, found, MAX_FOUND);
	CHECK(n == 1 && found[0] == host);
	CHECK(!remembered(host));
	/* And again: now it is looked at as a sandbox task every time. */
	n = gs_fd_sharers(caller, &tasks, found, MAX_FOUND);
	CHECK(n == 1 && found[0] == host);

	/* A remembered process that ends and leaves /proc is forgotten by the
	 * next walk (no walk relies on it again; its pidfd must not be kept
	 * for good). */
	pid_t gone = fork();
	if (gone == 0)
		return sleeper(NULL);
	CHECK(gs_fd_sharers(caller, &tasks, found, MAX_FOUND) == 1);
	CHECK(remembered(gone));
	kill(gone, SIGKILL);
	CHECK(waitpid(gone, NULL, 0) == gone);
	CHECK(gs_fd_sharers(caller, &tasks, found, MAX_FOUND) == 1);
	CHECK(!remembered(gone));

	kill(caller, SIGKILL);
	kill(host, SIGKILL);
	return check_summary();
}
