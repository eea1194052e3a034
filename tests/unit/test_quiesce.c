/* SPDX-License-Identifier: MIT */
/*
 * test_quiesce.c - the tasks that share a caller's fd table (quiesce.c).
 *
 * A child process starts a thread, a CLONE_FILES process of another tgid
 * and a plain fork (a copy of the table, not a share), and sleeps; its
 * children are told apart by gs_fd_sharers: exactly the thread and the
 * CLONE_FILES process, not the fork, the child's own tid or this process.
 * A lone process has none. gs_quiesce_begin then holds both sharers in a
 * ptrace stop ('t' in /proc/TID/stat) and gs_quiesce_end lets them run
 * again; with a sharer traced by someone else it fails closed, with a
 * reason. A caller that ends its whole thread group right after its
 * continued call, before our interrupt reaches it, is let go of at once:
 * its stopped threads die in their stops, and their ends are ours to
 * take before the leader's can be reported (a supervisor once waited
 * for it forever). Handed off (gs_quiesce_hand_off), a quiesce whose
 * caller is inside the kernel (a vfork parent, in a killable wait our
 * interrupt cannot end) stays counted live, its caller seized, until the
 * caller has left; then it is counted out with no one waiting for it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "quiesce.h"
#include "taskset.h"

#define STACK_SIZE (64 * 1024)
#define POLL_US 1000
#define POLL_TRIES 2000

enum { T_MAIN, T_THREAD, T_CLONED, T_FORKED, N_TIDS };

static int report_fd;

static int sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static void *thread_main(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	(void)!write(report_fd, &tid, sizeof(tid));
	return (void *)(intptr_t)sleeper(arg);
}

/* The child: reports its tid, its thread's, its CLONE_FILES process's
 * and its fork's, then sleeps. */
static _Noreturn void family(int fd)
{
	pid_t me = getpid(), cloned, forked;
	char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	pthread_t th;

	report_fd = fd;
	(void)!write(fd, &me, sizeof(me));
	pthread_create(&th, NULL, thread_main, NULL);
	usleep(POLL_US * 10); /* the thread reports second */
	cloned = clone(sleeper, stack + STACK_SIZE, CLONE_FILES | SIGCHLD, NULL);
	(void)!write(fd, &cloned, sizeof(cloned));
	forked = fork();
	if (forked == 0)
		sleeper(NULL);
	(void)!write(fd, &forked, sizeof(forked));
	sleeper(NULL);
	_exit(0);
}

static bool has(const pid_t *list, int n, pid_t t)
{
	for (int i = 0; i < n; i++)
		if (list[i] == t)
			return true;
	return false;
}

/* The state letter of /proc/TID/stat ('t': stopped by a tracer). */
static char state_of(pid_t tid)
{
	char path[64], buf[512], st = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f) && strrchr(buf, ')'))
		sscanf(strrchr(buf, ')') + 1, " %c", &st);
	if (f)
		fclose(f);
	return st;
}

static bool becomes(pid_t tid, bool stopped)
{
	for (int i = 0; i < POLL_TRIES; i++) {
		if ((state_of(tid) == 't') == stopped)
			return true;
		usleep(POLL_US);
	}
	return false;
}

static void test_lone_process(const struct gs_taskset *ts)
{
	pid_t out[4];
	pid_t lone = fork();

	if (lone == 0)
		sleeper(NULL);
	usleep(POLL_US * 10);
	CHECK(gs_fd_sharers(lone, ts, out, 4) == 0);
	/* Its own thread group: none beside it (told by the link count of
	 * /proc/TID/task where the kernel counts threads there, sharers.c). */
	CHECK(gs_sharers_in_process(lone, lone, ts, out, 4, 0) == 0);
	struct gs_quiesce_who who = { ts, NULL, NULL, false, NULL, true, NULL, NULL, false, NULL };
	struct gs_quiesce *q = (struct gs_quiesce *)1;
	const char *why = NULL;
	CHECK(gs_quiesce_begin(lone, &who, &q, &why) == 0 && q == NULL);
	/* Asked to seize a lone caller (a UVM channel registration, whose
	 * outcome is known only once the caller has left its ioctl), it
	 * does, and counts the caller in flight until then. The count
	 * outlives the caller's reference (a tracing thread may outlive the
	 * sandbox that began it). */
	struct gs_inflight *track = gs_inflight_new();
	CHECK(track != NULL && gs_inflight_count(track) == 0);
	who.seize_lone = true;
	who.track = track;
	q = NULL;
	CHECK(gs_quiesce_begin(lone, &who, &q, &why) == 0 && q != NULL);
	CHECK(gs_inflight_count(track) == 1);
	gs_quiesce_end(q, true);
	CHECK(gs_inflight_count(track) == 0);
	/* A lone caller that cannot be seized (it is traced already by a
	 * quiesce still holding it) fails closed, and is not counted. */
	q = NULL;
	CHECK(gs_quiesce_begin(lone, &who, &q, &why) == 0 && q != NULL);
	struct gs_quiesce *q2 = NULL;
	why = NULL;
	CHECK(gs_quiesce_begin(lone, &who, &q2, &why) < 0 && q2 == NULL && why != NULL);
	CHECK(gs_inflight_count(track) == 1);
	gs_quiesce_end(q, false);
	CHECK(gs_inflight_count(track) == 0);
	gs_inflight_put(track);
	kill(lone, SIGKILL);
	waitpid(lone, NULL, 0);
}

/* A caller inside a syscall for VFORK_CHILD_MS: a vfork parent waits for
 * its child killably. */
#define VFORK_CHILD_MS 400
#define HAND_OFF_LOOK_MS 100

static _Noreturn void vforker(int go)
{
	char x;

	(void)!read(go, &x, 1);
	if (vfork() == 0) {
		usleep(VFORK_CHILD_MS * 1000);
		_exit(0);
	}
	sleeper(NULL);
	_exit(0);
}

/* Begins a quiesce of a fresh vforker, which then goes into its vfork. */
static pid_t vforker_held(const struct gs_quiesce_who *who, struct gs_quiesce **q, int go[2])
{
	const char *why = NULL;

	if (pipe(go) < 0)
		return -1;
	pid_t p = fork();
	if (p == 0)
		vforker(go[0]);
	CHECK(gs_quiesce_begin(p, who, q, &why) == 0 && *q != NULL);
	(void)!write(go[1], "x", 1);
	usleep(POLL_US * 20);
	return p;
}

static void vforker_end(pid_t p, int go[2])
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	close(go[0]);
	close(go[1]);
}

static void test_hand_off(const struct gs_taskset *ts)
{
	struct gs_inflight *live = gs_inflight_new(), *track = gs_inflight_new();
	struct gs_quiesce_who who = { ts, NULL, NULL, true, track, true, live, NULL, false, NULL };
	struct gs_quiesce_handoffs h = { .n = 0 };
	struct gs_quiesce *q = NULL;
	int go[2];

	if (!live || !track)
		return;
	/* The caller in the kernel ("continued"), handed off: still held. */
	pid_t p = vforker_held(&who, &q, go);
	CHECK(gs_quiesce_hand_off(&h, q) && h.n == 1);
	usleep(HAND_OFF_LOOK_MS * 1000);
	CHECK(gs_inflight_count(live) == 1 && gs_inflight_count(track) == 1);
	/* Counted out once the caller has left, with no one waiting. */
	CHECK(gs_inflight_wait_none(live, VFORK_CHILD_MS * 10));
	CHECK(gs_inflight_count(track) == 0);
	CHECK(becomes(p, false));
	gs_quiesce_caller_back(&h, 0); /* reaps the finished one */
	CHECK(h.n == 0);
	vforker_end(p, go);
	/* The caller trapped again (said by the worker): let go at once,
	 * though this one is still in its vfork. */
	p = vforker_held(&who, &q, go);
	CHECK(gs_quiesce_hand_off(&h, q) && h.n == 1);
	gs_quiesce_caller_back(&h, p);
	CHECK(h.n == 0 && gs_inflight_count(live) == 0 && gs_inflight_count(track) == 0);
	CHECK(state_of(p) != 't');
	vforker_end(p, go);
	gs_inflight_put(live);
	gs_inflight_put(track);
}

static void test_hold_and_release(const struct gs_taskset *ts, const pid_t *tid)
{
	struct gs_quiesce_who who = { ts, NULL, NULL, false, NULL, true, NULL, NULL, false, NULL };
	struct gs_quiesce *q = NULL;
	const char *why = NULL;

	CHECK(gs_quiesce_begin(tid[T_MAIN], &who, &q, &why) == 0 && q != NULL);
	CHECK(state_of(tid[T_THREAD]) == 't' && state_of(tid[T_CLONED]) == 't');
	CHECK(state_of(tid[T_FORKED]) != 't');
	gs_quiesce_end(q, false);
	CHECK(becomes(tid[T_THREAD], false) && becomes(tid[T_CLONED], false));
}

/* A sandbox whose filter follows the clones that share a table, none of
 * which came (others_may_share false): the caller's own thread group is
 * all the quiesce stops, without a walk of every process. The
 * CLONE_FILES process here was made outside any such filter, so it is
 * left running: what the filter's trap of its clone (exec_clone) exists
 * to prevent. tests/adv client_fdswap:proc shows it in a sandbox. */
static void test_thread_group_only(const struct gs_taskset *ts, const pid_t *tid)
{
	struct gs_quiesce_who who = { ts, NULL, NULL, false, NULL, false, NULL, NULL, false, NULL };
	struct gs_quiesce *q = NULL;
	const char *why = NULL;
	pid_t out[4];

	/* Two threads: never taken for a lone one (sharers.c, task_alone). */
	CHECK(gs_sharers_in_process(tid[T_MAIN], tid[T_MAIN], ts, out, 4, 0) == 1 &&
	      out[0] == tid[T_THREAD]);
	CHECK(gs_quiesce_begin(tid[T_MAIN], &who, &q, &why) == 0 && q != NULL);
	CHECK(state_of(tid[T_THREAD]) == 't');
	CHECK(state_of(tid[T_CLONED]) != 't' && state_of(tid[T_FORKED]) != 't');
	gs_quiesce_end(q, false);
	CHECK(becomes(tid[T_THREAD], false));
}

/* A sharer traced by another process cannot be stopped by us: refused. */
static void test_traced_elsewhere(const struct gs_taskset *ts, const pid_t *tid)
{
	struct gs_quiesce_who who = { ts, NULL, NULL, false, NULL, true, NULL, NULL, false, NULL };
	struct gs_quiesce *q = NULL;
	const char *why = NULL;
	int go[2];
	char c = 0;

	if (pipe(go) < 0)
		return;
	pid_t tracer = fork();
	if (tracer == 0) {
		c = ptrace(PTRACE_SEIZE, tid[T_CLONED], 0, 0) == 0 ? 'y' : 'n';
		(void)!write(go[1], &c, 1);
		sleeper(NULL);
	}
	CHECK(read(go[0], &c, 1) == 1 && c == 'y');
	CHECK(gs_quiesce_begin(tid[T_MAIN], &who, &q, &why) < 0 && q == NULL && why != NULL);
	if (why)
		printf("traced elsewhere: %s\n", why);
	/* Nothing stays stopped after the refusal. */
	CHECK(becomes(tid[T_THREAD], false));
	kill(tracer, SIGKILL);
	waitpid(tracer, NULL, 0);
	close(go[0]);
	close(go[1]);
}

static void *exiter_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A process of EXITER_THREADS threads whose main thread ends the group
 * (exit_group) as soon as a byte arrives on fd. */
#define EXITER_THREADS 3
static _Noreturn void exiter(int fd)
{
	pthread_t th;
	char c;

	for (int i = 0; i < EXITER_THREADS; i++)
		pthread_create(&th, NULL, exiter_thread, NULL);
	(void)!read(fd, &c, 1);
	_exit(0);
}

/* Is pid reaped by us within about tries * POLL_US? */
static bool reaped_soon(pid_t pid, int tries)
{
	for (int i = 0; i < tries; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		usleep(POLL_US);
	}
	return false;
}

static void test_caller_ends_group(const struct gs_taskset *ts)
{
	struct gs_quiesce_who who = { ts, NULL, NULL, false, NULL, true, NULL, NULL, false, NULL };
	struct gs_quiesce *q = NULL;
	const char *why = NULL;
	int go[2];

	if (pipe(go) < 0)
		return;
	pid_t p = fork();
	if (p == 0)
		exiter(go[0]);
	usleep(POLL_US * 20); /* its threads are up */
	CHECK(gs_quiesce_begin(p, &who, &q, &why) == 0 && q != NULL);
	/* The "continued call" returns and the caller ends the group before
	 * the interrupt of gs_quiesce_end comes. */
	(void)!write(go[1], "x", 1);
	usleep(POLL_US * 20);
	gs_quiesce_end(q, true);
	/* Its end reaches us, its parent, once the tracer let go of all. */
	CHECK(reaped_soon(p, POLL_TRIES));
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	struct gs_taskset ts;
	pid_t tid[N_TIDS], out[8];
	int fds[2];

	/* The children's orphans come back to us: the process tree holds. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	gs_taskset_process_tree(&ts, getpid());
	test_lone_process(&ts);
	test_hand_off(&ts);
	if (pipe(fds) < 0)
		return 1;
	pid_t child = fork();
	if (child == 0)
		family(fds[1]);
	for (int i = 0; i < N_TIDS; i++)
		CHECK(read(fds[0], &tid[i], sizeof(pid_t)) == (ssize_t)sizeof(pid_t));
	int n = gs_fd_sharers(tid[T_MAIN], &ts, out, 8);
	CHECK(n == 2 && has(out, n, tid[T_THREAD]) && has(out, n, tid[T_CLONED]));
	CHECK(!has(out, n > 0 ? n : 0, tid[T_FORKED]) && !has(out, n > 0 ? n : 0, tid[T_MAIN]) &&
	      !has(out, n > 0 ? n : 0, getpid()));
	/* Seen from a sharer, the caller is one. */
	n = gs_fd_sharers(tid[T_CLONED], &ts, out, 8);
	CHECK(n == 2 && has(out, n, tid[T_MAIN]) && has(out, n, tid[T_THREAD]));
	/* More than max: fail closed (E2BIG), never a short list. */
	CHECK(gs_fd_sharers(tid[T_MAIN], &ts, out, 1) == -1);
	test_hold_and_release(&ts, tid);
	test_thread_group_only(&ts, tid);
	test_traced_elsewhere(&ts, tid);
	test_caller_ends_group(&ts);
	kill(tid[T_FORKED], SIGKILL);
	kill(tid[T_CLONED], SIGKILL);
	kill(child, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0)
		;
	return check_summary();
}
