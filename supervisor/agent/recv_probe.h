/* SPDX-License-Identifier: MIT */
/*
 * recv_probe.h - does this kernel end a blocked SECCOMP_IOCTL_NOTIF_RECV
 * when no task uses the filter any more? Then an agent's worker can wait
 * in RECV itself, as the command line's runner does, instead of a poll
 * before every call (issue #31: one system call per trapped call).
 */
#ifndef GPUSANDBOX_RECV_PROBE_H
#define GPUSANDBOX_RECV_PROBE_H

#include <stdbool.h>

/* Asked once, at the agent's start, while it has one thread: a child
 * process makes a filter whose only user then exits, and blocks in RECV on
 * its listener, under an alarm. True only when that RECV returned ENOENT
 * (the kernel woke it: "seccomp: interrupt SECCOMP_IOCTL_NOTIF_RECV when
 * all users have exited", 2024, after SYNC_WAKE_UP's recv_wait_event);
 * false when the alarm ended it or anything failed, and then a worker
 * polls before each RECV, as before. The answer is the running kernel's,
 * not a version number's, so a backport counts and a patched-out one
 * does not. */
bool gs_recv_ends_at_hangup(void);

#endif
