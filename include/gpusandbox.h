/* SPDX-License-Identifier: MIT */
#ifndef GPUSANDBOX_H
#define GPUSANDBOX_H

#define GPUSANDBOX_VERSION "0.1.0"

/* Exit statuses of gpusandbox's own failures, as env(1) and timeout(1). */
enum gs_exit {
	GS_EXIT_ERROR       = 125, /* gpusandbox itself failed */
	GS_EXIT_CANNOT_EXEC = 126, /* COMMAND found but not executable */
	GS_EXIT_NOT_FOUND   = 127, /* COMMAND not found */
	GS_EXIT_SIGNAL_BASE = 128, /* workload killed by signal N: 128 + N */
};

#endif
