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
 * when an fd in /proc/<caller>/fd is that file, the caller being the FUSE
 * request's pid, which is the calling thread's id, and /proc/<tid>/fd
 * that thread's table. The file is told by its identity, as the driver
 * tells it by its own file private: the inode number of nvidia<g> on the
 * fake's own file system (its device, learnt from /proc/self/mountinfo
 * once mounted), read with AT_STATX_DONT_SYNC (the cached attributes: no
 * FUSE request, so safe from inside one). Not by its name: a file bind-
 * mounted over /dev/nvidia<g> (gpusandbox masks a hidden GPU's node with
 * /dev/null) still reads /dev/nvidia<g> through the link. A fake that
 * could not learn its device holds no node for anyone (every check
 * refused, so the tests that rely on it fail, rather than fall back to
 * the name).
 *
 * The stats (fake_st): device_node_grants and device_node_refusals count
 * the check's answers; device_unentitled_grants counts grants whose
 * client's own process (the tgid that made the client) held no node of
 * that GPU: what a supervisor performing the call for a workload must
 * never let through.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fake_rm_int.h"

#define FD_DIR_MAX 64

#define MOUNTINFO_LINE 4096

/* The device of the fake's file system; 0 until learnt. */
static dev_t fake_dev;

void fake_nodes_learn_mount(const char *real)
{
	char line[MOUNTINFO_LINE], point[PATH_MAX];
	unsigned maj, min;
	FILE *f;

	if (!(f = fopen("/proc/self/mountinfo", "re")))
		return;
	/* "ID PARENT MAJ:MIN ROOT POINT ...": the last mount on real. */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, point) == 3 && strcmp(point, real) == 0)
			fake_dev = makedev(maj, min);
	fclose(f);
}

/* Is the file at link (a /proc/PID/fd/N) the fake's node of inode ino? */
static bool is_node(const char *link, unsigned long ino)
{
	struct statx sx;

	if (fake_dev == 0 || statx(AT_FDCWD, link, AT_STATX_DONT_SYNC, STATX_INO, &sx) < 0)
		return false;
	return makedev(sx.stx_dev_major, sx.stx_dev_minor) == fake_dev && sx.stx_ino == ino;
}

static bool is_gpu_node(const char *link, int gpu)
{
	return is_node(link, fake_gpu_node_ino(gpu));
}

/* nv_get_file_private(fd, NV_TRUE, ...): the caller's fd must be a
 * control file (export and import, fake_export.c). */
bool fake_fd_is_ctl(pid_t tid, int fd)
{
	char link[FD_DIR_MAX];

	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, fd);
	return is_node(link, fake_ctl_node_ino());
}

bool fake_holds_gpu_node(pid_t pid, int gpu)
{
	char dir[FD_DIR_MAX], link[PATH_MAX + FD_DIR_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		found = is_gpu_node(link, gpu);
	}
	closedir(d);
	return found;
}

/* fake_st.lock held. NV_OK, or the driver's refusal. */
nv_status_t fake_check_gpu_node(const struct fake_caller *who, pid_t client_tgid, int gpu)
{
	if (!fake_st.cfg.gpu_node_check)
		return NV_OK;
	if (!fake_holds_gpu_node(who->pid, gpu)) {
		fake_st.device_node_refusals++;
		return NV_ERR_INSUFFICIENT_PERMISSIONS;
	}
	fake_st.device_node_grants++;
	if (!fake_holds_gpu_node(client_tgid, gpu))
		fake_st.device_unentitled_grants++;
	return NV_OK;
}
