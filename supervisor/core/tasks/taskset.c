/* SPDX-License-Identifier: MIT */
/*
 * taskset.c - the backends of struct gs_taskset: the process tree (the
 * command line) and the cgroup (a container under the agent).
 */
#include <stdio.h>
#include <string.h>

#include "taskset.h"

#define MAX_TREE_DEPTH 64     /* parent links followed to find the root */
#define PROC_PATH_MAX 64
#define STAT_BUF 512
#define STATUS_LINE_MAX 256
#define INIT_PID 1

bool gs_proc_state(pid_t pid, char *state, pid_t *ppid)
{
	char path[PROC_PATH_MAX], buf[STAT_BUF];
	const char *p;
	int parent = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 1, " %c %d", state, &parent) != 2)
		return false;
	*ppid = (pid_t)parent;
	return true;
}

bool gs_proc_status_field(pid_t tid, const char *key, char *val, size_t len)
{
	char path[PROC_PATH_MAX], line[STATUS_LINE_MAX];
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) != 0)
			continue;
		const char *v = line + klen + strspn(line + klen, " \t");
		snprintf(val, len, "%.*s", (int)strcspn(v, "\n"), v);
		found = true;
	}
	fclose(f);
	return found;
}

#define UID_LINE "Uid:"
#define UID_TEXT 64

bool gs_proc_uids(pid_t tid, uid_t *real, uid_t *effective)
{
	char value[UID_TEXT];
	unsigned long r, e;

	if (!gs_proc_status_field(tid, UID_LINE, value, sizeof(value)) || sscanf(value, "%lu %lu", &r, &e) != 2)
		return false;
	*real = (uid_t)r;
	*effective = (uid_t)e;
	return true;
}

/* The parent of pid; -1 if it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char state;
	pid_t ppid;

	return gs_proc_state(pid, &state, &ppid) ? ppid : -1;
}

static bool tree_contains(const struct gs_taskset *ts, pid_t pid)
{
	for (int depth = 0; depth < MAX_TREE_DEPTH && pid > INIT_PID; depth++) {
		pid_t ppid = parent_of(pid);
		if (ppid < 0)
			return false;
		if (ppid == ts->root)
			return true;
		pid = ppid;
	}
	return false;
}

static const struct gs_taskset_ops process_tree_ops = { .contains = tree_contains };

void gs_taskset_process_tree(struct gs_taskset *ts, pid_t root)
{
	ts->ops = &process_tree_ops;
	ts->root = root;
	ts->walk_bounded = false; /* only a cgroup subtree bounds a search */
	ts->walk_may_leave = NULL;
	atomic_store(&ts->walk_vetted, false);
}

/* The whole of /proc/PID/cgroup into buf; false if unreadable or too long
 * to compare (a truncated membership must not match another). */
static bool read_cgroup(pid_t pid, char *buf, size_t len)
{
	char path[PROC_PATH_MAX];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	if (n == 0 || n == len - 1)
		return false;
	buf[n] = '\0';
	return true;
}

static bool cgroup_contains(const struct gs_taskset *ts, pid_t pid)
{
	char now[GS_TASKSET_CGROUP_MAX];

	return pid > 0 && read_cgroup(pid, now, sizeof(now)) && strcmp(now, ts->cgroup) == 0;
}

static const struct gs_taskset_ops cgroup_ops = { .contains = cgroup_contains };

int gs_taskset_cgroup(struct gs_taskset *ts, pid_t init)
{
	ts->ops = NULL;
	ts->root = init;
	ts->walk_bounded = false; /* until gs_taskset_bound_walk */
	ts->walk_may_leave = NULL;
	atomic_store(&ts->walk_vetted, false);
	if (init <= 0 || !read_cgroup(init, ts->cgroup, sizeof(ts->cgroup)))
		return -1;
	ts->ops = &cgroup_ops;
	return 0;
}
