/* SPDX-License-Identifier: MIT */
/*
 * fuzz_quiet.h - for fuzz targets whose code under test prints: stdout and
 * stderr go to /dev/null for the call (quiet(true)) and come back for the
 * replay's report (quiet(false)).
 */
#ifndef GPUSANDBOX_FUZZ_QUIET_H
#define GPUSANDBOX_FUZZ_QUIET_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void quiet(bool on)
{
	static int saved_out = -1, saved_err = -1, null = -1;

	fflush(stdout);
	fflush(stderr);
	if (null < 0) {
		null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		saved_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
		saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
		if (null < 0 || saved_out < 0 || saved_err < 0)
			abort();
	}
	dup2(on ? null : saved_out, STDOUT_FILENO);
	dup2(on ? null : saved_err, STDERR_FILENO);
}

#endif
