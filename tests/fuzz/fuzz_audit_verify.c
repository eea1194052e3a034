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

#include "fuzz_quiet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FD_PATH_MAX 64

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
