/* SPDX-License-Identifier: MIT */
/*
 * kill_super - fail closed when the supervisor dies.
 *
 * Usage: kill_super REPORT_FILE
 *
 * The workload allocates 256 MiB (must work), then SIGKILLs its parent,
 * which under gpusandbox is the launcher that runs the supervisor, waits
 * until the parent has really exited (pidfd becomes readable), and tries to
 * allocate 256 MiB chunks past the quota. With the listener gone, trapped
 * ioctls must fail (ENOSYS) or the workload must already be dead
 * (PR_SET_PDEATHSIG or similar); no allocation may succeed.
 *
 * Since the workload runs in a PID namespace of its own, its parent is the
 * sandbox's init (pid 1, which ignores the kill) and the supervisor has no
 * pid it could name; so it also kills every process its /proc shows by
 * the name gpusandbox. The harness then requires gpusandbox to have
 * exited normally (the workload could not reach it) and the quota held.
 *
 * Each step is appended to REPORT_FILE and flushed at once, because the
 * process may be killed at any point and its stdout may be gone:
 *   pid=N ppid=N parent_comm=NAME
 *   before_kill status=0x...
 *   killing ppid=N
 *   kill rc=N errno=N          (absent if we died with the supervisor)
 *   parent_exited=0|1
 *   scan pid=N rc=N            each visible process named gpusandbox
 *   scan killed=N
 *   after_kill i=N status=0x... (TEXT)
 *   END
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adv.h"

#define KS_ATTEMPTS       8
#define KS_PARENT_WAIT_MS 5000

static int report_fd = -1;

__attribute__((format(printf, 1, 2)))
static void report(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line (O_APPEND), then fsync: survives our death. */
	if (write(report_fd, line, (size_t)n) == n)
		(void)fsync(report_fd);
}

static void parent_comm(pid_t ppid, char *out, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)ppid);
	snprintf(out, len, "?");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, len - 1);
	close(fd);
	if (n > 0) {
		out[n] = '\0';
		out[strcspn(out, "\n")] = '\0';
	}
}

/* Every process this workload's /proc shows named gpusandbox, but us. */
static void kill_by_name(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int killed = 0;

	while (d && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		char comm[32];

		if (pid <= 0 || pid == getpid())
			continue;
		parent_comm(pid, comm, sizeof(comm));
		if (strcmp(comm, "gpusandbox") != 0)
			continue;
		int rc = kill(pid, SIGKILL);
		report("scan pid=%d rc=%d", (int)pid, rc);
		killed += rc == 0;
	}
	if (d)
		closedir(d);
	report("scan killed=%d", killed);
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	rmc_status_t st;
	char comm[32];
	pid_t ppid;
	int pidfd, rc, err, exited = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: kill_super REPORT_FILE\n");
		return ADV_EXIT_SETUP;
	}
	report_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (report_fd < 0) {
		perror(argv[1]);
		return ADV_EXIT_SETUP;
	}
	ppid = getppid();
	parent_comm(ppid, comm, sizeof(comm));
	report("pid=%d ppid=%d parent_comm=%s", (int)getpid(), (int)ppid, comm);

	adv_session_or_die(&s, -1, "kill_super");
	st = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), ADV_CHUNK);
	report("before_kill status=0x%x", st);

	/* A pidfd lets us wait for the parent's actual exit: kill() returns
	 * before the target is gone, and a call trapped in that window would
	 * still be served, correctly, by the live supervisor. */
	pidfd = (int)syscall(SYS_pidfd_open, ppid, 0);
	report("killing ppid=%d", (int)ppid);
	rc = kill(ppid, SIGKILL);
	err = rc < 0 ? errno : 0;
	report("kill rc=%d errno=%d", rc, err);
	if (rc == 0 && pidfd >= 0) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

		exited = poll(&pfd, 1, KS_PARENT_WAIT_MS) == 1;
	}
	report("parent_exited=%d", exited);
	kill_by_name();

	for (int i = 0; i < KS_ATTEMPTS; i++) {
		st = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), ADV_CHUNK);
		report("after_kill i=%d status=0x%x (%s)", i, st, rmc_status_str(st));
	}
	report("END");
	return 0;
}
