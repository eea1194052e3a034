/* SPDX-License-Identifier: MIT */
/*
 * startup_checks.h - what `gpusandbox agent` and `gpusandbox keeper` check
 * before they listen. Once listening, a setting that cannot work is no
 * longer the service's error at start but every container's at run time:
 * the agent refuses (and kills) each container it is handed, and the
 * runtime's error names something else (podman: "failed to connect to
 * container's attach socket"). So each path and limit they need is
 * checked first, and a failure is the process's exit (125) with the cause
 * on stderr, where a DaemonSet's FallbackToLogsOnError shows it.
 */
#ifndef GPUSANDBOX_STARTUP_CHECKS_H
#define GPUSANDBOX_STARTUP_CHECKS_H

#include "gs_error.h"

/* The descriptor limit below which the agent or keeper does not start:
 * each container holds some (the agent: its listener, a pidfd, dups of its
 * GPU files, its audit log; the keeper: every listener), and the host pid
 * cache takes a share (host_pids.c). The usual default soft limit; under
 * it containers would be refused one by one at run time (EMFILE). */
#define GS_SERVICE_MIN_NOFILE 1024u

/* opt PATH is a folder in which we can create files (W_OK | X_OK), or one
 * we can read (R_OK | X_OK): mode is the access(2) mode. 0 or -1 (err). */
int gs_check_folder(const char *opt, const char *path, int mode, struct gs_error *err);

/* The folder a socket (or file) at PATH is made in exists and is ours to
 * create in. 0 or -1 (err). */
int gs_check_parent_folder(const char *opt, const char *path, struct gs_error *err);

/* The soft descriptor limit is raised to GS_SERVICE_MIN_NOFILE when under
 * it and the hard limit allows; -1 (err) when the hard limit is under it. */
int gs_check_nofile(struct gs_error *err);

#endif
