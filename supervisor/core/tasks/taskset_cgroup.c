/* SPDX-License-Identifier: MIT */
/*
 * taskset_cgroup.c - the tasks of a container's cgroup subtree, listed
 * for the search for an fd table's sharers (quiesce.c), so that a
 * container's client allocation compares its own tasks, not every task
 * of the host (issue #32: a neighbour with 8000 idle threads made each of
 * another container's client allocations 5 to 20 times slower).
 *
 * Why the subtree holds every sharer (docs/security/tenants.md): a task
 * shares the caller's fd table only if it was cloned with CLONE_FILES
 * from a holder of that table, and every holder descends so from the
 * task that made the table, inside the container (an exec makes a table
 * its own). A clone starts in its parent's cgroup (CLONE_INTO_CGROUP and
 * a later move both need write access to a cgroup.procs file, and the
 * kernel allows a move only between cgroups under the mover's cgroup
 * namespace root: cgroup_attach_permissions). So a container's tasks stay
 * in its subtree unless one of them can write to a cgroupfs outside it;
 * gs_taskset_bound_walk's caller (the agent) says when they cannot.
 *
 * The lists are read under this process's own mount of each hierarchy
 * (from /proc/self/mountinfo, mounted at its root), and the tids they
 * hold are those of this process's PID namespace (the kernel translates
 * them for the reader), which kcmp and ptrace take.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "taskset.h"

#define MOUNTINFO "/proc/self/mountinfo"
#define LINE_MAX_LEN 4096
/* A cgroup subtree deeper than this is not listed (fail closed): the
 * kernel's own default bound (cgroup.max.depth) is unlimited, but each
 * level costs an open directory here. */
#define WALK_DEPTH_MAX 32
#define TID_BUF 4096
#define PIDS_CURRENT "pids.current"
#define COUNT_BUF 32

/* The mount point of the hierarchy a /proc/PID/cgroup line names: v2
 * ("0::/path", fstype cgroup2) or the v1 one whose super options list
 * the same controllers. Only a mount of the hierarchy's root is taken:
 * a bind of a sub-cgroup would name other paths. */
static bool mount_of(const char *controllers, bool v2, char *point, size_t len)
{
	char line[LINE_MAX_LEN];
	bool found = false;
	FILE *f = fopen(MOUNTINFO, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char root[LINE_MAX_LEN], mnt[LINE_MAX_LEN], type[64], opts[LINE_MAX_LEN];
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%63s %*s %4095s", type, opts) != 2 || strcmp(root, "/") != 0)
			continue;
		if (v2)
			found = strcmp(type, "cgroup2") == 0;
		else if (strcmp(type, "cgroup") == 0) {
			/* Every controller of the line is in the options. */
			char want[LINE_MAX_LEN], *save = NULL;
			snprintf(want, sizeof(want), "%s", controllers);
			found = true;
			for (char *c = strtok_r(want, ",", &save); c && found; c = strtok_r(NULL, ",", &save)) {
				char tok[LINE_MAX_LEN + 2];
				char hay[LINE_MAX_LEN + 2];
				snprintf(tok, sizeof(tok), ",%s,", c);
				snprintf(hay, sizeof(hay), ",%s,", opts);
				found = strstr(hay, tok) != NULL;
			}
		}
		if (found && snprintf(point, len, "%s", mnt) >= (int)len)
			found = false;
	}
	fclose(f);
	return found;
}

/* One line of the membership: "ID:CONTROLLERS:PATH". The container's
 * cgroup there, when it is not a hierarchy's root and that hierarchy is
 * mounted whole here. */
static bool dir_of_line(struct gs_taskset *ts, char *line)
{
	char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char point[GS_TASKSET_DIR_MAX];

	if (!c2)
		return false;
	*c2 = '\0';
	const char *controllers = c1 + 1, *path = c2 + 1;
	bool v2 = line[0] == '0' && c1 == line + 1 && !*controllers;
	if (strcmp(path, "/") == 0 || strstr(path, "/..") || (!v2 && !*controllers))
		return false;
	if (!mount_of(controllers, v2, point, sizeof(point)))
		return false;
	if (snprintf(ts->walk_dir, sizeof(ts->walk_dir), "%s%s", point, path) >= (int)sizeof(ts->walk_dir))
		return false;
	snprintf(ts->walk_list, sizeof(ts->walk_list), "%s", v2 ? "cgroup.threads" : "tasks");
	/* The directory must be there, list its threads and count its
	 * subtree's tasks (the walk's check, quiesce.c). */
	char probe[GS_TASKSET_DIR_MAX + GS_TASKSET_LIST_NAME_MAX + 2];
	snprintf(probe, sizeof(probe), "%s/%s", ts->walk_dir, ts->walk_list);
	if (access(probe, R_OK) != 0)
		return false;
	snprintf(probe, sizeof(probe), "%s/" PIDS_CURRENT, ts->walk_dir);
	return access(probe, R_OK) == 0;
}

int gs_taskset_bound_walk(struct gs_taskset *ts)
{
	char copy[GS_TASKSET_CGROUP_MAX], *save = NULL;

	ts->walk_bounded = false;
	if (!ts->cgroup[0])
		return -1;
	snprintf(copy, sizeof(copy), "%s", ts->cgroup);
	/* v2 first (one hierarchy holds every task), then a v1 one: either
	 * must count its tasks (pids.current), which on v1 only the pids
	 * hierarchy does. */
	for (int pass = 0; pass < 2; pass++) {
		snprintf(copy, sizeof(copy), "%s", ts->cgroup);
		for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			bool is_v2 = strncmp(l, "0::", 3) == 0;
			if (is_v2 == (pass == 0) && dir_of_line(ts, l)) {
				ts->walk_bounded = true;
				return 0;
			}
		}
	}
	return -1;
}

/* Every tid listed in dirfd's list file. */
static int list_tids(int dirfd, const char *list, gs_task_fn fn, void *ctx)
{
	char buf[TID_BUF + 1];
	size_t have = 0;
	ssize_t got;
	int fd = openat(dirfd, list, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : -1; /* a cgroup removed meanwhile: no tasks */
	while ((got = read(fd, buf + have, TID_BUF - have)) > 0) {
		have += (size_t)got;
		buf[have] = '\0';
		char *p = buf, *nl;
		while ((nl = strchr(p, '\n'))) {
			*nl = '\0';
			int rc = *p ? fn(ctx, (pid_t)atoi(p)) : 0;
			if (rc) {
				close(fd);
				return rc;
			}
			p = nl + 1;
		}
		have = (size_t)(buf + have - p);
		memmove(buf, p, have);
	}
	close(fd);
	return got < 0 ? -1 : 0;
}

/* The subtree under dirfd (taken), depth first. */
static int walk_dir(int dirfd, const char *list, int depth, gs_task_fn fn, void *ctx)
{
	int rc = list_tids(dirfd, list, fn, ctx);
	DIR *d;
	struct dirent *e;

	if (rc || !(d = fdopendir(dirfd))) {
		close(dirfd);
		return rc ? rc : -1;
	}
	while (!rc && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (depth >= WALK_DEPTH_MAX) {
			errno = ELOOP;
			rc = -1;
			break;
		}
		int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0) {
			/* Removed meanwhile: its tasks were moved out first. */
			if (errno == ENOENT)
				continue;
			rc = -1;
			break;
		}
		rc = walk_dir(sub, list, depth + 1, fn, ctx);
	}
	closedir(d);
	return rc;
}

int gs_taskset_for_each_walked(const struct gs_taskset *ts, gs_task_fn fn, void *ctx)
{
	int dirfd;

	if (!ts->walk_bounded) {
		errno = EINVAL;
		return -1;
	}
	dirfd = open(ts->walk_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -1;
	return walk_dir(dirfd, ts->walk_list, 0, fn, ctx);
}

bool gs_taskset_walked_count(const struct gs_taskset *ts, uint64_t *n)
{
	char path[GS_TASKSET_DIR_MAX + sizeof(PIDS_CURRENT) + 1], buf[COUNT_BUF];
	char *end;
	ssize_t got;
	int fd;

	if (!ts->walk_bounded ||
	    snprintf(path, sizeof(path), "%s/" PIDS_CURRENT, ts->walk_dir) >= (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return false;
	buf[got] = '\0';
	errno = 0;
	*n = strtoull(buf, &end, 10);
	return errno == 0 && end != buf && (*end == '\n' || *end == '\0');
}
