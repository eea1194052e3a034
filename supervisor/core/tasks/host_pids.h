/* SPDX-License-Identifier: MIT */
/*
 * host_pids.h - the processes of the supervisor's own PID namespace,
 * remembered across the quiesce's walks of /proc (issue #16).
 *
 * A walk for the sharers of a sandbox task's fd table may leave out every
 * process of our own PID namespace when the caller is not in it
 * (quiesce.c, skip_our_namespace); telling one costs a readlink of its
 * /proc/PID/ns/pid, some 5 us on the H100 host, for each of the host's
 * processes at every client allocation. A process's PID namespace never
 * changes, so it is remembered, by a pidfd opened before the check: a
 * pidfd names one process, and while that process has not exited its pid
 * number cannot name another. A remembered pid that a walk leaves out is
 * confirmed after the walk (gs_host_pids_settle: one poll of the pidfds):
 * alive then means it was the same process all through the walk. One that
 * exited is forgotten and its pid checked again, as a new one is.
 *
 * Process-wide (the agent walks for every container), under one mutex
 * that a walk holds from gs_host_pids_begin to gs_host_pids_end.
 */
#ifndef GPUSANDBOX_HOST_PIDS_H
#define GPUSANDBOX_HOST_PIDS_H

#include <stdbool.h>
#include <sys/types.h>

/* At most this many remembered (one fd each); the rest are asked again. */
#define GS_HOST_PIDS_MAX 1024

/* A walk's start and end: the cache is the walk's until the end. */
void gs_host_pids_begin(void);
void gs_host_pids_end(void);

/* Is pid remembered as ours? Marks it as relied on by this walk. */
bool gs_host_pids_known(pid_t pid);

/* After the walk: every remembered process that has exited is forgotten;
 * those this walk relied on are put in gone (up to max; more: -1), for
 * the walk to look at again. Returns how many. */
int gs_host_pids_settle(pid_t *gone, int max);

/* Called once, while the process has a single thread and before the
 * workload starts: grows this process's fd table to hold every pidfd the
 * cache may keep (a table shared by threads waits for an RCU grace period
 * each time it grows, expand_fdtable: on the H100 host that made the first
 * walk of a PyTorch init cost 23 ms, 124 us per remembered pid), then
 * remembers every process of our namespace (one walk of /proc), so that a
 * client allocation's first walk asks only about newer ones. */
void gs_host_pids_prepare(void);

/* The PID namespace of process pid (0: ours), as the inode number its
 * /proc/PID/ns/pid link names. False when it cannot be read. */
bool gs_pid_ns_of(pid_t pid, unsigned long long *ino);

/* Is pid of our own PID namespace (ours: its number)? Between
 * gs_host_pids_begin and _end, like gs_host_pids_known, which it asks
 * first; a pid it has to ask about is remembered when it is ours. */
bool gs_host_pids_ours(pid_t pid, unsigned long long ours);

#endif
