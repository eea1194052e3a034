/* SPDX-License-Identifier: MIT */
/*
 * test_audit_guard - what the audit log's guard (audit_guard.c) chooses to
 * mask, and the append-only flag's life: set on open, kept while another
 * writer holds the file, taken off by the last one, never when an
 * operator set it. The mounts themselves and a hostile workload are
 * tests/adv audit_reach's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_guard.h"
#include "check.h"

static char root[] = "/tmp/gs-guard.XXXXXX";

static int open_log(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

static void path_in(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", root, rel);
}

static void test_mask_choice(void)
{
	char logs[PATH_MAX], log[PATH_MAX], open_dir[PATH_MAX], open_log_path[PATH_MAX], other[PATH_MAX];
	struct gs_audit_guard g;
	int fd, p[2];

	path_in(logs, sizeof(logs), "logs");
	path_in(log, sizeof(log), "logs/a.jsonl");
	CHECK(mkdir(logs, 0700) == 0);
	fd = open_log(log);
	CHECK(fd >= 0);
	/* A private directory of logs, the workload elsewhere: the directory. */
	memset(&g, 0, sizeof(g));
	gs_audit_guard_mask_target(&g, fd, log, "/");
	CHECK(g.mask == GS_AUDIT_MASK_DIR && strcmp(g.mask_path, logs) == 0);
	/* By the descriptor's own path (--audit-fd): the same. */
	memset(&g, 0, sizeof(g));
	gs_audit_guard_mask_target(&g, fd, NULL, "/");
	CHECK(g.mask == GS_AUDIT_MASK_DIR && strcmp(g.mask_path, logs) == 0);
	/* The workload starts in it, or below it: the file alone. */
	memset(&g, 0, sizeof(g));
	gs_audit_guard_mask_target(&g, fd, log, logs);
	CHECK(g.mask == GS_AUDIT_MASK_FILE && strcmp(g.mask_path, log) == 0 && g.mask_why);
	memset(&g, 0, sizeof(g));
	gs_audit_guard_mask_target(&g, fd, log, NULL);
	CHECK(g.mask == GS_AUDIT_MASK_FILE);
	/* Something else in it: the file alone. */
	path_in(other, sizeof(other), "logs/notes.txt");
	int ofd = open(other, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(ofd >= 0);
	close(ofd);
	memset(&g, 0, sizeof(g));
	gs_audit_guard_mask_target(&g, fd, log, "/");
	CHECK(g.mask == GS_AUDIT_MASK_FILE && g.mask_why && strstr(g.mask_why, "more than"));
	unlink(other);
	close(fd);
	/* A directory others may enter: the file alone. */
	path_in(open_dir, sizeof(open_dir), "open");
	path_in(open_log_path, sizeof(open_log_path), "open/a.jsonl");
	CHECK(mkdir(open_dir, 0755) == 0);
	fd = open_log(open_log_path);
	memset(&g, 0, sizeof(g));
	gs_audit_guard_mask_target(&g, fd, open_log_path, "/");
	CHECK(g.mask == GS_AUDIT_MASK_FILE && strstr(g.mask_why, "open to others"));
	/* A path that names another file now: nothing. */
	CHECK(rename(open_log_path, other) == 0 && (close(open_log(open_log_path)), 1));
	memset(&g, 0, sizeof(g));
	gs_audit_guard_mask_target(&g, fd, open_log_path, "/");
	CHECK(g.mask == GS_AUDIT_MASK_NONE && g.mask_why);
	close(fd);
	/* A pipe: no path, nothing to mask, no flag. */
	CHECK(pipe(p) == 0);
	memset(&g, 0, sizeof(g));
	gs_audit_guard_mask_target(&g, p[1], NULL, "/");
	gs_audit_guard_file(&g, p[1]);
	CHECK(g.mask == GS_AUDIT_MASK_NONE && !g.append_only && strcmp(g.append_why, "not a regular file") == 0);
	close(p[0]);
	close(p[1]);
}

static bool appendonly(int fd)
{
	int flags = 0;

	return ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_APPEND_FL);
}

static void test_append_flag(void)
{
	char log[PATH_MAX];
	struct gs_audit_guard a, b;
	int fa, fb, flags;

	path_in(log, sizeof(log), "logs/b.jsonl");
	fa = open_log(log);
	memset(&a, 0, sizeof(a));
	gs_audit_guard_file(&a, fa);
	if (!a.append_only) {
		printf("append-only flag not available here (%s): its checks skipped\n", a.append_why);
		close(fa);
		return;
	}
	CHECK(appendonly(fa) && a.append_set && a.shared_lock);
	/* Only appends now, for root too. */
	CHECK(open(log, O_WRONLY | O_TRUNC | O_CLOEXEC) < 0 && errno == EPERM);
	CHECK(write(fa, "x\n", 2) == 2);
	/* A second writer adopts it by its marker; the first to leave keeps it. */
	fb = open_log(log);
	memset(&b, 0, sizeof(b));
	gs_audit_guard_file(&b, fb);
	CHECK(b.append_only && b.append_set);
	gs_audit_guard_release(&a, fa);
	close(fa);
	CHECK(appendonly(fb));
	gs_audit_guard_release(&b, fb);
	CHECK(!appendonly(fb));
	close(fb);
	/* One an operator set (no marker) stays. */
	fa = open_log(log);
	CHECK(ioctl(fa, FS_IOC_GETFLAGS, &flags) == 0);
	flags |= FS_APPEND_FL;
	CHECK(ioctl(fa, FS_IOC_SETFLAGS, &flags) == 0);
	memset(&a, 0, sizeof(a));
	gs_audit_guard_file(&a, fa);
	CHECK(a.append_only && !a.append_set && strcmp(a.append_why, "set before gpusandbox") == 0);
	gs_audit_guard_release(&a, fa);
	CHECK(appendonly(fa));
	flags &= ~FS_APPEND_FL;
	CHECK(ioctl(fa, FS_IOC_SETFLAGS, &flags) == 0);
	close(fa);
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	test_mask_choice();
	test_append_flag();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "test_audit_guard: %s left behind\n", root);
	return check_summary();
}
