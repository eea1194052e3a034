/* SPDX-License-Identifier: MIT */
/*
 * launch.h - starting the workload under the filter in its own namespaces,
 * and the supervisor's own privilege drop.
 */
#ifndef GPUSANDBOX_LAUNCH_H
#define GPUSANDBOX_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "contain.h"
#include "filter.h"
#include "gs_error.h"

struct gs_launch_spec {
	char *const                 *argv;       /* COMMAND */
	const struct gs_filter_opts *filter;
	const struct gs_contain     *contain;
	const int                   *forwarded;  /* signals the init passes on */
	size_t                       n_forwarded;
	/* gpusandbox's own command line (its argv strings, contiguous in
	 * memory): the init is a copy of the supervisor, and its
	 * /proc/PID/cmdline, which anyone in the sandbox can read, would
	 * show the options (the audit log's path among them). The init
	 * blanks it before the workload exists. NULL: nothing to blank. */
	char                        *own_args;
	size_t                       own_args_len;
};

struct gs_child {
	pid_t pid;        /* the sandbox's init (our pid namespace's number) */
	pid_t command_pid; /* COMMAND's process, in our pid namespace; -1 if unknown */
	int   listener;   /* seccomp listener fd received from it */
	int   status_fd;  /* COMMAND's wait status, written by the init */
	bool  reaped;
};

/* Clones the sandbox's init into new PID and mount namespaces: it sets
 * PDEATHSIG, its mounts and identity, NO_NEW_PRIVS, installs the filter,
 * hands its listener over SCM_RIGHTS and, once told to, forks COMMAND.
 * The caller must have blocked the forwarded signals and SIGCHLD, and hold
 * CAP_SYS_ADMIN (or none at all: then a user namespace is made too).
 * Returns 0, or -1 with err set and *exit_code one of GS_EXIT_*. */
int gs_launch(const struct gs_launch_spec *spec, struct gs_child *child, int *exit_code,
              struct gs_error *err);

/* Once the init is reaped with init_status: COMMAND's wait status. */
int gs_launch_command_status(struct gs_child *child, int init_status);

/* Kills the init, and with it every task of the sandbox, and reaps it. */
void gs_launch_kill(struct gs_child *child);

/* Drops CAP_SYS_ADMIN and CAP_SYS_NICE from the supervisor (all sets and
 * the bounding set) and checks they are gone. The driver judges privilege
 * from the calling thread, so a supervisor that kept them would lend them
 * to every call it performs for the workload. */
int gs_drop_supervisor_privileges(struct gs_error *err);

#endif
