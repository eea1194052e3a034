/* SPDX-License-Identifier: MIT */
/*
 * The bounded search for an fd table's sharers (sharers.c, issue #32):
 * with a taskset whose cgroup subtree can be listed and counted, the
 * search compares the subtree's tasks alone and still finds a sharer that
 * sits in a cgroup below the container's (a container may move its own
 * tasks between its own cgroups).
 *
 * A cgroup T of the pids hierarchy (v1 "pids", or v2 where the root
 * delegates pids) holds the caller C and a decoy D (a table of its own);
 * C's CLONE_FILES child S is moved to T/sub. The search from C finds
 * exactly S, bounded, having compared two tasks (S and D). A taskset
 * whose tasks may leave the subtree (walk_may_leave says yes) walks the
 * host instead and finds S too; so does a search once D is a zombie
 * (pids.current still counts it). Needs root and such a hierarchy; says
 * SKIP otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "quiesce.h"
#include "taskset.h"

#define EXIT_SKIP 125
#define STACK_BYTES (64 * 1024)
#define MAX_FOUND 8
#define LINE_MAX_LEN 4096
#define PATH_LEN 4200
#define ROOT_LEN 4096

static char top[PATH_LEN], sub[PATH_LEN];

/* The mount point of a hierarchy that counts tasks: v1 "pids", else v2
 * when its root hands pids down (cgroup.subtree_control). */
static bool pids_root(char *out, size_t len)
{
	char line[LINE_MAX_LEN], mnt[LINE_MAX_LEN], type[64], opts[LINE_MAX_LEN], v2[LINE_MAX_LEN] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");
		char root[LINE_MAX_LEN];
		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%63s %*s %4095s", type, opts) != 2 || strcmp(root, "/") != 0)
			continue;
		char hay[LINE_MAX_LEN + 2];
		snprintf(hay, sizeof(hay), ",%s,", opts);
		if (strcmp(type, "cgroup") == 0 && strstr(hay, ",pids,"))
			found = snprintf(out, len, "%s", mnt) < (int)len;
		else if (strcmp(type, "cgroup2") == 0 && !v2[0])
			snprintf(v2, sizeof(v2), "%s", mnt);
	}
	fclose(f);
	if (!found && v2[0]) {
		char path[PATH_LEN], ctl[LINE_MAX_LEN] = "";
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", v2);
		FILE *c = fopen(path, "re");
		if (c) {
			found = fgets(ctl, sizeof(ctl), c) && strstr(ctl, "pids");
			fclose(c);
		}
		if (found)
			snprintf(out, len, "%s", v2);
	}
	return found;
}

static int write_pid(const char *dir, pid_t pid)
{
	char path[PATH_LEN + 16], buf[32];
	int fd, n;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	int rc = write(fd, buf, (size_t)n) == n ? 0 : -1;
	close(fd);
	return rc;
}

static int sleeper(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

/* C: makes its CLONE_FILES child S, tells its pid, sleeps. */
static int caller_main(int report)
{
	char *stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t s = stack == MAP_FAILED ? -1 : clone(sleeper, stack + STACK_BYTES, CLONE_FILES | SIGCHLD, NULL);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (write(report, &s, sizeof(s)) != sizeof(s))
		return 1;
	for (;;)
		pause();
	return 0;
}

static bool yes(pid_t tid)
{
	(void)tid;
	return true;
}

static void cleanup(pid_t c, pid_t d, pid_t s)
{
	if (s > 0)
		kill(s, SIGKILL);
	if (c > 0) {
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
	}
	if (d > 0) {
		kill(d, SIGKILL);
		waitpid(d, NULL, 0);
	}
	/* The tasks go from the cgroups once reaped (S by C's end). */
	for (int i = 0; i < 200 && (rmdir(sub) < 0 && errno == EBUSY); i++)
		usleep(10000);
	for (int i = 0; i < 200 && (rmdir(top) < 0 && errno == EBUSY); i++)
		usleep(10000);
}

int main(void)
{
	char root[ROOT_LEN];
	int report[2];
	pid_t found[MAX_FOUND], s = -1;

	if (geteuid() != 0 || !pids_root(root, sizeof(root))) {
		printf("SKIP: needs root and a cgroup hierarchy counting tasks (pids)\n");
		return EXIT_SKIP;
	}
	if (snprintf(top, sizeof(top), "%.4000s/gs-test-sharers-%d", root, (int)getpid()) >= (int)sizeof(top) ||
	    snprintf(sub, sizeof(sub), "%.4100s/sub", top) >= (int)sizeof(sub)) {
		printf("SKIP: the hierarchy's path is too long\n");
		return EXIT_SKIP;
	}
	if (mkdir(top, 0755) < 0 || mkdir(sub, 0755) < 0 || pipe(report) < 0) {
		printf("SKIP: cannot make cgroups under %s: %s\n", root, strerror(errno));
		rmdir(top);
		return EXIT_SKIP;
	}
	pid_t c = fork();
	if (c == 0)
		_exit(caller_main(report[1]));
	pid_t d = fork();
	if (d == 0)
		_exit(sleeper(NULL));
	CHECK(c > 0 && d > 0 && read(report[0], &s, sizeof(s)) == sizeof(s) && s > 0);
	CHECK(write_pid(top, c) == 0 && write_pid(top, d) == 0 && write_pid(sub, s) == 0);

	struct gs_taskset ts;
	struct gs_walk_stats st = { 0 };
	CHECK(gs_taskset_cgroup(&ts, c) == 0);
	if (gs_taskset_bound_walk(&ts) < 0 || strcmp(ts.walk_dir, top) != 0) {
		printf("SKIP: the bound found %s, not the test's cgroup %s\n", ts.walk_dir, top);
		cleanup(c, d, s);
		return EXIT_SKIP;
	}
	/* Bounded: S found in the sub-cgroup, S and D compared, no host walk. */
	int n = gs_fd_sharers_counted(c, &ts, found, MAX_FOUND, &st);
	CHECK(n == 1 && found[0] == s);
	CHECK(atomic_load(&st.walks) == 1 && atomic_load(&st.unbounded) == 0 &&
	      atomic_load(&st.most) == 2);

	/* A task that may leave the subtree: the host is walked, S found. */
	ts.walk_may_leave = yes;
	n = gs_fd_sharers_counted(c, &ts, found, MAX_FOUND, &st);
	CHECK(n == 1 && found[0] == s && atomic_load(&st.unbounded) == 1);
	ts.walk_may_leave = NULL;

	/* D a zombie: counted by pids.current until reaped. Bounded or not,
	 * S is found. */
	kill(d, SIGKILL);
	usleep(50000);
	n = gs_fd_sharers_counted(c, &ts, found, MAX_FOUND, &st);
	CHECK(n == 1 && found[0] == s);
	printf("zombie: %s\n", atomic_load(&st.unbounded) == 2 ? "walked the host" : "bounded");

	cleanup(c, d, s);
	return check_summary();
}
