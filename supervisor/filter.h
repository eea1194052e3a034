/* SPDX-License-Identifier: MIT */
/*
 * filter.h - the seccomp user-notify filter installed in the workload.
 */
#ifndef GPUSANDBOX_FILTER_H
#define GPUSANDBOX_FILTER_H

#include "gs_error.h"

/* Builds the filter and loads it in the calling process with a new listener.
 * The caller must have set NO_NEW_PRIVS. Returns the listener fd or -1. */
int gs_filter_install(struct gs_error *err);

/* Writes the filter's BPF in libseccomp's pseudo-filter form to fd
 * (for --dump-filter and tests). */
int gs_filter_dump(int fd, struct gs_error *err);

#endif
