/* SPDX-License-Identifier: MIT */
/*
 * agent_limits.c - the per-container bounds' defaults and the agent's
 * and keeper's own descriptor limit (agent_limits.h says why).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "agent_limits.h"

void gs_agent_policy_defaults(struct gs_policy *p)
{
	p->quota.count[GS_QK_CLIENTS] = GS_AGENT_DEFAULT_CLIENTS;
	p->quota.files = GS_AGENT_DEFAULT_FILES;
	p->quota.objects = GS_AGENT_DEFAULT_OBJECTS;
}

/* A systemd service, or a process started in a container, gets a soft
 * limit of 1024 and a far higher hard one (systemd's default is
 * 1024:524288): the soft one is for programs that still use select(),
 * which the agent and keeper do not. Raising it needs no privilege. */
uint64_t gs_raise_nofile(const char *who, unsigned per_container)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) < 0) {
		fprintf(stderr, "gpusandbox %s: reading the open-file limit: %s\n", who, strerror(errno));
		return 0;
	}
	if (r.rlim_cur != r.rlim_max) {
		struct rlimit want = { r.rlim_max, r.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			r = want;
		else
			fprintf(stderr, "gpusandbox %s: raising the open-file limit: %s\n", who,
			        strerror(errno));
	}
	if (r.rlim_cur == RLIM_INFINITY) {
		fprintf(stderr, "gpusandbox %s: open files: no limit\n", who);
		return UINT64_MAX;
	}
	fprintf(stderr, "gpusandbox %s: open files: %" PRIu64 " (hard limit %" PRIu64 "), room for "
	        "about %" PRIu64 " containers at the default bounds (%u clients, %u files)\n", who,
	        (uint64_t)r.rlim_cur, (uint64_t)r.rlim_max,
	        (uint64_t)r.rlim_cur / per_container, GS_AGENT_DEFAULT_CLIENTS,
	        GS_AGENT_DEFAULT_FILES);
	return (uint64_t)r.rlim_cur;
}

#define MOUNTINFO_LINE_MAX 4096
#define MOUNTINFO_PATH_MAX 64

/* A cgroupfs the runtime mounted writable in the container (its init's
 * mount table: any later mount namespace of its tasks is a copy, whose
 * inherited mounts a user namespace cannot make writable, MNT_LOCK_*). */
static bool has_writable_cgroupfs(pid_t init)
{
	char path[MOUNTINFO_PATH_MAX], line[MOUNTINFO_LINE_MAX];
	bool rw = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)init);
	f = fopen(path, "re");
	if (!f)
		return true; /* cannot tell: unbounded */
	while (!rw && fgets(line, sizeof(line), f)) {
		char opts[MOUNTINFO_LINE_MAX], type[64];
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %*s %*s %4095s", opts) != 1 ||
		    sscanf(dash + 3, "%63s", type) != 1)
			continue;
		if (strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0)
			rw = strncmp(opts, "rw", 2) == 0 && (opts[2] == ',' || opts[2] == '\0');
	}
	fclose(f);
	return rw;
}

bool gs_agent_bound_walk(struct gs_taskset *ts, pid_t init, bool (*may_leave)(pid_t tid),
                         const char **why)
{
	if (gs_taskset_bound_walk(ts) < 0) {
		*why = "its cgroup is not one this agent can list and count (pids.current)";
		return false;
	}
	if (has_writable_cgroupfs(init)) {
		*why = "it has a writable cgroupfs";
		ts->walk_bounded = false;
		return false;
	}
	/* Asked of every task by the searches (the runtime's own init has
	 * every capability until it drops them, after the listener is
	 * sent: runc installs the filter first without NO_NEW_PRIVS). */
	ts->walk_may_leave = may_leave;
	return true;
}
