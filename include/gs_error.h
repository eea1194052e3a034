/* SPDX-License-Identifier: MIT */
/*
 * gs_error.h - a small error object, in the manner of crun's libcrun_error_t:
 * a function that fails fills *err with an errno and a message and returns
 * -1; the caller adds context or reports it once, at the top.
 */
#ifndef GPUSANDBOX_GS_ERROR_H
#define GPUSANDBOX_GS_ERROR_H

#define GS_ERROR_MSG_MAX 512

struct gs_error {
	int  errnum;                  /* errno value, 0 if not from a syscall */
	char msg[GS_ERROR_MSG_MAX];
};

/* Records an error and returns -1 so callers can `return gs_fail(...)`. */
int gs_fail(struct gs_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes context to an existing error; returns -1. */
int gs_error_wrap(struct gs_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Formats "gpusandbox: msg: strerror" into buf. */
const char *gs_error_text(const struct gs_error *err, char *buf, unsigned len);

#endif
