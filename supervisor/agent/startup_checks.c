/* SPDX-License-Identifier: MIT */
/*
 * startup_checks.c - the agent's and keeper's checks before they listen
 * (startup_checks.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "startup_checks.h"

int gs_check_folder(const char *opt, const char *path, int mode, struct gs_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return gs_fail(err, errno, "%s %s", opt, path);
	if (!S_ISDIR(st.st_mode))
		return gs_fail(err, ENOTDIR, "%s %s", opt, path);
	if (access(path, mode) < 0)
		return gs_fail(err, errno, "%s %s: %s", opt, path,
		               (mode & W_OK) ? "cannot create files in it" : "cannot read it");
	return 0;
}

int gs_check_parent_folder(const char *opt, const char *path, struct gs_error *err)
{
	char dir[PATH_MAX];

	if (!gs_parent_folder(path, dir, sizeof(dir)))
		return gs_fail(err, ENAMETOOLONG, "%s %s", opt, path);
	struct stat st;
	if (stat(dir, &st) < 0)
		return gs_fail(err, errno, "%s %s: its folder %s", opt, path, dir);
	if (!S_ISDIR(st.st_mode))
		return gs_fail(err, ENOTDIR, "%s %s: its folder %s", opt, path, dir);
	if (access(dir, W_OK | X_OK) < 0)
		return gs_fail(err, errno, "%s %s: cannot create files in its folder %s", opt, path, dir);
	return 0;
}

int gs_check_nofile(struct gs_error *err)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return gs_fail(err, errno, "reading the descriptor limit");
	if (rl.rlim_cur >= GS_SERVICE_MIN_NOFILE)
		return 0;
	if (rl.rlim_max < GS_SERVICE_MIN_NOFILE)
		return gs_fail(err, EMFILE, "the descriptor limit (ulimit -n, hard) is %llu: at least %u "
		               "are needed to serve containers (raise LimitNOFILE or the container's "
		               "nofile ulimit)", (unsigned long long)rl.rlim_max, GS_SERVICE_MIN_NOFILE);
	rl.rlim_cur = GS_SERVICE_MIN_NOFILE;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return gs_fail(err, errno, "raising the descriptor limit to %u", GS_SERVICE_MIN_NOFILE);
	return 0;
}
