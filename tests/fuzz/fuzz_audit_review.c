/* SPDX-License-Identifier: MIT */
/*
 * fuzz_audit_review.c - fuzz target for `gpusandbox audit VIEW`.
 *
 * A reviewer runs the views on logs a workload may have shaped (its
 * command, its process names) and on logs cut short or edited: any bytes
 * must give each view's verdict, 0 (something shown), 1 (nothing) or 5
 * (shown, lines skipped), or 4 where --fail-on deny is given, in every
 * format and under filters (times past what int64_t holds among them,
 * issue #32), never a crash, a hang, or the statuses of a usage error (2)
 * or an unreadable file (3). The input is the log,
 * served from a memfd. Built as a libFuzzer target by `make fuzz`; CI
 * replays the corpus (tests/fuzz/corpus/review: real GPU logs, cut,
 * edited and hostile) under ASan/UBSan.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "review.h"

#include "fuzz_quiet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FD_PATH_MAX 64
#define MAX_ARGS 12

/* Each view, each format, and the filters that take other paths. */
static const char *const runs[][MAX_ARGS] = {
	{ "summary", NULL },
	{ "summary", "--format", "json", NULL },
	{ "denials", "--format", "csv", NULL },
	{ "denials", "--until", "+1e9d", "--fail-on", "deny", NULL },
	{ "timeline", "--format", "csv", NULL },
	{ "timeline", "--verdict", "deny", "--gpu", "0", "--since", "+1s", NULL },
	{ "usage", "--since", "-1e9d", "--until", "9999999999999", NULL },
	{ "usage", "--format", "json", "--interval", "0.001", "--pid", "1", NULL },
	{ "plot", "--until", "+1e9d", NULL },
	{ "summary", "--sandbox", "a", "--comm", "x", "--until", "2026-01-01", NULL },
};

static bool may_deny(const char *const *run)
{
	for (unsigned i = 0; run[i]; i++)
		if (strcmp(run[i], "--fail-on") == 0)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[FD_PATH_MAX];
	int fd = memfd_create("audit-log", MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (unsigned r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		char *argv[MAX_ARGS + 3] = { "audit" };
		int argc = 1, rc;

		for (unsigned i = 0; runs[r][i]; i++)
			argv[argc++] = (char *)runs[r][i];
		argv[argc++] = path;
		argv[argc] = NULL;
		quiet(true);
		rc = gs_audit_command(argc, argv);
		quiet(false);
		if (rc != GS_REVIEW_FOUND && rc != GS_REVIEW_NOTHING && rc != GS_REVIEW_SKIPPED &&
		    !(rc == GS_REVIEW_DENIED && may_deny(runs[r])))
			abort();
	}
	close(fd);
	return 0;
}
