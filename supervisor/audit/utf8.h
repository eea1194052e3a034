/* SPDX-License-Identifier: MIT */
/*
 * utf8.h - text the workload names (thread names, arguments) made valid
 * UTF-8 before it goes into a JSON record.
 */
#ifndef GPUSANDBOX_UTF8_H
#define GPUSANDBOX_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Is s[0..len) valid UTF-8 (RFC 3629: shortest form, no surrogates, at
 * most U+10FFFF)? */
bool gs_utf8_valid(const char *s, size_t len);

/* A copy of the NUL-terminated s in which every byte that does not begin a
 * valid UTF-8 sequence is replaced by U+FFFD, one replacement per byte:
 * the same input always gives the same output, and valid text is copied
 * unchanged. The caller frees it; NULL only when memory runs out. */
char *gs_utf8_clean(const char *s);

#endif
