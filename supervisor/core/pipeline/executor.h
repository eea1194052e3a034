/* SPDX-License-Identifier: MIT */
/*
 * executor.h - the executor's entry point: decides and answers one trapped
 * notification of a sandbox. Called by a runner (runner.c), never by the
 * sandbox object itself.
 */
#ifndef GPUSANDBOX_EXECUTOR_H
#define GPUSANDBOX_EXECUTOR_H

#include "session.h"
#include "scratch.h"

/* Decides and answers the notification in scratch->req (an ioctl, or under
 * managed = deny an mmap) with the worker's scratch; the caller holds
 * sb->lock. */
void gs_execute_notification(struct gs_session *sb, struct gs_scratch *scratch);

/* For an agent resuming a container (agent_resume.c): an RM_ALLOC a dead
 * agent performed for task tid on its fd wfd, whose answer the task never
 * had. Frees the object through the task's file and from the ledger, and
 * audits it as an RM_FREE; the caller holds sb->lock. True when freed. */
struct gs_resumed_alloc {
	pid_t    tid;
	int      wfd;
	uint32_t client, parent, object;
};
bool gs_execute_undo_resumed(struct gs_session *sb, struct gs_scratch *scratch,
                             const struct gs_resumed_alloc *r);

/* Is this received notification an ioctl we made a task perform
 * (inject.h: the tid held stopped in our ptrace, our page)? Then it is
 * continued at once on listener, without the session lock, which the
 * injecting worker holds; true. For the runner that receives while
 * another worker injects (runner.c) and the agent's receiver of the
 * injection (agent_inject.c). */
bool gs_execute_continue_injected(struct gs_session *sb, int listener,
                                  const struct seccomp_notif *req);

#endif
