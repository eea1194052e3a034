/* SPDX-License-Identifier: MIT */
/*
 * The launcher, in small steps with the reason for each (bubblewrap-style).
 *
 * The supervisor clones the sandbox's init into new PID and mount
 * namespaces (contain.c says why). The init sets itself up, installs the
 * filter, hands the listener over and, once the supervisor serves it,
 * forks the process that runs COMMAND; then it only forwards signals,
 * reaps orphans, and reports COMMAND's wait status when it exits. Its
 * exit takes every task of the sandbox with it, by the kernel's hand.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contain.h"
#include "filter.h"
#include "gpusandbox.h"
#include "launch.h"

/* Messages on the launch socket. */
#define GO_BYTE       'g'
#define LISTENER_BYTE 'L'
#define EXEC_BYTE     'x'

/* The steps of the init that can fail, for the hint beside the cause. */
enum launch_step { STEP_NAMESPACES, STEP_MOUNTS, STEP_IDENTITY, STEP_NO_NEW_PRIVS, STEP_FILTER,
	           STEP_HANDOVER, STEP_FORK, STEP_EXEC };

struct exec_failure {
	int step;
	int errnum;
	char msg[GS_ERROR_MSG_MAX];
};

/* Everything the init needs, copied into it by clone. */
struct init_ctx {
	int sock;       /* launch socket, init's end */
	int status_fd;  /* write end: COMMAND's wait status */
	const struct gs_launch_spec *spec;
};

static int send_fd(int sock, int fd)
{
	char marker = LISTENER_BYTE;
	struct iovec iov = { &marker, 1 };
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

/* The init's first message: the listener (one marker byte and an fd) or
 * a failure report, read whole. A SEQPACKET message read into a smaller
 * buffer is cut, which once lost every setup failure's cause. Returns the
 * fd, or -1 with *f filled (f->step < 0 when the init said nothing). */
static int recv_listener(int sock, struct exec_failure *f)
{
	struct iovec iov = { f, sizeof(*f) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;
	int fd = -1;

	memset(f, 0, sizeof(*f));
	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (fd >= 0 && n == 1 && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return fd;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(*f) || (msg.msg_flags & MSG_TRUNC)) {
		memset(f, 0, sizeof(*f));
		f->step = -1;
	}
	f->msg[sizeof(f->msg) - 1] = '\0';
	return -1;
}

static _Noreturn void report_and_exit(int sock, int step, const struct gs_error *err, int code)
{
	struct exec_failure f = { .step = step, .errnum = err->errnum };

	memcpy(f.msg, err->msg, sizeof(f.msg));
	(void)send(sock, &f, sizeof(f), MSG_NOSIGNAL);
	_exit(code);
}

/* PR_SET_PDEATHSIG fires when the thread that cloned us exits: the
 * supervisor's main thread, which lives until the supervisor ends. getppid
 * cannot tell whether the supervisor died before the prctl (the init's
 * parent is outside its PID namespace: getppid is 0), so the launch socket
 * tells: once the supervisor is gone, its end is closed (POLLHUP). The
 * setting is cleared by a credential change, so it is made again after. */
static void die_with_supervisor(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(GS_EXIT_ERROR);
	if (poll(&p, 1, 0) < 0 || (p.revents & (POLLHUP | POLLERR)))
		_exit(GS_EXIT_ERROR);
}

static void init_setup(const struct init_ctx *ctx)
{
	const struct gs_contain *contain = ctx->spec->contain;
	struct gs_error err = { 0 };
	char go;
	int listener;

	die_with_supervisor(ctx->sock);
	if (gs_contain_map_ids(contain, &err) < 0)
		report_and_exit(ctx->sock, STEP_NAMESPACES, &err, GS_EXIT_ERROR);
	if (gs_contain_mounts(contain, &err) < 0)
		report_and_exit(ctx->sock, STEP_MOUNTS, &err, GS_EXIT_ERROR);
	if (gs_contain_drop_identity(contain, &err) < 0)
		report_and_exit(ctx->sock, STEP_IDENTITY, &err, GS_EXIT_ERROR);
	die_with_supervisor(ctx->sock);
	/* Nothing in the sandbox may ptrace the init (same uid as the
	 * workload) to act as it. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* No privilege can be gained through exec (setuid, file caps);
	 * required to install a filter without CAP_SYS_ADMIN, too. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		gs_fail(&err, errno, "PR_SET_NO_NEW_PRIVS");
		report_and_exit(ctx->sock, STEP_NO_NEW_PRIVS, &err, GS_EXIT_ERROR);
	}
	/* The filter is inherited by every descendant and cannot be removed:
	 * the quota covers fork, exec, threads and subprocesses. */
	listener = gs_filter_install(ctx->spec->filter, &err);
	if (listener < 0)
		report_and_exit(ctx->sock, STEP_FILTER, &err, GS_EXIT_ERROR);
	/* Hand the listener over and keep no copy: the workload must not be
	 * able to answer its own notifications. */
	if (send_fd(ctx->sock, listener) < 0) {
		gs_fail(&err, errno, "sending the listener fd");
		report_and_exit(ctx->sock, STEP_HANDOVER, &err, GS_EXIT_ERROR);
	}
	close(listener);
	/* Wait until the supervisor is serving the listener. */
	if (read(ctx->sock, &go, 1) != 1 || go != GO_BYTE)
		_exit(GS_EXIT_ERROR);
}

static void noop_handler(int sig)
{
	(void)sig;
}

/* A PID namespace's init ignores every signal it has no handler for, even
 * from the supervisor; these handlers never run (the signals stay blocked
 * for sigwaitinfo), they only let the signals through. */
static void catch_signals(const sigset_t *set)
{
	struct sigaction sa = { .sa_handler = noop_handler };

	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(set, sig) == 1)
			(void)sigaction(sig, &sa, NULL);
}

static _Noreturn void run_command(const struct init_ctx *ctx, char *const *argv,
                                  const sigset_t *caught)
{
	struct gs_error err = { 0 };
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(caught, sig) == 1)
			(void)signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	close(ctx->status_fd);
	/* Its credentials tell the supervisor COMMAND's pid in its own PID
	 * namespace (SO_PASSCRED; the kernel translates and vouches). */
	(void)send(ctx->sock, &(char){ EXEC_BYTE }, 1, MSG_NOSIGNAL);
	execvp(argv[0], argv);
	gs_fail(&err, errno, "cannot run '%s'", argv[0]);
	report_and_exit(ctx->sock, STEP_EXEC, &err,
	                errno == ENOENT ? GS_EXIT_NOT_FOUND : GS_EXIT_CANNOT_EXEC);
}

/* Until COMMAND exits: reap every orphan (they are ours), pass on signals
 * a process sent (terminal signals reached COMMAND's process group
 * already). Returns COMMAND's wait status. */
static int serve_until_exit(pid_t command, const sigset_t *caught)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(caught, &si), st;
		pid_t p;

		if (sig < 0)
			continue; /* EINTR */
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == command)
				return st;
		if (sig != SIGCHLD && si.si_code <= 0)
			kill(command, sig);
	}
}

/* COMMAND's argv, copied out of the command line that blank_own_args
 * clears (COMMAND's strings are part of it). NULL if out of memory. */
static char **copy_command(char *const *argv)
{
	size_t n = 0;
	char **copy;

	while (argv[n])
		n++;
	copy = calloc(n + 1, sizeof(*copy));
	for (size_t i = 0; copy && i < n; i++)
		if (!(copy[i] = strdup(argv[i])))
			return NULL;
	return copy;
}

/* The init keeps gpusandbox's command line in memory (it is a clone), and
 * every task of the sandbox may read /proc/1/cmdline: blank it, so that the
 * workload cannot learn the options it was started with (the audit log's
 * path, the policy file). Done before the workload exists. */
static void blank_own_args(const struct gs_launch_spec *spec)
{
	if (spec->own_args)
		memset(spec->own_args, 0, spec->own_args_len);
}

static _Noreturn void init_main(const struct init_ctx *ctx)
{
	struct gs_error err = { 0 };
	sigset_t caught;
	pid_t command;
	int st;

	/* First, so that a signal sent during the setup waits for COMMAND
	 * instead of being dropped. */
	sigemptyset(&caught);
	for (size_t i = 0; i < ctx->spec->n_forwarded; i++)
		sigaddset(&caught, ctx->spec->forwarded[i]);
	sigaddset(&caught, SIGCHLD);
	sigprocmask(SIG_BLOCK, &caught, NULL);
	catch_signals(&caught);
	char **argv = copy_command(ctx->spec->argv);
	if (!argv) {
		gs_fail(&err, ENOMEM, "copying the command line");
		report_and_exit(ctx->sock, STEP_FORK, &err, GS_EXIT_ERROR);
	}
	blank_own_args(ctx->spec);
	init_setup(ctx);
	command = fork();
	if (command < 0) {
		gs_fail(&err, errno, "fork");
		report_and_exit(ctx->sock, STEP_FORK, &err, GS_EXIT_ERROR);
	}
	if (command == 0)
		run_command(ctx, argv, &caught);
	/* COMMAND's end (closed by exec) is what tells the supervisor that
	 * exec worked; ours must not keep it open. */
	close(ctx->sock);
	st = serve_until_exit(command, &caught);
	/* A pipe of 4 bytes never writes short; if it fails, the supervisor
	 * falls back on our own status. */
	if (write(ctx->status_fd, &st, sizeof(st)) != (ssize_t)sizeof(st))
		_exit(GS_EXIT_ERROR);
	_exit(0);
}

/* What a user can do about a failure, where the cause alone does not say. */
static const char *setup_hint(int step, int errnum)
{
	switch (step) {
	case STEP_FILTER:
		if (errnum == EBUSY)
			return "another supervisor already watches this process (gpusandbox "
			       "inside gpusandbox, or a container runtime's seccomp agent): run "
			       "gpusandbox outside it";
		if (errnum == EINVAL || errnum == ENOSYS)
			return "the kernel is too old or lacks seccomp user notification "
			       "(Linux 5.0 or later, CONFIG_SECCOMP_FILTER)";
		if (errnum == EPERM || errnum == EACCES)
			return "seccomp is forbidden here (a container's profile?)";
		return NULL;
	case STEP_NAMESPACES:
		/* A user namespace may map uid 0 only with CAP_SETFCAP. */
		if (errnum == EPERM && geteuid() == 0)
			return "gpusandbox runs as uid 0 without CAP_SYS_ADMIN, and a user "
			       "namespace cannot map uid 0 without CAP_SETFCAP: run it as real "
			       "root or as an ordinary user";
		/* fall through */
	case STEP_MOUNTS:
		if (errnum == EPERM || errnum == EACCES)
			return "the sandbox's namespaces or its /proc are forbidden here (a "
			       "container whose profile forbids mounts, or that masks parts of "
			       "/proc): run gpusandbox on the host, or in a container allowed to "
			       "mount /proc";
		return NULL;
	case STEP_IDENTITY:
		if (errnum == EPERM)
			return "changing the workload's user and groups needs CAP_SETUID and "
			       "CAP_SETGID";
		return NULL;
	default:
		return NULL;
	}
}

static const char *clone_hint(int errnum)
{
	if (errnum == EPERM || errnum == ENOSPC || errnum == EUSERS || errnum == EINVAL)
		return "new PID and mount namespaces are forbidden here: run gpusandbox as "
		       "root, or allow unprivileged user namespaces "
		       "(kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, "
		       "kernel.apparmor_restrict_unprivileged_userns=0), or use a container "
		       "allowed to create namespaces";
	return NULL;
}

static int fail_with_hint(struct gs_error *err, int errnum, const char *msg, const char *hint)
{
	if (!hint)
		return gs_fail(err, errnum, "%s", msg);
	if (!errnum)
		return gs_fail(err, 0, "%s; %s", msg, hint);
	return gs_fail(err, 0, "%s: %s; %s", msg, strerror(errnum), hint);
}

/* Can this process install a seccomp listener at all? The kernel allows
 * one listener per filter chain (EBUSY), and gpusandbox's own filter
 * refuses a second, so a gpusandbox run inside another one, or under
 * another seccomp agent, is told so here, before its namespaces fail for
 * some less telling reason. A throw-away child tries it with an
 * allow-everything filter. Returns 0, or -1 with the hint. */
static int probe_listener(struct gs_error *err)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return gs_fail(err, errno, "fork");
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(errno);
		_exit(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		              SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog) < 0 ? errno : 0);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return gs_fail(err, errno, "waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	st = WIFEXITED(st) ? WEXITSTATUS(st) : EIO;
	return fail_with_hint(err, st, "installing a seccomp listener",
	                      setup_hint(STEP_FILTER, st));
}

/* clone(2) without a new stack: fork's semantics with namespace flags.
 * The supervisor is single-threaded here (the notify thread starts
 * later), so nothing glibc's fork would re-initialise is in use. */
static pid_t clone_init(unsigned long flags)
{
	return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

static void reap(struct gs_child *child)
{
	if (child->pid > 0 && !child->reaped) {
		while (waitpid(child->pid, NULL, 0) < 0 && errno == EINTR)
			;
		child->reaped = true;
	}
}

/* The init's first message: its listener, or why it has none. */
static int take_listener(int sock, struct gs_child *child, struct gs_error *err)
{
	struct exec_failure f;

	child->listener = recv_listener(sock, &f);
	if (child->listener >= 0)
		return 0;
	if (f.step < 0)
		gs_fail(err, 0, "the sandbox's init exited before installing the filter");
	else
		fail_with_hint(err, f.errnum, f.msg, setup_hint(f.step, f.errnum));
	reap(child);
	return -1;
}

/* One message after GO, with the sender's credentials. COMMAND's "about
 * to exec" (one byte) gives its pid as the supervisor sees it. */
static ssize_t recv_with_pid(int sock, struct exec_failure *f, struct gs_child *child)
{
	struct iovec iov = { f, sizeof(*f) };
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	struct ucred cred;
	ssize_t n = recvmsg(sock, &msg, 0);

	c = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
	    c->cmsg_len == CMSG_LEN(sizeof(cred)) && *(char *)f == EXEC_BYTE) {
		memcpy(&cred, CMSG_DATA(c), sizeof(cred));
		child->command_pid = cred.pid;
	}
	return n;
}

/* After GO: EOF once COMMAND's exec closed its end, or its failure. */
static int await_exec(int sock, struct gs_child *child, int *exit_code, struct gs_error *err)
{
	struct exec_failure f;
	ssize_t n;

	while ((n = recv_with_pid(sock, &f, child)) == 1)
		;
	if (n == 0)
		return 0;
	if (n == (ssize_t)sizeof(f) && f.step == STEP_EXEC) {
		f.msg[sizeof(f.msg) - 1] = '\0';
		gs_fail(err, f.errnum, "%s", f.msg);
		*exit_code = f.errnum == ENOENT ? GS_EXIT_NOT_FOUND : GS_EXIT_CANNOT_EXEC;
	} else if (n == (ssize_t)sizeof(f)) {
		f.msg[sizeof(f.msg) - 1] = '\0';
		gs_fail(err, f.errnum, "%s", f.msg);
	} else {
		gs_fail(err, n < 0 ? errno : 0, "the sandbox's init failed to start COMMAND");
	}
	close(child->listener);
	child->listener = -1;
	gs_launch_kill(child);
	return -1;
}

int gs_launch(const struct gs_launch_spec *spec, struct gs_child *child, int *exit_code,
              struct gs_error *err)
{
	struct init_ctx ctx = { .spec = spec };
	int sv[2], status[2];
	char go = GO_BYTE;
	int rc;

	*exit_code = GS_EXIT_ERROR;
	child->pid = -1;
	child->command_pid = -1;
	child->listener = -1;
	child->status_fd = -1;
	child->reaped = false;
	if (probe_listener(err) < 0)
		return -1;
	/* SOCK_CLOEXEC: exec closes COMMAND's end, which is how the parent
	 * learns that exec succeeded (EOF instead of a failure report). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return gs_fail(err, errno, "socketpair");
	if (pipe2(status, O_CLOEXEC) < 0) {
		close(sv[0]);
		close(sv[1]);
		return gs_fail(err, errno, "pipe2");
	}
	child->pid = clone_init(gs_contain_clone_flags(spec->contain));
	if (child->pid == 0) {
		close(sv[0]);
		close(status[0]);
		ctx.sock = sv[1];
		ctx.status_fd = status[1];
		init_main(&ctx);
	}
	rc = child->pid < 0 ? errno : 0;
	close(sv[1]);
	close(status[1]);
	child->status_fd = status[0];
	if (rc) {
		close(sv[0]);
		return fail_with_hint(err, rc, "creating the sandbox's namespaces", clone_hint(rc));
	}
	if (take_listener(sv[0], child, err) < 0) {
		close(sv[0]);
		return -1;
	}
	/* From now on every message carries its sender's pid. */
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &(int){ 1 }, sizeof(int)) < 0 ||
	    send(sv[0], &go, 1, MSG_NOSIGNAL) != 1) {
		gs_fail(err, errno, "starting the workload");
		close(sv[0]);
		gs_launch_kill(child);
		return -1;
	}
	rc = await_exec(sv[0], child, exit_code, err);
	close(sv[0]);
	return rc;
}

int gs_launch_command_status(struct gs_child *child, int init_status)
{
	int st;

	child->reaped = true;
	/* The init wrote it before exiting; without it (the init was
	 * killed), the init's own status is all there is. */
	if (child->status_fd >= 0 && read(child->status_fd, &st, sizeof(st)) == (ssize_t)sizeof(st))
		return st;
	return init_status;
}

void gs_launch_kill(struct gs_child *child)
{
	/* Never signal a reaped pid: it may be another process's now. */
	if (child->pid <= 0 || child->reaped)
		return;
	kill(child->pid, SIGKILL);
	/* The init's exit waits until the kernel has killed and reaped every
	 * other task of its PID namespace: once reaped, none is left. */
	reap(child);
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
