/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gs_error.h"

int gs_fail(struct gs_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int gs_error_wrap(struct gs_error *err, const char *fmt, ...)
{
	char prefix[GS_ERROR_MSG_MAX];
	char old[GS_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation of an over-long message is acceptable. */
	size_t n = strnlen(prefix, sizeof(err->msg) - 1);
	memcpy(err->msg, prefix, n);
	if (n + 2 < sizeof(err->msg)) {
		memcpy(err->msg + n, ": ", 2);
		n += 2;
	}
	size_t m = strnlen(old, sizeof(err->msg) - 1 - n);
	memcpy(err->msg + n, old, m);
	err->msg[n + m] = '\0';
	return -1;
}

const char *gs_error_text(const struct gs_error *err, char *buf, unsigned len)
{
	if (err->errnum)
		snprintf(buf, len, "%s: %s", err->msg, strerror(err->errnum));
	else
		snprintf(buf, len, "%s", err->msg);
	return buf;
}
