/* SPDX-License-Identifier: MIT */
/*
 * trace_out.c - the --trace stream (trace_out.h).
 *
 * Time stamps are added by the stream itself (a fopencookie stream that
 * prefixes each line), so every writer of trace lines gets them without
 * knowing: the executor's decoded calls and the sandbox's "released"
 * lines alike. The stream is line-buffered, so a line is stamped when the
 * writer ends it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "trace_out.h"

#define TRACE_FILE_MODE 0600
#define STAMP_MAX 48
#define NS_PER_US 1000l

struct stamped {
	int                fd;
	bool               own_fd;       /* a --trace-output file, closed with the stream */
	enum gs_trace_time mode;
	bool               at_line_start;
	uint64_t           last_ns;      /* monotonic time of the previous stamp */
};

static const char *const mode_names[] = {
	[GS_TRACE_TIME_CLOCK] = "clock",
	[GS_TRACE_TIME_EPOCH] = "epoch",
	[GS_TRACE_TIME_RELATIVE] = "relative",
};

int gs_parse_trace_time(const char *s, enum gs_trace_time *out)
{
	for (unsigned m = GS_TRACE_TIME_CLOCK; m < sizeof(mode_names) / sizeof(mode_names[0]); m++)
		if (strcmp(s, mode_names[m]) == 0) {
			*out = (enum gs_trace_time)m;
			return 0;
		}
	return -1;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int stamp(struct stamped *s, char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	uint64_t now = gs_monotonic_ns(), delta;

	switch (s->mode) {
	case GS_TRACE_TIME_CLOCK:
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		return snprintf(buf, len, "%02d:%02d:%02d.%06ld ", tm.tm_hour, tm.tm_min, tm.tm_sec,
		                ts.tv_nsec / NS_PER_US);
	case GS_TRACE_TIME_EPOCH:
		clock_gettime(CLOCK_REALTIME, &ts);
		return snprintf(buf, len, "%lld.%06ld ", (long long)ts.tv_sec, ts.tv_nsec / NS_PER_US);
	case GS_TRACE_TIME_RELATIVE:
		/* The first line counts from the stream's opening. */
		delta = now - s->last_ns;
		s->last_ns = now;
		return snprintf(buf, len, "%6llu.%06llu ", (unsigned long long)(delta / GS_NS_PER_S),
		                (unsigned long long)(delta % GS_NS_PER_S / NS_PER_US));
	case GS_TRACE_TIME_NONE:
		break;
	}
	return 0;
}

/* Writes buf, with a stamp in front of every line that starts in it. */
static ssize_t stamped_write(void *cookie, const char *buf, size_t size)
{
	struct stamped *s = cookie;
	size_t done = 0;

	while (done < size) {
		const char *nl = memchr(buf + done, '\n', size - done);
		size_t chunk = nl ? (size_t)(nl - (buf + done)) + 1 : size - done;
		char st[STAMP_MAX];
		int n;

		if (s->at_line_start && (n = stamp(s, st, sizeof(st))) > 0 &&
		    write_all(s->fd, st, (size_t)n) < 0)
			return -1;
		if (write_all(s->fd, buf + done, chunk) < 0)
			return -1;
		s->at_line_start = nl != NULL;
		done += chunk;
	}
	return (ssize_t)size;
}

static int stamped_close(void *cookie)
{
	struct stamped *s = cookie;
	int rc = s->own_fd ? close(s->fd) : 0;

	free(s);
	return rc;
}

FILE *gs_trace_open(const char *path, enum gs_trace_time mode, struct gs_error *err)
{
	static const cookie_io_functions_t io = { .write = stamped_write, .close = stamped_close };
	struct stamped *s;
	FILE *f;

	if (!path && mode == GS_TRACE_TIME_NONE)
		return stderr;
	if (!(s = calloc(1, sizeof(*s)))) {
		gs_fail(err, ENOMEM, "opening the trace stream");
		return NULL;
	}
	s->fd = STDERR_FILENO;
	s->mode = mode;
	s->at_line_start = true;
	s->last_ns = gs_monotonic_ns();
	if (path) {
		s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, TRACE_FILE_MODE);
		if (s->fd < 0) {
			gs_fail(err, errno, "--trace-output %s", path);
			free(s);
			return NULL;
		}
		s->own_fd = true;
	}
	if (!(f = fopencookie(s, "w", io))) {
		gs_fail(err, errno, "opening the trace stream");
		stamped_close(s);
		return NULL;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}
