/* SPDX-License-Identifier: MIT */
/*
 * envcheck.h - what this machine offers gpusandbox: the kernel features the
 * supervisor relies on and the NVIDIA driver, for --version, --check and
 * the warnings at start (a limit with no device to enforce it on, a kernel
 * without WAIT_KILLABLE_RECV).
 */
#ifndef GPUSANDBOX_ENVCHECK_H
#define GPUSANDBOX_ENVCHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "quota.h"

#define GS_NVIDIACTL_PATH "/dev/nvidiactl"
#define GS_DRIVER_VERSION_PATH "/proc/driver/nvidia/version"

/* --version: the version, then one section per row of a table in
 * envcheck.c (kernel features, the driver); add a row to say more. */
void gs_print_version(FILE *f);

/* True when GS_NVIDIACTL_PATH exists. */
bool gs_have_nvidia_device(void);

/* Writes the names of the limits q sets (", "-separated) into buf and
 * returns how many there are. */
unsigned gs_quota_limit_names(const struct gs_quota *q, char *buf, size_t len);

/* Warnings before a run, each once, on f: limits asked for with no NVIDIA
 * device to enforce them on, and a kernel without WAIT_KILLABLE_RECV.
 * Returns true when the device is missing (for the audit start record). */
bool gs_env_warn(FILE *f, const struct gs_quota *q);
/* The same, with the number of warnings printed in *printed (if not NULL):
 * --check counts them in its total. */
bool gs_env_warnings(FILE *f, const struct gs_quota *q, unsigned *printed);

/* Processes of the host (its /proc) whose real or effective uid is uid,
 * now: --uvm-map as-user says how many could dup the sandbox's memory. */
unsigned gs_processes_of_uid(uid_t uid);

#endif
