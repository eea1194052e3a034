/* SPDX-License-Identifier: MIT */
/*
 * detached.h - a thread nobody joins: the agent's workers and hand-shakes,
 * and the supervisor's waits that must not hold a worker (a close or a
 * reap that a workload's FUSE server can stall, workload.h).
 */
#ifndef GPUSANDBOX_DETACHED_H
#define GPUSANDBOX_DETACHED_H

/* Starts fn(arg) in a detached thread with every signal blocked (signals
 * stay with the main thread's signalfd). 0, or pthread_create's error. */
int gs_spawn_detached(void *(*fn)(void *), void *arg);

#endif
