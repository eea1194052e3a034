/* SPDX-License-Identifier: MIT */
/*
 * ledger_files.c - the ledger's release watches and its index of open
 * control files. A client dies with its open file; the ledger registers
 * the file in a private epoll set (which holds no reference) and asks the
 * kernel, through kcmp(KCMP_EPOLL_TFD), whether a file is still open and
 * whether it is the file of a given fd. The control files are kept sorted
 * by the kernel's order of open files so that one is found by binary
 * search (issue #16). Uses nothing of ledger.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "ledger.h"
#include "ledger_watch.h"

#define INITIAL_FILES 64u
#define FDINFO_PATH_MAX 64
#define FDINFO_BUF 4096

int ledger_watch_file(struct ledger *l, int fd)
{
	struct epoll_event ev = { .events = 0 };
	int epfd;

	if (fd < 0 || l->watch_unsupported)
		return -1;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return -1;
	/* The epoll item holds no reference on the file; the kernel removes it
	 * when the file is finally released. */
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		/* A file without poll support: keep charges until RM_FREE or
		 * the end of the sandbox (over-charging is the safe side). */
		l->watch_unsupported = true;
		close(epfd);
		return -1;
	}
	return epfd;
}

/* Whether a watched file is still open, asked of /proc, for a kernel whose
 * kcmp cannot answer (ledger_watch_alive_at): the epoll set lists its
 * target ("tfd:") while the file lives. */
static bool watch_alive_fdinfo(int epfd)
{
	char path[FDINFO_PATH_MAX], buf[FDINFO_BUF];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	if (gs_read_text(path, buf, sizeof(buf)) < 0)
		return true; /* cannot tell: keep the charge */
	return strstr(buf, "tfd:") != NULL;
}

/* True while the watched file is still open somewhere. The kernel drops
 * the epoll item when the file is released (eventpoll_release in
 * __fput), and kcmp(KCMP_EPOLL_TFD) looks the item up: any comparison
 * (0, 1, 2) means it is there, ENOENT that it is gone. One kcmp (about
 * 1 us) instead of an open, read and close of fdinfo (about 6.4 us,
 * shared/reference/perf.md 3.8); the item, not our verdict, decides. The
 * file compared with is the epoll set itself: any file of ours will do.
 * Cannot tell (no kcmp): ask /proc, as before. */
bool ledger_watch_alive_at(pid_t self, int epfd, int tfd)
{
	struct kcmp_epoll_slot slot = { .efd = (uint32_t)epfd, .tfd = (uint32_t)tfd, .toff = 0 };
	long rc;

	if (tfd < 0)
		return watch_alive_fdinfo(epfd);
	rc = syscall(SYS_kcmp, self, self, KCMP_EPOLL_TFD, epfd, (unsigned long)&slot);
	if (rc >= 0)
		return true;
	if (errno == ENOENT)
		return false;
	return watch_alive_fdinfo(epfd);
}


/* Is fd's open file the one the client's watch was registered on?
 * kcmp(KCMP_EPOLL_TFD) compares without holding anything: 1 yes, 0 no
 * (a different file, or the watched one is gone), -1 cannot tell. */
int ledger_watch_is_file_at(pid_t self, int epfd, int tfd, int fd)
{
	return ledger_watch_is_task_file_at(self, epfd, tfd, self, fd);
}

int ledger_watch_is_task_file_at(pid_t self, int epfd, int tfd, pid_t tid, int wfd)
{
	struct kcmp_epoll_slot slot = { .efd = (uint32_t)epfd, .tfd = (uint32_t)tfd, .toff = 0 };
	long rc;

	if (epfd < 0 || tfd < 0)
		return -1;
	/* wfd in tid's table against the watch's target in ours. */
	rc = syscall(SYS_kcmp, tid, self, KCMP_EPOLL_TFD, wfd, (unsigned long)&slot);
	if (rc == 0)
		return 1;
	if (rc > 0 || errno == ENOENT)
		return 0;
	return -1;
}


/* kcmp of fd's open file with the file a watch was made on: 0 the same,
 * 1 or 2 fd's file orders before or after it (the kernel's order of the
 * two files, fixed while both live), FILE_GONE when the watched file was
 * released, -1 cannot tell. */
#define FILE_GONE 3
static int watch_cmp(pid_t self, int epfd, int tfd, int fd)
{
	struct kcmp_epoll_slot slot = { .efd = (uint32_t)epfd, .tfd = (uint32_t)tfd, .toff = 0 };
	long rc = syscall(SYS_kcmp, self, self, KCMP_EPOLL_TFD, fd, (unsigned long)&slot);

	if (rc >= 0 && rc <= 2)
		return (int)rc;
	return rc < 0 && errno == ENOENT ? FILE_GONE : -1;
}

static void file_drop(struct ledger *l, uint32_t i)
{
	close(l->files[i].epfd);
	memmove(&l->files[i], &l->files[i + 1], sizeof(l->files[0]) * (l->n_files - i - 1));
	l->n_files--;
}

/* Drops every released file, keeping the order: run when the array has
 * doubled since the last sweep, so that files no search meets do not pile
 * up (amortised O(1) per new file). */
static void files_sweep(struct ledger *l)
{
	for (uint32_t i = 0; i < l->n_files;)
		if (!ledger_watch_alive_at(l->self, l->files[i].epfd, l->files[i].tfd))
			file_drop(l, i);
		else
			i++;
	l->files_swept = l->n_files;
}

uint32_t ledger_client_files(const struct ledger *l)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < l->n_files; i++)
		if (l->files[i].has_client && ledger_watch_alive_at(l->self, l->files[i].epfd, l->files[i].tfd))
			n += 1 + l->files[i].extra_clients; /* the first, and those made after it */
	return n;
}

/* The files are kept sorted by the kernel's order of open files (kcmp's
 * 1 and 2), so that finding one is a binary search: O(log n) kcmps where
 * it was one kcmp and one liveness check per known file (issue #16). A
 * released file met on the way is dropped (it can equal no live file:
 * its watch is gone, kcmp says ENOENT), which keeps the rest sorted.
 * Returns the index, or -1 with *pos where it belongs. */
static int file_search(struct ledger *l, int fd, uint32_t *pos)
{
	uint32_t lo = 0, hi = l->n_files;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int r = watch_cmp(l->self, l->files[mid].epfd, l->files[mid].tfd, fd);
		if (r == FILE_GONE) {
			file_drop(l, mid);
			hi--;
			continue;
		}
		if (r < 0)
			return -2; /* kcmp unavailable: cannot tell files apart */
		if (r == 0)
			return (int)mid;
		if (r == 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	*pos = lo;
	return -1;
}

int ledger_file_of(struct ledger *l, int fd)
{
	uint32_t pos = 0;
	int found;

	if (l->n_files >= 2 * l->files_swept + INITIAL_FILES)
		files_sweep(l);
	found = file_search(l, fd, &pos);
	if (found != -1)
		return found < 0 ? -1 : found;
	/* A new file costs a descriptor of this process (its watch), which
	 * the agent shares among every container: past the sandbox's bound,
	 * after dropping the released ones, none is made and the caller
	 * refuses the call (tenants.md, docs/security). */
	if (l->n_files >= l->max_files)
		files_sweep(l);
	if (l->n_files >= l->max_files)
		return LEDGER_FILES_FULL;
	if (!GS_ROOM_FOR_ONE(l->files, l->n_files, l->cap_files, INITIAL_FILES))
		return -1;
	int epfd = ledger_watch_file(l, fd);
	if (epfd < 0)
		return -1;
	/* A new file proves kcmp works only once compared: check now. */
	if (ledger_watch_is_file_at(l->self, epfd, fd, fd) != 1) {
		close(epfd);
		return -1;
	}
	memmove(&l->files[pos + 1], &l->files[pos], sizeof(l->files[0]) * (l->n_files - pos));
	l->files[pos] = (struct ledger_file){ .epfd = epfd, .tfd = fd, .has_client = false };
	l->n_files++;
	return (int)pos;
}

