/* SPDX-License-Identifier: MIT */
/*
 * fuzz_audit_verify.c - fuzz target for `gpusandbox audit verify`.
 *
 * A reviewer runs the verifier on logs a workload may have written: any
 * bytes must give a verdict, 0 (intact) or 1 (not), never a crash, a hang
 * or the I/O status 2. The input is the log, served from a memfd. Built
 * as a libFuzzer target by `make fuzz`; CI replays the corpus
 * (tests/fuzz/corpus/audit: real logs, cut and edited) under ASan/UBSan.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audit_verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FD_PATH_MAX 64

/* The verdicts' messages are not what is tested here: stdout and stderr
 * go to /dev/null for the call and come back for the replay's report. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[FD_PATH_MAX];
	char *argv[] = { "audit", "verify", path, NULL };
	int fd = memfd_create("audit-log", MFD_CLOEXEC), rc;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	quiet(true);
	rc = gs_audit_verify(2, argv + 1);
	quiet(false);
	close(fd);
	if (rc != GS_AUDIT_VERIFIED && rc != GS_AUDIT_BROKEN)
		abort();
	return 0;
}
