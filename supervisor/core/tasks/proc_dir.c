/* SPDX-License-Identifier: MIT */
/*
 * proc_dir.c - /proc/TID looked through a directory fd the thread keeps
 * (proc_dir.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc_dir.h"

#define PATH_BUF 64

/* A worker's looks through /proc are mostly at one task's calls, so each
 * thread keeps an O_PATH fd of the last /proc/TID it looked through: a
 * look then walks "fd/N" from it, not "/proc/TID/fd/N" (issue #31: 3.2-3.6
 * against 3.9-4.5 us a look on the 2-core VM). Sound because the
 * directory is bound to the task it was opened on, not to the number: a
 * lookup in it reaches that task or nothing (it fails, ESRCH, once the
 * task is gone: tests/unit/test_tid_reuse), and while that task lives its
 * tid names no other. A
 * lookup that fails through it is made again by path, which answers for
 * whatever task the number names now; when that one succeeds the kept
 * directory was a gone task's and is let go. Closed at the thread's end
 * (the key's destructor). */
struct kept_dir {
	pid_t tid;
	int   fd;
};
static __thread struct kept_dir kept = { 0, -1 };
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void kept_close(void *p)
{
	struct kept_dir *k = p;

	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	k->tid = 0;
}

static void kept_key_init(void)
{
	(void)pthread_key_create(&kept_key, kept_close);
}

static int kept_dir_of(pid_t tid)
{
	char path[PATH_BUF];

	if (kept.tid == tid && kept.fd >= 0)
		return kept.fd;
	pthread_once(&kept_once, kept_key_init);
	kept_close(&kept);
	snprintf(path, sizeof(path), "/proc/%d", (int)tid);
	kept.fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (kept.fd >= 0) {
		kept.tid = tid;
		(void)pthread_setspecific(kept_key, &kept);
	}
	return kept.fd;
}

int gs_task_statx(pid_t tid, const char *rel, unsigned mask, struct statx *sx)
{
	char path[PATH_BUF];
	int dir = kept_dir_of(tid);

	if (dir >= 0 && statx(dir, rel, AT_STATX_DONT_SYNC, mask, sx) == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)tid, rel);
	int rc = statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, mask, sx);
	if (rc == 0 && dir >= 0)
		kept_close(&kept);
	return rc;
}
