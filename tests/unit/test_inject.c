/* SPDX-License-Identifier: MIT */
/*
 * test_inject.c - a trapped task made to perform one ioctl from a page of
 * its own (inject.c), through the quiesce that holds it (quiesce.c).
 *
 * A child under a filter that traps ioctl request MAGIC (with
 * WAIT_KILLABLE_RECV, as the sandbox's) calls ioctl(/dev/null, MAGIC,
 * buf). We receive it, hold it (gs_quiesce_begin with inject), arm, answer
 * -ERESTARTNOINTR and inject the same ioctl from a fresh page: a receiver
 * thread sees the injected call trapped by the filter and continues it
 * only because the marks match it; /dev/null answers ENOTTY; the page is
 * unmapped again (the child's mappings as before), and the child sees its
 * ioctl return 0 with what we wrote into buf. A stop that is not the
 * expected one (a wrong pointer in the plan) is let go untouched: the
 * kernel restarts the ioctl, which traps again, unmarked. A signal sent
 * to the child before the injection's first step is met there, held back
 * and sent again: handled once, after. And the search for
 * sharers finds a CLONE_VM process only when asked for the address space.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "quiesce.h"
#include "taskset.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#define MAGIC 0x4242u
#define ERESTARTNOINTR_ 513
#define BUF_LEN 16
#define STACK_SIZE (64 * 1024)
#define ANSWER_VAL 7

struct report {
	long ret;
	char buf[BUF_LEN];
	int  handled;
	int  maps_before, maps_after;
};

static atomic_int handled;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int send_fd(int s, int fd)
{
	char c = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { &c, 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	return (int)sendmsg(s, &m, 0);
}

static int recv_fd(int s)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { &c, 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	int fd;

	if (recvmsg(s, &m, 0) < 0)
		return -1;
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(fd));
	return fd;
}

/* The child: the filter, one trapped ioctl, its report on s. */
static void child_main(int s)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MAGIC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { sizeof(f) / sizeof(f[0]), f };
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct report r = { 0 };
	int fd = open("/dev/null", O_RDWR);

	sigaction(SIGUSR1, &sa, NULL);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	int l = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
	                     SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &p);
	if (l < 0 || send_fd(s, l) < 0)
		_exit(1);
	close(l);
	strcpy(r.buf, "workload");
	r.maps_before = count_maps();
	r.ret = syscall(__NR_ioctl, fd, MAGIC, r.buf);
	r.maps_after = count_maps();
	r.handled = atomic_load(&handled);
	(void)!write(s, &r, sizeof(r));
	_exit(0);
}

/* Receives every trapped call after the first: a marked one is continued,
 * any other answered ANSWER_VAL; counts both. */
struct receiver {
	int                     listener;
	struct gs_inject_marks *marks;
	atomic_int              marked, unmarked;
	uint64_t                marked_argp;
	atomic_bool             stop;
};

static void *receive(void *arg)
{
	struct receiver *rc = arg;
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	while (!atomic_load(&rc->stop)) {
		memset(&req, 0, sizeof(req));
		if (ioctl(rc->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			/* The child gone, its filter with it: RECV fails at once. */
			usleep(1000);
			continue;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		if (gs_inject_marks_match(rc->marks, (pid_t)req.pid, req.data.nr, req.data.arch,
		                          (const uint64_t *)req.data.args)) {
			rc->marked_argp = req.data.args[2];
			atomic_fetch_add(&rc->marked, 1);
			resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		} else {
			atomic_fetch_add(&rc->unmarked, 1);
			resp.val = ANSWER_VAL;
		}
		(void)ioctl(rc->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	return NULL;
}

enum mode { M_INJECT, M_UNTOUCHED, M_SIGNAL };

static void one_round(const struct gs_taskset *ts, enum mode mode)
{
	int sp[2];
	struct gs_inject_marks marks;
	struct receiver rc = { .marks = &marks };
	struct seccomp_notif req = { 0 };
	struct seccomp_notif_resp resp = { 0 };
	struct gs_quiesce *q = NULL;
	const char *why = NULL;
	pthread_t th;

	gs_inject_marks_init(&marks);
	socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
	pid_t child = fork();
	if (child == 0)
		child_main(sp[1]);
	rc.listener = recv_fd(sp[0]);
	CHECK(rc.listener >= 0 && ioctl(rc.listener, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0);
	const struct gs_quiesce_who who = { .tasks = ts, .seize_lone = true, .others_may_share = true,
	                                    .inject = true, .marks = &marks };
	CHECK(gs_quiesce_begin(child, &who, &q, &why) == 0 && q);
	pthread_create(&th, NULL, receive, &rc);
	struct gs_inject_plan plan = { .fd = (int)req.data.args[0], .cmd = MAGIC, .argp = req.data.args[2] };
	if (mode == M_UNTOUCHED)
		plan.argp++;
	strcpy((char *)plan.image, "ours");
	plan.len = BUF_LEN;
	gs_quiesce_inject_arm(q);
	resp.id = req.id;
	resp.error = -ERESTARTNOINTR_;
	CHECK(ioctl(rc.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0);
	/* Sent while the child waits or stops for us: pending until the
	 * injection's first resume, where it is met and held back. */
	if (mode == M_SIGNAL)
		CHECK(kill(child, SIGUSR1) == 0);
	struct gs_inject_out out;
	enum gs_inject_outcome o = gs_quiesce_inject_run(q, &plan, &out);
	if (mode == M_UNTOUCHED) {
		CHECK(o == GS_INJECT_UNTOUCHED && !out.ioctl_ran);
	} else {
		CHECK(o == GS_INJECT_DONE && out.ioctl_ret == -ENOTTY);
		/* The page came back as the driver left it (ours: /dev/null
		 * wrote nothing). */
		CHECK(strcmp((char *)plan.image, "ours") == 0);
		struct iovec local = { "answered", sizeof("answered") }, remote = { (void *)plan.argp, sizeof("answered") };
		CHECK(process_vm_writev(child, &local, 1, &remote, 1, 0) == (ssize_t)sizeof("answered"));
	}
	gs_quiesce_inject_finish(q, 0);
	struct report r;
	CHECK(read(sp[0], &r, sizeof(r)) == (ssize_t)sizeof(r));
	waitpid(child, NULL, 0);
	if (mode == M_UNTOUCHED) {
		/* Restarted: trapped again unmarked, answered by the receiver. */
		CHECK(r.ret == ANSWER_VAL && strcmp(r.buf, "workload") == 0);
		CHECK(atomic_load(&rc.marked) == 0 && atomic_load(&rc.unmarked) == 1);
	} else {
		CHECK(r.ret == 0 && strcmp(r.buf, "answered") == 0);
		CHECK(atomic_load(&rc.marked) == 1 && atomic_load(&rc.unmarked) == 0);
		CHECK(rc.marked_argp != plan.argp);
		CHECK(r.maps_before > 0 && r.maps_after == r.maps_before);
	}
	CHECK(r.handled == (mode == M_SIGNAL ? 1 : 0));
	if (mode == M_SIGNAL)
		CHECK(out.nsig == 1 && out.sigs[0] == SIGUSR1);
	atomic_store(&rc.stop, true);
	pthread_join(th, NULL);
	close(rc.listener);
	close(sp[0]);
	close(sp[1]);
	gs_inject_marks_fini(&marks);
}

static int vm_sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* A CLONE_VM process of another thread group, with a table of its own. */
static void test_vm_sharer(const struct gs_taskset *ts)
{
	int fds[2];
	pid_t out[4], got[2];

	CHECK(pipe(fds) == 0);
	pid_t child = fork();
	if (child == 0) {
		char *stack = malloc(STACK_SIZE);
		pid_t me = getpid();
		pid_t vm = clone(vm_sleeper, stack + STACK_SIZE, CLONE_VM | SIGCHLD, NULL);
		(void)!write(fds[1], &me, sizeof(me));
		(void)!write(fds[1], &vm, sizeof(vm));
		for (;;)
			pause();
	}
	CHECK(read(fds[0], &got[0], sizeof(pid_t)) == sizeof(pid_t));
	CHECK(read(fds[0], &got[1], sizeof(pid_t)) == sizeof(pid_t));
	CHECK(gs_fd_sharers(got[0], ts, out, 4) == 0);
	gs_sharers_vm(true);
	int n = gs_fd_sharers(got[0], ts, out, 4);
	gs_sharers_vm(false);
	CHECK(n == 1 && out[0] == got[1]);
	kill(got[1], SIGKILL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	struct gs_taskset ts;

	if (!gs_inject_supported()) {
		printf("injection not built for this architecture: skipped\n");
		return 0;
	}
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	gs_taskset_process_tree(&ts, getpid());
	test_vm_sharer(&ts);
	one_round(&ts, M_INJECT);
	one_round(&ts, M_UNTOUCHED);
	one_round(&ts, M_SIGNAL);
	return check_summary();
}
