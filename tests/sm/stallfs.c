/* SPDX-License-Identifier: MIT */
/*
 * stallfs - a one-file FUSE file system whose reads answer only after
 * STALL_MS milliseconds, for tests/sm/run.sh stall (issue #17 item 5).
 *
 *   stallfs MOUNTPOINT STALL_MS [STATE_DIR]
 *
 * A workload that serves a file system of its own (FUSE in a user
 * namespace) can make any read of memory mapped from it wait as long as it
 * likes, the supervisor's reads of the workload's memory included. This
 * stands in for that server: a call whose parameters lie in a page of
 * MOUNTPOINT/stall keeps the supervisor's notify worker in its read for
 * STALL_MS, while it holds the sandbox lock. Runs in the foreground; the
 * test unmounts it.
 *
 * With STATE_DIR, the stall is the harness's to end, and the harness can
 * tell the order of events without a clock: a read creates
 * STATE_DIR/stalling when it begins and waits until STATE_DIR/release
 * exists (STALL_MS then only caps a hang: a harness that never releases),
 * then creates STATE_DIR/answered before it answers (so a caller let go
 * by the answer finds it there).
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE 4096
#define STALL_PATH "/stall"
#define MS_PER_S 1000
#define NS_PER_MS 1000000L

#define POLL_NS (10 * NS_PER_MS)

static long stall_ms;
static const char *state_dir;

static void state_mark(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", state_dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

static bool state_has(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", state_dir, name);
	return access(path, F_OK) == 0;
}

/* Until the harness releases the stall, or STALL_MS (a hang's cap). */
static void stall_until_released(void)
{
	struct timespec tick = { 0, POLL_NS };

	state_mark("stalling");
	for (long waited = 0; !state_has("release") && waited < stall_ms; waited += POLL_NS / NS_PER_MS)
		nanosleep(&tick, NULL);
	state_mark("answered");
}

static int sf_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, STALL_PATH) != 0)
		return -ENOENT;
	st->st_mode = S_IFREG | 0444;
	st->st_nlink = 1;
	st->st_size = FILE_SIZE;
	return 0;
}

static int sf_open(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	return strcmp(path, STALL_PATH) == 0 ? 0 : -ENOENT;
}

/* The read the supervisor's fault waits on. */
static int sf_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct timespec ts = { stall_ms / MS_PER_S, (stall_ms % MS_PER_S) * NS_PER_MS };

	(void)path;
	(void)fi;
	if (state_dir)
		stall_until_released();
	else
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	if (off >= FILE_SIZE)
		return 0;
	if ((size_t)(FILE_SIZE - off) < size)
		size = (size_t)(FILE_SIZE - off);
	memset(buf, 0, size);
	return (int)size;
}

static const struct fuse_operations ops = {
	.getattr = sf_getattr,
	.open = sf_open,
	.read = sf_read,
};

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		return 2;
	}
	stall_ms = atol(argv[2]);
	state_dir = argc == 4 ? argv[3] : NULL;
	char *fargs[] = { argv[0], "-f", "-o", "allow_other,default_permissions", argv[1], NULL };
	return fuse_main(5, fargs, &ops, NULL);
}
