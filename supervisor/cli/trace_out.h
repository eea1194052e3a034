/* SPDX-License-Identifier: MIT */
/*
 * trace_out.h - where --trace goes (stderr, or --trace-output FILE, like
 * strace -o) and the time stamp in front of each line (--trace-time, like
 * strace -tt, -ttt and -r).
 */
#ifndef GPUSANDBOX_TRACE_OUT_H
#define GPUSANDBOX_TRACE_OUT_H

#include <stdio.h>

#include "gs_error.h"

enum gs_trace_time {
	GS_TRACE_TIME_NONE = 0,
	GS_TRACE_TIME_CLOCK,     /* time of day, microseconds (strace -tt) */
	GS_TRACE_TIME_EPOCH,     /* seconds since the Epoch (strace -ttt) */
	GS_TRACE_TIME_RELATIVE,  /* seconds since the previous line (strace -r) */
};

/* Parses clock, epoch or relative. Returns 0 or -1. */
int gs_parse_trace_time(const char *s, enum gs_trace_time *out);

/* The trace stream: path NULL for stderr, else the file, created or
 * truncated (as strace -o) with mode 0600. With a time mode each line is
 * stamped when it is written, that is when the supervisor answers the
 * call. Returns the stream, or NULL with err. */
FILE *gs_trace_open(const char *path, enum gs_trace_time mode, struct gs_error *err);

#endif
