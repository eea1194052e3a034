/* SPDX-License-Identifier: MIT */
/*
 * test_mm_keep.c - a worker's kept answer memory (supervisor/core/tasks/
 * mm_keep.c, issue #31).
 *
 * The tasks are children of this process (and a thread of one): each
 * holds a buffer at the same address as ours (fork), which a write
 * through its kept /proc/TID/mem file must reach, and which we read back
 * with process_vm_readv. Checked: a kept file is given to its task's next
 * call and writes into it; a thread that exited is not given its file
 * again although that file still writes into its living process (the
 * baseline: the same file used without the pidfd's look, as a tid-keyed
 * cache would, writes into the process that no longer has the tid); an
 * file taken unlooked is proven or let go by the one look after (the
 * same baseline); an exec'd task's kept file takes no write (what answer_write's fresh open
 * relies on); the least recently used file is let go for a fifth task; a
 * keep of another sandbox keeps nothing of the last one's; a keep never
 * initialised keeps nothing. Says SKIP where the kernel has no
 * PIDFD_THREAD (before 6.9).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "mm_keep.h"

#define CHILDREN (GS_MM_KEEP_SLOTS + 1)
#define WAIT_STEP_US 1000
#define WAIT_STEPS 5000

static char buf[64];
static int owner_a, owner_b;
static volatile pid_t thread_tid;

static bool read_back(pid_t pid, const char *want)
{
	char got[sizeof(buf)] = { 0 };
	struct iovec l = { got, sizeof(got) }, r = { buf, sizeof(buf) };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(got) && strcmp(got, want) == 0;
}

static pid_t sleeper(void)
{
	pid_t p = fork();

	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	usleep(200000);
	return NULL;
}

/* A child with a second thread that exits after 0.2 s; the child lives on. */
static pid_t with_thread(int report)
{
	pid_t p = fork();

	if (p == 0) {
		pthread_t t;
		pthread_create(&t, NULL, thread_main, NULL);
		while (!thread_tid)
			usleep(100);
		pid_t tid = thread_tid;
		(void)!write(report, &tid, sizeof(tid));
		pthread_join(t, NULL);
		for (;;)
			pause();
	}
	return p;
}

/* A child that execs sleep once told to (a byte on go). */
static pid_t execer(int go)
{
	pid_t p = fork();

	if (p == 0) {
		char c;
		(void)!read(go, &c, 1);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(1);
	}
	return p;
}

static bool exe_is_sleep(pid_t p)
{
	char path[64], link[256] = { 0 };

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p);
	return readlink(path, link, sizeof(link) - 1) > 0 && strstr(link, "sleep");
}

static void stop(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

/* Each call below stands for a notification of its own. */
static uint64_t next_id(void)
{
	static uint64_t id = 1000;
	return ++id;
}

static int slot_of(const struct gs_mm_keep *k, pid_t tid)
{
	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++)
		if (k->slot[i].tid == tid)
			return (int)i;
	return -1;
}

static pid_t thread_child(pid_t *tp)
{
	int rep[2];
	pid_t tid = 0;

	if (pipe(rep) != 0)
		return 0;
	*tp = with_thread(rep[1]);
	if (read(rep[0], &tid, sizeof(tid)) != (ssize_t)sizeof(tid))
		tid = 0;
	close(rep[0]);
	close(rep[1]);
	return tid;
}

static bool wait_thread_gone(pid_t tp, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)tp, (int)tid);
	for (int i = 0; i < WAIT_STEPS && access(path, F_OK) == 0; i++)
		usleep(WAIT_STEP_US);
	return access(path, F_OK) != 0;
}

/* Marks (the agent's "lacks CAP_SYS_ADMIN"): kept with or without a file,
 * looked at once per notification, gone with their task. */
static void check_marks(pid_t kid)
{
	struct gs_mm_keep k;
	struct gs_task_mem m = GS_TASK_MEM_CLOSED;
	uint64_t id = next_id();

	gs_mm_keep_init(&k);
	/* None yet; then a mark alone, no file to take. */
	CHECK(gs_mm_keep_marks(&k, &owner_a, kid, id) == 0);
	int pidfd = (int)syscall(SYS_pidfd_open, kid, 0);
	CHECK(pidfd >= 0);
	gs_mm_keep_mark(&k, &owner_a, kid, id, pidfd, GS_MM_KEEP_NO_SYS_ADMIN);
	int i = slot_of(&k, kid);
	CHECK(i >= 0 && k.slot[i].pidfd == pidfd && k.slot[i].memfd < 0);
	CHECK(!gs_mm_keep_take(&k, &owner_a, kid, id, &m));
	/* The same notification's file joins the slot: its pidfd and mark
	 * stay, the file's own pidfd goes. */
	CHECK(task_mem_open(kid, &m) == 0 && m.pidfd >= 0);
	int file = m.fd, its_pidfd = m.pidfd;
	gs_mm_keep_put(&k, &owner_a, kid, id, &m);
	CHECK(m.fd < 0 && k.slot[i].memfd == file && k.slot[i].pidfd == pidfd);
	CHECK(fcntl(its_pidfd, F_GETFD) < 0);
	/* The next notification: the mark, and the file. */
	id = next_id();
	CHECK(gs_mm_keep_marks(&k, &owner_a, kid, id) == GS_MM_KEEP_NO_SYS_ADMIN);
	CHECK(gs_mm_keep_take(&k, &owner_a, kid, id, &m) && m.fd == file);
	task_mem_close(&m);
	/* A file put for another notification than the one the slot was
	 * found alive for starts a slot afresh: the mark goes. */
	CHECK(task_mem_open(kid, &m) == 0);
	gs_mm_keep_put(&k, &owner_a, kid, next_id(), &m);
	i = slot_of(&k, kid);
	CHECK(i >= 0 && k.slot[i].marks == 0);

	/* A thread with a mark exits: the mark goes with its slot. Within
	 * the notification its slot was found alive for, the take looks no
	 * more (the trapped task was that one: mm_keep.h); the next
	 * notification's look finds it gone. */
	pid_t tp = 0, tid = thread_child(&tp);
	CHECK(tid > 0);
	id = next_id();
	CHECK(gs_mm_keep_marks(&k, &owner_a, tid, id) == 0);
	pidfd = (int)syscall(SYS_pidfd_open, tid, O_EXCL); /* PIDFD_THREAD */
	if (pidfd < 0) {
		printf("SKIP: marks of a thread: no PIDFD_THREAD pidfd\n");
	} else {
		CHECK(task_mem_open(tid, &m) == 0);
		gs_mm_keep_mark(&k, &owner_a, tid, id, pidfd, GS_MM_KEEP_NO_SYS_ADMIN);
		gs_mm_keep_put(&k, &owner_a, tid, id, &m);
		id = next_id();
		CHECK(gs_mm_keep_marks(&k, &owner_a, tid, id) == GS_MM_KEEP_NO_SYS_ADMIN);
		CHECK(wait_thread_gone(tp, tid));
		CHECK(gs_mm_keep_take(&k, &owner_a, tid, id, &m) && m.kept);
		task_mem_close(&m);
		CHECK(gs_mm_keep_marks(&k, &owner_a, tid, next_id()) == 0 && slot_of(&k, tid) < 0);
		CHECK(!gs_mm_keep_take(&k, &owner_a, tid, next_id(), &m));
	}
	stop(tp);
	gs_mm_keep_fini(&k);
}

static bool keep_holds(const struct gs_mm_keep *k, pid_t tid)
{
	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++)
		if (k->slot[i].tid == tid)
			return true;
	return false;
}

int main(void)
{
	struct gs_mm_keep k;
	struct gs_task_mem m = GS_TASK_MEM_CLOSED;
	pid_t kids[CHILDREN];

	strcpy(buf, "before");
	for (unsigned i = 0; i < CHILDREN; i++)
		kids[i] = sleeper();
	if (task_mem_open(kids[0], &m) < 0 || m.pidfd < 0) {
		printf("SKIP: no PIDFD_THREAD pidfd or /proc/TID/mem here\n");
		task_mem_close(&m);
		for (unsigned i = 0; i < CHILDREN; i++)
			stop(kids[i]);
		return 0;
	}
	gs_mm_keep_init(&k);

	/* Kept, then given to the task's next call, which writes into it. */
	gs_mm_keep_put(&k, &owner_a, kids[0], next_id(), &m);
	CHECK(m.fd < 0 && m.pidfd < 0 && keep_holds(&k, kids[0]));
	CHECK(gs_mm_keep_take(&k, &owner_a, kids[0], next_id(), &m) && m.kept);
	CHECK(mem_write(&m, (uintptr_t)buf, "kept", sizeof("kept")) == 0 && read_back(kids[0], "kept"));
	int lent = m.fd;
	task_mem_close(&m);
	CHECK(fcntl(lent, F_GETFD) >= 0); /* lent, not closed */
	CHECK(gs_mm_keep_take(&k, &owner_a, kids[0], next_id(), &m) && m.fd == lent);
	task_mem_close(&m);

	/* A thread that exited: its file writes on into its process, so
	 * only the pidfd's look keeps it from answering for the tid's next
	 * owner. */
	pid_t tp = 0, tid = thread_child(&tp);
	CHECK(tid > 0);
	CHECK(task_mem_open(tid, &m) == 0 && m.pidfd >= 0);
	int raw = dup(m.fd);
	gs_mm_keep_put(&k, &owner_a, tid, next_id(), &m);
	CHECK(wait_thread_gone(tp, tid));
	CHECK(!gs_mm_keep_take(&k, &owner_a, tid, next_id(), &m) && !keep_holds(&k, tid));
	/* Baseline: the same file, used without the look, still writes
	 * into the process that no longer has that tid. */
	CHECK(pwrite(raw, "stale", sizeof("stale"), (off_t)(uintptr_t)buf) == (ssize_t)sizeof("stale") &&
	      read_back(tp, "stale"));
	close(raw);
	stop(tp);

	/* Taken unlooked (round 12), for a call whose reads come next: the
	 * file is given without a look, and the one look after the reads
	 * decides. Alive: proven for the notification (a second take of the
	 * same id says so). Exited: the slot is emptied and the call's file
	 * let go, unwritten; the baseline, the same file written without
	 * the look, reaches the process that no longer has the tid. */
	tid = thread_child(&tp);
	CHECK(tid > 0);
	CHECK(task_mem_open(tid, &m) == 0 && m.pidfd >= 0);
	raw = dup(m.fd);
	gs_mm_keep_put(&k, &owner_a, tid, next_id(), &m);
	uint64_t id = next_id();
	bool looked = true;
	CHECK(gs_mm_keep_take_unlooked(&k, &owner_a, tid, id, &m, &looked) && m.kept && !looked);
	CHECK(gs_mm_keep_look(&k, tid, id, &m) && m.kept && m.fd >= 0);
	task_mem_close(&m);
	CHECK(gs_mm_keep_take_unlooked(&k, &owner_a, tid, id, &m, &looked) && looked);
	task_mem_close(&m);
	CHECK(wait_thread_gone(tp, tid));
	id = next_id();
	CHECK(gs_mm_keep_take_unlooked(&k, &owner_a, tid, id, &m, &looked) && m.kept && !looked);
	CHECK(!gs_mm_keep_look(&k, tid, id, &m) && m.fd < 0 && !m.kept && !keep_holds(&k, tid));
	CHECK(!gs_mm_keep_take_unlooked(&k, &owner_a, tid, next_id(), &m, &looked));
	CHECK(pwrite(raw, "unlooked", sizeof("unlooked"), (off_t)(uintptr_t)buf) == (ssize_t)sizeof("unlooked") &&
	      read_back(tp, "unlooked"));
	close(raw);
	stop(tp);

	/* An exec: the task lives on, its kept file takes no write. */
	int go[2];
	CHECK(pipe(go) == 0);
	pid_t ex = execer(go[0]);
	CHECK(task_mem_open(ex, &m) == 0);
	gs_mm_keep_put(&k, &owner_a, ex, next_id(), &m);
	(void)!write(go[1], "x", 1);
	for (int i = 0; i < WAIT_STEPS && !exe_is_sleep(ex); i++)
		usleep(WAIT_STEP_US);
	CHECK(exe_is_sleep(ex));
	CHECK(gs_mm_keep_take(&k, &owner_a, ex, next_id(), &m) && m.kept);
	CHECK(mem_write(&m, (uintptr_t)buf, "lost", sizeof("lost")) < 0);
	gs_mm_keep_forget(&k, ex);
	CHECK(!keep_holds(&k, ex));
	task_mem_close(&m);
	stop(ex);

	/* Every slot full: one task more lets the least recently used go. */
	for (unsigned i = 0; i < CHILDREN; i++) {
		CHECK(task_mem_open(kids[i], &m) == 0);
		gs_mm_keep_put(&k, &owner_a, kids[i], next_id(), &m);
		if (i == CHILDREN - 2) /* kids[0] used again: kids[1] is now the oldest */
			CHECK(gs_mm_keep_take(&k, &owner_a, kids[0], next_id(), &m));
		task_mem_close(&m);
	}
	CHECK(keep_holds(&k, kids[0]) && !keep_holds(&k, kids[1]));
	for (unsigned i = 2; i < CHILDREN; i++)
		CHECK(keep_holds(&k, kids[i]));

	/* Another sandbox's keep: the last one's files are let go. */
	CHECK(!gs_mm_keep_take(&k, &owner_b, kids[0], next_id(), &m) && !keep_holds(&k, kids[0]));
	gs_mm_keep_fini(&k);

	/* A keep never initialised keeps nothing, and closes what it is given. */
	struct gs_mm_keep off;
	memset(&off, 0, sizeof(off));
	CHECK(task_mem_open(kids[2], &m) == 0);
	int was = m.fd;
	gs_mm_keep_put(&off, &owner_a, kids[2], next_id(), &m);
	CHECK(m.fd < 0 && fcntl(was, F_GETFD) < 0);
	CHECK(!gs_mm_keep_take(&off, &owner_a, kids[2], next_id(), &m));

	check_marks(kids[1]);
	for (unsigned i = 0; i < CHILDREN; i++)
		stop(kids[i]);
	return check_summary();
}
