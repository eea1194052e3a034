/* SPDX-License-Identifier: MIT */
/*
 * audit_guard.c - the audit log's protections from the workload
 * (audit_guard.h; the reasoning: docs/security/audit-log.md).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "audit_guard.h"

/* Says that gpusandbox, not an operator, made the file append-only, so
 * that the last writer may take the flag off again (an xattr cannot be
 * changed once the flag is on: it is written first). */
#define APPEND_MARK "user.gpusandbox.append"
/* A directory with more entries than this is not looked through: it is
 * not masked (only the file is). */
#define LOG_DIR_SCAN_MAX 4096
#define LOG_SUFFIX ".jsonl"

static const char *flag_error(int e)
{
	if (e == EPERM || e == EACCES)
		return "the supervisor lacks CAP_LINUX_IMMUTABLE";
	if (e == ENOTTY || e == EOPNOTSUPP || e == EINVAL || e == ENOSYS)
		return "the file system has no append-only flag";
	return "FS_IOC_SETFLAGS failed";
}

static bool has_mark(int fd)
{
	char v;

	return fgetxattr(fd, APPEND_MARK, &v, sizeof(v)) >= 0;
}

void gs_audit_guard_file(struct gs_audit_guard *g, int fd)
{
	struct stat st;
	int flags;

	g->applied = true;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		g->append_why = "not a regular file";
		return;
	}
	/* Blocking: a last writer holds it exclusively only while it takes
	 * the flag off, and we must not see the flag just before it goes. */
	g->shared_lock = flock(fd, LOCK_SH) == 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		g->append_why = flag_error(errno);
		return;
	}
	if (flags & FS_APPEND_FL) {
		g->append_only = true;
		g->append_set = has_mark(fd);
		g->append_why = g->append_set ? "set by gpusandbox" : "set before gpusandbox";
		return;
	}
	bool marked = fsetxattr(fd, APPEND_MARK, "1", 1, 0) == 0;
	flags |= FS_APPEND_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0) {
		g->append_why = flag_error(errno);
		if (marked)
			(void)fremovexattr(fd, APPEND_MARK);
		return;
	}
	g->append_only = true;
	g->append_set = marked;
	g->append_why = marked ? "set by gpusandbox"
	                       : "set by gpusandbox without its marker (no user xattrs): it stays after the run";
}

void gs_audit_guard_release(struct gs_audit_guard *g, int fd)
{
	int flags;

	if (!g->shared_lock || !g->append_set)
		return;
	/* Another writer (a sandbox sharing the file) still holds it. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 || !(flags & FS_APPEND_FL) || !has_mark(fd))
		return;
	flags &= ~FS_APPEND_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0)
		(void)fremovexattr(fd, APPEND_MARK);
}

/* ---- what to mask ------------------------------------------------------- */

/* The path that names fd's file: --audit-log's resolved, or the
 * descriptor's own link; false with *why when none names it now. */
static bool path_of_log(int fd, const char *path, char out[PATH_MAX], const char **why)
{
	char link[64];
	struct stat a, b;
	ssize_t n;

	if (path) {
		if (!realpath(path, out)) {
			*why = "the log's path does not resolve";
			return false;
		}
	} else {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, out, PATH_MAX - 1);
		if (n <= 0 || out[0] != '/') {
			*why = "the descriptor names no file by a path";
			return false;
		}
		out[n] = '\0';
	}
	if (fstat(fd, &a) < 0 || stat(out, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		*why = "no path names the log's file";
		return false;
	}
	if (!S_ISREG(a.st_mode)) {
		*why = "not a regular file";
		return false;
	}
	return true;
}

/* Does dir hold (or is it) the workload's starting directory? */
static bool holds(const char *dir, const char *cwd)
{
	size_t n = strlen(dir);

	if (!cwd)
		return true;
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(cwd, dir, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/');
}

/* A directory of logs, which nothing of the workload's needs: only its
 * owner may enter it, and it holds nothing but regular files named
 * *.jsonl. */
static bool logs_only(const char *dir, const char **why)
{
	struct stat st;
	struct dirent *de;
	unsigned seen = 0;
	bool ok = true;
	DIR *d;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & (S_IRWXG | S_IRWXO))) {
		*why = "the log's directory is open to others (group or other permissions)";
		return false;
	}
	d = opendir(dir);
	if (!d) {
		*why = "the log's directory cannot be read";
		return false;
	}
	while (ok && (de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(LOG_SUFFIX);
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		ok = ++seen <= LOG_DIR_SCAN_MAX && len > sl && strcmp(de->d_name + len - sl, LOG_SUFFIX) == 0 &&
		     fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
	}
	closedir(d);
	if (!ok)
		*why = "the log's directory holds more than *.jsonl logs";
	return ok;
}

void gs_audit_guard_mask_target(struct gs_audit_guard *g, int fd, const char *path, const char *cwd)
{
	char real[PATH_MAX], dir[PATH_MAX];
	const char *why = NULL;

	g->mask = GS_AUDIT_MASK_NONE;
	if (!path_of_log(fd, path, real, &why)) {
		g->mask_why = why;
		return;
	}
	snprintf(dir, sizeof(dir), "%s", real);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	g->mask = GS_AUDIT_MASK_FILE;
	snprintf(g->mask_path, sizeof(g->mask_path), "%s", real);
	if (holds(dir, cwd)) {
		g->mask_why = "the log's directory holds the workload's working directory";
		return;
	}
	if (!logs_only(dir, &why)) {
		g->mask_why = why;
		return;
	}
	g->mask = GS_AUDIT_MASK_DIR;
	snprintf(g->mask_path, sizeof(g->mask_path), "%s", dir);
}

void gs_audit_guard_no_mask(struct gs_audit_guard *g, const char *why)
{
	g->mask = GS_AUDIT_MASK_NONE;
	g->mask_path[0] = '\0';
	g->mask_why = why;
}

json_object *gs_audit_guard_json(const struct gs_audit_guard *g)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "dir_masked", json_object_new_boolean(g->mask == GS_AUDIT_MASK_DIR));
	json_object_object_add(o, "file_masked", json_object_new_boolean(g->mask == GS_AUDIT_MASK_FILE));
	if (g->mask_why)
		json_object_object_add(o, "mask_why", json_object_new_string(g->mask_why));
	json_object_object_add(o, "append_only", json_object_new_boolean(g->append_only));
	json_object_object_add(o, "append_why",
	                       json_object_new_string(g->applied && g->append_why ? g->append_why : "not applied"));
	return o;
}
