/* SPDX-License-Identifier: MIT */
/*
 * audit_reach - a root workload that knows its audit log's path tries to
 * rewrite it (issue #32 section 2, attack (b); docs/security/audit-log.md).
 *
 * The hash chain tells that a log was rewritten; this asks whether the
 * workload can rewrite it at all. Having made one allocation and had a
 * second refused (so the log holds a refusal), it tries every way at the
 * file it knows (argv[1]) and at its directory: list the directory, read
 * the log, truncate it (O_TRUNC, truncate(2)), overwrite its start in
 * place, take its append-only flag off, append a forged record, reach it
 * through a process's open files (/proc/PID/fd of its parent and of pid
 * 1), and unlink it. Then it has a third allocation refused, so the
 * supervisor writes after the attempts.
 *
 * Prints one key=value per attempt (ok, or the errno's name), read_log=
 * (1: what it read was the real log) and listed= (1: the directory listing
 * named the log), then SUMMARY. Judged by run.sh from the log's own bytes
 * and `gpusandbox audit verify`, not from this program's word.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "adv.h"

#define CHUNK       (768ull * RMC_MIB)
#define PATH_LEN    4096
#define HEAD_BYTES  256
#define FORGED_LINE "{\"forged\":true}\n"
#define LOG_SUFFIX  ".jsonl"

static const char *result(int rc)
{
	if (rc >= 0)
		return "ok";
	return strerrorname_np(errno) ? strerrorname_np(errno) : "error";
}

/* Prints key=result of rc. */
static void say(const char *key, int rc)
{
	printf("%s=%s ", key, result(rc));
}

static void try_list(const char *path)
{
	char copy[PATH_LEN], *base;
	struct dirent *de;
	int listed = 0;
	DIR *d;

	snprintf(copy, sizeof(copy), "%s", path);
	base = basename(copy);
	char dcopy[PATH_LEN];
	snprintf(dcopy, sizeof(dcopy), "%s", path);
	d = opendir(dirname(dcopy));
	say("list", d ? 0 : -1);
	while (d && (de = readdir(d)))
		listed |= strcmp(de->d_name, base) == 0;
	if (d)
		closedir(d);
	printf("listed=%d ", listed);
}

static void try_read(const char *path)
{
	char buf[HEAD_BYTES + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, HEAD_BYTES) : -1;

	say("read", fd);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	printf("read_log=%d ", strstr(buf, "\"event\":\"start\"") != NULL);
}

static void try_write(const char *key, const char *path, int flags, const char *text, bool at_start)
{
	int fd = open(path, flags | O_CLOEXEC);
	int rc = fd;

	if (fd >= 0) {
		ssize_t n = at_start ? pwrite(fd, text, strlen(text), 0) : write(fd, text, strlen(text));
		rc = n == (ssize_t)strlen(text) ? 0 : -1;
		close(fd);
	}
	say(key, rc);
}

/* Takes FS_APPEND_FL off (needs CAP_LINUX_IMMUTABLE). */
static void try_unflag(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), flags = 0, rc = fd;

	if (fd >= 0) {
		rc = ioctl(fd, FS_IOC_GETFLAGS, &flags);
		if (rc == 0) {
			flags &= ~FS_APPEND_FL;
			rc = ioctl(fd, FS_IOC_SETFLAGS, &flags);
		}
		close(fd);
	}
	say("unflag", rc);
}

/* A log among pid's open files, truncated through /proc/PID/fd/N: "none"
 * when its fd directory shows none (or cannot be listed: its errno). */
static void try_proc_fd(const char *key, pid_t pid)
{
	char dir[64], link[PATH_LEN], path[sizeof(dir) + NAME_MAX + 2];
	struct dirent *de;
	const char *res = "none";
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d) {
		printf("%s=%s ", key, result(-1));
		return;
	}
	while ((de = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (n < (ssize_t)strlen(LOG_SUFFIX) || strcmp(link + n - strlen(LOG_SUFFIX), LOG_SUFFIX) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		res = result(fd);
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
	printf("%s=%s ", key, res);
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: audit_reach LOG\n");
		return 2;
	}
	const char *path = argv[1];
	adv_session_or_die(&s, -1, "audit_reach");
	adv_count(&t, adv_alloc_rm(&s, NULL, rmc_next_handle(&s), CHUNK));
	adv_count(&t, adv_alloc_rm(&s, NULL, rmc_next_handle(&s), CHUNK));

	try_list(path);
	try_read(path);
	try_unflag(path);
	try_write("trunc", path, O_WRONLY | O_TRUNC, "", false);
	say("truncate", truncate(path, 0));
	try_write("rewrite", path, O_WRONLY, "{}\n", true);
	try_write("append", path, O_WRONLY | O_APPEND, FORGED_LINE, false);
	try_proc_fd("procfd_parent", getppid());
	try_proc_fd("procfd_init", 1);
	say("unlink", unlink(path));
	printf("\n");

	adv_count(&t, adv_alloc_rm(&s, NULL, rmc_next_handle(&s), CHUNK));
	adv_print_summary(&t);
	return 0;
}
