/* SPDX-License-Identifier: MIT */
/*
 * launch.h - starting the workload under the filter, and the supervisor's
 * own privilege drop.
 */
#ifndef GPUSANDBOX_LAUNCH_H
#define GPUSANDBOX_LAUNCH_H

#include <sys/types.h>

#include "filter.h"
#include "gs_error.h"

struct gs_child {
	pid_t pid;
	int   listener;   /* seccomp listener fd received from the child */
};

/* Forks the workload: it sets PDEATHSIG, NO_NEW_PRIVS, drops capabilities,
 * installs the filter, hands its listener over SCM_RIGHTS and execs argv.
 * Returns 0, or -1 with err set and *exit_code one of GS_EXIT_*. */
int gs_launch(char *const argv[], const struct gs_filter_opts *opts, struct gs_child *child,
              int *exit_code, struct gs_error *err);

/* Drops CAP_SYS_ADMIN and CAP_SYS_NICE from the supervisor (all sets and
 * the bounding set) and checks they are gone. The driver judges privilege
 * from the calling thread, so a supervisor that kept them would lend them
 * to every call it performs for the workload. */
int gs_drop_supervisor_privileges(struct gs_error *err);

#endif
