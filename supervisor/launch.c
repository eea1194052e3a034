/* SPDX-License-Identifier: MIT */
/*
 * The launcher, in small steps with the reason for each (bubblewrap-style).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filter.h"
#include "gpusandbox.h"
#include "launch.h"

/* Messages on the launch socket. */
#define GO_BYTE 'g'

struct exec_failure {
	int stage;   /* 0: setup, 1: exec */
	int errnum;
	char msg[GS_ERROR_MSG_MAX];
};

enum { STAGE_SETUP, STAGE_EXEC };

static int send_fd(int sock, int fd)
{
	char dummy = 'L';
	struct iovec iov = { &dummy, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char dummy;
	struct iovec iov = { &dummy, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Clears every capability of the workload, the bounding set too, so that
 * neither the process nor anything it execs can act as a privileged RM
 * client, unmount the sandbox's view, or ptrace the supervisor. Running as
 * an ordinary user there is nothing to drop and EPERM is expected. */
static int drop_all_caps(struct gs_error *err)
{
	cap_t none;

	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL && errno != EPERM)
			return gs_fail(err, errno, "dropping capability %d from the bounding set", c);
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	none = cap_init();
	if (!none)
		return gs_fail(err, errno, "cap_init");
	if (cap_set_proc(none) < 0) {
		cap_free(none);
		return gs_fail(err, errno, "clearing capabilities");
	}
	cap_free(none);
	return 0;
}

static void report_and_exit(int sock, int stage, const struct gs_error *err, int code)
{
	struct exec_failure f = { .stage = stage, .errnum = err->errnum };

	memcpy(f.msg, err->msg, sizeof(f.msg));
	(void)send(sock, &f, sizeof(f), MSG_NOSIGNAL);
	_exit(code);
}

static void child_main(int sock, pid_t parent, char *const argv[], const struct gs_filter_opts *opts)
{
	struct gs_error err = { 0 };
	sigset_t none;
	char go;
	int listener;

	/* 1. Die with the supervisor: a workload left running without its
	 *    supervisor would have no listener (its trapped ioctls fail with
	 *    ENOSYS), but it should not outlive it at all. Check the parent
	 *    afterwards: it may have died before the prctl. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(GS_EXIT_ERROR);
	/* 2. Restore the signal mask the supervisor blocked for signalfd. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* 3. No privilege can be gained through exec (setuid, file caps);
	 *    required to install a filter without CAP_SYS_ADMIN, too. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		gs_fail(&err, errno, "PR_SET_NO_NEW_PRIVS");
		report_and_exit(sock, STAGE_SETUP, &err, GS_EXIT_ERROR);
	}
	if (drop_all_caps(&err) < 0)
		report_and_exit(sock, STAGE_SETUP, &err, GS_EXIT_ERROR);
	/* 4. The filter is inherited by every descendant and cannot be
	 *    removed: the quota covers fork, exec, threads and subprocesses. */
	listener = gs_filter_install(opts, &err);
	if (listener < 0)
		report_and_exit(sock, STAGE_SETUP, &err, GS_EXIT_ERROR);
	/* 5. Hand the listener over and keep no copy: the workload must not
	 *    be able to answer its own notifications. */
	if (send_fd(sock, listener) < 0) {
		gs_fail(&err, errno, "sending the listener fd");
		report_and_exit(sock, STAGE_SETUP, &err, GS_EXIT_ERROR);
	}
	close(listener);
	/* 6. Wait until the supervisor is serving the listener. */
	if (read(sock, &go, 1) != 1 || go != GO_BYTE)
		_exit(GS_EXIT_ERROR);
	execvp(argv[0], argv);
	gs_fail(&err, errno, "cannot run '%s'", argv[0]);
	report_and_exit(sock, STAGE_EXEC, &err,
	                errno == ENOENT ? GS_EXIT_NOT_FOUND : GS_EXIT_CANNOT_EXEC);
}

int gs_launch(char *const argv[], const struct gs_filter_opts *opts, struct gs_child *child,
              int *exit_code, struct gs_error *err)
{
	int sv[2];
	pid_t parent = getpid(), pid;
	struct exec_failure f;
	char go = GO_BYTE;
	ssize_t n;

	*exit_code = GS_EXIT_ERROR;
	/* SOCK_CLOEXEC: exec closes the child's end, which is how the parent
	 * learns that exec succeeded (EOF instead of a failure report). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return gs_fail(err, errno, "socketpair");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return gs_fail(err, errno, "fork");
	}
	if (pid == 0) {
		close(sv[0]);
		child_main(sv[1], parent, argv, opts);
	}
	close(sv[1]);
	child->pid = pid;
	child->listener = recv_fd(sv[0]);
	if (child->listener < 0) {
		n = recv(sv[0], &f, sizeof(f), 0);
		if (n == (ssize_t)sizeof(f)) {
			gs_fail(err, f.errnum, "%s", f.msg);
		} else {
			gs_fail(err, 0, "the workload process failed before installing the filter");
		}
		close(sv[0]);
		waitpid(pid, NULL, 0);
		return -1;
	}
	if (send(sv[0], &go, 1, MSG_NOSIGNAL) != 1) {
		close(sv[0]);
		return gs_fail(err, errno, "starting the workload");
	}
	n = recv(sv[0], &f, sizeof(f), 0);
	close(sv[0]);
	if (n == (ssize_t)sizeof(f)) {
		gs_fail(err, f.errnum, "%s", f.msg);
		if (f.stage == STAGE_EXEC)
			*exit_code = f.errnum == ENOENT ? GS_EXIT_NOT_FOUND : GS_EXIT_CANNOT_EXEC;
		close(child->listener);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return 0;
}

int gs_drop_supervisor_privileges(struct gs_error *err)
{
	static const cap_value_t dangerous[] = { CAP_SYS_ADMIN, CAP_SYS_NICE };
	const int n = (int)(sizeof(dangerous) / sizeof(dangerous[0]));
	cap_t caps = cap_get_proc();
	cap_flag_value_t v;

	if (!caps)
		return gs_fail(err, errno, "cap_get_proc");
	for (int i = 0; i < n; i++)
		(void)prctl(PR_CAPBSET_DROP, dangerous[i], 0, 0, 0);
	if (cap_set_flag(caps, CAP_EFFECTIVE, n, dangerous, CAP_CLEAR) < 0 ||
	    cap_set_flag(caps, CAP_PERMITTED, n, dangerous, CAP_CLEAR) < 0 ||
	    cap_set_flag(caps, CAP_INHERITABLE, n, dangerous, CAP_CLEAR) < 0 ||
	    cap_set_proc(caps) < 0) {
		cap_free(caps);
		return gs_fail(err, errno, "dropping CAP_SYS_ADMIN/CAP_SYS_NICE");
	}
	cap_free(caps);
	/* Verify rather than trust: fail closed if either is still effective. */
	caps = cap_get_proc();
	for (int i = 0; caps && i < n; i++) {
		if (cap_get_flag(caps, dangerous[i], CAP_EFFECTIVE, &v) < 0 || v == CAP_SET) {
			cap_free(caps);
			return gs_fail(err, EPERM, "supervisor still holds a dangerous capability");
		}
	}
	if (caps)
		cap_free(caps);
	return 0;
}
