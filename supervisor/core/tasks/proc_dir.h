/* SPDX-License-Identifier: MIT */
/*
 * proc_dir.h - a look at /proc/TID/... through the calling thread's kept
 * /proc/TID directory (proc_dir.c says why that is the same answer as the
 * path's, and cheaper).
 */
#ifndef GPUSANDBOX_PROC_DIR_H
#define GPUSANDBOX_PROC_DIR_H

#include <sys/types.h>

struct statx;

/* statx of /proc/TID/REL (AT_STATX_DONT_SYNC, following links), through
 * the kept directory where it is tid's task's, else by path. 0, or -1
 * with errno. */
int gs_task_statx(pid_t tid, const char *rel, unsigned mask, struct statx *sx);

#endif
