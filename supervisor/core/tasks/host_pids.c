/* SPDX-License-Identifier: MIT */
/*
 * host_pids.c - the processes of our own PID namespace, remembered by a
 * pidfd each (host_pids.h says why this is sound).
 *
 * A linear-probing hash of pid -> pidfd, twice the size of its bound, with
 * backward-shift deletion (no tombstones). Every entry is confirmed by
 * poll() before a walk's decisions that rest on it are final.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "host_pids.h"

#define SLOTS (2 * GS_HOST_PIDS_MAX) /* load at most one half */
/* A pidfd is kept only while the fd numbers in use stay under this
 * fraction of RLIMIT_NOFILE: the cache must never starve the calls. */
#define FD_SHARE_DIVISOR 4
#define NS_PATH_MAX 64

struct slot {
	pid_t    pid; /* 0: empty */
	int      fd;
	uint64_t relied; /* the walk that last left it out */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[SLOTS];
static unsigned used;
static uint64_t walk; /* the walk under way, counted from 1 */

static unsigned home_of(pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) % SLOTS;
}

static struct slot *find(pid_t pid)
{
	for (unsigned i = home_of(pid), k = 0; k < SLOTS; i = (i + 1) % SLOTS, k++) {
		if (slots[i].pid == pid)
			return &slots[i];
		if (slots[i].pid == 0)
			return NULL;
	}
	return NULL;
}

/* Empties slot i and moves later entries of its run back (linear probing
 * without tombstones: no entry may sit past an empty slot from its home). */
static void remove_at(unsigned i)
{
	close(slots[i].fd);
	slots[i].pid = 0;
	used--;
	for (unsigned j = (i + 1) % SLOTS; slots[j].pid; j = (j + 1) % SLOTS) {
		unsigned h = home_of(slots[j].pid);
		/* Can slot j's entry move to the hole at i? Only if its home
		 * is not cyclically within (i, j]. */
		bool between = i < j ? (h > i && h <= j) : (h > i || h <= j);
		if (between)
			continue;
		slots[i] = slots[j];
		slots[j].pid = 0;
		i = j;
	}
}

void gs_host_pids_begin(void)
{
	pthread_mutex_lock(&lock);
	walk++;
}

void gs_host_pids_end(void)
{
	pthread_mutex_unlock(&lock);
}

bool gs_host_pids_known(pid_t pid)
{
	struct slot *s = find(pid);

	if (!s)
		return false;
	s->relied = walk;
	return true;
}

static bool room_for(int fd)
{
	struct rlimit r;

	if (used >= GS_HOST_PIDS_MAX || getrlimit(RLIMIT_NOFILE, &r) < 0)
		return false;
	return r.rlim_cur == RLIM_INFINITY || (rlim_t)fd < r.rlim_cur / FD_SHARE_DIVISOR;
}

/* pid was found in our namespace by a check made after pidfd was opened
 * on it; remembered if that process is still alive (so the check was of
 * it) and there is room, else pidfd is closed. Takes pidfd. */
static void learn(pid_t pid, int pidfd)
{
	if (pidfd < 0)
		return;
	if (pid <= 0 || find(pid) || !room_for(pidfd) || gs_pidfd_exited(pidfd)) {
		close(pidfd);
		return;
	}
	unsigned i = home_of(pid);
	while (slots[i].pid)
		i = (i + 1) % SLOTS;
	slots[i] = (struct slot){ .pid = pid, .fd = pidfd, .relied = 0 };
	used++;
}

/* Every entry's pidfd, polled at once by gs_host_pids_settle. */
static struct pollfd polled[SLOTS];
static pid_t polled_pid[SLOTS];

/* Every entry is polled, not only the ones this walk relied on: a
 * process that exited is not in /proc any more, so no walk would rely on
 * it again, and its pidfd would be kept for good (a long-running agent
 * would fill the cache with the dead). */
int gs_host_pids_settle(pid_t *gone, int max)
{
	unsigned m = 0;
	int n = 0;

	for (unsigned i = 0; i < SLOTS; i++)
		if (slots[i].pid) {
			polled[m] = (struct pollfd){ .fd = slots[i].fd, .events = POLLIN };
			polled_pid[m++] = slots[i].pid;
		}
	/* One poll for all: a pidfd is readable once its process exited. An
	 * error leaves every one to be looked at again (fail closed). */
	bool failed = m && poll(polled, m, 0) < 0;
	for (unsigned k = 0; k < m; k++) {
		if (!failed && !polled[k].revents)
			continue;
		struct slot *s = find(polled_pid[k]);
		if (!s)
			continue;
		if (s->relied == walk) {
			if (n >= max)
				return -1;
			gone[n++] = polled_pid[k];
		}
		remove_at((unsigned)(s - slots));
	}
	return n;
}

/* The PID namespace of process pid (0: ours): the inode number its
 * /proc/PID/ns/pid link names ("pid:[INO]"). Read with readlink, not
 * stat: the name is all we need, and it costs half as much (2.5 against
 * 4.6 us on the test VM), once per host process not yet remembered. The
 * number is the namespace's own (nsfs), unique among live namespaces, and
 * both compared are alive: ours, and the trapped caller's (or the
 * process asked about, whose pidfd was opened before). */
bool gs_pid_ns_of(pid_t pid, unsigned long long *ino)
{
	char path[NS_PATH_MAX], link[NS_PATH_MAX];
	ssize_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/pid");
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return sscanf(link, "pid:[%llu]", ino) == 1;
}

/* Is process pid of our own PID namespace (ours: its inode number)?
 * Remembered ones are answered by the cache, and confirmed after the walk
 * (gs_host_pids_settle); others are asked, with a pidfd opened first so
 * that the answer can be remembered. */
bool gs_host_pids_ours(pid_t pid, unsigned long long ours)
{
	unsigned long long theirs;

	if (gs_host_pids_known(pid))
		return true;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool mine = gs_pid_ns_of(pid, &theirs) && theirs == ours;
	if (mine)
		learn(pid, pidfd);
	else if (pidfd >= 0)
		close(pidfd);
	return mine;
}

/* Remembers every process of our namespace now (one walk of /proc). */
static void remember_host(void)
{
	unsigned long long ours;
	struct dirent *e;
	DIR *d;

	if (!gs_pid_ns_of(0, &ours) || !(d = opendir("/proc")))
		return;
	gs_host_pids_begin();
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			(void)gs_host_pids_ours((pid_t)atoi(e->d_name), ours);
	gs_host_pids_end();
	closedir(d);
}

/* Grows the fd table to hold every pidfd the cache may keep. */
static void grow_fd_table(void)
{
	struct rlimit r;
	rlim_t want = (rlim_t)GS_HOST_PIDS_MAX * FD_SHARE_DIVISOR;

	if (getrlimit(RLIMIT_NOFILE, &r) < 0)
		return;
	if (r.rlim_cur != RLIM_INFINITY && want > r.rlim_cur)
		want = r.rlim_cur;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* The table grows to hold fd number want - 1 and never shrinks. */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)want - 1);
	if (high >= 0)
		close(high);
	close(fd);
}

void gs_host_pids_prepare(void)
{
	grow_fd_table();
	remember_host();
}
