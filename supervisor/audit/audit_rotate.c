/* SPDX-License-Identifier: MIT */
/*
 * audit_rotate.c - moving an audit log's files up one number
 * (audit_rotate.h). The writer's side of the chain is in audit.c.
 *
 * Security: the directory is the agent's --audit-dir (root's). The new
 * PATH is made with O_EXCL, so a file or link someone left at PATH after
 * the rename is never written through: the rotation fails, and the writer
 * fails closed (its container is killed). A rename that fails leaves the
 * files as they were, and the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <sys/stat.h>

#include "audit_rotate.h"

#define AUDIT_FILE_MODE 0600

int gs_audit_rotation_check(uint64_t max_size, unsigned max_files, struct gs_error *err)
{
	if (max_size < GS_AUDIT_ROTATE_MIN_SIZE)
		return gs_fail(err, EINVAL, "--audit-max-size: at least %llu bytes",
		               (unsigned long long)GS_AUDIT_ROTATE_MIN_SIZE);
	if (max_files < GS_AUDIT_ROTATE_MIN_FILES || max_files > GS_AUDIT_ROTATE_MAX_FILES)
		return gs_fail(err, EINVAL, "--audit-max-files: %u to %u (the file written and those before it)",
		               GS_AUDIT_ROTATE_MIN_FILES, GS_AUDIT_ROTATE_MAX_FILES);
	return 0;
}

static int numbered(char *buf, size_t len, const char *path, unsigned k, struct gs_error *err)
{
	if (snprintf(buf, len, "%s.%u", path, k) >= (int)len)
		return gs_fail(err, ENAMETOOLONG, "the audit log's rotated path is too long");
	return 0;
}

int gs_audit_rotate_files(const struct gs_audit_rotation *r, struct gs_error *err)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16];
	int fd;

	if (numbered(to, sizeof(to), r->path, r->max_files - 1, err) < 0)
		return -1;
	if (unlink(to) < 0 && errno != ENOENT)
		return gs_fail(err, errno, "deleting the oldest audit log %s", to);
	for (unsigned k = r->max_files - 1; k > 1; k--) {
		if (numbered(from, sizeof(from), r->path, k - 1, err) < 0 ||
		    numbered(to, sizeof(to), r->path, k, err) < 0)
			return -1;
		if (rename(from, to) < 0 && errno != ENOENT)
			return gs_fail(err, errno, "moving audit log %s to %s", from, to);
	}
	if (numbered(to, sizeof(to), r->path, 1, err) < 0)
		return -1;
	if (rename(r->path, to) < 0)
		return gs_fail(err, errno, "moving audit log %s to %s", r->path, to);
	fd = open(r->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, AUDIT_FILE_MODE);
	if (fd < 0)
		return gs_fail(err, errno, "making a new audit log %s", r->path);
	return fd;
}

int gs_audit_rotation_start(struct gs_audit_rotation *r, int fd, const char *path, uint64_t max_size,
                            unsigned max_files, struct gs_error *err)
{
	struct stat st;

	if (gs_audit_rotation_check(max_size, max_files, err) < 0)
		return -1;
	if (snprintf(r->path, sizeof(r->path), "%s", path) >= (int)sizeof(r->path))
		return gs_fail(err, ENAMETOOLONG, "the audit log's path is too long");
	if (fstat(fd, &st) < 0)
		return gs_fail(err, errno, "audit log %s", path);
	r->size = (uint64_t)st.st_size;
	r->max_size = max_size;
	r->max_files = max_files;
	r->on = true;
	return 0;
}
