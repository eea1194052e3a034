/* SPDX-License-Identifier: MIT */
#ifndef GPUSANDBOX_H
#define GPUSANDBOX_H

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define GPUSANDBOX_VERSION "0.1.0"
#define GS_NS_PER_S 1000000000ull
#define GS_NS_PER_US 1000ull

/* The folder holding path, into dir (len bytes): "." for a bare name,
 * "/" for a file in the root. False when it does not fit. */
static inline bool gs_parent_folder(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return snprintf(dir, len, ".") < (int)len;
	if (slash == path)
		return snprintf(dir, len, "/") < (int)len;
	if ((size_t)(slash - path) >= len)
		return false;
	snprintf(dir, len, "%.*s", (int)(slash - path), path);
	return true;
}

/* Room for one more item in a growing array of count n: when n has
 * reached cap, arr is reallocated to twice cap (first when empty) and cap
 * raised. True when there is room; false when out of memory, with arr and
 * cap as they were. A macro, so that each array keeps its own item, count
 * and capacity types; its arguments are plain lvalues, read more than once. */
#define GS_ROOM_FOR_ONE(arr, n, cap, first) __extension__({                          \
	bool gs_room_ = (n) < (cap);                                                  \
	if (!gs_room_) {                                                              \
		__typeof__(cap) gs_cap_ = (cap) ? (cap) * 2 : (first);                \
		__typeof__(arr) gs_arr_ = realloc((arr), sizeof(*(arr)) * gs_cap_);   \
		if (gs_arr_) {                                                        \
			(arr) = gs_arr_;                                              \
			(cap) = gs_cap_;                                              \
			gs_room_ = true;                                              \
		}                                                                     \
	}                                                                             \
	gs_room_;                                                                     \
})

/* A clock in nanoseconds. */
static inline uint64_t gs_clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * GS_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in nanoseconds: the one clock the supervisor times
 * things with (profiles, channel ages, the duty cycle). */
static inline uint64_t gs_monotonic_ns(void)
{
	return gs_clock_ns(CLOCK_MONOTONIC);
}

/* Has the task behind a pidfd exited? A pidfd is readable once it has (a
 * PIDFD_THREAD one once that very thread has, a process's once the
 * process has); an error is taken as exited too, so that a caller that
 * keeps something while its task lives lets it go (fail closed). */
static inline bool gs_pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/* Takes m if it comes within ms; whether it did. For a lock that a worker
 * may hold while the workload makes it wait (a read of workload memory a
 * FUSE file of its own backs), taken by a thread that must not wait on the
 * workload. */
static inline bool gs_mutex_lock_within(pthread_mutex_t *m, unsigned ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)(ms % 1000u) * 1000000L;
	until.tv_sec += (time_t)(ms / 1000u) + until.tv_nsec / (long)GS_NS_PER_S;
	until.tv_nsec %= (long)GS_NS_PER_S;
	return pthread_mutex_timedlock(m, &until) == 0;
}

/* A small text file (/proc/TID/status, /proc/TID/syscall, fdinfo) read
 * into buf with one read and NUL-terminated: the bytes read, or -1 when it
 * cannot be opened or gives nothing. */
static inline ssize_t gs_read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Exit statuses of gpusandbox's own failures, as env(1) and timeout(1). */
enum gs_exit {
	GS_EXIT_ERROR       = 125, /* gpusandbox itself failed */
	GS_EXIT_CANNOT_EXEC = 126, /* COMMAND found but not executable */
	GS_EXIT_NOT_FOUND   = 127, /* COMMAND not found */
	GS_EXIT_SIGNAL_BASE = 128, /* workload killed by signal N: 128 + N */
};

#endif
