/* SPDX-License-Identifier: MIT */
/*
 * agent_uvm_map.c - --uvm-map as-user in the agent (agent_uvm_map.h).
 *
 * The mode lets every process of the workload's uid dup the sandbox's GPU
 * memory (own_rm.h), so a container gets it only where its uid can be its
 * own: in a user namespace other than the agent's (a container in the
 * host's shares its uids with the host's services and with every other
 * such container), and not 0 as the host sees it. That the container's
 * uids belong to no other pod is the operator's word, given by asking for
 * the mode: Kubernetes allocates each pod with hostUsers: false a range of
 * host uids of its own; a runtime that maps several containers onto one
 * range (rootless podman's subuids) does not give that, and the other
 * containers of the range could dup the memory.
 *
 * The init's euid is taken, as the host sees it (/proc/PID/status is read
 * in the agent's own namespace). A process of the container that changes
 * its euid afterwards (it may, within its namespace) makes clients with
 * another token: their maps are refused by the token and go by dup
 * (exec_uvm.c map_as_user), a cost and never a right.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/stat.h>

#include "agent_uvm_map.h"
#include "gpusandbox.h"
#include "taskset.h"

#define NS_PATH_MAX 64

static bool own_user_ns(pid_t init, bool *own)
{
	char path[NS_PATH_MAX];
	struct stat mine, theirs;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)init);
	if (stat("/proc/self/ns/user", &mine) < 0 || stat(path, &theirs) < 0)
		return false;
	*own = mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino;
	return true;
}

bool agent_container_map_uid(pid_t init, int init_pidfd, uid_t *uid, const char **why)
{
	bool own = false;
	uid_t ruid, euid = 0;

	/* Both read by pid, then the pidfd asked: a live init still held
	 * its pid, so both were its own. */
	if (!own_user_ns(init, &own) || !gs_proc_uids(init, &ruid, &euid) || gs_pidfd_exited(init_pidfd)) {
		*why = "its init could not be read";
		return false;
	}
	if (!own) {
		*why = "it runs in the host's user namespace";
		return false;
	}
	if (euid == 0) {
		*why = "its uid is 0 as the host sees it";
		return false;
	}
	*uid = euid;
	return true;
}
