/* SPDX-License-Identifier: MIT */
/*
 * test_taskset.c - the process-tree backend of struct gs_taskset: a child
 * and a grandchild of the root belong to it; the root, its parent, init
 * and a pid that does not exist do not. With the root made a subreaper, a
 * grandchild whose parent exited still belongs (it is reparented to the
 * root), which is what the supervisor relies on. The cgroup backend (the
 * agent's) holds the tasks of one cgroup and no others.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "taskset.h"

#define NO_SUCH_PID 0x3fffffff

/* Forks a child that forks a sleeping grandchild, writes its pid to the
 * pipe and exits. */
static pid_t orphan_grandchild(int *child_out)
{
	int fds[2];
	pid_t gc = -1;

	if (pipe(fds) < 0)
		return -1;
	pid_t child = fork();
	if (child == 0) {
		pid_t g = fork();
		if (g == 0) {
			pause();
			_exit(0);
		}
		(void)!write(fds[1], &g, sizeof(g));
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &gc, sizeof(gc)) != (ssize_t)sizeof(gc))
		gc = -1;
	close(fds[0]);
	*child_out = child;
	return gc;
}

/* Moves pid into cgroup dir (a v1 or v2 cgroupfs folder). */
static bool move_to(const char *dir, pid_t pid)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "we");
	if (!f)
		return false;
	fprintf(f, "%d\n", (int)pid);
	return fclose(f) == 0;
}

/* The cgroup backend (the agent's): pid is a member while its cgroups are
 * the root's, and no longer once moved to another cgroup (where the host
 * lets us make one: root with a writable pids or v2 hierarchy). */
static void test_cgroup(pid_t gc)
{
	static const char *const parents[] = { "/sys/fs/cgroup/pids", "/sys/fs/cgroup" };
	struct gs_taskset cg;
	char dir[256];

	CHECK(gs_taskset_cgroup(&cg, getpid()) == 0);
	CHECK(gs_taskset_contains(&cg, getpid()));
	CHECK(gc > 0 && gs_taskset_contains(&cg, gc));
	CHECK(!gs_taskset_contains(&cg, NO_SUCH_PID));
	CHECK(!gs_taskset_contains(&cg, 0));
	CHECK(gs_taskset_cgroup(&cg, NO_SUCH_PID) < 0 && !gs_taskset_contains(&cg, getpid()));
	CHECK(gs_taskset_cgroup(&cg, getpid()) == 0);
	for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
		char home[256];
		snprintf(dir, sizeof(dir), "%s/gs-test-taskset-%d", parents[i], (int)getpid());
		if (gc <= 0 || mkdir(dir, 0755) < 0)
			continue;
		/* Where gc is now, to move it back before removing dir. */
		FILE *f = fopen("/proc/self/cgroup", "re");
		char line[512];
		const char *leaf = "";
		while (f && fgets(line, sizeof(line), f))
			if ((i == 0 && strstr(line, ":pids:")) || (i == 1 && strncmp(line, "0::", 3) == 0))
				leaf = strchr(line, '/') ? strchr(line, '/') : "";
		if (f)
			fclose(f);
		snprintf(home, sizeof(home), "%s%.*s", parents[i], (int)strcspn(leaf, "\n"), leaf);
		if (move_to(dir, gc)) {
			CHECK(!gs_taskset_contains(&cg, gc));
			CHECK(move_to(home, gc));
			CHECK(gs_taskset_contains(&cg, gc));
		}
		rmdir(dir);
		break;
	}
}

/* gs_proc_status_field: our own Tgid, a key no status has, a value cut to
 * the buffer, and a task that is not there. */
static void test_status_field(void)
{
	char v[32], small[3], want[32];

	snprintf(want, sizeof(want), "%d", (int)getpid());
	CHECK(gs_proc_status_field(getpid(), "Tgid:", v, sizeof(v)) && strcmp(v, want) == 0);
	CHECK(!gs_proc_status_field(getpid(), "NoSuchKey:", v, sizeof(v)));
	CHECK(gs_proc_status_field(getpid(), "Tgid:", small, sizeof(small)) && strlen(small) <= 2 &&
	      strncmp(small, want, strlen(small)) == 0);
	CHECK(!gs_proc_status_field(NO_SUCH_PID, "Tgid:", v, sizeof(v)));
}

int main(void)
{
	struct gs_taskset ts;
	int child = -1;

	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	gs_taskset_process_tree(&ts, getpid());
	CHECK(!gs_taskset_contains(&ts, getpid()));
	CHECK(!gs_taskset_contains(&ts, getppid()));
	CHECK(!gs_taskset_contains(&ts, 1));
	CHECK(!gs_taskset_contains(&ts, NO_SUCH_PID));
	test_status_field();

	pid_t gc = orphan_grandchild(&child);
	CHECK(gc > 0);
	CHECK(child > 0 && waitpid(child, NULL, 0) == child);
	/* The grandchild is reparented to us, the subreaper. */
	CHECK(gc > 0 && gs_taskset_contains(&ts, gc));
	/* The set is the root's: rooted at our parent, the grandchild is
	 * still a descendant; rooted at a process that is no ancestor, not. */
	struct gs_taskset other;
	gs_taskset_process_tree(&other, getppid());
	CHECK(gc > 0 && gs_taskset_contains(&other, gc));
	gs_taskset_process_tree(&other, NO_SUCH_PID);
	CHECK(gc > 0 && !gs_taskset_contains(&other, gc));
	test_cgroup(gc);
	if (gc > 0) {
		kill(gc, SIGKILL);
		waitpid(gc, NULL, 0);
	}
	/* A dead task belongs to no set. */
	CHECK(gc > 0 && !gs_taskset_contains(&ts, gc));
	struct gs_taskset none = { 0 };
	CHECK(!gs_taskset_contains(&none, getpid()));
	return check_summary();
}
