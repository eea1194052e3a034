/* SPDX-License-Identifier: MIT */
/*
 * taskset.c - the process-tree backend of struct gs_taskset.
 */
#include <stdio.h>
#include <string.h>

#include "taskset.h"

#define MAX_TREE_DEPTH 64     /* parent links followed to find the root */
#define PROC_PATH_MAX 64
#define STAT_BUF 512
#define INIT_PID 1

/* The parent of pid from /proc/PID/stat (the field after the command
 * name, which may itself hold ')' and spaces); -1 if it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[PROC_PATH_MAX], buf[STAT_BUF];
	const char *p;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
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
}
