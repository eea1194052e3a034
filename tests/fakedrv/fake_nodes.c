/* SPDX-License-Identifier: MIT */
/*
 * fake_nodes.c - the driver's check that a device allocation's caller
 * holds the GPU's node (--gpu-node-check).
 *
 * The driver (tag 580.142 of NVIDIA/open-gpu-kernel-modules): an
 * NV01_DEVICE_0 allocation is constructed by deviceConstruct
 * (src/nvidia/src/kernel/gpu/device.c), which asks osIsGpuAccessible;
 * on Linux that is nv_is_gpu_accessible (kernel-open/nvidia/nv.c), which
 * walks the calling process's whole fd table (iterate_fd over
 * current->files) for an open file of that GPU's device, and the
 * allocation fails with NV_ERR_INSUFFICIENT_PERMISSIONS when there is
 * none. The table is the calling thread's (current->files): shared by the
 * threads of a process, unless one unshared it (CLONE_FILES), as the
 * supervisor's device-allocation helpers do (supervisor/core/
 * private_table.c).
 *
 * The fake's GPU node for GPU g is its file nvidia<g>; a caller holds it
 * when an fd in /proc/<caller>/fd links to a file of that name, the caller
 * being the FUSE request's pid, which is the calling thread's id, and
 * /proc/<tid>/fd that thread's table (the fake's
 * own files are bind-mounted over /dev/nvidia*: the link reads
 * /dev/nvidia<g> or <mount>/nvidia<g>). Reading the links costs no FUSE
 * request, so this is safe from inside a request.
 *
 * The stats (fake_st): device_node_grants and device_node_refusals count
 * the check's answers; device_unentitled_grants counts grants whose
 * client's own process (the tgid that made the client) held no node of
 * that GPU: what a supervisor performing the call for a workload must
 * never let through.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_rm_int.h"

#define FD_DIR_MAX 64
#define NODE_NAME_MAX 32

/* Does thread (or process) pid hold an open fd of the fake's nvidia<gpu>
 * in its fd table? */
static bool holds_gpu_node(pid_t pid, int gpu)
{
	char dir[FD_DIR_MAX], name[NODE_NAME_MAX], link[PATH_MAX + FD_DIR_MAX];
	char target[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	snprintf(name, sizeof(name), "/nvidia%d", gpu);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		size_t tl = (size_t)n, nl = strlen(name);
		found = tl >= nl && strcmp(target + tl - nl, name) == 0;
	}
	closedir(d);
	return found;
}

/* fake_st.lock held. NV_OK, or the driver's refusal. */
nv_status_t fake_check_gpu_node(const struct fake_caller *who, pid_t client_tgid, int gpu)
{
	if (!fake_st.cfg.gpu_node_check)
		return NV_OK;
	if (!holds_gpu_node(who->pid, gpu)) {
		fake_st.device_node_refusals++;
		return NV_ERR_INSUFFICIENT_PERMISSIONS;
	}
	fake_st.device_node_grants++;
	if (!holds_gpu_node(client_tgid, gpu))
		fake_st.device_unentitled_grants++;
	return NV_OK;
}
